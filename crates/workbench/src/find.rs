//! `/` in a text view (the inspector's Raw tab): a prompt, the matches
//! highlighted, `n`/`N` to the next and previous one (scrolled into
//! view), Esc to clear, and `match 3/12` or `no match`. Matching is the
//! editor's: plain text, case-insensitive unless the query has a capital.
//! The same search serves the overlays (help, Messages, History, a diff):
//! the app's side of it is `app/overlay_find.rs`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use crate::editor::search::Needle;
use crate::theme::Theme;

/// One search over a view's lines.
#[derive(Debug, Clone, Default)]
pub struct Find {
    pub query: String,
    /// The prompt takes the keys (until Enter or Esc).
    pub typing: bool,
    /// The current match: line and character column.
    pub at: Option<(usize, usize)>,
}

/// What a key did to a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindKey {
    /// Taken: the query or the current match changed, or the prompt closed.
    Used,
    /// Esc: the search is over, its highlights go.
    Cleared,
    /// Not a search key.
    Ignored,
}

impl Find {
    /// A search with its prompt open.
    pub fn open() -> Find {
        Find {
            typing: true,
            ..Find::default()
        }
    }

    /// A key for the search; `lines` are the view's, `top` its first line
    /// drawn (typing looks for the first match from there).
    pub fn key(&mut self, key: KeyEvent, lines: &[String], top: usize) -> FindKey {
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return FindKey::Ignored;
        }
        match key.code {
            KeyCode::Esc => return FindKey::Cleared,
            KeyCode::Enter if self.typing => self.typing = false,
            KeyCode::Backspace if self.typing => {
                self.query.pop();
                self.first_from(lines, top);
            }
            KeyCode::Char(c) if self.typing => {
                self.query.push(c);
                self.first_from(lines, top);
            }
            KeyCode::Char('n') => self.step(lines, false),
            KeyCode::Char('N') => self.step(lines, true),
            _ => return FindKey::Ignored,
        }
        FindKey::Used
    }

    fn first_from(&mut self, lines: &[String], top: usize) {
        self.at = Needle::new(&self.query).and_then(|n| {
            let from = (top, 0);
            match n
                .find_all(lines.get(top).map_or("", String::as_str))
                .first()
            {
                Some(&c) => Some((top, c)),
                None => n.next(lines, from, false),
            }
        });
    }

    fn step(&mut self, lines: &[String], back: bool) {
        let Some(n) = Needle::new(&self.query) else {
            return;
        };
        let from = self.at.unwrap_or((0, 0));
        self.at = n.next(lines, from, back).or(self.at);
    }

    /// `/query  match 3/12`, `/query  no match`, or the prompt alone.
    pub fn status(&self, lines: &[String]) -> String {
        let cursor = if self.typing { "█" } else { "" };
        let Some(n) = Needle::new(&self.query) else {
            return format!("/{cursor}");
        };
        let (total, index) = n.count(lines, self.at.unwrap_or((usize::MAX, 0)));
        match (total, index) {
            (0, _) => format!("/{}{cursor}  no match", self.query),
            (t, Some(i)) => format!("/{}{cursor}  match {i}/{t} (n/N)", self.query),
            (t, None) => format!("/{}{cursor}  {t} matches", self.query),
        }
    }

    /// The first line to draw so that the current match shows in a view of
    /// `page` rows now starting at `top`.
    pub fn scrolled(&self, top: usize, page: usize) -> usize {
        match self.at {
            Some((line, _)) if line < top || line >= top + page.max(1) => {
                line.saturating_sub(page / 3)
            }
            _ => top,
        }
    }

    /// How many characters a match is (0 with no query).
    pub fn match_len(&self) -> usize {
        Needle::new(&self.query).map_or(0, |n| n.len())
    }

    /// Paints the matches on rows drawn one line each from line `top`
    /// (no wrapping; a character a column), the current one brighter.
    pub fn paint(&self, lines: &[String], top: usize, area: Rect, buf: &mut Buffer, t: &Theme) {
        let rows: Vec<(usize, usize)> = (top..top + area.height as usize).map(|l| (l, 0)).collect();
        self.paint_rows(lines, &rows, area, buf, t);
    }

    /// Paints the matches on rows that each show a line from a character
    /// on (a line scrolled sideways, or a wrapped line's later rows), a
    /// character a column, the current match brighter.
    pub fn paint_rows(
        &self,
        lines: &[String],
        rows: &[(usize, usize)],
        area: Rect,
        buf: &mut Buffer,
        t: &Theme,
    ) {
        let Some(n) = Needle::new(&self.query) else {
            return;
        };
        let hit = Style::default().fg(t.bg).bg(t.warning);
        let current = hit.add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
        let width = area.width as usize;
        for (row, &(i, from)) in rows.iter().enumerate().take(area.height as usize) {
            let Some(line) = lines.get(i) else {
                break;
            };
            for c in n.find_all(line) {
                let style = if self.at == Some((i, c)) {
                    current
                } else {
                    hit
                };
                for k in (c..c + n.len()).filter(|k| *k >= from && *k - from < width) {
                    buf[(area.x + (k - from) as u16, area.y + row as u16)].set_style(style);
                }
            }
        }
    }
}
