//! `/` in the Raw tab: the search prompt, `n`/`N` and Esc (see
//! [`crate::ui::find`]), the current match kept in view.

use crossterm::event::{KeyCode, KeyEvent};

use super::{Inspector, RawText, Tab};
use crate::ui::find::{Find, FindKey};

impl Inspector {
    /// The Raw tab's lines as text, for the search.
    pub(super) fn raw_lines(&self) -> Vec<String> {
        match &self.raw {
            RawText::Ready(t) => (0..t.line_count()).map(|i| t.line(i).to_owned()).collect(),
            _ => Vec::new(),
        }
    }

    /// A search key in the Raw tab (`/` opens the prompt); `None` when the
    /// key is not the search's.
    pub(super) fn find_key(&mut self, key: KeyEvent) -> Option<bool> {
        if self.tab != Tab::Raw {
            return None;
        }
        let typing = self.find.as_ref().is_some_and(|f| f.typing);
        if !typing && key.code == KeyCode::Char('/') && key.modifiers.is_empty() {
            self.find = Some(Find::open());
            return Some(true);
        }
        let lines = self.raw_lines();
        let f = self.find.as_mut()?;
        match f.key(key, &lines, self.raw_view.offset) {
            FindKey::Used => {
                self.raw_view.offset = f.scrolled(self.raw_view.offset, self.raw_view.page);
                Some(true)
            }
            FindKey::Cleared => {
                self.find = None;
                Some(true)
            }
            FindKey::Ignored => None,
        }
    }

    /// The search's line (`/carol  match 3/12`) while one is on in the
    /// Raw tab.
    pub fn find_status(&self) -> Option<String> {
        let f = self.find.as_ref().filter(|_| self.tab == Tab::Raw)?;
        Some(f.status(&self.raw_lines()))
    }

    /// Whether the search prompt takes typed keys.
    pub fn find_typing(&self) -> bool {
        self.tab == Tab::Raw && self.find.as_ref().is_some_and(|f| f.typing)
    }
}
