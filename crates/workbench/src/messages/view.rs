//! The Messages pane's lines: the file's diagnostics, then the log.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use pipewright_engine::diag::{Diagnostic, Severity};

use super::LogEntry;
use crate::theme::Theme;

/// `14:03:27` (UTC) for seconds since the Unix epoch.
pub(crate) fn clock(secs: u64) -> String {
    let s = secs % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// The pane's lines: the diagnostics first, then the log, oldest first.
pub(crate) fn lines(log: &[LogEntry], diags: &[Diagnostic], t: &Theme) -> Vec<Line<'static>> {
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let dim = Style::default().fg(t.dim);
    let mut out = Vec::new();
    out.push(Line::from(Span::styled(
        format!("The file's diagnostics ({})", diags.len()),
        bold,
    )));
    if diags.is_empty() {
        out.push(Line::from(Span::styled("  none: the file loads", dim)));
    }
    for d in diags {
        let (word, colour) = match d.severity {
            Severity::Error => ("error", t.error),
            Severity::Warning => ("warning", t.warning),
        };
        let mut text = format!(
            "  {}:{} {word}: {}",
            d.span.start.line, d.span.start.col, d.message
        );
        if let Some(h) = &d.hint {
            text.push_str(&format!(" ({h})"));
        }
        out.push(Line::from(Span::styled(text, Style::default().fg(colour))));
    }
    out.push(Line::default());
    out.push(Line::from(Span::styled(
        format!("Messages ({}, times in UTC, newest last)", log.len()),
        bold,
    )));
    if log.is_empty() {
        out.push(Line::from(Span::styled("  nothing yet", dim)));
    }
    for e in log {
        let (mark, style) = if e.error {
            ("✗", Style::default().fg(t.error))
        } else {
            ("·", Style::default().fg(t.fg))
        };
        for (k, text) in e.text.lines().enumerate() {
            let head = if k == 0 {
                format!("{} {mark} ", clock(e.at))
            } else {
                " ".repeat(11)
            };
            out.push(Line::from(vec![
                Span::styled(head, dim),
                Span::styled(text.to_owned(), style),
            ]));
        }
    }
    out
}
