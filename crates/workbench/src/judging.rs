//! Judging in the workbench (`app/judging.rs` is the app's side: what starts a
//! judging, and the graded run coming back), off the loop: a finished run's `eval:` graded
//! (its saved run written over with the graded rows), or a run judged
//! again with the file on screen (saved as a new run, `judged_from` the
//! old one). The judge is the one `run` would use (the environment's
//! `PIPEWRIGHT_JUDGE_*`, the file's `eval.provider` or `sampling:`,
//! config.yaml's `judge:`); the result comes back as a message.

use std::path::PathBuf;
use std::sync::Arc;

use indexmap::IndexMap;
use tokio::sync::mpsc;

use super::inbox::Message;
use pipewright_engine::cost::pricing::PricingTable;
use pipewright_engine::eval::{Bench, Grader, Grading, JudgeFlags, Sources};
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::mcp::ToolInfo;
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::session::BudgetMode;
use pipewright_engine::run::store::Runs;
use pipewright_engine::run::trace::Trace;

/// The run to judge.
#[derive(Debug, Clone)]
pub enum Subject {
    /// A run just finished (saved already).
    Finished(Box<Trace>),
    /// A saved run, by id.
    Saved(String),
}

/// What a judging task needs.
#[derive(Debug, Clone)]
pub struct Job {
    pub subject: Subject,
    /// The file on screen: its `eval:` grades the run.
    pub pipeline: Arc<Pipeline>,
    /// Its text, kept with a run judged again.
    pub source: Option<String>,
    /// Where runs are saved and config.yaml is read.
    pub data: Option<PathBuf>,
    pub config: Option<PathBuf>,
    /// The judge the environment declares (the workbench's flags).
    pub judge: JudgeFlags,
    /// What the judge's `${env.X}` (its key) read.
    pub env: pipewright_engine::environment::Environment,
    /// `PIPEWRIGHT_JUDGE_MAX_REPLY_KB` and `PIPEWRIGHT_MAX_RUNS`, as the
    /// driver's settings give them.
    pub max_reply_kb: Option<usize>,
    pub max_runs: Option<usize>,
    /// How the file's text is loaded to mask its secrets when kept.
    pub load: pipewright_engine::file::open::LoadOptions,
    /// The servers' tool lists, when a session is connected.
    pub tools: IndexMap<String, Vec<ToolInfo>>,
}

/// Judges in a background task; the result comes back on `tx`.
pub fn spawn(job: Job, tx: mpsc::UnboundedSender<Message>) {
    tokio::spawn(async move {
        let again = matches!(job.subject, Subject::Saved(_));
        let result = judge(job).await.map(Box::new);
        let _ = tx.send(Message::Judged { result, again });
    });
}

async fn judge(job: Job) -> Result<Trace, String> {
    let again = matches!(job.subject, Subject::Saved(_));
    let runs = job
        .data
        .as_ref()
        .map(|d| Runs::at(d.join("runs")).capped(job.max_runs));
    let trace = match job.subject {
        Subject::Finished(t) => *t,
        Subject::Saved(id) => {
            let runs = runs
                .as_ref()
                .ok_or("no data directory: runs are not kept")?;
            runs.load(&runs.find(&id)?)?
        }
    };
    let comp = job
        .pipeline
        .composition(&trace.composition.name)
        .ok_or_else(|| {
            format!(
                "the file on screen has no composition `{}` to judge run {} with",
                trace.composition.name, trace.run_id
            )
        })?;
    if comp.eval.is_empty() {
        return Err(format!("composition `{}` has no `eval:` block", comp.name));
    }
    let table = match job.pipeline.pricing.as_ref().map(PricingTable::from_value) {
        Some(Ok(over)) => PricingTable::bundled().overlay(over),
        _ => PricingTable::bundled(),
    };
    let sources = Sources::of(job.judge, &job.pipeline, job.config.as_deref(), &job.env)?;
    let redactor = Redactor::default();
    let grader = Grader {
        sources,
        bench: Arc::new(
            Bench::new(&table, redactor.clone(), None, None).with_max_reply_kb(job.max_reply_kb),
        ),
    };
    let judge = grader.judge_for(comp, &trace.vars, &redactor);
    let budget = comp.budget.or(job.pipeline.budget);
    match runs {
        None => Err("no data directory: runs are not kept".into()),
        Some(runs) if again => {
            let t = pipewright_engine::eval::regrade(&trace, comp, judge, budget).await;
            runs.save_with_source(&t, job.source.as_deref().map(|s| (s, &job.load)))
                .map_err(|e| format!("could not save the judged run: {e}"))?;
            Ok(t)
        }
        Some(runs) => {
            let mut t = trace;
            let grading = Grading {
                comp,
                judge,
                tools: Some(&job.tools),
                budget,
                on_budget: BudgetMode::Stop,
            };
            pipewright_engine::eval::grade(&mut t, grading).await;
            runs.replace(&t)
                .map_err(|e| format!("could not save the judged run: {e}"))?;
            Ok(t)
        }
    }
}
