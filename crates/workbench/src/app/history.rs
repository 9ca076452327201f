//! Saved runs in the workbench: the History overlay, a run opened
//! read-only, the diff marks it can put on the DAG, and the Timeline view's
//! keys and rows.

use super::*;
use crate::engine::run::store::{Entry, Runs};
use crate::history::HistoryView;
use crate::timeline::{self, Bar};

/// The plan a saved run is drawn on: its saved file text's composition,
/// else a pipe of its nodes in the order they ran (tool names kept).
fn run_plan(
    source: Option<&str>,
    trace: &Trace,
    load: &crate::engine::file::open::LoadOptions,
) -> Option<(Arc<Pipeline>, Arc<Composition>)> {
    let name = &trace.composition.name;
    let loaded = |s: &str| {
        crate::engine::file::open::load_str_with(
            s,
            crate::engine::file::import::Dialect::Auto,
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
    let p = crate::engine::file::open::load_str(&text).pipeline?;
    let c = p.compositions.first().cloned()?;
    Some((Arc::new(p), Arc::new(c)))
}

impl App {
    pub(super) fn runs(&self) -> Option<Runs> {
        self.dirs
            .data
            .as_ref()
            .map(|d| Runs::at(d.join("runs")).capped(self.opts.settings.max_runs))
    }

    /// The run on screen: the one opened read-only, else the last finished.
    fn trace_on_screen(&self) -> Option<&Trace> {
        self.viewing
            .as_ref()
            .map(|v| &v.trace)
            .or(self.trace.as_ref())
    }

    /// Opens the History overlay on this file's runs, newest first.
    pub(super) fn open_history(&mut self) {
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

    pub(super) fn history_key(&mut self, mut h: HistoryView, key: KeyEvent) -> Vec<Effect> {
        use super::export::ExportFormat;
        if std::mem::take(&mut h.exporting) {
            let what = match key.code {
                KeyCode::Char(c) => ExportFormat::of_key(c),
                _ => None,
            };
            match (what, h.chosen().cloned()) {
                (Some(what), Some(e)) => self.export_saved(&e, what),
                _ => self.say("not exported", false),
            }
            self.overlay = Some(Overlay::History(h));
            return Vec::new();
        }
        let action = self.keymap.action(&key, false);
        if action == Some(Action::Run) {
            // The run key on a saved run: its file text, run.
            return match h.chosen().cloned() {
                Some(e) => self.rerun_saved(&e),
                None => {
                    self.overlay = Some(Overlay::History(h));
                    Vec::new()
                }
            };
        }
        if action == Some(Action::Judge) {
            let id = h.chosen().map(|e| e.id.clone());
            self.overlay = Some(Overlay::History(h));
            return self.judge_saved(id.into_iter().collect());
        }
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => {}
            KeyCode::Up | KeyCode::Char('k') => {
                h.step(-1);
                self.overlay = Some(Overlay::History(h));
            }
            KeyCode::Down | KeyCode::Char('j') => {
                h.step(1);
                self.overlay = Some(Overlay::History(h));
            }
            KeyCode::PageUp => {
                h.step(-10);
                self.overlay = Some(Overlay::History(h));
            }
            KeyCode::PageDown => {
                h.step(10);
                self.overlay = Some(Overlay::History(h));
            }
            // The newest and the oldest run.
            KeyCode::Home | KeyCode::Char('g') => {
                h.step(i32::MIN / 2);
                self.overlay = Some(Overlay::History(h));
            }
            KeyCode::End | KeyCode::Char('G') => {
                h.step(i32::MAX / 2);
                self.overlay = Some(Overlay::History(h));
            }
            KeyCode::Enter => {
                if let Some(e) = h.chosen().cloned() {
                    self.open_run(e);
                }
            }
            KeyCode::Char('E') => {
                if h.chosen().is_some() {
                    h.exporting = true;
                    self.say(
                        "export as: j JSON trace · u JUnit XML · o OTLP/JSON · c cassette (any other key: no)",
                        false,
                    );
                }
                self.overlay = Some(Overlay::History(h));
            }
            KeyCode::Char('R') => {
                if let Some(e) = h.chosen().cloned()
                    && !self.restore_saved(&e)
                {
                    self.overlay = Some(Overlay::History(h));
                }
            }
            KeyCode::Char('D') | KeyCode::Char('d') => {
                if let Some(e) = h.chosen().cloned() {
                    self.mark_diff(&e);
                }
            }
            _ => self.overlay = Some(Overlay::History(h)),
        }
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
    pub(super) fn leave_viewing(&mut self) {
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
        let changes = crate::engine::run::diff::diff(&other, base, false);
        // Each run's file text as it was kept (masked the same way), so the
        // edit that made the difference shows beside it.
        let runs = self.runs();
        let kept = |id: &str| {
            let r = runs.as_ref()?;
            let e = r.entries().into_iter().find(|e| e.id == id)?;
            r.source(&e)
        };
        let file = crate::engine::run::diff::source::text(
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
            body: crate::engine::run::diff::report(&entry.id, &base_id, &changes, &file)
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

    /// The timeline's rows for what is on screen.
    pub fn timeline_bars(&self) -> Vec<Bar> {
        let Some(comp) = &self.comp else {
            return Vec::new();
        };
        let run_start = self
            .trace_on_screen()
            .filter(|_| self.viewing.is_some() || self.run != RunState::Running)
            .and_then(|t| t.composition.started_at.as_deref());
        let now = match (&self.run, self.viewing.is_some()) {
            (RunState::Running | RunState::Paused { .. }, false) => self
                .frozen_now_ms
                .unwrap_or_else(|| self.run_clock.map_or(0, |c| c.elapsed().as_millis() as u64)),
            _ => 0,
        };
        let open = &self.timeline_open;
        timeline::bars_expanded(comp, &self.visuals, run_start, now, &|i| open.contains(&i))
    }

    /// The pauses the timeline labels: the saved or finished run's, or the
    /// live run's so far (one still going reaches `now`).
    pub fn timeline_pauses(&self) -> Vec<(u64, u64)> {
        let live = self.viewing.is_none()
            && matches!(self.run, RunState::Running | RunState::Paused { .. });
        if live {
            let now = self
                .frozen_now_ms
                .unwrap_or_else(|| self.run_clock.map_or(0, |c| c.elapsed().as_millis() as u64));
            return self
                .live_pauses
                .iter()
                .map(|&(at, ms)| (at, ms.unwrap_or(now.saturating_sub(at))))
                .collect();
        }
        self.trace_on_screen()
            .map(|t| {
                t.composition
                    .pauses
                    .iter()
                    .map(|p| (p.at_ms, p.ms))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The timeline pane's title.
    pub fn timeline_title(&self) -> String {
        match &self.viewing {
            Some(v) => {
                // A durable run picked up again after its worker died:
                // the gap on the axis is the time no worker held it.
                let resumed = v
                    .trace
                    .durable
                    .as_ref()
                    .and_then(|d| {
                        let n = d.attempts.len();
                        let (before, last) =
                            (d.attempts.get(n.checked_sub(2)?)?, d.attempts.last()?);
                        let from = before.last_at.as_deref().unwrap_or(&before.at);
                        let gap = crate::engine::run::durable::gap_ms(from, &last.at)?;
                        Some(format!(
                            "resumed on {} after {:.1} s · ",
                            last.worker,
                            gap as f64 / 1000.0
                        ))
                    })
                    .unwrap_or_default();
                format!(
                    " timeline · run {} (read-only, {} ms) · {resumed}T: DAG ",
                    v.entry.id, v.trace.composition.duration_ms
                )
            }
            None => " timeline · T: DAG · Enter: all iterations ".to_owned(),
        }
    }

    /// Up and Down walk the timeline's node rows; true when used.
    pub(super) fn timeline_key(&mut self, key: KeyEvent) -> bool {
        let delta: i32 = match key.code {
            KeyCode::Up | KeyCode::Char('k') => -1,
            KeyCode::Down | KeyCode::Char('j') => 1,
            // A fan-out's row shows its first iterations and `+N more`:
            // Enter shows them all, and folds them again.
            KeyCode::Enter => {
                if let Some(i) = self.dag.selected
                    && !self.timeline_open.remove(&i)
                {
                    self.timeline_open.insert(i);
                }
                return true;
            }
            _ => return false,
        };
        let Some(comp) = self.comp.clone() else {
            return true;
        };
        let at = self
            .dag
            .selected
            .and_then(|s| comp.order.iter().position(|&i| i == s))
            .unwrap_or(0) as i32;
        let next = (at + delta).clamp(0, comp.order.len() as i32 - 1) as usize;
        self.select(comp.order.get(next).copied(), true);
        true
    }

    /// A click on a timeline row selects its node.
    pub(super) fn timeline_click(&mut self, row: u16) {
        let area = self.areas.dag;
        // Border, then the axis line.
        let Some(line) = row.checked_sub(area.y + 2) else {
            return;
        };
        let bars = self.timeline_bars();
        let rows = area.height.saturating_sub(3) as usize;
        let sel_row = bars
            .iter()
            .position(|b| !b.sub && Some(b.node) == self.dag.selected)
            .unwrap_or(0);
        let skip = (sel_row + 1).saturating_sub(rows);
        if let Some(b) = bars.get(skip + line as usize) {
            self.select(Some(b.node), true);
        }
    }
}
