//! The app's side of the History overlay: where the saved runs are, the
//! overlay opened on this file's, and the diff marks it can put on the DAG.
//! (A run opened read-only is `viewing.rs`'s; exports and restores are
//! `export.rs`'s.)

use super::App;
use crate::history::HistoryView;
use crate::overlay::Overlay;
use pipewright_engine::run::store::{Entry, Runs};
use pipewright_engine::run::trace::Trace;

impl App {
    pub(crate) fn runs(&self) -> Option<Runs> {
        self.dirs
            .data()
            .map(|d| Runs::at(d.join("runs")).capped(self.opts.settings.max_runs))
    }

    /// The run on screen: the one opened read-only, else the last finished.
    pub(crate) fn trace_on_screen(&self) -> Option<&Trace> {
        self.viewing
            .as_ref()
            .map(|v| &v.trace)
            .or(self.trace.as_ref())
    }

    /// Opens the History overlay on this file's runs, newest first.
    pub(crate) fn open_history(&mut self) {
        let Some(runs) = self.runs() else {
            self.say("no data directory: runs are not kept", true);
            return;
        };
        let file = self.opts.file.clone();
        let entries: Vec<Entry> = runs
            .entries()
            .into_iter()
            .rev()
            .filter(|e| e.is_of(&file))
            .collect();
        let current = self.trace_on_screen().map(|t| t.run_id.clone());
        self.overlay = Some(Overlay::History(HistoryView::new(entries, current)));
    }

    pub(super) fn load(&mut self, entry: &Entry) -> Option<Trace> {
        let runs = self.runs()?;
        match runs.load(entry) {
            Ok(t) => Some(t),
            Err(e) => {
                self.say(e, true);
                None
            }
        }
    }

    /// Marks the nodes whose run differs between `entry` and the run on
    /// screen.
    pub(super) fn mark_diff(&mut self, entry: &Entry) {
        let Some(other) = self.load(entry) else {
            return;
        };
        let Some(base) = self.trace_on_screen() else {
            self.say(
                "no run on screen to compare with: run the file or open a run first",
                true,
            );
            return;
        };
        let base_id = base.run_id.clone();
        let changes = pipewright_engine::run::diff::diff(&other, base, false);
        // Each run's file text as it was kept (masked the same way), so the
        // edit that made the difference shows beside it.
        let runs = self.runs();
        let kept = |id: &str| {
            let r = runs.as_ref()?;
            let e = r.entries().into_iter().find(|e| e.id == id)?;
            r.source(&e)
        };
        let file = pipewright_engine::run::diff::source::text(
            kept(&entry.id).as_deref(),
            kept(&base_id).as_deref(),
        );
        let mut nodes: Vec<String> = changes.iter().filter_map(|c| c.node.clone()).collect();
        nodes.dedup();
        let comp = self.comp.clone();
        for (i, v) in self.visuals.iter_mut().enumerate() {
            let id = comp
                .as_ref()
                .and_then(|c| c.nodes.get(i))
                .map(|n| n.id.as_str());
            v.changed = id.is_some_and(|id| nodes.iter().any(|n| n == id));
        }
        // History stays under the diff: Esc goes back to it.
        self.overlay_under = self.overlay.take();
        self.overlay = Some(Overlay::text(
            format!("diff {} → {base_id}", entry.id),
            pipewright_engine::run::diff::report(&entry.id, &base_id, &changes, &file)
                .lines()
                .map(str::to_owned)
                .collect(),
        ));
        let file_note = file.lines().next().unwrap_or_default().to_owned();
        if changes.is_empty() {
            self.say(
                format!("runs {} and {base_id} are the same · {file_note}", entry.id),
                false,
            );
        } else {
            self.say(
                format!(
                    "{} → {base_id}: {} difference(s) in {} (marked Δ) · {file_note}",
                    entry.id,
                    changes.len(),
                    if nodes.is_empty() {
                        "the run's status or output".to_owned()
                    } else {
                        nodes.join(", ")
                    }
                ),
                false,
            );
        }
    }
}
