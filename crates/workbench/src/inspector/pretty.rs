//! Pretty-printed JSON text indexed by line, made once in the background and
//! drawn a screenful at a time with light JSON colouring.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::theme::Theme;

/// Characters of one line drawn at most (the rest is off screen anyway).
const MAX_LINE_CHARS: usize = 1_000;

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

/// A scrollable view of a [`PrettyText`].
#[derive(Debug, Default)]
pub struct TextView {
    /// First line drawn.
    pub offset: usize,
    /// Lines visible at the last draw, for paging.
    pub page: usize,
}

impl TextView {
    /// Scrolls by `delta` lines within a text of `len` lines.
    pub fn scroll_by(&mut self, delta: isize, len: usize) {
        let last = len.saturating_sub(self.page.max(1)) as isize;
        self.offset = (self.offset as isize + delta).clamp(0, last.max(0)) as usize;
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
        self.page = area.height as usize;
        self.scroll_by(0, text.line_count());
        let end = (self.offset + area.height as usize).min(text.line_count());
        if wrap {
            let lines: Vec<Line> = (self.offset..end)
                .map(|i| json_line(text.line(i), theme))
                .collect();
            ratatui::widgets::Widget::render(
                ratatui::widgets::Paragraph::new(lines)
                    .wrap(ratatui::widgets::Wrap { trim: false }),
                area,
                buf,
            );
            return;
        }
        for (n, i) in (self.offset..end).enumerate() {
            let line = json_line(text.line(i), theme);
            buf.set_line(area.x, area.y + n as u16, &line, area.width);
        }
    }
}

/// One line of pretty JSON, coloured: keys, strings, numbers, literals.
pub fn json_line(line: &str, theme: &Theme) -> Line<'static> {
    let plain = Style::default().fg(theme.fg);
    let mut spans = Vec::new();
    let chars: Vec<char> = line.chars().take(MAX_LINE_CHARS).collect();
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
        let l = json_line("  \"k\\\"ey\": \"v\", 12, true, null", &t);
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
        let mut v = TextView { offset: 0, page: 2 };
        v.scroll_by(10, p.line_count());
        assert_eq!(v.offset, 3);
        v.scroll_by(-10, p.line_count());
        assert_eq!(v.offset, 0);
    }
}
