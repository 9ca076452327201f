//! A finished run's verdict as the Results view lists it: each composition
//! and case, PASS or FAIL, its expectations, its judged metrics and its
//! output.

use crate::engine::json::Json;
use crate::engine::run::trace::{EvalRow, ExpectResult, RunStatus};

/// One finished run of a composition and case, as the Results view lists
/// it.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    pub composition: String,
    pub case: Option<String>,
    /// What `pipewright run` counts as passed: completed (or partial with
    /// only `continue`d failures) and every expectation met.
    pub passed: bool,
    pub status: RunStatus,
    pub expect: Vec<ExpectResult>,
    /// The judged `eval:` metrics (being judged, graded, or deferred with
    /// the reason).
    pub eval: Vec<EvalRow>,
    pub output: Json,
    pub run_id: String,
}
