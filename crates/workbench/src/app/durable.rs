//! A durable run from the workbench (`edit --on restate://…`, palette
//! "durable run"): the saved file's composition goes to Restate, where a
//! worker holding the same file runs it; its journal's lines come as
//! messages, and the finished run is saved and opened read-only, its
//! Timeline showing where a worker picked it up again.

use super::*;
use pipewright_engine::run::durable::client::{RunRequest, file_hash, tool_name};

impl App {
    /// Submits the composition on screen to Restate.
    pub(crate) fn start_durable(&mut self) -> Vec<Effect> {
        let Some(restate) = self.opts.restate.clone() else {
            return Vec::new();
        };
        if self.editor.is_dirty() {
            self.say(
                "save the file first (Ctrl-S): a worker runs the file as saved",
                true,
            );
            return Vec::new();
        }
        // The saved text's plan, even when its validation is still to come.
        let mut effects = self.catch_up();
        if self.errors > 0 {
            let why = self.errors_sentence();
            self.say(format!("not run: {why}"), true);
            return effects;
        }
        let (Some(pipeline), Some(comp)) = (self.pipeline.clone(), self.comp.clone()) else {
            self.say("no valid plan: fix the file's errors first", true);
            return effects;
        };
        if !comp.cases.is_empty() {
            self.say(
                format!(
                    "composition `{}` has cases: a durable run runs a composition once, not its cases",
                    comp.name
                ),
                true,
            );
            return effects;
        }
        let source = match std::fs::read_to_string(&self.opts.file) {
            Ok(s) => s,
            Err(e) => {
                self.say(
                    format!("cannot read {}: {e}", self.opts.file.display()),
                    true,
                );
                return effects;
            }
        };
        let stem = self
            .opts
            .file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "pipeline".into());
        let request = RunRequest {
            tool: tool_name(&comp, pipeline.compositions.len() == 1, &stem),
            args: self.opts.vars.clone().into_iter().collect(),
            file_sha256: file_hash(source.as_bytes()),
        };
        self.say(
            format!(
                "durable run of `{}` submitted to {}; it opens here when it ends",
                comp.name, restate.on
            ),
            false,
        );
        let cancel = tokio_util::sync::CancellationToken::new();
        self.durable = Some(cancel.clone());
        // Drawn live from the journal: every node waits until its call is
        // journaled.
        for v in &mut self.visuals {
            v.status = NodeStatus::Pending;
            v.record = None;
            v.progress = None;
            v.started_ms = None;
        }
        self.timeline.start();
        self.run = RunState::Running;
        effects.push(Effect::Durable {
            restate: Box::new(restate),
            request: Box::new(request),
            source,
            cancel,
        });
        effects
    }

    /// A call of the durable run began, the journal says: its node shows
    /// the running spinner (and its time starts) until the call's outcome
    /// is journaled.
    pub(super) fn durable_opened(&mut self, node: Option<&str>) {
        let now = self.now_ms();
        if self.durable.is_some()
            && let Some(i) = node.and_then(|n| self.comp.as_ref()?.index_of(n))
            && let Some(v) = self.visuals.get_mut(i)
        {
            v.status = NodeStatus::Running;
            v.started_ms.get_or_insert(now);
            self.sync_live_of(i);
        }
    }

    /// A call of the durable run was journaled: its node turns ✓ or ✗ in
    /// the DAG as it happens (a fan-out counts its iterations), and the
    /// line is said.
    pub(super) fn durable_call(&mut self, node: Option<&str>, ok: bool, line: String) {
        if self.durable.is_some()
            && let Some(i) = node.and_then(|n| self.comp.as_ref()?.index_of(n))
            && let Some(v) = self.visuals.get_mut(i)
        {
            let fans_out = self
                .comp
                .as_ref()
                .is_some_and(|c| c.nodes[i].for_each.is_some());
            if fans_out {
                let (done, total) = v.progress.unwrap_or((0, 0));
                v.progress = Some((done + 1, total.max(done + 1)));
                if !ok {
                    v.failed_iterations += 1;
                }
                v.status = if v.failed_iterations > 0 {
                    NodeStatus::Failed
                } else {
                    NodeStatus::Running
                };
            } else {
                v.status = if ok {
                    NodeStatus::Ok
                } else {
                    NodeStatus::Failed
                };
            }
        }
        self.say(line, false);
    }

    /// `x` while a durable run is followed: Restate cancels it (the
    /// worker undoes what completed), and its trace opens when it comes.
    /// False when no durable run is followed.
    pub(super) fn cancel_durable(&mut self) -> bool {
        let Some(token) = &self.durable else {
            return false;
        };
        if token.is_cancelled() {
            self.say(
                "the durable run is being cancelled; its trace opens when Restate returns it",
                false,
            );
        } else {
            token.cancel();
            self.say(
                "cancelling the durable run in Restate: the worker undoes what completed; its trace opens here",
                false,
            );
        }
        true
    }

    /// A durable run ended: saved, then opened read-only.
    pub(super) fn durable_done(&mut self, result: Result<Box<Trace>, String>, source: &str) {
        self.durable = None;
        if self.run == RunState::Running && !self.session.is_open() {
            self.run = RunState::Idle;
        }
        let trace = match result {
            Ok(t) => t,
            Err(e) => {
                self.say(format!("durable run: {e}"), true);
                return;
            }
        };
        let Some(runs) = self.runs() else {
            self.say(
                format!(
                    "durable run {} ended {} (no data directory to keep it)",
                    trace.run_id,
                    trace.composition.status.as_str()
                ),
                false,
            );
            return;
        };
        if let Err(e) = runs.save_with_source(&trace, Some((source, &self.opts.load))) {
            self.say(
                format!("could not save the run to {}: {e}", runs.dir.display()),
                true,
            );
            return;
        }
        match runs.find(&trace.run_id) {
            Ok(entry) => self.open_run(entry),
            Err(e) => self.say(e, true),
        }
    }
}
