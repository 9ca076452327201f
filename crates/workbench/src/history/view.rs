//! How the History overlay draws its list of runs.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Widget};

use super::HistoryView;
use crate::theme::Theme;

impl HistoryView {
    /// Column widths at frame width `width`: whether it is wide, the time's
    /// and the composition's columns. Narrow: a shorter time, no
    /// composition column; the duration, cost and failed columns stay.
    fn columns(width: u16) -> (bool, usize, usize) {
        let wide = width >= 100;
        let (time_w, comp_w) = if wide { (19, 16) } else { (11, 0) };
        (wide, time_w, comp_w)
    }

    /// The run id's column: as wide as the longest id (a durable run's,
    /// `…-<16 hex>`, is longer than a local one's), at least 20.
    fn id_width(&self) -> usize {
        self.entries
            .iter()
            .map(|e| e.id.chars().count())
            .max()
            .unwrap_or(0)
            .max(20)
    }

    /// Every run's row as drawn in a frame `width` wide (what `/` searches).
    pub(crate) fn rows(&self, t: &Theme, width: u16) -> Vec<Line<'static>> {
        let (wide, time_w, comp_w) = Self::columns(width);
        let id_w = self.id_width();
        let comp_col = |text: &str| {
            if wide {
                format!("{text:<comp_w$}  ")
            } else {
                String::new()
            }
        };
        self.entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let time = e.time();
                let time: String = if wide {
                    time
                } else {
                    time.chars().skip(5).take(time_w).collect()
                };
                let comp: String = e.label().chars().take(16).collect();
                let mut style = Style::default().fg(t.fg);
                if i == self.selected {
                    style = style.patch(t.selected());
                }
                let status_color = match e.status.as_str() {
                    "completed" => t.ok,
                    "cancelled" => t.cancelled,
                    _ => t.failed,
                };
                let here = if self.current.as_deref() == Some(e.id.as_str()) {
                    "▸"
                } else {
                    " "
                };
                Line::from(vec![
                    Span::styled(here, Style::default().fg(t.accent)),
                    Span::styled(
                        format!("{:<id_w$}  {:<time_w$}  {}", e.id, time, comp_col(&comp)),
                        style,
                    ),
                    Span::styled(format!("{:<10}", e.status), style.fg(status_color)),
                    Span::styled(
                        format!(
                            "  {:>7}  {:>8}  {}",
                            crate::inspector::text::duration_text(e.duration_ms),
                            format!("${:.4}", e.cost_usd),
                            e.failed_step.as_deref().unwrap_or("")
                        ),
                        style,
                    ),
                ])
            })
            .collect()
    }

    /// Draws the list in `r` (already cleared) inside `block`.
    pub(super) fn render(&self, t: &Theme, r: Rect, block: Block<'_>, buf: &mut Buffer) {
        let dim = Style::default().fg(t.dim);
        let (wide, time_w, comp_w) = Self::columns(r.width);
        let id_w = self.id_width();
        let comp_col = |text: &str| {
            if wide {
                format!("{text:<comp_w$}  ")
            } else {
                String::new()
            }
        };
        let mut lines = vec![Line::from(Span::styled(
            format!(
                " {:<id_w$}  {:<time_w$}  {}{:<10}  {:>7}  {:>8}  failed",
                "run",
                "time (UTC)",
                comp_col("composition"),
                "status",
                "duration",
                "cost"
            ),
            dim.add_modifier(Modifier::BOLD),
        ))];
        if self.entries.is_empty() {
            lines.push(Line::from(Span::styled(
                " no saved runs of this file yet: run it (F5) and they appear here",
                dim,
            )));
        }
        let room = r.height.saturating_sub(4) as usize;
        lines.extend(
            self.rows(t, r.width)
                .into_iter()
                .skip(self.skip(r.height))
                .take(room),
        );
        Paragraph::new(lines).block(block).render(r, buf);
    }
}
