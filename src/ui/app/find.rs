//! `/` in the help and the Messages pane: the overlay's search (see
//! [`crate::ui::find`]); its count is the status line's, kept out of the
//! Messages log it searches.

use super::*;
use crate::ui::find::{Find, FindKey};

impl App {
    /// The text of the help or the Messages pane, a line each (`None` for
    /// the overlays that are not searched).
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
            Overlay::Messages { .. } => Some(text(crate::ui::messages::lines(
                &self.log,
                self.editor.diagnostics(),
                &self.theme,
            ))),
            _ => None,
        }
    }

    /// A search key in the help or the Messages pane; `None` when the key
    /// is not the search's (it scrolls, or closes the overlay).
    pub(super) fn overlay_find_key(&mut self, ov: &mut Overlay, key: KeyEvent) -> Option<()> {
        let lines = self.overlay_text(ov)?;
        let typing = self.overlay_find.as_ref().is_some_and(|f| f.typing);
        if !typing && key.code == KeyCode::Char('/') && key.modifiers.is_empty() {
            self.overlay_find = Some(Find::open());
        } else {
            let top = ov.scroll_mut().map_or(0, |s| *s as usize);
            let f = self.overlay_find.as_mut()?;
            match f.key(key, &lines, top) {
                FindKey::Used => {
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
            self.message = Some(Message {
                text: f.status(&lines),
                error: false,
                at: Instant::now(),
                about: None,
            });
        }
        Some(())
    }
}
