//! Judged eval: a composition's `eval:` metrics (`rubric`,
//! `mcp_task_completion`, `mcp_use`, `argument_correctness`,
//! `plan_quality`) graded after a run by an LLM judge, an OpenAI-compatible
//! chat-completions endpoint. A trace in, its `eval` rows out; no tool is
//! called, so a saved run can be graded again at any time.
//!
//! - [`provider`]: which judge grades a composition (flags, the file's
//!   `eval.provider` or `sampling:`, config.yaml) and its settings; the key
//!   only ever named as `${env.X}`.
//! - [`prompts`]: each metric's instructions, versioned.
//! - [`material`]: what the judge is shown of the run, bounded.
//! - [`metrics`]: what each metric decides without a model, what it asks,
//!   and how a verdict becomes a row.
//! - [`verdict`]: the reply read as untrusted input.
//! - [`client`]: the HTTP request, its timeout, retries and size limit.
//! - [`judge`]: answers reused, replayed from a cassette or asked (and
//!   recorded).
//! - [`grade`]: one trace graded under its budget.
//! - [`estimate`]: what judging would cost, for plans.
//! - [`text`]: a row as the reports and the workbench show it.
//!
//! With no judge configured every metric is `deferred`, and a run's exit
//! code is what it was without `eval:`.

pub(crate) mod client;
pub mod estimate;
pub(crate) mod grade;
pub mod judge;
pub mod junit;
pub mod material;
pub mod metrics;
pub(crate) mod prompts;
pub mod provider;
pub mod text;
pub(crate) mod verdict;

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

pub use grade::{Grading, grade};
pub use judge::{Bench, Judge, Replay};
pub use provider::{Endpoint, JudgeFlags, Sources};

use crate::file::model::{Budget, Composition};
use crate::redact::Redactor;
use crate::run::session::BudgetMode;
use crate::run::trace::eval::aggregate;
use crate::run::trace::{RunStatus, Trace};

/// What a driver grades its runs with: where judges are declared, and
/// what they share.
#[derive(Clone)]
pub struct Grader {
    pub sources: Sources,
    pub bench: Arc<Bench>,
}

impl Grader {
    /// The judge of `comp` (vars resolve `${var.X}` in its settings; its
    /// key becomes a secret of `redactor`), or why its metrics are deferred.
    /// A cassette that holds judge calls answers even with no judge
    /// configured (`--no-judge` still defers).
    pub fn judge_for(
        &self,
        comp: &Composition,
        vars: &IndexMap<String, Value>,
        redactor: &Redactor,
    ) -> Result<Judge, String> {
        match self.sources.endpoint(comp, vars, redactor) {
            Ok(e) => Ok(Judge {
                bench: self.bench.clone(),
                endpoint: Some(e),
            }),
            Err(_) if self.bench.replays() && !self.sources.flags.off => Ok(Judge {
                bench: self.bench.clone(),
                endpoint: None,
            }),
            Err(why) => Err(why),
        }
    }
}

impl Judge {
    /// What a plan projects for this judge: its endpoint, or why no call
    /// is made.
    pub fn projected(judge: &Result<Judge, String>) -> Result<&Endpoint, String> {
        match judge {
            Err(why) => Err(format!("deferred: {why}")),
            Ok(j) if j.bench.replays_only() => Err("answered from the cassette (free)".into()),
            Ok(j) => j
                .endpoint
                .as_ref()
                .ok_or_else(|| "answered from the cassette (free)".into()),
        }
    }
}

/// `old` judged again by `judge` with `comp`'s `eval:` (as the file says
/// now): a new run (new id, started now, `judged_from` the old one) with
/// the same calls and outputs; no tool is called. The old judgements'
/// spend is replaced by the new ones'.
pub async fn regrade(
    old: &Trace,
    comp: &Composition,
    judge: Result<Judge, String>,
    budget: Budget,
) -> Trace {
    let mut t = old.clone();
    t.judged_from = Some(old.run_id.clone());
    t.run_id = crate::run::trace::new_run_id();
    t.composition.started_at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .ok();
    t.eval_aggregate.clear();
    // The run's own budget verdict, without the old judgements' trips.
    if let Some(cap) = old.eval.iter().find_map(|r| r.tripped.clone())
        && t.composition.budget_tripped.as_deref() == Some(cap.as_str())
    {
        t.composition.budget_tripped = None;
        if t.composition.status == RunStatus::BudgetExceeded {
            t.composition.status = grade::status_without_budget(&t, comp);
        }
    }
    grade(
        &mut t,
        Grading {
            comp,
            judge,
            tools: None,
            budget,
            on_budget: BudgetMode::Stop,
        },
    )
    .await;
    t
}

/// Gives every trace of a composition that ran several cases the
/// aggregate of its metrics over them.
pub fn aggregate_cases(traces: &mut [Trace]) {
    let mut names: Vec<String> = Vec::new();
    for t in traces.iter() {
        if !names.contains(&t.composition.name) {
            names.push(t.composition.name.clone());
        }
    }
    for name in names {
        let of = |t: &Trace| t.composition.name == name && t.composition.case.is_some();
        let cases = traces.iter().filter(|t| of(t)).count();
        if cases < 2 {
            continue;
        }
        let agg = aggregate(traces.iter().filter(|t| of(t)).map(|t| t.eval.as_slice()));
        for t in traces.iter_mut().filter(|t| of(t)) {
            t.eval_aggregate.clone_from(&agg);
        }
    }
}
