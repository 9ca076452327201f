//! The status bar (the mode, the run state, current node, counts, cost and
//! tokens against the budget, the file's problems, the last message) and
//! the footer under it (the keys of the mode the workbench is in), drawn
//! from the app's state.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use pipewright_engine::run::events::PauseReason;
use pipewright_engine::run::trace::RunStatus;

use super::{App, Mode, RunState};
use crate::inspector::Tab;
use crate::keys::Action;

/// `1234` → `1.2k`.
pub(crate) fn short_count(n: u64) -> String {
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A budget in dollars: cents when it is whole cents (`$0.50`), else to
/// the hundredth of a cent (`$0.0030`), so a cap below a cent never reads
/// `$0.00`.
pub(crate) fn money(v: f64) -> String {
    let cents = v * 100.0;
    if (cents - cents.round()).abs() < 1e-9 {
        format!("${v:.2}")
    } else {
        format!("${v:.4}")
    }
}

/// The run state as the first word(s) of the bar.
pub(crate) fn state_label(app: &App) -> String {
    if let Some(r) = &app.recording {
        return r.label();
    }
    if let Some(v) = &app.viewing {
        return format!("RUN {} {}", v.entry.id, v.entry.status.to_uppercase());
    }
    match &app.run {
        RunState::Idle if app.not_started.is_some() => "NOT STARTED".into(),
        RunState::Idle => "IDLE".into(),
        RunState::Connecting => "CONNECTING".into(),
        // A durable run's calls in flight are the journal's, drawn in the
        // DAG as it is read: the badge says only that it runs.
        RunState::Running if app.durable.is_some() => "RUNNING".into(),
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
            // A step's next node is marked `▸` in the DAG; the badge
            // names a breakpoint's.
            match before {
                Some(b) if *reason != PauseReason::Step => format!("{why} at {b}"),
                _ => why.into(),
            }
        }
        // A run whose every result has gone (a reload, another
        // composition) is not on screen any more.
        RunState::Finished(_) if app.visuals.iter().all(|v| v.record.is_none()) => "IDLE".into(),
        RunState::Finished(s) => format!("DONE {}", run_status_words(*s)),
    }
}

/// A run's status in words for the badge: `OVER BUDGET`, not the trace's
/// code `BUDGET_EXCEEDED`.
pub(crate) fn run_status_words(s: RunStatus) -> String {
    match s {
        RunStatus::BudgetExceeded => "OVER BUDGET".into(),
        s => s.as_str().replace('_', " ").to_uppercase(),
    }
}

/// `MCP 2026-07-28`, or `MCP 2026-07-28/2025-11-25` when the servers
/// spoke different revisions; empty when none is known.
pub(crate) fn protocols_text(by_server: &indexmap::IndexMap<String, String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for revision in by_server.values() {
        let clean: String = revision.chars().filter(|c| !c.is_control()).collect();
        if !seen.contains(&clean) {
            seen.push(clean);
        }
    }
    if seen.is_empty() {
        return String::new();
    }
    format!("MCP {}", seen.join("/"))
}

/// The bar's pieces before the message: the mode, the run's state,
/// counts, spend, the MCP revisions (when `revisions`), the file's
/// problems and `unsaved`.
fn bar_spans(app: &App, show_revisions: bool) -> Vec<Span<'static>> {
    let t = &app.theme;
    let base = Style::default().fg(t.status_bar_fg).bg(t.status_bar_bg);
    let state_colour = match &app.run {
        _ if app.recording.is_some() => t.running,
        _ if state_label(app) == "IDLE" => t.dim,
        RunState::Running | RunState::Connecting => t.running,
        RunState::Paused { .. } => t.warning,
        RunState::Finished(RunStatus::Completed) => t.ok,
        RunState::Finished(_) => t.failed,
        RunState::Idle => t.dim,
    };
    // The mode first, in reverse video so it shows without colour; then
    // the run's state.
    let mode = app.mode();
    let mode_text = match (&app.overlay, mode) {
        (Some(ov), Mode::Overlay) => format!(" {} {} ", mode.label(), ov.name().to_uppercase()),
        _ if app.zoom => format!(" {} ZOOM ", mode.label()),
        _ => format!(" {} ", mode.label()),
    };
    let badge = if t.mono {
        Style::default().add_modifier(Modifier::REVERSED | Modifier::BOLD)
    } else {
        Style::default()
            .fg(t.status_bar_bg)
            .bg(state_colour)
            .add_modifier(Modifier::BOLD)
    };
    let mut spans = vec![
        Span::styled(
            mode_text,
            Style::default()
                .fg(t.bg)
                .bg(t.accent)
                .add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ),
        Span::styled(format!(" {} ", state_label(app)), badge),
    ];
    if !app.asks.is_empty() && app.asks.is_hidden() {
        spans.push(Span::styled(
            format!(
                " ? {} question(s) waiting: {} ",
                app.asks.len(),
                app.keymap.label(Action::Questions)
            ),
            base.fg(t.warning)
                .add_modifier(Modifier::BOLD | Modifier::REVERSED),
        ));
    }
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
    // Results the file has changed under since they ran are not this
    // file's: the badge says how many.
    let stale = app
        .visuals
        .iter()
        .filter(|v| v.status == pipewright_engine::run::trace::NodeStatus::Stale)
        .count();
    if stale > 0 {
        spans.push(sep());
        spans.push(Span::styled(format!("{stale} stale"), base.fg(t.warning)));
    }
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
    // The MCP revision(s) the run on screen spoke; a message on the bar
    // has the room.
    let trace = app
        .viewing
        .as_ref()
        .map(|v| &v.trace)
        .or(app.trace.as_ref());
    if let Some(revisions) = trace.map(|t| protocols_text(&t.server_protocols))
        && !revisions.is_empty()
        && show_revisions
    {
        spans.push(sep());
        spans.push(Span::styled(revisions, base));
    }
    // Preflight's problems refuse F5 as the loader's errors do.
    let problems = app.preflight_problems();
    if app.errors > 0 || problems > 0 || app.warnings > 0 {
        spans.push(sep());
        let mut parts = Vec::new();
        if app.errors > 0 {
            parts.push(format!("{} error(s)", app.errors));
        }
        if problems > 0 {
            parts.push(format!("{problems} problem(s)"));
        }
        if app.warnings > 0 {
            parts.push(format!("{} warning(s)", app.warnings));
        }
        let colour = if app.errors + problems > 0 {
            t.error
        } else {
            t.warning
        };
        spans.push(Span::styled(parts.join(", "), base.fg(colour)));
    }
    if app.editor.is_dirty() {
        spans.push(sep());
        spans.push(Span::styled("unsaved", base.fg(t.warning)));
    }
    spans
}

/// Where the status line's message goes on a screen `width` wide: `0` on
/// the bar (it fits there whole, or there is none), else on that many
/// rows of its own above the bar (1, or 2 when one cannot hold it), taken
/// from the panes while it is fresh. At 80 columns the bar leaves little
/// room, and a message cut to ten characters says nothing.
pub(crate) fn message_rows(app: &App, width: u16) -> u16 {
    let Some(m) = app.messages.status() else {
        return 0;
    };
    let first = m.text.lines().next().unwrap_or_default();
    let more = m.text.lines().nth(1).is_some();
    let used: usize = bar_spans(app, false).iter().map(Span::width).sum();
    let room = (width as usize).saturating_sub(used + 3 + 1);
    let wide = Span::raw(first).width();
    if !more && wide <= room {
        return 0;
    }
    if !more && wide < width as usize { 1 } else { 2 }
}

/// Draws the bar into its one row; the message too unless it has rows of
/// its own (`own_rows`).
pub(crate) fn render(app: &App, area: Rect, buf: &mut Buffer, own_rows: bool) {
    let t = &app.theme;
    let base = Style::default().fg(t.status_bar_fg).bg(t.status_bar_bg);
    let on_bar = app.messages.status().is_some() && !own_rows;
    let mut spans = bar_spans(app, !on_bar);
    let sep = || Span::styled(" · ", base);
    if let Some(m) = app.messages.status().filter(|_| on_bar) {
        spans.push(sep());
        // The status line has one row: a message longer than the room, or
        // of several lines, says where the whole of it is.
        let used: usize = spans.iter().map(|s| s.width()).sum();
        let room = (area.width as usize).saturating_sub(used + 1);
        let first = m.text.lines().next().unwrap_or_default();
        let more = m.text.lines().nth(1).is_some();
        let fits = !more && Span::raw(first).width() <= room;
        let text = if fits {
            first.to_owned()
        } else {
            let key = app.keymap.label(Action::Messages);
            let tail = format!(" … ({key}: all of it)");
            let tail = if room < Span::raw(&tail).width() + 8 {
                " …".to_owned()
            } else {
                tail
            };
            let keep = room.saturating_sub(Span::raw(&tail).width());
            // One pass over the characters: this runs every frame, and a
            // server's stderr may be long.
            let mut used = 0;
            let cut: String = first
                .chars()
                .take_while(|c| {
                    used += unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
                    used <= keep
                })
                .collect();
            format!("{cut}{tail}")
        };
        spans.push(Span::styled(
            text,
            if m.error {
                base.fg(t.error).add_modifier(Modifier::BOLD)
            } else {
                base.fg(t.accent)
            },
        ));
    }
    let left_len: usize = spans.iter().map(|s| s.width()).sum();
    let room = (area.width as usize).saturating_sub(left_len);
    spans.push(Span::styled(" ".repeat(room), base));
    Paragraph::new(Line::from(spans))
        .style(base)
        .render(area, buf);
}

/// The keys of the mode the workbench is in, most useful first, as many
/// as fit: `key what · key what`.
pub(crate) fn mode_keys(app: &App) -> Vec<(String, &'static str)> {
    let k = |a: Action| app.keymap.label(a);
    // An action's first key that works while typing (F1, Ctrl-Q).
    let global = |a: Action| {
        app.keymap
            .keys(a)
            .iter()
            .find(|key| key.is_global())
            .map(ToString::to_string)
    };
    let mut out: Vec<(String, &'static str)> = Vec::new();
    match app.mode() {
        Mode::Ask => {
            if app.asks.sampling() {
                // Enter breaks the line in the reply: say what sends it.
                out.push((k(Action::AskSend), "send"));
                out.push(("Enter".into(), "new line"));
                out.push((k(Action::AskProvider), "ask the provider"));
            } else if app.asks.asking_url() {
                // A link has no fields: its own keys, as its border says.
                out.push((k(Action::AskAccept), "done"));
                out.push((k(Action::AskOpenUrl), "open"));
                out.push((k(Action::AskCopyUrl), "copy link"));
            } else {
                out.push(("Tab".into(), "next field"));
                out.push((k(Action::AskAccept), "accept"));
            }
            // Readline's chords work in every text field; Ctrl-U is the one
            // people reach for.
            if app.asks.typing() {
                out.push(("Ctrl-U".into(), "clear"));
            }
            out.push((k(Action::AskDecline), "decline"));
            out.push((k(Action::AskCancel), "cancel"));
            out.push((k(Action::AskHide), "hide (look at the nodes)"));
            // Letters are typed into the form: only a chord quits.
            if let Some(q) = global(Action::Quit) {
                out.push((q, "quit"));
            }
        }
        Mode::Overlay if app.overlay_find.as_ref().is_some_and(|f| f.typing) => {
            out.push(("type".into(), "search"));
            out.push(("Enter".into(), "keep it"));
            out.push(("Esc".into(), "clear"));
        }
        Mode::Overlay if app.overlay_find.is_some() => {
            out.push(("n N".into(), "next, previous"));
            out.push(("Esc".into(), "clear search"));
            out.push(("↑↓ PgUp PgDn".into(), "scroll"));
        }
        Mode::Overlay | Mode::Recover => {
            if let Some(ov) = &app.overlay {
                out.extend(ov.keys(&app.keymap));
            }
        }
        Mode::Edit if app.completion.is_some() => {
            out.push(("↑↓".into(), "choose"));
            out.push(("Enter Tab".into(), "write it"));
            out.push(("type".into(), "narrow"));
            out.push(("Esc".into(), "close"));
        }
        Mode::Edit => {
            out.push(("Esc".into(), "to the DAG"));
            // On a marked line its fix comes first: it is why you are there.
            if app.quick_fix_here() {
                out.push((k(Action::QuickFix), "quick fix"));
            }
            // Tab completes where there is something to complete, else
            // moves on (Ctrl-Space only completes; the help says so).
            out.push(("Tab".into(), "complete/next pane"));
            out.push((k(Action::Save), "save"));
            out.push((k(Action::Run), "run"));
            out.push(("Ctrl-Z".into(), "undo"));
            out.push(("Ctrl-F".into(), "find"));
            // `?` is text here: the help's other key.
            if let Some(h) = global(Action::Help) {
                out.push((h, "help"));
            }
            if let Some(q) = global(Action::Quit) {
                out.push((q, "quit"));
            }
        }
        Mode::Filter => {
            out.push(("type".into(), "a jq filter"));
            out.push(("Enter".into(), "keep it"));
            out.push(("Esc".into(), "close"));
        }
        Mode::Search => {
            out.push(("type".into(), "search"));
            out.push(("Enter".into(), "keep it"));
            out.push(("n N".into(), "next, previous"));
            out.push(("Esc".into(), "clear"));
        }
        Mode::Inspect => {
            // The run's keys work here too: first, so a narrow footer
            // keeps them.
            if app.viewing.is_none() {
                run_keys(app, &mut out);
            }
            out.push(("1-7".into(), "tabs"));
            out.push(("↑↓".into(), "move"));
            match app.inspector.tab() {
                Tab::Output => out.push(("/".into(), "jq filter")),
                Tab::Raw | Tab::Logs if app.inspector.find_status().is_some() => {
                    out.push(("n N".into(), "next, previous"));
                    out.push(("Esc".into(), "clear search"));
                }
                Tab::Raw | Tab::Logs => out.push(("/".into(), "search")),
                _ => {}
            }
            if app.inspector.tab() == Tab::Raw && !app.inspector.wrap() {
                out.push(("h l".into(), "sideways"));
            }
            out.push((k(Action::Wrap), "wrap"));
            out.push((k(Action::Zoom), "zoom"));
            out.push((k(Action::Pin), "pin as mock"));
            out.push(("Esc".into(), "to the DAG"));
            out.push((k(Action::Messages), "messages"));
            out.push((k(Action::Help), "help"));
            out.push((k(Action::Quit), "quit"));
            // Last: shown where the row has room.
            if matches!(app.inspector.tab(), Tab::Args | Tab::Output) {
                out.push((k(Action::Yank), "copy"));
                out.push((k(Action::YankPath), "path"));
            }
        }
        Mode::Dag if app.recording.is_some() => return app.recording_keys(),
        Mode::Dag => {
            if app.comp.is_none() {
                out.push(("i".into(), "edit the file"));
                out.push((k(Action::Messages), "messages"));
                out.push((k(Action::Help), "help"));
                out.push((k(Action::Quit), "quit"));
                return out;
            }
            if app.viewing.is_some() {
                // A saved run is read-only: no run key works on it.
                out.push(("Esc".into(), "back to the live run"));
                move_keys(app, &mut out);
                out.push((k(Action::History), "history"));
                out.push((k(Action::Judge), "judge again"));
                out.push((k(Action::Timeline), "timeline"));
                out.push((k(Action::Zoom), "zoom"));
                out.push((k(Action::Messages), "messages"));
                out.push((k(Action::Help), "help"));
                out.push((k(Action::Quit), "quit"));
                return out;
            }
            match &app.run {
                RunState::Paused { .. } | RunState::Running | RunState::Connecting => {
                    run_keys(app, &mut out);
                    move_keys(app, &mut out);
                    out.push((k(Action::Breakpoint), "break"));
                }
                RunState::Idle | RunState::Finished(_) => {
                    move_keys(app, &mut out);
                    out.push(("i".into(), "edit"));
                    out.push((k(Action::Run), "run"));
                    out.push((k(Action::Step), "step"));
                    out.push((k(Action::Breakpoint), "break"));
                    out.push((k(Action::Rerun), "re-run"));
                }
            }
            out.push((k(Action::Zoom), "zoom"));
            out.push((k(Action::Messages), "messages"));
            out.push((k(Action::Palette), "palette"));
            out.push((k(Action::Help), "help"));
            out.push((k(Action::Quit), "quit"));
            let ran = app.selected_index().and_then(|i| app.visuals.get(i));
            if ran.is_some_and(|v| v.record.is_some()) {
                out.push((k(Action::Yank), "copy args"));
            }
        }
    }
    out
}

/// The keys of the run under way, in the DAG and the inspector alike:
/// at a pause (a breakpoint, a step, `p`) continue, step, skip and cancel;
/// while running pause and cancel; none when no run goes.
fn run_keys(app: &App, out: &mut Vec<(String, &'static str)>) {
    let k = |a: Action| app.keymap.label(a);
    match &app.run {
        RunState::Paused { .. } => {
            out.push((k(Action::Continue), "continue"));
            out.push((k(Action::Step), "step"));
            if app.selected_node_id().is_some() {
                out.push((k(Action::Skip), "skip"));
            }
            out.push((k(Action::Cancel), "cancel"));
        }
        RunState::Running | RunState::Connecting => {
            // A durable run cannot pause: only `x` cancels it.
            if app.durable.is_none() {
                out.push((k(Action::Pause), "pause"));
            }
            out.push((k(Action::Cancel), "cancel"));
        }
        RunState::Idle | RunState::Finished(_) => {}
    }
}

/// The DAG's (or the timeline's) keys to move and look closer.
fn move_keys(app: &App, out: &mut Vec<(String, &'static str)>) {
    if app.timeline.shown() {
        out.push(("↑↓".into(), "move"));
        out.push(("Enter".into(), "all iterations"));
        out.push((app.keymap.label(Action::Timeline), "graph"));
    } else {
        out.push(("←↓↑→".into(), "move"));
        out.push(("Enter".into(), "inspect"));
    }
}

/// The entries of `keys` that fit in `width` columns: help and quit are
/// kept, the others go from the end first.
pub(crate) fn fitting(
    keys: Vec<(String, &'static str)>,
    width: usize,
) -> Vec<(String, &'static str)> {
    let cost =
        |(k, what): &(String, &'static str)| Span::raw(k.as_str()).width() + 1 + what.len() + 2;
    let kept = |what: &str| matches!(what, "help" | "quit");
    let mut keys = keys;
    let mut used: usize = 1 + keys.iter().map(cost).sum::<usize>();
    while used > width {
        let Some(i) = keys.iter().rposition(|(_, what)| !kept(what)) else {
            break;
        };
        used -= cost(&keys[i]);
        keys.remove(i);
    }
    // Too narrow even for those: as many as fit, in order.
    let mut room = width.saturating_sub(1);
    keys.into_iter()
        .take_while(|e| {
            let ok = cost(e) <= room;
            room = room.saturating_sub(cost(e));
            ok
        })
        .collect()
}

/// The status line's message on rows of its own above the bar, while it
/// is fresh and longer than the bar's room ([`message_rows`]): wrapped at
/// words, its last row saying where the rest is when it is longer still.
/// The footer keeps its keys.
pub(crate) fn message(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let base = Style::default().fg(t.status_bar_fg).bg(t.status_bar_bg);
    let Some(m) = app.messages.status() else {
        return;
    };
    let style = if m.error {
        base.fg(t.error).add_modifier(Modifier::BOLD)
    } else {
        base.fg(t.accent)
    };
    let width = (area.width as usize).saturating_sub(2);
    let mut rows = crate::window::wrap_words(m.text.lines().next().unwrap_or_default(), width);
    let rows_shown = area.height as usize;
    if rows.len() > rows_shown || m.text.lines().nth(1).is_some() {
        // The rest is in Messages: the last row says so.
        rows.truncate(rows_shown);
        let tail = format!(" … ({}: all of it)", app.keymap.label(Action::Messages));
        if let Some(last) = rows.last_mut() {
            let keep = width.saturating_sub(Span::raw(&tail).width());
            let mut used = 0;
            *last = last
                .chars()
                .take_while(|c| {
                    used += unicode_width::UnicodeWidthChar::width(*c).unwrap_or(0);
                    used <= keep
                })
                .collect::<String>()
                + &tail;
        }
    }
    let lines: Vec<Line<'_>> = rows
        .into_iter()
        .map(|r| Line::from(Span::styled(format!(" {r}"), style)))
        .collect();
    Paragraph::new(lines).style(base).render(area, buf);
}

/// The footer: the mode's keys, as many as fit the row.
pub(crate) fn footer(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let base = t.base();
    let key = Style::default().fg(t.accent).add_modifier(Modifier::BOLD);
    let dim = Style::default().fg(t.dim);
    let mut spans = vec![Span::raw(" ")];
    for (k, what) in fitting(mode_keys(app), area.width as usize) {
        spans.push(Span::styled(k, key));
        spans.push(Span::styled(format!(" {what}  "), dim));
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
