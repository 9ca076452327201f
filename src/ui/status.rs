//! The status bar: run state, current node, counts, cost and tokens against
//! the budget, the file's problems, and key hints.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::engine::run::events::PauseReason;
use crate::engine::run::trace::RunStatus;

use super::app::{App, RunState};
use super::keys::Action;

/// `1234` → `1.2k`.
pub fn short_count(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A budget in dollars: cents when it is whole cents (`$0.50`), else to
/// the hundredth of a cent (`$0.0030`), so a cap below a cent never reads
/// `$0.00`.
pub fn money(v: f64) -> String {
    let cents = v * 100.0;
    if (cents - cents.round()).abs() < 1e-9 {
        format!("${v:.2}")
    } else {
        format!("${v:.4}")
    }
}

/// The run state as the first word(s) of the bar.
pub fn state_label(app: &App) -> String {
    if let Some(v) = &app.viewing {
        return format!("RUN {} {}", v.entry.id, v.entry.status.to_uppercase());
    }
    match &app.run {
        RunState::Idle => "IDLE".into(),
        RunState::Connecting => "CONNECTING".into(),
        RunState::Running => match app.running().as_slice() {
            [] => "RUNNING".into(),
            [one] => format!("RUNNING {one}"),
            [one, rest @ ..] => format!("RUNNING {one} +{}", rest.len()),
        },
        RunState::Paused { reason, before } => {
            let why = match reason {
                PauseReason::Breakpoint => "BREAK",
                PauseReason::Step => "STEP",
                PauseReason::User => "PAUSED",
            };
            match before {
                Some(b) => format!("{why} at {b}"),
                None => why.into(),
            }
        }
        RunState::Finished(s) => format!("DONE {}", s.as_str().to_uppercase()),
    }
}

/// Draws the bar into its one row.
pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let base = Style::default().fg(t.status_bar_fg).bg(t.status_bar_bg);
    let state_colour = match &app.run {
        RunState::Running | RunState::Connecting => t.running,
        RunState::Paused { .. } => t.warning,
        RunState::Finished(RunStatus::Completed) => t.ok,
        RunState::Finished(_) => t.failed,
        RunState::Idle => t.dim,
    };
    let mut spans = vec![Span::styled(
        format!(" {} ", state_label(app)),
        Style::default()
            .fg(t.status_bar_bg)
            .bg(state_colour)
            .add_modifier(Modifier::BOLD),
    )];
    let sep = || Span::styled(" · ", base);
    if let Some(label) = app.run_label() {
        spans.push(Span::styled(
            format!(" {label}"),
            base.add_modifier(Modifier::BOLD),
        ));
    }
    let (ok, failed, cost, tokens) = app.totals();
    let total = app.visuals.len();
    spans.push(Span::styled(format!(" {ok}/{total} ok"), base));
    if failed > 0 {
        spans.push(sep());
        spans.push(Span::styled(
            format!("{failed} failed"),
            base.fg(t.failed).add_modifier(Modifier::BOLD),
        ));
    }
    let budget = app.budget();
    spans.push(sep());
    let cost_text = match budget.max_cost_usd {
        Some(cap) => format!("${cost:.4} of {}", money(cap)),
        None => format!("${cost:.4}"),
    };
    let over = budget.max_cost_usd.is_some_and(|c| cost > c)
        || budget.max_tokens.is_some_and(|c| tokens > c);
    spans.push(Span::styled(
        cost_text,
        if over { base.fg(t.failed) } else { base },
    ));
    spans.push(sep());
    let tok_text = match budget.max_tokens {
        Some(cap) => format!("{} of {} tok", short_count(tokens), short_count(cap)),
        None => format!("{} tok", short_count(tokens)),
    };
    spans.push(Span::styled(tok_text, base));
    if app.errors > 0 || app.warnings > 0 {
        spans.push(sep());
        let mut parts = Vec::new();
        if app.errors > 0 {
            parts.push(format!("{} error(s)", app.errors));
        }
        if app.warnings > 0 {
            parts.push(format!("{} warning(s)", app.warnings));
        }
        let colour = if app.errors > 0 { t.error } else { t.warning };
        spans.push(Span::styled(parts.join(", "), base.fg(colour)));
    }
    if app.editor.is_dirty() {
        spans.push(sep());
        spans.push(Span::styled("unsaved", base.fg(t.warning)));
    }
    if let Some(m) = &app.message {
        spans.push(sep());
        spans.push(Span::styled(
            m.text.clone(),
            if m.error {
                base.fg(t.error).add_modifier(Modifier::BOLD)
            } else {
                base.fg(t.accent)
            },
        ));
    }
    let left_len: usize = spans.iter().map(|s| s.width()).sum();
    let k = &app.keymap;
    let hints = format!(
        "{} run {} step {} cont {} help ",
        k.label(Action::Run),
        k.label(Action::Step),
        k.label(Action::Continue),
        k.label(Action::Help)
    );
    let room = (area.width as usize).saturating_sub(left_len);
    if room > hints.chars().count() + 1 {
        spans.push(Span::styled(
            format!("{:>width$}", hints, width = room),
            base.fg(t.dim),
        ));
    } else {
        spans.push(Span::styled(" ".repeat(room), base));
    }
    Paragraph::new(Line::from(spans))
        .style(base)
        .render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_below_a_cent_is_never_zero() {
        assert_eq!(money(0.003), "$0.0030");
        assert_eq!(money(0.5), "$0.50");
        assert_eq!(money(0.01), "$0.01");
        assert_eq!(money(0.00005), "$0.0001");
    }

    #[test]
    fn counts_are_short() {
        assert_eq!(short_count(999), "999");
        assert_eq!(short_count(1234), "1.2k");
        assert_eq!(short_count(2_500_000), "2.5M");
    }
}
