//! How the command palette draws: the input line, then the rows it shows,
//! each with its key in a column of its own.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{Palette, PaletteItem, fit};
use crate::theme::Theme;
use crate::window::frame;

impl Palette {
    /// Draws the palette in `r` (already cleared).
    pub(crate) fn render(&self, t: &Theme, r: Rect, buf: &mut Buffer) {
        let mut lines = vec![
            Line::from(vec![
                Span::styled("> ", Style::default().fg(t.accent)),
                Span::styled(self.input.clone(), Style::default().fg(t.fg)),
                Span::styled("█", Style::default().fg(t.accent)),
            ]),
            Line::default(),
        ];
        let room = r.height.saturating_sub(4) as usize;
        let skip = self.first_drawn(room);
        let key_of = |item: &PaletteItem| match item {
            PaletteItem::Action(_, k) => k.clone(),
            _ => String::new(),
        };
        // The key column keeps its room; the text is cut to what is
        // left, so a key never runs out of the frame.
        let key_w = self
            .shown()
            .map(|it| unicode_width::UnicodeWidthStr::width(key_of(it).as_str()))
            .max()
            .unwrap_or(0);
        let inner = usize::from(r.width.saturating_sub(2));
        let text_w = inner.saturating_sub(key_w + 3).max(8);
        for (i, item) in self.shown().enumerate().skip(skip).take(room) {
            let style = if i == self.selected {
                Style::default().fg(t.fg).patch(t.selected())
            } else {
                Style::default().fg(t.fg)
            };
            lines.push(Line::from(vec![
                Span::styled(format!(" {}", fit(&item.text(), text_w)), style),
                Span::styled(format!(" {}", key_of(item)), Style::default().fg(t.dim)),
            ]));
        }
        Paragraph::new(lines)
            .block(frame("command".into(), t))
            .render(r, buf);
    }
}
