//! Judged eval in the workbench: a finished run of a composition with
//! `eval:` is graded in the background (its Results rows show "being
//! judged" until the judge answers), and `J` judges again, with the file on
//! screen and no tool called: the run on screen, the run chosen in History,
//! or every run the Results view lists.

use indexmap::IndexMap;

use super::{App, Effect};
use crate::judging::{Job, Subject};
use pipewright_engine::run::trace::{RunStatus, Trace};

impl App {
    /// The judging of `subject` with the file on screen, if its composition
    /// has `eval:`.
    fn judge_job(&self, subject: Subject) -> Option<Effect> {
        let pipeline = self.pipeline.clone()?;
        Some(Effect::Judge(Box::new(Job {
            subject,
            pipeline,
            source: self.plan_source.clone(),
            data: self.dirs.data().map(std::path::Path::to_path_buf),
            config: self.dirs.config().map(std::path::Path::to_path_buf),
            judge: self.opts.judge.clone(),
            env: self.opts.settings.env.clone(),
            max_reply_kb: self.opts.settings.judge_max_reply_kb,
            max_runs: self.opts.settings.max_runs,
            load: self.opts.load.clone(),
            tools: IndexMap::new(),
        })))
    }

    /// A run just finished: graded in the background when its composition
    /// has `eval:` (rows say so meanwhile).
    pub(crate) fn judge_finished(&mut self, trace: &mut Trace) -> Option<Effect> {
        let has_eval = self
            .pipeline
            .as_ref()
            .and_then(|p| p.composition(&trace.composition.name))
            .is_some_and(|c| !c.eval.is_empty());
        if !has_eval || trace.composition.status == RunStatus::Cancelled {
            return None;
        }
        for r in &mut trace.eval {
            r.reason = "being judged…".into();
        }
        self.judge_job(Subject::Finished(Box::new(trace.clone())))
    }

    /// `J`: judge again the run on screen (the one opened from History, else
    /// the last finished), with the file on screen.
    pub(crate) fn judge_on_screen(&mut self) -> Vec<Effect> {
        let id = self
            .viewing
            .as_ref()
            .map(|v| v.trace.run_id.clone())
            .or_else(|| self.trace.as_ref().map(|t| t.run_id.clone()));
        match id {
            Some(id) => self.judge_saved(vec![id]),
            None => {
                self.say("nothing to judge yet: run the composition first (F5)", true);
                Vec::new()
            }
        }
    }

    /// Judges the saved runs `ids` again, each as a new run.
    pub(crate) fn judge_saved(&mut self, ids: Vec<String>) -> Vec<Effect> {
        if ids.is_empty() {
            self.say("no run to judge", true);
            return Vec::new();
        }
        if self.dirs.data().is_none() {
            self.say(
                "no data directory: runs are not kept, so none can be judged again",
                true,
            );
            return Vec::new();
        }
        let n = ids.len();
        let effects: Vec<Effect> = ids
            .into_iter()
            .filter_map(|id| self.judge_job(Subject::Saved(id)))
            .collect();
        if effects.is_empty() {
            self.say("no valid plan yet: the file on screen grades the run", true);
        } else {
            self.say(format!("judging {n} run(s) again…"), false);
        }
        effects
    }

    /// The judge answered (or could not be asked): the Results view and
    /// the run on screen take the graded rows.
    pub(crate) fn judged(&mut self, result: Result<Box<Trace>, String>, again: bool) {
        let trace = match result {
            Ok(t) => t,
            Err(e) => {
                self.say(format!("not judged: {e}"), true);
                return;
            }
        };
        let verdicts: Vec<String> = trace
            .eval
            .iter()
            .map(|r| match r.score {
                Some(s) => format!("{} {s:.2} {}", r.metric, r.status.as_str()),
                None => format!("{} {}", r.metric, r.status.as_str()),
            })
            .collect();
        let what = match (&trace.judged_from, again) {
            (Some(from), true) => format!("run {from} judged again as {}", trace.run_id),
            _ => format!("run {} judged", trace.run_id),
        };
        let failed = trace.eval.iter().any(|r| !r.holds());
        self.say(format!("{what}: {}", verdicts.join(", ")), failed);
        self.results.judged(&trace);
        if !again
            && let Some(t) = &mut self.trace
            && t.run_id == trace.run_id
        {
            *t = (*trace).clone();
        }
    }
}
