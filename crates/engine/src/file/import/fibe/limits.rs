//! Fibe's caps on a pipeline, which the user may raise as on Fibe: by its
//! environment variables, or by a flag; the driver puts them in the
//! loader's options (`LoadOptions::fibe`).

/// Fibe's caps: top-level `steps` (`FIBE_MCP_PIPELINE_MAX_STEPS`) and
/// `for_each` iterations across a run (`FIBE_MCP_PIPELINE_MAX_ITERATIONS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FibeLimits {
    pub max_steps: usize,
    pub max_iterations: u64,
}

impl Default for FibeLimits {
    fn default() -> Self {
        FibeLimits {
            max_steps: 25,
            max_iterations: 50,
        }
    }
}
