//! Pretty-printed JSON text indexed by line, made once in the background and
//! drawn a screenful at a time with light JSON colouring.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::theme::Theme;

/// Pretty JSON with the start of every line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrettyText {
    text: String,
    starts: Vec<usize>,
}

impl PrettyText {
    /// Pretty-prints `v` (two-space indent) and indexes its lines.
    pub fn of(v: &Value) -> PrettyText {
        let text = serde_json::to_string_pretty(v).unwrap_or_else(|e| e.to_string());
        PrettyText::from_text(text)
    }

    /// Indexes the lines of `text`.
    pub fn from_text(text: String) -> PrettyText {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        PrettyText { text, starts }
    }

    /// Number of lines (an empty text is one empty line).
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Line `i` without its newline.
    pub fn line(&self, i: usize) -> &str {
        let Some(&start) = self.starts.get(i) else {
            return "";
        };
        let end = self
            .starts
            .get(i + 1)
            .map(|e| e - 1)
            .unwrap_or(self.text.len());
        &self.text[start..end]
    }
}

/// A scrollable view of a [`PrettyText`]: a line a row, cut at the right
/// edge and scrolled sideways (`col`), or wrapped, a long line going on
/// over the next rows (`sub` of them scrolled past at the top). Either way
/// a row shows the characters from a place of one line, a character a
/// column, so a search can bring any match into view and mark it.
#[derive(Debug, Default)]
pub struct TextView {
    /// First line drawn.
    pub offset: usize,
    /// Wrapped: the rows of line `offset` scrolled past.
    sub: usize,
    /// Cut: the first column drawn of every line.
    col: usize,
    /// Lines visible at the last draw, for paging.
    pub page: usize,
    /// The width of the last draw.
    width: usize,
    /// Whether the last draw wrapped.
    wrapped: bool,
    /// What each row of the last draw showed: a line and the character
    /// it starts at.
    rows: Vec<(usize, usize)>,
}

/// How many rows line `i` of `text` takes wrapped at `width`.
fn rows_of(text: &PrettyText, i: usize, width: usize) -> usize {
    text.line(i).chars().count().div_ceil(width.max(1)).max(1)
}

impl TextView {
    /// Scrolls by `delta` lines within a text of `len` lines.
    pub fn scroll_by(&mut self, delta: isize, len: usize) {
        let last = len.saturating_sub(self.page.max(1)) as isize;
        self.offset = (self.offset as isize + delta).clamp(0, last.max(0)) as usize;
        self.sub = 0;
    }

    /// Scrolls by `delta` rows: lines of a cut view, rows of a wrapped
    /// one (a long line is read a row at a time). A delta of a page or
    /// more of pages beyond the text goes to its first or last line.
    pub fn scroll(&mut self, text: &PrettyText, delta: isize) {
        let len = text.line_count();
        if !self.wrapped {
            return self.scroll_by(delta, len);
        }
        let width = self.width.max(1);
        if delta.unsigned_abs() > len.saturating_mul(4).max(1 << 16) {
            // Home and End.
            self.sub = 0;
            self.offset = 0;
            if delta > 0 {
                self.offset = len.saturating_sub(1);
                self.sub = rows_of(text, self.offset, width).saturating_sub(1);
                self.back_up(text, self.page.max(1) - 1);
            }
            return;
        }
        if delta < 0 {
            return self.back_up(text, delta.unsigned_abs());
        }
        for _ in 0..delta {
            if self.sub + 1 < rows_of(text, self.offset, width) {
                self.sub += 1;
            } else if self.offset + 1 < len {
                self.offset += 1;
                self.sub = 0;
            } else {
                break;
            }
        }
    }

    /// Moves the top of a wrapped view up by `rows` rows.
    fn back_up(&mut self, text: &PrettyText, rows: usize) {
        for _ in 0..rows {
            if self.sub > 0 {
                self.sub -= 1;
            } else if self.offset > 0 {
                self.offset -= 1;
                self.sub = rows_of(text, self.offset, self.width.max(1)) - 1;
            } else {
                break;
            }
        }
    }

    /// Scrolls a cut view sideways by `delta` columns (none when wrapped).
    pub fn scroll_sideways(&mut self, delta: isize) {
        self.col = (self.col as isize + delta).max(0) as usize;
    }

    /// The first column drawn of a cut view (0 when wrapped).
    pub fn col(&self) -> usize {
        if self.wrapped { 0 } else { self.col }
    }

    /// What each row of the last draw showed (a line, and the character
    /// the row starts at): a search marks its matches on them.
    pub fn rows(&self) -> &[(usize, usize)] {
        &self.rows
    }

    /// Scrolls so that `len` characters at column `col` of line `line`
    /// show, a third of the page down when they were out of view: the row
    /// of a wrapped line they are on, or the columns of a cut one.
    pub fn reveal(&mut self, text: &PrettyText, line: usize, col: usize, len: usize) {
        let page = self.page.max(1);
        let width = self.width.max(1);
        if self.wrapped {
            let row = col / width;
            let shown = self
                .rows
                .iter()
                .any(|&(l, from)| l == line && from == row * width);
            if shown {
                return;
            }
            // The match's row a third of the page down.
            self.offset = line;
            self.sub = row;
            self.back_up(text, page / 3);
            return;
        }
        if line < self.offset || line >= self.offset + page {
            self.offset = line.saturating_sub(page / 3);
        }
        if col < self.col || col + len > self.col + width {
            self.col = col.saturating_sub(width / 3);
            if col + len > self.col + width {
                self.col = (col + len).saturating_sub(width);
            }
        }
    }

    /// Draws the lines on screen.
    /// Wrapped, a long line continues on the next rows.
    pub fn render(
        &mut self,
        text: &PrettyText,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        wrap: bool,
    ) {
        let (width, height) = (area.width as usize, area.height as usize);
        if self.wrapped != wrap || self.width != width {
            // Another way of drawing: rows scrolled past no longer mean
            // the same text.
            self.sub = 0;
        }
        self.page = height;
        self.width = width;
        self.wrapped = wrap;
        let len = text.line_count();
        if wrap {
            // The last line starts no lower than the page's top.
            self.offset = self.offset.min(len.saturating_sub(1));
        } else {
            self.scroll_by(0, len);
        }
        self.rows.clear();
        if width == 0 {
            return;
        }
        let mut i = self.offset;
        let mut skip = if wrap { self.sub } else { 0 };
        while self.rows.len() < height && i < len {
            let line = text.line(i);
            if wrap {
                let rows = rows_of(text, i, width);
                skip = skip.min(rows - 1);
                let need = (rows.min(skip + height - self.rows.len())) * width;
                let cells = json_cells(line, theme, need);
                for r in skip..rows {
                    if self.rows.len() >= height {
                        break;
                    }
                    let from = r * width;
                    let y = area.y + self.rows.len() as u16;
                    let row: Vec<(char, Style)> =
                        cells.iter().skip(from).take(width).copied().collect();
                    buf.set_line(area.x, y, &cells_line(&row), area.width);
                    self.rows.push((i, from));
                }
                skip = 0;
            } else {
                let y = area.y + self.rows.len() as u16;
                let cells = json_cells(line, theme, self.col + width);
                let row: Vec<(char, Style)> =
                    cells.iter().skip(self.col).take(width).copied().collect();
                buf.set_line(area.x, y, &cells_line(&row), area.width);
                // Where a line goes on past an edge, the edge says so.
                let chars = line.chars().count();
                let mark = Style::default().fg(theme.accent);
                if self.col > 0 && chars > 0 {
                    buf.set_string(area.x, y, "◀", mark);
                }
                if chars > self.col + width {
                    buf.set_string(area.x + area.width - 1, y, "▶", mark);
                }
                self.rows.push((i, self.col));
            }
            i += 1;
        }
    }
}

/// The first `limit` characters of a line of pretty JSON with their
/// colours.
fn json_cells(line: &str, theme: &Theme, limit: usize) -> Vec<(char, Style)> {
    json_line_upto(line, theme, limit)
        .spans
        .iter()
        .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
        .collect()
}

/// Characters with their styles as a line of spans.
fn cells_line(cells: &[(char, Style)]) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    for &(c, style) in cells {
        match spans.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push(c),
            _ => spans.push(Span::styled(c.to_string(), style)),
        }
    }
    Line::from(spans)
}

/// The first `limit` characters of a line of pretty JSON, coloured: keys,
/// strings, numbers, literals.
fn json_line_upto(line: &str, theme: &Theme, limit: usize) -> Line<'static> {
    let plain = Style::default().fg(theme.fg);
    let mut spans = Vec::new();
    let chars: Vec<char> = line.chars().take(limit).collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let colour = if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i = (i + 1).min(chars.len());
            let is_key = chars[i..].first() == Some(&':');
            Some(if is_key {
                theme.json_key
            } else {
                theme.json_string
            })
        } else if c == '-' || c.is_ascii_digit() {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || "+-.".contains(chars[i]))
            {
                i += 1;
            }
            Some(theme.json_number)
        } else if c.is_ascii_alphabetic() {
            while i < chars.len() && chars[i].is_ascii_alphabetic() {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            Some(if word == "null" {
                theme.json_null
            } else {
                theme.json_bool
            })
        } else {
            while i < chars.len()
                && !(chars[i] == '"' || chars[i] == '-' || chars[i].is_ascii_alphanumeric())
            {
                i += 1;
            }
            None
        };
        let text: String = chars[start..i].iter().collect();
        spans.push(match colour {
            Some(c) => Span::styled(text, Style::default().fg(c)),
            None => Span::styled(text, plain),
        });
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_are_indexed() {
        let p = PrettyText::of(&json!({"a": [1, 2], "b": "x"}));
        assert_eq!(p.line_count(), 7);
        assert_eq!(p.line(0), "{");
        assert_eq!(p.line(1), "  \"a\": [");
        assert_eq!(p.line(6), "}");
        assert_eq!(p.line(7), "");
    }

    #[test]
    fn keys_and_values_get_their_colours() {
        let t = Theme::dark();
        let l = json_line_upto("  \"k\\\"ey\": \"v\", 12, true, null", &t, 1_000);
        let find = |s: &str| l.spans.iter().find(|x| x.content == s).map(|x| x.style.fg);
        assert_eq!(find("\"k\\\"ey\""), Some(Some(t.json_key)));
        assert_eq!(find("\"v\""), Some(Some(t.json_string)));
        assert_eq!(find("12"), Some(Some(t.json_number)));
        assert_eq!(find("true"), Some(Some(t.json_bool)));
        assert_eq!(find("null"), Some(Some(t.json_null)));
        let text: String = l.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(text, "  \"k\\\"ey\": \"v\", 12, true, null");
    }

    #[test]
    fn scrolling_stops_at_the_ends() {
        let p = PrettyText::from_text("a\nb\nc\nd\ne".to_owned());
        let mut v = TextView {
            page: 2,
            ..TextView::default()
        };
        v.scroll_by(10, p.line_count());
        assert_eq!(v.offset, 3);
        v.scroll_by(-10, p.line_count());
        assert_eq!(v.offset, 0);
    }
}
