//! The execution engine: pipeline model, loader, references, jq, plan and
//! validation. No terminal code lives here.

pub mod diag;
pub mod jq;
pub mod mcp;
pub mod reference;
