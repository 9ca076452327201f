//! The Iterations tab: a table of a fan-out's elements with a selection;
//! Enter opens the selected element's args, output and error as a tree.
//! Iterations are numbered from 1 on screen, as everywhere in the
//! workbench (`#1` is `${node[0]}`); the tree keeps the element's `index`.

use std::sync::Arc;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::json;

use super::json_tree::JsonTree;
use super::text::{duration_text, one_line};
use crate::theme::{Theme, status_glyph};
use pipewright_engine::run::trace::IterationRecord;

/// Selection, scroll and the opened element of the Iterations tab.
#[derive(Debug, Default)]
pub struct IterationsView {
    selected: usize,
    offset: usize,
    page: usize,
    /// The element opened with Enter, and its number (from 1).
    detail: Option<(usize, JsonTree)>,
}

impl IterationsView {
    /// Index of the selected element.
    pub fn selected(&self) -> usize {
        self.selected
    }

    /// The opened element's tree, when one is open.
    pub fn detail_mut(&mut self) -> Option<&mut JsonTree> {
        self.detail.as_mut().map(|(_, t)| t)
    }

    /// Back to the table.
    pub fn close_detail(&mut self) {
        self.detail = None;
    }

    /// Forgets the selection (another node is shown).
    pub fn reset(&mut self) {
        *self = IterationsView::default();
    }

    /// Keeps the selection inside `len` elements (the same node ran again).
    pub fn clamp(&mut self, len: usize) {
        self.selected = self.selected.min(len.saturating_sub(1));
        self.detail = None;
    }

    /// Moves the selection by `delta` within `len` elements.
    pub fn move_by(&mut self, delta: isize, len: usize) {
        let last = len.saturating_sub(1) as isize;
        self.selected = (self.selected as isize + delta).clamp(0, last.max(0)) as usize;
    }

    /// Moves by whole pages.
    pub fn page_by(&mut self, pages: isize, len: usize) {
        self.move_by(pages * self.page.max(1) as isize, len);
    }

    /// Selects the element on screen line `dy` of the table body.
    pub fn click(&mut self, dy: usize, len: usize) -> bool {
        let i = self.offset + dy;
        if i < len {
            self.selected = i;
            true
        } else {
            false
        }
    }

    /// Opens the selected element as a tree of its args, output and error.
    pub fn open(&mut self, items: &[IterationRecord]) -> bool {
        let Some(it) = items.get(self.selected) else {
            return false;
        };
        let v = json!({
            "index": it.index,
            "status": it.status.as_str(),
            "attempts": it.attempts,
            "duration_ms": it.duration_ms,
            "args": it.args,
            "output": it.output,
            "error": it.error,
        });
        self.detail = Some((it.index + 1, JsonTree::new(Arc::new(v))));
        true
    }

    /// Draws the table (or the opened element); touches only visible rows.
    /// `fan_out` is what the node iterates over, when it is a fan-out
    /// (`for_each:`), and `ran` whether it has a record: with no rows they
    /// say why there are none.
    #[allow(clippy::too_many_arguments)]
    pub fn render(
        &mut self,
        items: &[IterationRecord],
        fan_out: Option<&str>,
        ran: bool,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        focused: bool,
        tick: u64,
    ) {
        if area.is_empty() {
            return;
        }
        if let Some((i, tree)) = &mut self.detail {
            let title = Line::from(vec![
                Span::styled(format!("iteration {i}"), Style::default().fg(theme.accent)),
                Span::styled("  Esc back to the table", Style::default().fg(theme.dim)),
            ]);
            buf.set_line(area.x, area.y, &title, area.width);
            let rest = Rect {
                y: area.y + 1,
                height: area.height - 1,
                ..area
            };
            tree.render(rest, buf, theme, focused);
            return;
        }
        if items.is_empty() {
            let text = match (fan_out, ran) {
                (Some(over), false) => format!("fan-out over {over}: no iteration has run yet"),
                (Some(over), true) => {
                    format!("fan-out over {over}: it had nothing to iterate over")
                }
                (None, _) => "not a fan-out: no iterations".to_owned(),
            };
            let l = Line::styled(text, Style::default().fg(theme.dim));
            buf.set_line(area.x, area.y, &l, area.width);
            return;
        }
        let head = Line::styled(
            format!(
                "{:>5}  {:<11} {:>9} {:>4}  error",
                "#", "status", "time", "try"
            ),
            Style::default().fg(theme.dim).add_modifier(Modifier::BOLD),
        );
        buf.set_line(area.x, area.y, &head, area.width);
        let height = area.height as usize - 1;
        self.page = height.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + self.page {
            self.offset = self.selected + 1 - self.page;
        }
        let end = (self.offset + height).min(items.len());
        for (n, i) in (self.offset..end).enumerate() {
            let it = &items[i];
            let y = area.y + 1 + n as u16;
            let colour = theme.status(it.status);
            let line = Line::from(vec![
                Span::styled(
                    format!("{:>5}  ", it.index + 1),
                    Style::default().fg(theme.fg),
                ),
                Span::styled(
                    format!(
                        "{} {:<9} ",
                        status_glyph(it.status, false, tick),
                        it.status.as_str()
                    ),
                    Style::default().fg(colour),
                ),
                Span::styled(
                    // A live row knows no attempts yet: the column is empty.
                    match it.attempts {
                        0 => format!("{:>9} {:>4}  ", duration_text(it.duration_ms), ""),
                        n => format!("{:>9} {n:>4}  ", duration_text(it.duration_ms)),
                    },
                    Style::default().fg(theme.fg),
                ),
                Span::styled(
                    it.error.as_deref().map(one_line).unwrap_or_default(),
                    Style::default().fg(theme.error),
                ),
            ]);
            if i == self.selected {
                let mut style = theme.selected();
                if !focused {
                    style = style.remove_modifier(Modifier::BOLD);
                }
                buf.set_style(Rect::new(area.x, y, area.width, 1), style);
            }
            buf.set_line(area.x, y, &line, area.width);
        }
    }
}
