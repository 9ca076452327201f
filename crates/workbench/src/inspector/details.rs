//! The text tabs of the inspector: Error (the error, wrapped, and why a node
//! was skipped) and Timing (duration, attempts, cost, tokens, model).

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::Shown;
use super::text::{self, cost_text, count_text, duration_text};
use crate::theme::{Theme, status_glyph};
use pipewright_engine::run::trace::NodeStatus;

/// The lines of the Error tab; the caller wraps them.
pub fn error_lines(shown: &Shown, start_error: Option<&str>, theme: &Theme) -> Vec<Line<'static>> {
    let dim = Style::default().fg(theme.dim);
    let Some(r) = &shown.record else {
        // The run did not start: the server's error, whole, is why.
        if let Some(e) = start_error {
            let red = Style::default().fg(theme.error);
            let mut lines = vec![
                Line::styled(
                    "✗ not run: the session could not start",
                    red.add_modifier(Modifier::BOLD),
                ),
                Line::default(),
            ];
            lines.extend(e.lines().map(|l| Line::styled(l.to_owned(), red)));
            return lines;
        }
        return vec![Line::styled("not run yet: no error", dim)];
    };
    let mut lines = Vec::new();
    if let Some(e) = &r.error {
        let attempts = if r.attempts > 1 {
            format!(" after {} attempts", r.attempts)
        } else {
            String::new()
        };
        lines.push(Line::from(Span::styled(
            format!(
                "{} {}{attempts}",
                status_glyph(r.status, false, 0),
                r.status.as_str()
            ),
            Style::default()
                .fg(theme.status(r.status))
                .add_modifier(Modifier::BOLD),
        )));
        lines.push(Line::default());
        let red = Style::default().fg(theme.error);
        lines.extend(e.lines().map(|l| Line::styled(l.to_owned(), red)));
    }
    if let Some(why) = &r.skip_reason {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::from(vec![
            Span::styled(
                format!("{} skipped: ", status_glyph(NodeStatus::Skipped, false, 0)),
                Style::default()
                    .fg(theme.skipped)
                    .add_modifier(Modifier::BOLD),
            ),
            Span::styled(why.clone(), Style::default().fg(theme.fg)),
        ]));
    }
    let failed = r
        .iterations
        .iter()
        .filter(|i| i.status == NodeStatus::Failed)
        .count();
    if failed > 0 {
        if !lines.is_empty() {
            lines.push(Line::default());
        }
        lines.push(Line::styled(
            format!(
                "{failed} of {} iterations failed (see Iterations)",
                r.iterations.len()
            ),
            Style::default().fg(theme.warning),
        ));
    }
    if lines.is_empty() {
        lines.push(Line::styled("no error", dim));
    }
    lines
}

/// The lines of the Timing tab: one `name  value` pair a line.
pub fn timing_lines(shown: &Shown, theme: &Theme) -> Vec<Line<'static>> {
    let dim = Style::default().fg(theme.dim);
    let plain = Style::default().fg(theme.fg);
    let pair = |name: &str, value: String, style: Style| {
        Line::from(vec![
            Span::styled(format!("{name:<10}"), dim),
            Span::styled(value, style),
        ])
    };
    let mut lines = Vec::new();
    // A node that ran names the tool it called (its record's); the file's
    // tool only when the record names none, or after it when they differ.
    let called = shown
        .record
        .as_deref()
        .filter(|r| !r.tool.is_empty())
        .map(|r| (&r.tool, &r.server));
    if let Some((tool, server)) = called.or(shown.tool.as_ref().map(|t| (t, &shown.server))) {
        let at = match server {
            Some(s) => format!("{tool} on {s}"),
            None => tool.clone(),
        };
        let mut line = pair("tool", at, plain);
        if let (Some((tool, server)), Some(now)) = (called, &shown.tool)
            && (tool != now || *server != shown.server)
        {
            let now = match &shown.server {
                Some(s) if *server != shown.server => format!("{now} on {s}"),
                _ => now.clone(),
            };
            line.spans.push(Span::styled(
                format!(" (the file now calls {now})"),
                Style::default().fg(theme.status(NodeStatus::Stale)),
            ));
        }
        lines.push(line);
    }
    let Some(r) = &shown.record else {
        lines.push(Line::styled("not run yet", dim));
        return lines;
    };
    lines.push(pair(
        "status",
        format!(
            "{} {}",
            status_glyph(r.status, r.mocked, 0),
            r.status.as_str()
        ),
        Style::default().fg(theme.status(r.status)),
    ));
    lines.push(pair(
        "started",
        r.started_at.clone().unwrap_or_else(|| "—".into()),
        plain,
    ));
    lines.push(pair("duration", duration_text(r.duration_ms), plain));
    lines.push(pair("attempts", r.attempts.to_string(), plain));
    // Each attempt of each call: when, how long, how it ended.
    const SHOWN: usize = 12;
    for call in r.calls.iter().take(SHOWN) {
        let style = Style::default().fg(theme.status(call.status));
        lines.push(Line::from(vec![
            Span::styled(format!("  {} ", status_glyph(call.status, false, 0)), style),
            Span::styled(text::attempt_name(call, r.iterations.len()), plain),
            Span::styled(
                format!(
                    " · {} · {}",
                    call.started_at
                        .as_deref()
                        .map(text::time_of_day)
                        .unwrap_or_else(|| "—".into()),
                    duration_text(call.duration_ms)
                ),
                dim,
            ),
            Span::styled(
                match &call.error {
                    Some(_) => format!(" · {}", text::attempt_outcome(call)),
                    None => String::new(),
                },
                style,
            ),
        ]));
    }
    if r.calls.len() > SHOWN {
        lines.push(Line::styled(
            format!("  … {} more attempts (Raw, 6)", r.calls.len() - SHOWN),
            dim,
        ));
    }
    lines.push(pair("cost", cost_text(r.cost_usd), plain));
    lines.push(pair("tokens", count_text(r.tokens), plain));
    lines.push(pair(
        "model",
        r.model.clone().unwrap_or_else(|| "—".into()),
        plain,
    ));
    lines.push(pair(
        "mocked",
        if r.mocked {
            "yes (no server called)"
        } else {
            "no"
        }
        .into(),
        if r.mocked {
            Style::default().fg(theme.mocked)
        } else {
            plain
        },
    ));
    if !r.iterations.is_empty() {
        let ok = r
            .iterations
            .iter()
            .filter(|i| i.status == NodeStatus::Ok)
            .count();
        lines.push(pair(
            "fan-out",
            format!("{ok}/{} ok", r.iterations.len()),
            plain,
        ));
    }
    lines
}
