//! The app's side of the Timeline view (`T`): its rows, pauses and title
//! for what is on screen, and its keys and clicks.

use crossterm::event::{KeyCode, KeyEvent};

use super::{App, RunState};
use crate::timeline::{Bar, bars_expanded};

impl App {
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
            (RunState::Running | RunState::Paused { .. }, false) => self.timeline.now_ms(),
            _ => 0,
        };
        let open = &self.timeline.open;
        bars_expanded(comp, &self.visuals, run_start, now, &|i| open.contains(&i))
    }

    /// The pauses the timeline labels: the saved or finished run's, or the
    /// live run's so far (one still going reaches `now`).
    pub fn timeline_pauses(&self) -> Vec<(u64, u64)> {
        let live = self.viewing.is_none()
            && matches!(self.run, RunState::Running | RunState::Paused { .. });
        if live {
            return self.timeline.live_pauses();
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
                        let gap = pipewright_engine::run::durable::gap_ms(from, &last.at)?;
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
    pub(crate) fn timeline_key(&mut self, key: KeyEvent) -> bool {
        let delta: i32 = match key.code {
            KeyCode::Up | KeyCode::Char('k') => -1,
            KeyCode::Down | KeyCode::Char('j') => 1,
            // A fan-out's row shows its first iterations and `+N more`:
            // Enter shows them all, and folds them again.
            KeyCode::Enter => {
                if let Some(i) = self.dag.selected {
                    self.timeline.toggle_open(i);
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
    pub(crate) fn timeline_click(&mut self, row: u16) {
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
