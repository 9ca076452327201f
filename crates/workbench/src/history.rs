//! The History overlay: the saved runs of this file, newest first. Enter
//! opens one read-only (its DAG, inspector and timeline); `D` marks in the
//! DAG the nodes that differ between it and the run on screen; `J` judges
//! it again with the file's `eval:` (a new run; no tool is called).
//!
//! The component owns the list and its selection and turns keys into a
//! [`HistoryEffect`]; the app carries the effect out (`app/history.rs`: opening a
//! run read-only, diffing, exporting, judging), and `view` draws it.

use crossterm::event::{KeyCode, KeyEvent};

use crate::dag::DagLayout;
use crate::keys::Action;
use crate::state::NodeVisual;
use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::run::store::Entry;
use pipewright_engine::run::trace::Trace;

pub(crate) mod export;
#[cfg(test)]
mod tests;
mod view;

/// A saved run on screen instead of the live one (History, Enter).
pub struct Viewing {
    pub entry: pipewright_engine::run::store::Entry,
    pub trace: Trace,
    /// Keeps the run from being pruned while it is open.
    pub(crate) _hold: Option<pipewright_engine::run::store::Hold>,
    /// The live workbench, put back on Esc (and kept up to date meanwhile).
    pub(crate) stash: Stash,
    /// The run's DAG comes from the file text saved with it (not from a
    /// rebuild of its node list).
    pub from_snapshot: bool,
    /// The file text it ran, shown in the editor's place (read-only).
    pub source: Option<String>,
}

/// What the screen shows of a plan: swapped out while a saved run is open.
#[derive(Default)]
pub(crate) struct Stash {
    pub(crate) pipeline: Option<std::sync::Arc<Pipeline>>,
    pub(crate) comp: Option<std::sync::Arc<Composition>>,
    pub(crate) layout: Option<DagLayout>,
    pub(crate) visuals: Vec<NodeVisual>,
    pub(crate) selected: Option<usize>,
}

/// The list of runs and which one is selected.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryView {
    /// Newest first.
    pub entries: Vec<Entry>,
    pub selected: usize,
    /// The id of the run on screen (marked in the list), if any.
    pub current: Option<String>,
    /// `E` was pressed: the next key picks the export's format.
    pub exporting: bool,
}

impl HistoryView {
    pub fn new(entries: Vec<Entry>, current: Option<String>) -> HistoryView {
        HistoryView {
            entries,
            selected: 0,
            current,
            exporting: false,
        }
    }

    pub fn chosen(&self) -> Option<&Entry> {
        self.entries.get(self.selected)
    }

    /// Moves the selection by `delta` rows.
    pub fn step(&mut self, delta: i32) {
        let last = self.entries.len().saturating_sub(1) as i32;
        self.selected = (self.selected as i32 + delta).clamp(0, last.max(0)) as usize;
    }

    /// The title of its frame.
    pub const TITLE: &'static str = "history · Enter open read-only · D diff · J judge again";

    /// The first run drawn in a frame `height` rows high (the selection
    /// kept in view).
    pub fn skip(&self, height: u16) -> usize {
        let room = height.saturating_sub(4) as usize;
        (self.selected + 1).saturating_sub(room)
    }

    /// What a key does in the overlay. `action` is the key's command
    /// binding (the run and judge keys act on the chosen run).
    pub fn on_key(&mut self, key: KeyEvent, action: Option<Action>) -> HistoryEffect {
        if std::mem::take(&mut self.exporting) {
            let format = match key.code {
                KeyCode::Char(c) => Some(c),
                _ => None,
            };
            return HistoryEffect::Export {
                entry: self.chosen().cloned(),
                format,
            };
        }
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
            KeyCode::Char('E') => {
                if self.chosen().is_none() {
                    return HistoryEffect::Stay;
                }
                self.exporting = true;
                HistoryEffect::Status(
                    "export as: j JSON trace · u JUnit XML · o OTLP/JSON · c cassette (any other key: no)",
                )
            }
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

/// What a key in the History overlay asks the app to do.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryEffect {
    /// Nothing beyond the list's own change: the overlay stays open.
    Stay,
    /// Close the overlay.
    Close,
    /// Say this on the status line; the overlay stays open.
    Status(&'static str),
    /// Export the chosen run (if any) in the format its key names (`j`,
    /// `u`, `o`, `c`; none or another: not exported); the overlay stays.
    Export {
        entry: Option<Entry>,
        format: Option<char>,
    },
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
    /// replaces the overlay).
    Diff(Entry),
}
