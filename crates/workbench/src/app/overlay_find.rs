//! `/` in the help, the Messages pane, History and a text (a diff): the
//! overlay's search (see [`crate::find`]); its count is the status line's,
//! kept out of the Messages log it searches. In History `n`/`N` select the
//! run that matches.

use crossterm::event::{KeyCode, KeyEvent};

use super::App;
use crate::component::Ctx;
use crate::find::{Find, FindKey};
use crate::overlay::Overlay;

impl App {
    /// The open overlay's text as `/` searches it, a line each (`None`
    /// when it is not searched).
    pub(crate) fn overlay_lines(&self) -> Option<Vec<String>> {
        let ctx = Ctx {
            log: self.messages.log(),
            diagnostics: self.editor.diagnostics(),
            ..ctx!(self)
        };
        self.overlay.as_ref()?.lines(&ctx, self.areas.overlay.width)
    }

    /// A search key in the open overlay; false when the key is not the
    /// search's (it scrolls, or closes the overlay).
    pub(crate) fn overlay_find_key(&mut self, key: KeyEvent) -> bool {
        let Some(lines) = self.overlay_lines() else {
            return false;
        };
        let Some(ov) = self.overlay.as_mut() else {
            return false;
        };
        let typing = self.overlay_find.as_ref().is_some_and(|f| f.typing);
        if !typing && key.code == KeyCode::Char('/') && key.modifiers.is_empty() {
            self.overlay_find = Some(Find::open());
        } else {
            let top = match &*ov {
                Overlay::History(h) => h.skip(self.areas.overlay.height),
                _ => ov.scroll_mut().map_or(0, |s| *s as usize),
            };
            let Some(f) = self.overlay_find.as_mut() else {
                return false;
            };
            match f.key(key, &lines, top) {
                FindKey::Used => {
                    if let (Overlay::History(h), Some((line, _))) = (&mut *ov, f.at) {
                        h.select_row(line);
                    }
                    let page = self.areas.overlay.height.saturating_sub(2) as usize;
                    let to = f.scrolled(top, page);
                    if let Some(s) = ov.scroll_mut() {
                        *s = u16::try_from(to).unwrap_or(u16::MAX);
                    }
                }
                FindKey::Cleared => {
                    self.overlay_find = None;
                    return true;
                }
                FindKey::Ignored => return false,
            }
        }
        if let Some(f) = &self.overlay_find {
            // Said without the Messages log, which is what is searched.
            self.messages.show(f.status(&lines), false);
        }
        true
    }
}
