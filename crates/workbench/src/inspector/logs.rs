//! The Logs tab: what a node's server said besides its result — its
//! progress (a bar, live while it runs), the questions it asked with their
//! replies and who gave them, and its log lines (live while it runs, then
//! from the record, iterations included).

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::theme::Theme;
use pipewright_engine::mcp::human::provider::message_text;
use pipewright_engine::mcp::human::{Interaction, ProgressNote};
use pipewright_engine::run::trace::NodeRecord;

/// What the app knows of a node while it runs (the record comes at its end).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Live {
    /// The node's call is in flight.
    pub running: bool,
    /// A question of its server waits in the modal.
    pub asking: bool,
    /// The server's last progress report.
    pub note: Option<ProgressNote>,
    /// The server's log lines so far.
    pub logs: Vec<String>,
    /// How long its call has been running.
    pub elapsed_ms: Option<u64>,
    /// Its definition (or what it reads) changed since its record was made.
    pub stale: bool,
    /// The run could not start (its server failed to start, with the
    /// server's stderr): why this node did not run.
    pub start_error: Option<String>,
    /// It was marked as not started: why (`server py could not start`).
    pub not_started: Option<String>,
    /// The task its call runs as, so far (Timing tab's Task block).
    pub task: Option<pipewright_engine::mcp::human::TaskRecord>,
    /// The MCP revision its server negotiated (`2026-07-28`), when known.
    pub protocol: Option<String>,
    /// Its fan-out iterations so far, while it runs: those started, each
    /// with its status and its time (still going for a running one).
    pub iterations: Vec<pipewright_engine::run::trace::IterationRecord>,
    /// The animation tick (the DAG's), for the running spinner.
    pub tick: u64,
}

const BAR: usize = 20;

/// `[████████░░░░] 67% · 2/3 · step 2 of 3`.
pub fn progress_text(n: &ProgressNote) -> String {
    let mut parts = Vec::new();
    match n.fraction() {
        Some(f) => {
            let full = (f * BAR as f64).round() as usize;
            parts.push(format!(
                "{}{} {:.0}%",
                "█".repeat(full),
                "░".repeat(BAR - full.min(BAR)),
                f * 100.0
            ));
            if let Some(t) = n.total {
                parts.push(format!("{}/{}", n.progress, t));
            }
        }
        None => parts.push(format!("{} done", n.progress)),
    }
    if let Some(m) = &n.message {
        parts.push(m.clone());
    }
    parts.join(" · ")
}

/// What was asked, in a line.
fn asked(i: &Interaction) -> String {
    if let Some(m) = i.request.get("message").and_then(Value::as_str) {
        return m.to_owned();
    }
    i.request
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .map(message_text)
        .unwrap_or_default()
}

/// The reply, in a line.
fn replied(i: &Interaction) -> String {
    if let Some(text) = i.reply.pointer("/content/text").and_then(Value::as_str) {
        return text.to_owned();
    }
    let action = i.reply.get("action").and_then(Value::as_str).unwrap_or("?");
    match i.reply.get("content") {
        Some(c) => format!("{action} {c}"),
        None => action.to_owned(),
    }
}

fn who(i: &Interaction) -> String {
    serde_json::to_value(i.by)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
        .replace('_', " ")
}

/// The lines of the Logs tab; the caller wraps them.
pub fn lines(record: Option<&NodeRecord>, live: &Live, theme: &Theme) -> Vec<Line<'static>> {
    let dim = Style::default().fg(theme.dim);
    let plain = Style::default().fg(theme.fg);
    let head = Style::default()
        .fg(theme.accent)
        .add_modifier(Modifier::BOLD);
    let mut out = Vec::new();
    if let (None, Some(e)) = (record, &live.start_error) {
        out.push(Line::styled(
            "✗ not run: the session could not start",
            Style::default()
                .fg(theme.error)
                .add_modifier(Modifier::BOLD),
        ));
        out.extend(
            e.lines()
                .map(|l| Line::styled(l.to_owned(), Style::default().fg(theme.error))),
        );
        out.push(Line::default());
    }
    if live.asking {
        out.push(Line::styled(
            "? waiting for you: the server's question is open",
            Style::default()
                .fg(theme.warning)
                .add_modifier(Modifier::BOLD),
        ));
        out.push(Line::default());
    }
    let recorded = record.filter(|_| !live.running);
    let note = if live.running {
        live.note.clone()
    } else {
        recorded.and_then(|r| r.extras.progress.last().cloned())
    };
    if let Some(n) = note {
        out.push(Line::from(vec![
            Span::styled("progress  ", dim),
            Span::styled(progress_text(&n), Style::default().fg(theme.running)),
        ]));
        out.push(Line::default());
    }
    let interactions: Vec<&Interaction> = recorded
        .map(|r| {
            r.extras
                .interactions
                .iter()
                .chain(r.iterations.iter().flat_map(|i| &i.extras.interactions))
                .collect()
        })
        .unwrap_or_default();
    if !interactions.is_empty() {
        out.push(Line::styled(
            format!("questions ({})", interactions.len()),
            head,
        ));
        for i in interactions {
            out.push(Line::from(vec![
                Span::styled(format!("  {} from {} ", i.kind, i.server), plain),
                Span::styled(format!("→ {} ", replied(i)), Style::default().fg(theme.ok)),
                Span::styled(format!("(by {})", who(i)), dim),
            ]));
            out.push(Line::from(vec![
                Span::styled("    asked  ", dim),
                Span::styled(asked(i), plain),
            ]));
            if let Some(e) = &i.error {
                out.push(Line::styled(
                    format!("    note   {e}"),
                    Style::default().fg(theme.warning),
                ));
            }
        }
        out.push(Line::default());
    }
    let logs: Vec<String> = match recorded {
        Some(r) => r
            .extras
            .logs
            .iter()
            .map(|l| l.text())
            .chain(r.iterations.iter().flat_map(|it| {
                it.extras
                    .logs
                    .iter()
                    .map(move |l| format!("#{} {}", it.index, l.text()))
            }))
            .collect(),
        None => live.logs.clone(),
    };
    if !logs.is_empty() {
        out.push(Line::styled(format!("server log ({})", logs.len()), head));
        for l in logs {
            let style = if l.starts_with("[error") || l.starts_with("[critical") {
                Style::default().fg(theme.error)
            } else if l.starts_with("[warning") {
                Style::default().fg(theme.warning)
            } else {
                plain
            };
            out.push(Line::styled(format!("  {l}"), style));
        }
    }
    if out.is_empty() {
        out.push(Line::styled(
            "nothing heard: no progress, questions or log lines from the server for this node",
            dim,
        ));
    }
    out
}
