//! `/` in the help, the Messages pane, History and its diff view: the
//! overlay's search (see [`crate::find`]); its count is the status
//! line's, kept out of the Messages log it searches. In History `n`/`N`
//! select the run that matches.

use crossterm::event::{KeyCode, KeyEvent};

use super::App;
use crate::overlay::{self, Overlay};

use crate::find::{Find, FindKey};

impl App {
    /// The text of the help, the Messages pane, a text view (History's
    /// diff) or History's runs, a line each (`None` for the overlays that
    /// are not searched).
    pub fn overlay_text(&self, ov: &Overlay) -> Option<Vec<String>> {
        let text = |lines: Vec<ratatui::text::Line<'_>>| {
            lines
                .iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        match ov {
            Overlay::Help { .. } => {
                let width = self.areas.overlay.width;
                Some(text(overlay::help_lines(&self.keymap, &self.theme, width)))
            }
            Overlay::Messages { .. } => Some(text(crate::messages::view::lines(
                &self.messages.log,
                self.editor.diagnostics(),
                &self.theme,
            ))),
            Overlay::Text { body, .. } => Some(body.clone()),
            Overlay::History(h) => Some(text(h.rows(&self.theme, self.areas.overlay.width))),
            _ => None,
        }
    }

    /// A search key in the help or the Messages pane; `None` when the key
    /// is not the search's (it scrolls, or closes the overlay).
    pub(crate) fn overlay_find_key(&mut self, ov: &mut Overlay, key: KeyEvent) -> Option<()> {
        let lines = self.overlay_text(ov)?;
        let typing = self.overlay_find.as_ref().is_some_and(|f| f.typing);
        if !typing && key.code == KeyCode::Char('/') && key.modifiers.is_empty() {
            self.overlay_find = Some(Find::open());
        } else {
            let top = match &mut *ov {
                Overlay::History(h) => h.skip(self.areas.overlay.height),
                other => other.scroll_mut().map_or(0, |s| *s as usize),
            };
            let f = self.overlay_find.as_mut()?;
            match f.key(key, &lines, top) {
                FindKey::Used => {
                    if let (Overlay::History(h), Some((line, _))) = (&mut *ov, f.at) {
                        h.selected = line;
                    }
                    let page = self.areas.overlay.height.saturating_sub(2) as usize;
                    let to = f.scrolled(top, page);
                    if let Some(s) = ov.scroll_mut() {
                        *s = u16::try_from(to).unwrap_or(u16::MAX);
                    }
                }
                FindKey::Cleared => {
                    self.overlay_find = None;
                    return Some(());
                }
                FindKey::Ignored => return None,
            }
        }
        if let Some(f) = &self.overlay_find {
            // Said without the Messages log, which is what is searched.
            self.messages.show(f.status(&lines), false);
        }
        Some(())
    }
}
