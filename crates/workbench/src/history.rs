//! The History overlay: the saved runs of this file, newest first. Enter
//! opens one read-only (its DAG, inspector and timeline); `D` marks in the
//! DAG the nodes that differ between it and the run on screen; `J` judges
//! it again with the file's `eval:` (a new run; no tool is called).
//!
//! The component owns the list and its selection and turns keys into
//! messages; the app carries them out (`app/history.rs` and
//! `app/viewing.rs`: opening a run read-only, diffing, exporting,
//! judging), and `view` draws it.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::window::{centred, frame};
use pipewright_engine::run::store::Entry;

pub(crate) mod export;
#[cfg(test)]
mod tests;
mod view;

/// The list of runs and which one is selected.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HistoryView {
    /// Newest first.
    entries: Vec<Entry>,
    selected: usize,
    /// The id of the run on screen (marked in the list), if any.
    current: Option<String>,
}

impl HistoryView {
    /// The list of `entries` (newest first), `current` marked.
    pub(crate) fn new(entries: Vec<Entry>, current: Option<String>) -> HistoryView {
        HistoryView {
            entries,
            selected: 0,
            current,
        }
    }

    fn chosen(&self) -> Option<&Entry> {
        self.entries.get(self.selected)
    }

    /// Moves the selection by `delta` rows.
    fn step(&mut self, delta: i32) {
        let last = self.entries.len().saturating_sub(1) as i32;
        self.selected = (self.selected as i32 + delta).clamp(0, last.max(0)) as usize;
    }

    /// The title of its frame.
    const TITLE: &'static str = "history · Enter open read-only · D diff · J judge again";

    /// The first run drawn in a frame `height` rows high (the selection
    /// kept in view).
    pub(crate) fn skip(&self, height: u16) -> usize {
        let room = height.saturating_sub(4) as usize;
        (self.selected + 1).saturating_sub(room)
    }

    /// What a key does in the overlay. `action` is the key's command
    /// binding (the run and judge keys act on the chosen run).
    fn key_effect(&mut self, key: KeyEvent, action: Option<Action>) -> HistoryEffect {
        if action == Some(Action::Run) {
            return match self.chosen().cloned() {
                Some(e) => HistoryEffect::Rerun(e),
                None => HistoryEffect::Stay,
            };
        }
        if action == Some(Action::Judge) {
            return HistoryEffect::Judge(self.chosen().map(|e| e.id.clone()));
        }
        let chosen = self.chosen().cloned();
        let on_chosen = |f: fn(Entry) -> HistoryEffect| chosen.map_or(HistoryEffect::Close, f);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => HistoryEffect::Close,
            KeyCode::Up | KeyCode::Char('k') => self.stepped(-1),
            KeyCode::Down | KeyCode::Char('j') => self.stepped(1),
            KeyCode::PageUp => self.stepped(-10),
            KeyCode::PageDown => self.stepped(10),
            // The newest and the oldest run.
            KeyCode::Home | KeyCode::Char('g') => self.stepped(i32::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.stepped(i32::MAX / 2),
            KeyCode::Enter => on_chosen(HistoryEffect::Open),
            // The formats in a popup over the list (Esc comes back).
            KeyCode::Char('E') => match self.chosen() {
                Some(e) => HistoryEffect::ChooseExport(e.clone()),
                None => HistoryEffect::Stay,
            },
            KeyCode::Char('R') => on_chosen(HistoryEffect::Restore),
            KeyCode::Char('D') | KeyCode::Char('d') => on_chosen(HistoryEffect::Diff),
            _ => HistoryEffect::Stay,
        }
    }

    fn stepped(&mut self, delta: i32) -> HistoryEffect {
        self.step(delta);
        HistoryEffect::Stay
    }
}

impl HistoryView {
    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        // Its columns need the whole width of a narrow screen.
        if area.width < 100 {
            centred(area, 100, 70)
        } else {
            centred(area, 90, 70)
        }
    }

    /// Selects the run on row `row` (a search's match).
    pub(crate) fn select_row(&mut self, row: usize) {
        self.selected = row;
    }

    /// The runs listed, newest first.
    #[cfg(test)]
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The id of the chosen run.
    #[cfg(test)]
    pub(crate) fn selected_id(&self) -> Option<&str> {
        self.chosen().map(|e| e.id.as_str())
    }
}

impl Component for HistoryView {
    /// Moving, opening, diffing, exporting, restoring, running and
    /// judging the chosen run; `action` is the key's command binding (the
    /// run and judge keys act on the chosen run).
    fn on_key(
        &mut self,
        key: KeyEvent,
        action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match self.key_effect(key, action) {
            HistoryEffect::Stay => {}
            HistoryEffect::Close => queue.push(Msg::CloseOverlay),
            HistoryEffect::ChooseExport(e) => queue.push(Msg::ChooseExport(e)),
            HistoryEffect::Rerun(e) => {
                queue.push(Msg::CloseOverlay);
                queue.push(Msg::RerunSaved(e));
            }
            HistoryEffect::Judge(id) => queue.push(Msg::JudgeSaved(id.into_iter().collect())),
            HistoryEffect::Open(e) => {
                queue.push(Msg::CloseOverlay);
                queue.push(Msg::OpenRun(e));
            }
            HistoryEffect::Restore(e) => queue.push(Msg::RestoreRun(e)),
            // History stays under the diff's report: Esc comes back.
            HistoryEffect::Diff(e) => queue.push(Msg::DiffRun(e)),
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let r = Self::rect(area);
        Clear.render(r, buf);
        let t = ctx.theme;
        self.render(t, r, frame(Self::TITLE.into(), t), buf);
    }
}

/// What a key in the History overlay asks the app to do.
#[derive(Debug, Clone, PartialEq)]
enum HistoryEffect {
    /// Nothing beyond the list's own change: the overlay stays open.
    Stay,
    /// Close the overlay.
    Close,
    /// Ask which format to export the chosen run in (a popup over the
    /// list).
    ChooseExport(Entry),
    /// Run the saved run's file text again (the overlay closes).
    Rerun(Entry),
    /// Judge the run again; the overlay stays.
    Judge(Option<String>),
    /// Open the run read-only (the overlay closes).
    Open(Entry),
    /// Put the run's file text back in the editor; the overlay stays when
    /// that fails.
    Restore(Entry),
    /// Mark the nodes that differ from the run on screen (its report
    /// opens over the overlay, and Esc comes back to it).
    Diff(Entry),
}
