//! `serve --eval`: a served composition's `eval:` graded after the agent
//! has its answer, off its path. The run is saved at once with its metrics
//! marked as being judged; a background task asks the judge and writes the
//! graded run over the saved one, so served traffic is graded in history
//! (`runs show`, `runs diff`) without making an agent wait. `serve` waits
//! for judgements still in flight before it exits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use indexmap::IndexMap;

use super::model::{Served, Upstream};
use pipewright_engine::eval::{Grader, Grading, JudgeFlags};
use pipewright_engine::file::model::{Budget, Composition};
use pipewright_engine::mcp::ToolInfo;
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::session::BudgetMode;
use pipewright_engine::run::trace::{EvalStatus, Trace};

/// What grading one served composition takes.
struct Entry {
    comp: Arc<Composition>,
    grader: Grader,
    tools: IndexMap<String, Vec<ToolInfo>>,
    budget: Budget,
    redactor: Redactor,
}

/// The graders of the served compositions that have `eval:`, and the
/// judgements in flight.
pub struct Evaluator {
    /// By file and composition name (what a trace names).
    entries: HashMap<(String, String), Entry>,
    /// Where the graded runs are saved (the settings' data directory).
    data_dir: Option<std::path::PathBuf>,
    tasks: Mutex<tokio::task::JoinSet<()>>,
}

impl Evaluator {
    /// The graders of `served` (each with its file's upstream tool lists),
    /// under the driver's `settings`; `Err` is a usage error (a half-given
    /// judge flag, a bad config.yaml).
    pub fn new(
        flags: &JudgeFlags,
        served: &[Served],
        upstreams: &[Arc<Upstream>],
        settings: &pipewright_engine::settings::Settings,
    ) -> Result<Evaluator, String> {
        let mut entries = HashMap::new();
        for s in served.iter().filter(|s| !s.comp.eval.is_empty()) {
            let tools = upstreams
                .iter()
                .find(|u| Arc::ptr_eq(&u.pricing, &s.pricing))
                .map(|u| u.tools.clone())
                .unwrap_or_default();
            let g = pipewright_headless::grader(
                flags.clone(),
                &s.pipeline,
                &s.pricing.table,
                &s.redactor,
                None,
                None,
                settings,
            )?;
            entries.insert(
                (s.file.clone(), s.comp.name.clone()),
                Entry {
                    comp: s.comp.clone(),
                    grader: g,
                    tools,
                    budget: s.comp.budget.or(s.pipeline.budget),
                    redactor: s.redactor.clone(),
                },
            );
        }
        Ok(Evaluator {
            entries,
            data_dir: settings.data_dir.clone(),
            tasks: Mutex::new(tokio::task::JoinSet::new()),
        })
    }

    /// True when `trace`'s composition is graded after its answer.
    pub fn wants(&self, trace: &Trace) -> bool {
        self.entries
            .contains_key(&(trace.file.clone(), trace.composition.name.clone()))
    }

    /// Marks `trace`'s metrics as being judged (what the run is saved with
    /// before the judge answers).
    pub fn mark(trace: &mut Trace) {
        for r in trace
            .eval
            .iter_mut()
            .filter(|r| r.status == EvalStatus::Deferred)
        {
            r.reason = "being judged after the answer (serve --eval)".into();
        }
    }

    /// Grades `trace` in the background and writes it over its saved run.
    pub fn after_answer(self: &Arc<Self>, mut trace: Trace) {
        let me = self.clone();
        let task = async move {
            let key = (trace.file.clone(), trace.composition.name.clone());
            let Some(e) = me.entries.get(&key) else {
                return;
            };
            let judge = e.grader.judge_for(&e.comp, &trace.vars, &e.redactor);
            let grading = Grading {
                comp: &e.comp,
                judge,
                tools: Some(&e.tools),
                budget: e.budget,
                on_budget: BudgetMode::Stop,
            };
            pipewright_engine::eval::grade(&mut trace, grading).await;
            let saved = pipewright_engine::run::store::Runs::open(me.data_dir.as_deref())
                .map(|r| r.replace(&trace));
            if let Some(Err(err)) = saved {
                tracing::warn!(run = %trace.run_id, "could not save the judged run: {err}");
            }
        };
        if let Ok(mut t) = self.tasks.lock() {
            t.spawn(task);
        }
    }

    /// Waits for every judgement in flight (each bounded by its judge's
    /// timeout and retries).
    pub async fn finish(&self) {
        loop {
            let next = {
                let Ok(mut t) = self.tasks.lock() else {
                    return;
                };
                if t.is_empty() {
                    return;
                }
                // Taken out so the lock is not held across the wait.
                std::mem::take(&mut *t)
            };
            let mut next = next;
            while next.join_next().await.is_some() {}
        }
    }
}
