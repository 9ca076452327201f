//! What every window over the panes shares: where it goes (centred), its
//! frame (title, "Esc close", where the view is), scrolling its text by
//! keys and within its content, and breaking words (and styled lines) into
//! its width.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget, Wrap};

use crate::theme::Theme;

/// A scroll offset after a scrolling key (any other key leaves it).
pub(crate) fn scrolled(scroll: u16, key: KeyEvent) -> u16 {
    let delta: i32 = match key.code {
        KeyCode::Down | KeyCode::Char('j') => 1,
        KeyCode::Up | KeyCode::Char('k') => -1,
        KeyCode::PageDown | KeyCode::Char(' ') => 10,
        KeyCode::PageUp => -10,
        KeyCode::Home | KeyCode::Char('g') => -100_000,
        KeyCode::End | KeyCode::Char('G') => 100_000,
        _ => 0,
    };
    (scroll as i32 + delta).clamp(0, u16::MAX as i32) as u16
}

/// A centred rectangle `pw`% wide and `ph`% tall, at least 3 rows.
pub(crate) fn centred(area: Rect, pw: u16, ph: u16) -> Rect {
    let w = (area.width * pw / 100).max(20).min(area.width);
    let h = (area.height * ph / 100).max(3).min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

pub(crate) fn frame<'a>(title: String, theme: &Theme) -> Block<'a> {
    frame_at(title, theme, None)
}

/// An overlay's frame with where the view is (` 12–40 of 60 `) in its
/// bottom border, beside how to close it.
pub(crate) fn frame_at<'a>(title: String, theme: &Theme, at: Option<String>) -> Block<'a> {
    let mut b = Block::bordered()
        .title(Span::styled(
            format!(" {title} "),
            Style::default()
                .fg(theme.accent)
                .add_modifier(Modifier::BOLD),
        ))
        .title_bottom(
            Line::from(Span::styled(" Esc close ", Style::default().fg(theme.dim))).right_aligned(),
        )
        .border_style(theme.border_style(true))
        .style(theme.base());
    if let Some(at) = at {
        b = b.title_bottom(
            Line::from(Span::styled(at, Style::default().fg(theme.dim))).left_aligned(),
        );
    }
    b
}

/// ` 1–20 of 64 ↓ `: which lines of `total` show in `rows` from `top`,
/// and which way there is more.
pub(crate) fn position(top: usize, rows: usize, total: usize) -> Option<String> {
    if total <= rows {
        return None;
    }
    let last = (top + rows).min(total);
    let up = if top > 0 { "↑" } else { "" };
    let down = if last < total { "↓" } else { "" };
    Some(format!(" {}–{last} of {total} {up}{down} ", top + 1))
}

/// Scrolls `lines` in a frame: the scroll is clamped to the content, the
/// frame says where the view is. Returns the clamped scroll.
pub(crate) fn scrolled_lines(
    lines: Vec<Line<'_>>,
    title: String,
    t: &Theme,
    r: Rect,
    scroll: u16,
    wrap: bool,
    buf: &mut Buffer,
) -> u16 {
    let inner = Block::bordered().inner(r);
    let width = inner.width.max(1) as usize;
    // Rows the text takes: wrapped lines take more than one.
    let heights: Vec<usize> = lines
        .iter()
        .map(|l| {
            if wrap {
                l.width().div_ceil(width).max(1)
            } else {
                1
            }
        })
        .collect();
    let total: usize = heights.iter().sum();
    let rows = inner.height as usize;
    let max = total.saturating_sub(rows);
    let top = (scroll as usize).min(max);
    let block = frame_at(title, t, position(top, rows, total));
    let mut p = Paragraph::new(lines).block(block);
    if wrap {
        p = p.wrap(Wrap { trim: false });
    }
    p.scroll((u16::try_from(top).unwrap_or(u16::MAX), 0))
        .render(r, buf);
    u16::try_from(top).unwrap_or(u16::MAX)
}

/// Breaks `text` into lines of at most `width` columns at spaces (a word
/// longer than a line is cut).
pub(crate) fn wrap_words(text: &str, width: usize) -> Vec<String> {
    use unicode_width::UnicodeWidthStr;
    let width = width.max(8);
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let need = if line.is_empty() { 0 } else { 1 } + word.width();
        if !line.is_empty() && line.width() + need > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push(line);
    out
}

/// Breaks a styled line into rows of at most `width` columns, at the last
/// space that fits (a word longer than a row is cut), keeping each
/// character's style: drawn one row a line, the rows a window counts are
/// the rows it shows, so it can keep a line in view.
pub(crate) fn wrap_line(line: &Line<'_>, width: usize) -> Vec<Line<'static>> {
    use unicode_width::UnicodeWidthChar;
    let width = width.max(1);
    let cells: Vec<(char, Style)> = line
        .spans
        .iter()
        .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
        .collect();
    let row = |cells: &[(char, Style)]| {
        let mut spans: Vec<Span<'static>> = Vec::new();
        for &(c, style) in cells {
            match spans.last_mut() {
                Some(last) if last.style == style => last.content.to_mut().push(c),
                _ => spans.push(Span::styled(c.to_string(), style)),
            }
        }
        let mut l = Line::from(spans).style(line.style);
        l.alignment = line.alignment;
        l
    };
    let mut out = Vec::new();
    let mut cur: Vec<(char, Style)> = Vec::new();
    let mut used = 0;
    for cell in cells {
        let w = cell.0.width().unwrap_or(0);
        if used + w > width && !cur.is_empty() {
            // Break after the last space, when there is one past the
            // row's start.
            let rest = match cur.iter().rposition(|(c, _)| *c == ' ') {
                Some(i) if i + 1 < cur.len() => cur.split_off(i + 1),
                _ => Vec::new(),
            };
            out.push(row(&cur));
            cur = rest;
            used = cur.iter().map(|(c, _)| c.width().unwrap_or(0)).sum();
        }
        cur.push(cell);
        used += w;
    }
    out.push(row(&cur));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_styled_line_wraps_at_spaces_and_keeps_its_styles() {
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let line = Line::from(vec![Span::raw("one two "), Span::styled("three", bold)]);
        let rows = wrap_line(&line, 8);
        let text: Vec<String> = rows.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["one two ", "three"]);
        assert_eq!(rows[1].spans[0].style, bold);
        let rows = wrap_line(&Line::raw("abcdefghij"), 4);
        let text: Vec<String> = rows.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["abcd", "efgh", "ij"], "a long word is cut");
        assert_eq!(
            wrap_line(&Line::default(), 10).len(),
            1,
            "an empty line is a row"
        );
    }
}
