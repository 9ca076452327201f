//! A finished run's verdict as the Results view lists it: each composition
//! and case, PASS or FAIL, its expectations, its judged metrics and its
//! output; and the cases still to run (`A`). `app/results.rs` is the app's
//! side: recording a verdict, choosing the case and composition the next
//! run uses, and the Results overlay.

use pipewright_engine::json::Json;
use pipewright_engine::run::trace::{EvalRow, ExpectResult, RunStatus, Trace};

/// One finished run of a composition and case, as the Results view lists
/// it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CaseResult {
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

/// Each composition and case run since the workbench opened, and the cases
/// still to run.
#[derive(Debug, Default)]
pub(crate) struct Results {
    /// The latest verdict of each composition and case (the Results view).
    rows: Vec<CaseResult>,
    /// Cases still to run after this one (`A`).
    queue: Vec<String>,
}

impl Results {
    /// The latest verdict of each composition and case, in the order they
    /// first ran.
    pub(crate) fn rows(&self) -> &[CaseResult] {
        &self.rows
    }

    /// The ids of the runs listed (the Results view judges them again).
    pub(crate) fn run_ids(&self) -> Vec<String> {
        self.rows.iter().map(|r| r.run_id.clone()).collect()
    }

    /// These cases run one after another after this one (`A`).
    pub(crate) fn queue(&mut self, cases: Vec<String>) {
        self.queue = cases;
    }

    /// No case runs after this one (the run was cancelled).
    pub(crate) fn clear_queue(&mut self) {
        self.queue.clear();
    }

    /// A run was judged: its composition and case's row takes the graded
    /// rows, the verdict and the run's id.
    pub(crate) fn judged(&mut self, trace: &Trace) {
        if let Some(r) = self
            .rows
            .iter_mut()
            .find(|r| r.composition == trace.composition.name && r.case == trace.composition.case)
        {
            r.eval.clone_from(&trace.eval);
            r.passed = trace.passed();
            r.run_id.clone_from(&trace.run_id);
        }
    }

    /// Keeps `result`, replacing the last one of the same composition and
    /// case.
    pub(crate) fn record(&mut self, result: CaseResult) {
        match self
            .rows
            .iter_mut()
            .find(|r| r.composition == result.composition && r.case == result.case)
        {
            Some(r) => *r = result,
            None => self.rows.push(result),
        }
    }

    /// The next queued case, taken off the queue.
    pub(crate) fn next_queued(&mut self) -> Option<String> {
        (!self.queue.is_empty()).then(|| self.queue.remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(case: &str, passed: bool, run_id: &str) -> CaseResult {
        CaseResult {
            composition: "main".into(),
            case: Some(case.into()),
            passed,
            status: RunStatus::Completed,
            expect: Vec::new(),
            eval: Vec::new(),
            output: Json::default(),
            run_id: run_id.into(),
        }
    }

    #[test]
    fn a_case_keeps_its_latest_verdict_and_the_queue_runs_in_order() {
        let mut r = Results::default();
        r.record(verdict("a", false, "r1"));
        r.record(verdict("b", true, "r2"));
        r.record(verdict("a", true, "r3"));
        let rows: Vec<(&str, bool)> = r
            .rows
            .iter()
            .map(|v| (v.run_id.as_str(), v.passed))
            .collect();
        assert_eq!(rows, [("r3", true), ("r2", true)]);
        r.queue = vec!["b".into(), "c".into()];
        assert_eq!(r.next_queued().as_deref(), Some("b"));
        assert_eq!(r.next_queued().as_deref(), Some("c"));
        assert_eq!(r.next_queued(), None);
    }
}
