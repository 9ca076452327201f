//! Fibe's caps on a pipeline, which the user may raise as on Fibe: by its
//! environment variables, or by a flag.

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

static LIMITS: std::sync::OnceLock<FibeLimits> = std::sync::OnceLock::new();

/// Sets the caps for this process (from `--fibe-max-steps` /
/// `--fibe-max-iterations` or Fibe's env names); the first call wins.
pub fn set_fibe_limits(limits: FibeLimits) {
    let _ = LIMITS.set(limits);
}

/// The caps in force: as set (the binary sets them from its flags, which
/// read Fibe's env names), else Fibe's defaults.
pub fn fibe_limits() -> FibeLimits {
    *LIMITS.get_or_init(FibeLimits::default)
}
