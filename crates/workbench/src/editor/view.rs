//! Drawing the editor pane: border and title, the gutter (diagnostic marker
//! and line number), coloured text with selection, search matches and cursor,
//! diagnostics as rows under their lines, horizontal scrolling, and the bars
//! at the bottom (ask bars, search and go-to boxes). Only visible lines are
//! coloured and drawn.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use super::highlight::HighlightCache;
use super::{Editor, Prompt, ScreenRow};
use crate::theme::Theme;
use pipewright_engine::diag::Severity;

/// Display width of a tab character.
const TAB_WIDTH: usize = 4;

/// At most this many diagnostic rows are shown under one line.
const MAX_DIAG_ROWS: usize = 3;

/// Display width of one character (tabs excluded).
fn char_width(c: char) -> usize {
    let mut b = [0u8; 4];
    Span::raw(&*c.encode_utf8(&mut b)).width()
}

/// Width of a character drawn at display column `at`.
fn width_at(c: char, at: usize) -> usize {
    if c == '\t' {
        TAB_WIDTH - at % TAB_WIDTH
    } else {
        char_width(c)
    }
}

/// The display column where character `col` of `line` starts.
pub(super) fn display_col(line: &str, col: usize) -> usize {
    line.chars().take(col).fold(0, |at, c| at + width_at(c, at))
}

/// The character column under display column `x` (end of line past it).
pub(super) fn char_at_display_col(line: &str, x: usize) -> usize {
    let mut at = 0;
    for (i, c) in line.chars().enumerate() {
        let w = width_at(c, at);
        if x < at + w {
            return i;
        }
        at += w;
    }
    line.chars().count()
}

fn severity_style(theme: &Theme, s: Severity) -> Style {
    Style::default().fg(match s {
        Severity::Error => theme.error,
        Severity::Warning => theme.warning,
    })
}

impl Editor {
    /// Draws the pane into `area`: a bordered block titled with the file
    /// name (` [+]` when dirty), the text, and any ask bar or prompt in the
    /// bottom rows. The cursor is drawn only when `focused`.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, theme: &Theme, focused: bool) {
        let title = theme.pane_title(
            &format!(
                "{}{}",
                self.path.display(),
                if self.is_dirty() { " [+]" } else { "" }
            ),
            focused,
        );
        let block = Block::bordered()
            .title(title)
            .border_style(theme.border_style(focused))
            .style(theme.base());
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width == 0 || inner.height == 0 {
            self.view.rows.clear();
            return;
        }

        let bars = self.bars(theme);
        let bar_rows = u16::try_from(bars.len())
            .unwrap_or(u16::MAX)
            .min(inner.height.saturating_sub(1));
        for (i, line) in bars.iter().take(usize::from(bar_rows)).enumerate() {
            let y = inner.bottom() - bar_rows + i as u16;
            let row = Rect::new(inner.x, y, inner.width, 1);
            buf.set_style(row, line.style);
            line.render(row, buf);
        }
        let text_rows = Rect::new(inner.x, inner.y, inner.width, inner.height - bar_rows);

        let count = self.area.lines().len();
        let digits = count.to_string().len();
        let gutter = u16::try_from(digits + 3)
            .unwrap_or(u16::MAX)
            .min(text_rows.width);
        let text = Rect::new(
            text_rows.x + gutter,
            text_rows.y,
            text_rows.width - gutter,
            text_rows.height,
        );
        self.view.text = text;
        self.scroll_into_view(usize::from(text.height), usize::from(text.width));
        self.layout_rows(usize::from(text.height));

        let highlight = self
            .highlight
            .get_or_insert_with(|| HighlightCache::new(&theme.syntax));
        highlight.set_theme(&theme.syntax);
        let last_shown = self.view.rows.iter().rev().find_map(|r| match r {
            ScreenRow::Line(r) => Some(*r),
            ScreenRow::Diagnostic(..) => None,
        });
        if let Some(last) = last_shown {
            highlight.ensure(self.area.lines(), last + 1);
        }

        let needle = self.search_needle();
        for (i, row) in self.view.rows.iter().enumerate() {
            let y = text.y + i as u16;
            match *row {
                ScreenRow::Line(r) => {
                    self.draw_gutter(buf, text_rows.x, y, r, digits, theme);
                    let matches = needle
                        .as_ref()
                        .map(|n| {
                            n.find_all(&self.area.lines()[r])
                                .into_iter()
                                .map(|c| (c, c + n.len()))
                                .collect::<Vec<_>>()
                        })
                        .unwrap_or_default();
                    self.draw_line(buf, text, y, r, &matches, theme, focused);
                }
                ScreenRow::Diagnostic(r, k) => self.draw_diagnostic(buf, text, y, r, k, theme),
            }
        }
    }

    /// Moves the view so the cursor is on screen (unless the wheel moved it
    /// away on purpose).
    fn scroll_into_view(&mut self, height: usize, width: usize) {
        let count = self.area.lines().len();
        self.view.top = self.view.top.min(count.saturating_sub(1));
        if !self.view.follow || height == 0 {
            return;
        }
        let (row, col) = self.pos();
        if row < self.view.top {
            self.view.top = row;
        } else {
            let mut needed: usize = (self.view.top..=row).map(|r| 1 + self.diag_rows(r)).sum();
            while needed > height && self.view.top < row {
                needed -= 1 + self.diag_rows(self.view.top);
                self.view.top += 1;
            }
        }
        let x = display_col(&self.area.lines()[row], col);
        // After a resize the offset is worked out again: no columns are
        // hidden on the left that the new width could show.
        if width != self.view.last_width {
            self.view.last_width = width;
            self.view.left = (x + 1).saturating_sub(width.max(1));
        }
        if x < self.view.left {
            self.view.left = x;
        } else if width > 0 && x >= self.view.left + width {
            self.view.left = x + 1 - width;
        }
    }

    fn diag_rows(&self, row: usize) -> usize {
        let Some(list) = self.diag_lines.get(&row) else {
            return 0;
        };
        let shown = list.len().min(MAX_DIAG_ROWS);
        if !self.view.wrap {
            return shown;
        }
        (0..shown).map(|k| self.diag_pieces(row, k)).sum()
    }

    /// Screen rows the `k`-th diagnostic under `row` takes (one unless
    /// wrapping).
    fn diag_pieces(&self, row: usize, k: usize) -> usize {
        if !self.view.wrap {
            return 1;
        }
        let width = usize::from(self.view.text.width).max(1);
        Span::raw(self.diag_message(row, k))
            .width()
            .div_ceil(width)
            .clamp(1, 12)
    }

    /// The text of the `k`-th diagnostic row under `row`.
    fn diag_message(&self, row: usize, k: usize) -> String {
        let Some(list) = self.diag_lines.get(&row) else {
            return String::new();
        };
        let Some(d) = list.get(k).map(|i| &self.diagnostics[*i]) else {
            return String::new();
        };
        let mut message = format!("└ {}", d.message);
        if let Some(hint) = &d.hint {
            message.push_str(&format!(" ({hint})"));
        }
        let more = list.len().saturating_sub(MAX_DIAG_ROWS);
        if k + 1 == MAX_DIAG_ROWS && more > 0 {
            message.push_str(&format!(" (+{more} more)"));
        }
        message
    }

    /// Which diagnostic and which piece of it screen row `n` under `row`
    /// shows.
    fn diag_piece(&self, row: usize, mut n: usize) -> Option<(usize, usize)> {
        let shown = self.diag_lines.get(&row)?.len().min(MAX_DIAG_ROWS);
        for k in 0..shown {
            let p = self.diag_pieces(row, k);
            if n < p {
                return Some((k, n));
            }
            n -= p;
        }
        None
    }

    fn layout_rows(&mut self, height: usize) {
        let count = self.area.lines().len();
        let mut rows = Vec::with_capacity(height);
        let mut r = self.view.top;
        while rows.len() < height && r < count {
            rows.push(ScreenRow::Line(r));
            for k in 0..self.diag_rows(r) {
                if rows.len() < height {
                    rows.push(ScreenRow::Diagnostic(r, k));
                }
            }
            r += 1;
        }
        self.view.rows = rows;
    }

    fn draw_gutter(
        &self,
        buf: &mut Buffer,
        x: u16,
        y: u16,
        row: usize,
        digits: usize,
        theme: &Theme,
    ) {
        let (marker, style) = match self.line_severity(row) {
            Some(Severity::Error) => ("!", severity_style(theme, Severity::Error)),
            // `?` is a waiting question in the DAG: a warning is `▲`.
            Some(Severity::Warning) => ("▲", severity_style(theme, Severity::Warning)),
            None => (" ", theme.base()),
        };
        let max = usize::from(self.view.text.x.saturating_sub(x));
        buf.set_stringn(
            x,
            y,
            marker,
            max,
            theme.base().patch(style).add_modifier(Modifier::BOLD),
        );
        let number_style = if row == self.pos().0 {
            theme.base().add_modifier(Modifier::BOLD)
        } else {
            theme.base().fg(theme.line_number)
        };
        let number = format!(" {:>digits$} ", row + 1);
        buf.set_stringn(x + 1, y, number, max.saturating_sub(1), number_style);
    }

    #[allow(clippy::too_many_arguments)]
    fn draw_line(
        &self,
        buf: &mut Buffer,
        text: Rect,
        y: u16,
        row: usize,
        matches: &[(usize, usize)],
        theme: &Theme,
        focused: bool,
    ) {
        let line = &self.area.lines()[row];
        // Without colour (NO_COLOR) the text is not highlighted.
        let colors = if theme.mono {
            None
        } else {
            self.highlight.as_ref().and_then(|h| h.line(row))
        };
        let cursor = self.pos();
        let selection = self.area.selection_range();
        let underlines: Vec<(usize, usize)> = self
            .diag_lines
            .get(&row)
            .map(|list| {
                list.iter()
                    .map(|i| {
                        let span = self.diagnostics[*i].span;
                        let start = span.start.col.max(1) as usize - 1;
                        let end =
                            if span.end.line == span.start.line && span.end.col > span.start.col {
                                span.end.col as usize - 1
                            } else if span.end.line > span.start.line {
                                usize::MAX
                            } else {
                                start + 1
                            };
                        (start, end)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let left = self.view.left;
        let width = usize::from(text.width);
        let mut hint = 0;
        let mut at = 0;
        let mut chars = 0;
        for (col, (byte, c)) in line.char_indices().enumerate() {
            chars = col + 1;
            let w = width_at(c, at);
            let start = at;
            at += w;
            if start + w <= left {
                continue;
            }
            if start >= left + width {
                break;
            }
            let mut style = theme.base();
            if let Some(colors) = colors {
                style = style.patch(colors.style_at(byte, &mut hint));
            }
            if underlines.iter().any(|(s, e)| (*s..*e).contains(&col)) {
                style = style.add_modifier(Modifier::UNDERLINED);
            }
            if selection.is_some_and(|(s, e)| (row, col) >= s && (row, col) < e) {
                style = style.bg(theme.selection_bg);
            }
            if let Some((s, _)) = matches.iter().find(|(s, e)| (*s..*e).contains(&col)) {
                let current = (row, *s) == cursor;
                style =
                    style
                        .fg(Color::Black)
                        .bg(if current { theme.accent } else { theme.warning });
            }
            if focused && (row, col) == cursor {
                style = style.add_modifier(Modifier::REVERSED);
            }
            let x = text.x + (start.max(left) - left) as u16;
            if start < left || c == '\t' {
                // A character cut by the left edge, or a tab: blanks.
                let visible = (start + w).min(left + width) - start.max(left);
                buf.set_stringn(x, y, " ".repeat(visible), visible, style);
            } else {
                let mut b = [0u8; 4];
                let room = left + width - start;
                buf.set_stringn(x, y, &*c.encode_utf8(&mut b), room, style);
            }
        }
        let end_col = display_col(line, chars);
        if focused && cursor == (row, chars) && end_col >= left && end_col < left + width {
            let x = text.x + (end_col - left) as u16;
            buf.set_stringn(x, y, " ", 1, theme.base().add_modifier(Modifier::REVERSED));
        }
    }

    fn draw_diagnostic(
        &self,
        buf: &mut Buffer,
        text: Rect,
        y: u16,
        row: usize,
        k: usize,
        theme: &Theme,
    ) {
        let Some(list) = self.diag_lines.get(&row) else {
            return;
        };
        let Some((k, piece)) = self.diag_piece(row, k) else {
            return;
        };
        let Some(d) = list.get(k).map(|i| &self.diagnostics[*i]) else {
            return;
        };
        let style = severity_style(theme, d.severity).add_modifier(Modifier::ITALIC);
        let line = &self.area.lines()[row];
        let caret = display_col(line, d.span.start.col.max(1) as usize - 1);
        let width = usize::from(text.width);
        let message = self.diag_message(row, k);
        let x = text.x;
        if self.view.wrap {
            // The piece of the message this row holds, from the left edge.
            let chars: Vec<char> = message.chars().collect();
            let mut at = 0;
            let mut cols = 0;
            let mut pieces = 0;
            let mut start = 0;
            while at < chars.len() {
                let w = Span::raw(chars[at].to_string()).width();
                if cols + w > width {
                    pieces += 1;
                    cols = 0;
                    if pieces > piece {
                        break;
                    }
                    start = at;
                }
                cols += w;
                at += 1;
            }
            if pieces < piece {
                return;
            }
            let part: String = chars[start..at].iter().collect();
            buf.set_stringn(x, y, part, width, theme.base().patch(style));
            return;
        }
        let len = Span::raw(&message).width();
        // Under the offending column when it fits, else from the left edge.
        let offset = match caret.checked_sub(self.view.left) {
            Some(o) if o + len <= width => o,
            _ => 0,
        };
        let x = text.x + offset as u16;
        buf.set_stringn(x, y, message, width - offset, theme.base().patch(style));
    }

    /// The bottom rows: an ask bar, then a prompt.
    fn bars(&self, theme: &Theme) -> Vec<Line<'static>> {
        let ask = Style::default().fg(Color::Black).bg(theme.warning);
        let key = ask.add_modifier(Modifier::BOLD);
        let bar = Style::default()
            .fg(theme.status_bar_fg)
            .bg(theme.status_bar_bg);
        let mut out = Vec::new();
        if self.external.is_some() {
            out.push(
                Line::from(vec![
                    Span::styled(" [r]", key),
                    Span::raw("eload "),
                    Span::styled("[k]", key),
                    Span::raw("eep mine · changed on disk"),
                ])
                .style(ask),
            );
        }
        match &self.prompt {
            Some(Prompt::Search { query, editing }) => {
                let status = match self.search_status() {
                    Some((_, 0)) => "no match".to_string(),
                    Some((Some(i), total)) => format!("{i}/{total}"),
                    Some((None, total)) => format!("{total} matches"),
                    None => String::new(),
                };
                let help = if *editing {
                    "Enter next · Shift-Enter prev · Esc close"
                } else {
                    "n/Enter next · N/Shift-Enter prev · Esc close"
                };
                out.push(
                    Line::from(vec![
                        Span::styled(" Find: ", bar.add_modifier(Modifier::BOLD)),
                        Span::raw(query.clone()),
                        Span::styled(if *editing { "▏" } else { "" }, bar.fg(theme.accent)),
                        Span::raw(format!("  {status}  ")),
                        Span::styled(help, bar.fg(theme.dim)),
                    ])
                    .style(bar),
                );
            }
            Some(Prompt::Goto { input }) => out.push(
                Line::from(vec![
                    Span::styled(" Go to line: ", bar.add_modifier(Modifier::BOLD)),
                    Span::raw(input.clone()),
                    Span::styled("▏", bar.fg(theme.accent)),
                    Span::styled(
                        "  line or line:column · Enter go · Esc close",
                        bar.fg(theme.dim),
                    ),
                ])
                .style(bar),
            ),
            None => {}
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_columns_count_wide_chars_and_tabs() {
        assert_eq!(display_col("ab", 2), 2);
        assert_eq!(display_col("日本x", 2), 4);
        assert_eq!(display_col("\tx", 1), TAB_WIDTH);
        assert_eq!(char_at_display_col("日本x", 3), 1);
        assert_eq!(char_at_display_col("日本x", 4), 2);
        assert_eq!(char_at_display_col("ab", 9), 2);
    }
}
