//! The app's side of a saved run on screen (History, Enter): drawn
//! read-only as it was, on the plan of the file text kept beside it, while
//! the live workbench waits in a stash, kept current, until Esc brings it
//! back.

use std::sync::Arc;

use super::{App, Focus};
use crate::dag::DagLayout;
use crate::state::NodeVisual;
use crate::viewing::{Stash, Viewing, run_plan};
use pipewright_engine::run::store::Entry;

impl App {
    /// Runs `f` on the live workbench: when a saved run is on screen, the
    /// live state is swapped in for `f` and out again after.
    pub(crate) fn behind_viewing<T>(&mut self, f: impl FnOnce(&mut App) -> T) -> T {
        let Some(mut v) = self.viewing.take() else {
            return f(self);
        };
        self.swap_stash(&mut v.stash);
        let out = f(self);
        self.swap_stash(&mut v.stash);
        self.viewing = Some(v);
        let sel = self.dag.selected();
        self.dag.select(sel);
        self.refresh_inspector();
        out
    }

    /// Exchanges what the screen shows with `stash`.
    pub(crate) fn swap_stash(&mut self, stash: &mut Stash) {
        std::mem::swap(&mut self.pipeline, &mut stash.pipeline);
        std::mem::swap(&mut self.comp, &mut stash.comp);
        std::mem::swap(&mut self.visuals, &mut stash.visuals);
        self.dag.swap_plan(&mut stash.layout, &mut stash.selected);
    }

    /// Shows a saved run read-only, as it was: the DAG of the file it ran
    /// (kept beside the run; for a run saved without it, its nodes in the
    /// order they ran), every node's record, its real timeline. The live
    /// workbench waits behind it, kept current, until Esc.
    pub fn open_run(&mut self, entry: Entry) {
        let Some(trace) = self.load(&entry) else {
            return;
        };
        let source = self.runs().and_then(|r| r.source(&entry));
        let from_snapshot = source.is_some();
        let Some((pipeline, comp)) = run_plan(source.as_deref(), &trace, &self.opts.load) else {
            self.say(
                format!(
                    "run {} cannot be drawn: its nodes do not form a plan",
                    entry.id
                ),
                true,
            );
            return;
        };
        let hold = self.runs().and_then(|r| r.hold(&entry.id).ok());
        self.recording = None;
        // Back to the live state first when another run is open.
        let mut stash = match self.viewing.take() {
            Some(mut v) => {
                self.swap_stash(&mut v.stash);
                Stash::default()
            }
            None => Stash::default(),
        };
        stash.pipeline = Some(pipeline);
        stash.layout = Some(DagLayout::new(&comp));
        stash.visuals = comp
            .nodes
            .iter()
            .map(|n| {
                let mut v = NodeVisual {
                    mocked: n.mock.is_some(),
                    ..NodeVisual::default()
                };
                if let Some(rec) = trace.nodes.get(&n.id) {
                    v.status = rec.status;
                    v.progress = crate::state::fan_out_progress(rec);
                    v.failed_iterations = crate::state::failed_iterations(rec);
                    v.record = Some(Arc::new(rec.clone()));
                }
                v
            })
            .collect();
        stash.selected = trace
            .failed_step
            .as_deref()
            .and_then(|f| comp.index_of(f))
            .or(if comp.nodes.is_empty() { None } else { Some(0) });
        stash.comp = Some(comp);
        // The run goes on screen; the live state goes into the stash.
        self.swap_stash(&mut stash);
        let mut note = format!(
            "run {} ({}, {}) open read-only · Esc in the DAG returns",
            entry.id,
            entry.status,
            crate::inspector::text::duration_text(trace.composition.duration_ms)
        );
        if !from_snapshot {
            note.push_str(" · saved without its file: its nodes in run order");
        }
        self.say(note, false);
        self.inspector.set_context(&entry.id);
        self.viewing = Some(Viewing {
            entry,
            trace,
            _hold: hold,
            stash,
            source,
        });
        self.focus = Focus::Dag;
        let sel = self.dag.selected();
        self.select(sel, false);
    }

    /// Back to the live workbench, as it is now.
    pub(crate) fn leave_viewing(&mut self) {
        // A recording on screen stops being followed.
        self.recording = None;
        if let Some(mut v) = self.viewing.take() {
            self.swap_stash(&mut v.stash);
            self.inspector.set_context("");
            self.say("back to the live workbench", false);
            let sel = self.dag.selected();
            self.select(sel, false);
        }
    }
}
