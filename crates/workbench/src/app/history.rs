//! The app's side of the History overlay: what its effects do (a run
//! opened read-only, the diff marks it can put on the DAG, an export, a
//! judging), and where the saved runs are.

use std::sync::Arc;

use crossterm::event::KeyEvent;

use super::{App, Effect, Focus};
use crate::dag::DagLayout;
use crate::overlay::Overlay;
use crate::state::NodeVisual;
use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::run::store::{Entry, Runs};
use pipewright_engine::run::trace::Trace;

use crate::history::{HistoryEffect, HistoryView, Stash, Viewing};

/// The plan a saved run is drawn on: its saved file text's composition,
/// else a pipe of its nodes in the order they ran (tool names kept).
fn run_plan(
    source: Option<&str>,
    trace: &Trace,
    load: &pipewright_engine::file::open::LoadOptions,
) -> Option<(Arc<Pipeline>, Arc<Composition>)> {
    let name = &trace.composition.name;
    let loaded = |s: &str| {
        pipewright_engine::file::open::load_str_with(
            s,
            pipewright_engine::file::import::Dialect::Auto,
            load,
        )
    };
    if let Some(p) = source.and_then(|s| loaded(s).pipeline)
        && let Some(c) = p.composition(name).cloned()
    {
        return Some((Arc::new(p), Arc::new(c)));
    }
    let mut text = String::from("pipe:\n");
    for (id, rec) in &trace.nodes {
        let tool = if rec.tool.is_empty() {
            "unknown"
        } else {
            &rec.tool
        };
        text.push_str(&format!(
            "  - id: {}\n    tool: {}\n",
            serde_json::to_string(id).ok()?,
            serde_json::to_string(tool).ok()?
        ));
    }
    let p = pipewright_engine::file::open::load_str(&text).pipeline?;
    let c = p.compositions.first().cloned()?;
    Some((Arc::new(p), Arc::new(c)))
}

impl App {
    pub(crate) fn runs(&self) -> Option<Runs> {
        self.dirs
            .data
            .as_ref()
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

    /// A key in the History overlay: the list reacts, the app carries out
    /// what it asks for.
    pub(crate) fn history_key(&mut self, mut h: HistoryView, key: KeyEvent) -> Vec<Effect> {
        use crate::history::export::ExportFormat;
        let action = self.keymap.action(&key, false);
        match h.on_key(key, action) {
            HistoryEffect::Stay => {}
            HistoryEffect::Close => return Vec::new(),
            HistoryEffect::Status(text) => self.say(text, false),
            HistoryEffect::Export { entry, format } => {
                match (format.and_then(ExportFormat::of_key), entry) {
                    (Some(what), Some(e)) => self.export_saved(&e, what),
                    _ => self.say("not exported", false),
                }
            }
            HistoryEffect::Rerun(e) => return self.rerun_saved(&e),
            HistoryEffect::Judge(id) => {
                self.overlay = Some(Overlay::History(h));
                return self.judge_saved(id.into_iter().collect());
            }
            HistoryEffect::Open(e) => {
                self.open_run(e);
                return Vec::new();
            }
            HistoryEffect::Restore(e) => {
                if self.restore_saved(&e) {
                    return Vec::new();
                }
            }
            HistoryEffect::Diff(e) => {
                self.mark_diff(&e);
                return Vec::new();
            }
        }
        self.overlay = Some(Overlay::History(h));
        Vec::new()
    }

    fn load(&mut self, entry: &Entry) -> Option<Trace> {
        let runs = self.runs()?;
        match runs.load(entry) {
            Ok(t) => Some(t),
            Err(e) => {
                self.say(e, true);
                None
            }
        }
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
            "run {} ({}, {} ms) open read-only · Esc in the DAG returns",
            entry.id, entry.status, trace.composition.duration_ms
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
            from_snapshot,
            source,
        });
        self.focus = Focus::Dag;
        let sel = self.dag.selected;
        self.select(sel, false);
    }

    /// Back to the live workbench, as it is now.
    pub(crate) fn leave_viewing(&mut self) {
        if let Some(mut v) = self.viewing.take() {
            self.swap_stash(&mut v.stash);
            self.inspector.set_context("");
            self.say("back to the live workbench", false);
            let sel = self.dag.selected;
            self.select(sel, false);
        }
    }

    /// Marks the nodes whose run differs between `entry` and the run on
    /// screen.
    fn mark_diff(&mut self, entry: &Entry) {
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
        self.overlay = Some(Overlay::Text {
            title: format!("diff {} → {base_id}", entry.id),
            body: pipewright_engine::run::diff::report(&entry.id, &base_id, &changes, &file)
                .lines()
                .map(str::to_owned)
                .collect(),
            scroll: 0,
        });
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
