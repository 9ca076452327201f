//! `/` in the Raw and Logs tabs: the search prompt, `n`/`N` and Esc (see
//! [`crate::find`]), the current match kept in view.

use crossterm::event::{KeyCode, KeyEvent};

use super::{Inspector, RawText, Tab};
use crate::find::{Find, FindKey};
use crate::theme::Theme;

/// The Logs tab's text does not depend on its colours: any theme lays it
/// out for the search.
static TEXT_THEME: std::sync::LazyLock<Theme> = std::sync::LazyLock::new(Theme::dark);

impl Inspector {
    /// The Raw tab's lines as text, for the search.
    pub(super) fn raw_lines(&self) -> Vec<String> {
        match &self.raw {
            RawText::Ready(t) => (0..t.line_count()).map(|i| t.line(i).to_owned()).collect(),
            _ => Vec::new(),
        }
    }

    /// The Logs tab's lines as text, for the search (as drawn when a
    /// search is on: a line a row, cut, not wrapped).
    pub(super) fn logs_text(&self) -> Vec<String> {
        let Some(shown) = &self.shown else {
            return Vec::new();
        };
        super::logs::lines(shown.record.as_deref(), &self.live, &TEXT_THEME)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    /// Whether this tab is searched with `/`.
    fn searched(&self) -> bool {
        matches!(self.tab, Tab::Raw | Tab::Logs)
    }

    /// The searched tab's lines, its first line drawn and its page.
    fn find_view(&self) -> (Vec<String>, usize, usize) {
        match self.tab {
            Tab::Logs => (self.logs_text(), self.logs_scroll as usize, self.logs_page),
            _ => (self.raw_lines(), self.raw_view.offset, self.raw_view.page),
        }
    }

    /// A search key in the Raw or Logs tab (`/` opens the prompt); `None`
    /// when the key is not the search's.
    pub(super) fn find_key(&mut self, key: KeyEvent) -> Option<bool> {
        if !self.searched() {
            return None;
        }
        let typing = self.find.as_ref().is_some_and(|f| f.typing);
        if !typing && key.code == KeyCode::Char('/') && key.modifiers.is_empty() {
            self.find = Some(Find::open());
            return Some(true);
        }
        let (lines, top, page) = self.find_view();
        let f = self.find.as_mut()?;
        match f.key(key, &lines, top) {
            FindKey::Used => {
                match (&self.tab, &self.raw, f.at) {
                    (Tab::Logs, ..) => {
                        let to = f.scrolled(top, page);
                        self.logs_scroll = u16::try_from(to).unwrap_or(u16::MAX);
                    }
                    // Raw: the match's row of a wrapped line, or its
                    // columns of a cut one.
                    (_, RawText::Ready(text), Some((line, col))) => {
                        let len = f.match_len();
                        self.raw_view.reveal(text, line, col, len);
                    }
                    _ => {}
                }
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
    /// Raw or Logs tab.
    pub fn find_status(&self) -> Option<String> {
        let f = self.find.as_ref().filter(|_| self.searched())?;
        Some(f.status(&self.find_view().0))
    }

    /// Whether the search prompt takes typed keys.
    pub fn find_typing(&self) -> bool {
        self.searched() && self.find.as_ref().is_some_and(|f| f.typing)
    }
}
