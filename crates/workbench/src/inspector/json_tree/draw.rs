//! How the tree draws: the rows on screen only (the selected one whole
//! when long lines wrap), each row its key, its value or summary, and the
//! fold marks.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use super::{
    JsonTree, Label, MAX_KEY_CHARS, Row, RowKind, ScalarKind, count_text, cut_chars, quote,
};
use crate::theme::Theme;

impl JsonTree {
    /// Keeps the selection on screen for a view `height` rows tall.
    fn follow(&mut self, height: usize) {
        self.page = height.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + self.page {
            self.offset = self.selected + 1 - self.page;
        }
    }

    /// Draws the visible rows into `area`; work is proportional to the
    /// area's height, not to the value.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        if area.is_empty() {
            return;
        }
        let width = area.width.max(1) as usize;
        // Wrapped, the selected row takes the lines its text needs (at most
        // the pane's height); the rows after it move down.
        let extra = match self.rows.get(self.selected) {
            Some(row) if self.wrap => (row_line(row, theme).width().div_ceil(width).max(1) - 1)
                .min(area.height.saturating_sub(1) as usize),
            _ => 0,
        };
        self.follow((area.height as usize).saturating_sub(extra).max(1));
        self.wrapped = (0, 0);
        let mut y = area.y;
        let mut i = self.offset;
        while y < area.bottom() && i < self.rows.len() {
            let row = &self.rows[i];
            let line = row_line(row, theme);
            let selected = i == self.selected;
            let height = if selected { 1 + extra as u16 } else { 1 }.min(area.bottom() - y);
            let r = Rect::new(area.x, y, area.width, height);
            if selected {
                let mut style = theme.selected();
                if !focused {
                    style = style.remove_modifier(Modifier::BOLD);
                }
                buf.set_style(r, style);
            }
            if selected && extra > 0 {
                self.wrapped = ((y - area.y) as usize, extra);
                Paragraph::new(line)
                    .wrap(Wrap { trim: false })
                    .render(r, buf);
            } else {
                buf.set_line(area.x, y, &line, area.width);
            }
            y += height;
            i += 1;
        }
    }

    #[cfg(test)]
    /// The text of row `i` as drawn (tests and snapshots read it).
    pub fn row_text(&self, i: usize) -> String {
        self.rows
            .get(i)
            .map(|r| {
                row_line(r, &Theme::dark())
                    .spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn row_line(row: &Row, theme: &Theme) -> Line<'static> {
    let dim = Style::default().fg(theme.dim);
    let plain = Style::default().fg(theme.fg);
    let mut spans = vec![Span::raw("  ".repeat(row.depth))];
    spans.push(match row.kind {
        RowKind::Open { expanded: true, .. } => Span::styled("▾ ", dim),
        RowKind::Open { len: 0, .. } => Span::raw("  "),
        RowKind::Open { .. } => Span::styled("▸ ", dim),
        RowKind::Bucket { expanded: true, .. } => Span::styled("▾ ", dim),
        RowKind::Bucket { .. } => Span::styled("▸ ", dim),
        _ => Span::raw("  "),
    });
    match &row.label {
        Label::Root => {}
        Label::Key(k) => {
            spans.push(Span::styled(
                quote(&cut_chars(k, MAX_KEY_CHARS)),
                Style::default().fg(theme.json_key),
            ));
            spans.push(Span::styled(": ", plain));
        }
        Label::Index(i) => spans.push(Span::styled(format!("{i}: "), dim)),
    }
    match &row.kind {
        RowKind::Open {
            object,
            len,
            expanded,
        } => {
            let (o, c) = if *object { ("{", "}") } else { ("[", "]") };
            if *len == 0 {
                spans.push(Span::styled(format!("{o}{c}"), plain));
            } else if *expanded {
                spans.push(Span::styled(o, plain));
                spans.push(Span::styled(format!(" {}", count_text(*object, *len)), dim));
            } else {
                spans.push(Span::styled(format!("{o}…{c}"), plain));
                spans.push(Span::styled(format!(" {}", count_text(*object, *len)), dim));
            }
        }
        RowKind::Close { object } => {
            spans.push(Span::styled(if *object { "}" } else { "]" }, plain));
        }
        RowKind::Bucket { start, end, .. } => {
            spans.push(Span::styled(format!("[{start} … {}]", end - 1), dim));
        }
        RowKind::Scalar { kind, text, note } => {
            let colour = match kind {
                ScalarKind::Null => theme.json_null,
                ScalarKind::Bool => theme.json_bool,
                ScalarKind::Number => theme.json_number,
                ScalarKind::String => theme.json_string,
            };
            spans.push(Span::styled(text.clone(), Style::default().fg(colour)));
            if let Some(n) = note {
                spans.push(Span::styled(format!(" {n}"), dim));
            }
        }
    }
    Line::from(spans)
}
