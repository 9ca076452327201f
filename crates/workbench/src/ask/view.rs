//! The question modal: who asks (server and node), the server's message,
//! and the form, the link or the sampling request with the reply being
//! written; "1 of 2" when more wait, and the keys along the bottom.

use std::ops::Range;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::keys::{Action, Keymap};
use crate::theme::Theme;
use crate::window::{centred, wrap_line};
use pipewright_engine::mcp::human::{Ask, FieldKind};

use super::form::{Form, Input};
use super::sample::Sample;
use super::text::TextInput;
use super::{Asks, Pending, State};

impl Asks {
    /// Draws the shown question over the screen. `provider` names the
    /// sampling provider's model when one is configured.
    pub(super) fn render(
        &self,
        provider: Option<&str>,
        t: &Theme,
        keymap: &Keymap,
        area: Rect,
        buf: &mut Buffer,
    ) {
        let Some(p) = self.current() else { return };
        let (lines, keep) = match &p.state {
            State::Form(f) => form_lines(p, f, t),
            State::Url { opened } => {
                let lines = url_lines(p, opened, t, &keymap.label(Action::AskCopyUrl));
                let n = lines.len();
                (lines, 0..n)
            }
            State::Sample(s) => sample_lines(s, provider, t),
        };
        let r = centred(area, 76, 85);
        // The lines as the box shows them, a row each: a long message
        // takes the rows it wraps to, so what must be seen (the focused
        // field, the reply's cursor, an error under them) is kept in view
        // by the rows it really is on.
        let width = r.width.saturating_sub(2) as usize;
        let mut rows: Vec<Line<'static>> = Vec::new();
        let mut starts = Vec::with_capacity(lines.len() + 1);
        for l in &lines {
            starts.push(rows.len());
            rows.extend(wrap_line(l, width));
        }
        starts.push(rows.len());
        let at = |i: usize| starts[i.min(lines.len())];
        let (keep_from, keep_to) = (at(keep.start), at(keep.end));
        let want = u16::try_from(rows.len())
            .unwrap_or(u16::MAX)
            .saturating_add(2);
        let h = want.min(r.height).max(5.min(area.height));
        let r = Rect::new(r.x, area.y + (area.height - h) / 2, r.width, h);
        Clear.render(r, buf);
        let inner_h = h.saturating_sub(2) as usize;
        // The kept rows' end in view, and their start when they are taller
        // than the box.
        let scroll = keep_to
            .saturating_sub(inner_h)
            .min(keep_from)
            .min(rows.len().saturating_sub(inner_h));
        Paragraph::new(rows)
            .scroll((u16::try_from(scroll).unwrap_or(u16::MAX), 0))
            .block(block(self, p, provider.is_some(), t, keymap))
            .render(r, buf);
    }
}

fn block<'a>(asks: &Asks, p: &Pending, provider: bool, t: &Theme, k: &Keymap) -> Block<'a> {
    let what = match &p.question.ask {
        Ask::Form { .. } => "asks",
        Ask::Url { .. } => "asks you to open a link",
        Ask::Sample { .. } => "asks for a model reply",
    };
    let mut title = format!(" {} {what}", p.question.server);
    if let Some(who) = p.question.who("") {
        title.push_str(&format!(" · {who}"));
    }
    if asks.len() > 1 {
        title.push_str(&format!(" · 1 of {}", asks.len()));
    }
    title.push(' ');
    let key = |a: Action, what: &str| format!("{} {what}", k.label(a));
    let mut hints = match &p.state {
        State::Form(_) => vec![
            key(Action::AskAccept, "accept"),
            key(Action::AskNextField, "next field"),
        ],
        State::Url { .. } => vec![
            key(Action::AskAccept, "done (accept)"),
            key(Action::AskOpenUrl, "open in browser"),
            key(Action::AskCopyUrl, "copy link"),
        ],
        State::Sample(_) => {
            let mut h = vec![key(Action::AskSend, "send")];
            if provider {
                h.push(key(Action::AskProvider, "ask the provider"));
            }
            h
        }
    };
    hints.push(key(Action::AskDecline, "decline"));
    hints.push(key(Action::AskCancel, "cancel"));
    Block::bordered()
        .title(Span::styled(
            title,
            Style::default().fg(t.warning).add_modifier(Modifier::BOLD),
        ))
        .title_bottom(
            Line::from(Span::styled(
                format!(" {} ", hints.join(" · ")),
                Style::default().fg(t.dim),
            ))
            .right_aligned(),
        )
        .border_style(Style::default().fg(t.warning))
        .style(t.base())
}

fn message_lines(p: &Pending, t: &Theme) -> Vec<Line<'static>> {
    let message = match &p.question.ask {
        Ask::Form { message, .. } | Ask::Url { message, .. } => message.as_str(),
        Ask::Sample { .. } => "",
    };
    let mut lines: Vec<Line<'static>> = message
        .lines()
        .map(|l| {
            Line::styled(
                l.to_owned(),
                Style::default().fg(t.fg).add_modifier(Modifier::BOLD),
            )
        })
        .collect();
    lines.push(Line::default());
    lines
}

/// The text of an input, with the cursor drawn when it has the keys.
fn input_spans(input: &TextInput, row: usize, focused: bool, t: &Theme) -> Vec<Span<'static>> {
    let line = input.lines().get(row).cloned().unwrap_or_default();
    let plain = Style::default().fg(t.fg);
    let (crow, ccol) = input.cursor();
    if !focused || crow != row {
        return vec![Span::styled(line, plain)];
    }
    let before: String = line.chars().take(ccol).collect();
    let at: String = line.chars().nth(ccol).map_or(" ".into(), String::from);
    let after: String = line.chars().skip(ccol + 1).collect();
    vec![
        Span::styled(before, plain),
        Span::styled(at, plain.add_modifier(Modifier::REVERSED)),
        Span::styled(after, plain),
    ]
}

/// What is shown under a field: its description, format and how to fill it.
fn hint(kind: &FieldKind, description: Option<&str>) -> String {
    let mut parts: Vec<String> = description.map(str::to_owned).into_iter().collect();
    match kind {
        FieldKind::Text { format: Some(f) } => {
            let eg = match f.as_str() {
                "email" => " (name@example.org)",
                "uri" => " (https://…)",
                "date" => " (YYYY-MM-DD)",
                "date-time" => " (YYYY-MM-DDThh:mm:ssZ)",
                _ => "",
            };
            parts.push(format!("format: {f}{eg}"));
        }
        FieldKind::Text { format: None } => {}
        FieldKind::Number => parts.push("a number".into()),
        FieldKind::Integer => parts.push("a whole number".into()),
        FieldKind::Boolean => parts.push("yes/no: Space flips".into()),
        FieldKind::Choice { titles, .. } => {
            parts.push(format!("one of: {} (← → or Space)", titles.join(" · ")));
        }
    }
    parts.join(" · ")
}

/// The form's lines, and those of the focused field (its label, hint and
/// error), to keep in view.
fn form_lines(p: &Pending, f: &Form, t: &Theme) -> (Vec<Line<'static>>, Range<usize>) {
    let mut lines = message_lines(p, t);
    let dim = Style::default().fg(t.dim);
    let labels: Vec<String> = f
        .fields
        .iter()
        .map(|fl| fl.title.clone().unwrap_or_else(|| fl.name.clone()))
        .collect();
    let width = labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .min(24);
    let mut focused_lines = 0..0;
    for (i, (field, input)) in f.fields.iter().zip(&f.inputs).enumerate() {
        let focused = i == f.focus;
        let first = lines.len();
        let label_style = if focused {
            Style::default().fg(t.accent).add_modifier(Modifier::BOLD)
        } else {
            Style::default().fg(t.fg)
        };
        let mut spans = vec![
            Span::styled(if focused { "› " } else { "  " }, label_style),
            Span::styled(
                if field.required { "* " } else { "  " },
                Style::default().fg(t.error).add_modifier(Modifier::BOLD),
            ),
            Span::styled(format!("{:<width$}  ", labels[i]), label_style),
        ];
        match (input, &field.kind) {
            (Input::Text(text), _) => {
                if text.text().is_empty() && !focused {
                    spans.push(Span::styled("·", dim));
                } else {
                    spans.extend(input_spans(text, 0, focused, t));
                }
            }
            (Input::Toggle(on), _) => spans.push(Span::styled(
                if *on { "[x] yes" } else { "[ ] no" },
                Style::default().fg(t.fg),
            )),
            (Input::Choice(c), FieldKind::Choice { titles, .. }) => {
                let shown = match c {
                    Some(i) => format!("‹ {} ›", titles[*i]),
                    None => "‹ choose ›".into(),
                };
                let style = Style::default().fg(t.fg);
                spans.push(Span::styled(
                    shown,
                    if focused {
                        style.add_modifier(Modifier::REVERSED)
                    } else {
                        style
                    },
                ));
                if let Some(i) = c {
                    spans.push(Span::styled(format!("  {}/{}", i + 1, titles.len()), dim));
                }
            }
            (Input::Choice(_), _) => {}
        }
        lines.push(Line::from(spans));
        let pad = " ".repeat(width + 6);
        let h = hint(&field.kind, field.description.as_deref());
        if !h.is_empty() {
            lines.push(Line::styled(format!("{pad}{h}"), dim));
        }
        if let Some(e) = &f.errors[i] {
            lines.push(Line::styled(
                format!("{pad}✗ {e}"),
                Style::default().fg(t.error).add_modifier(Modifier::BOLD),
            ));
        }
        if focused {
            focused_lines = first..lines.len();
        }
    }
    if let Some(e) = &f.error {
        lines.push(Line::default());
        lines.push(Line::styled(
            format!("✗ {e}"),
            Style::default().fg(t.error).add_modifier(Modifier::BOLD),
        ));
    }
    lines.push(Line::default());
    lines.push(Line::styled("* required", dim));
    (lines, focused_lines)
}

fn url_lines(p: &Pending, opened: &super::Opened, t: &Theme, copy: &str) -> Vec<Line<'static>> {
    let mut lines = message_lines(p, t);
    if let Ask::Url { url, .. } = &p.question.ask {
        lines.push(Line::styled(
            url.clone(),
            Style::default()
                .fg(t.accent)
                .add_modifier(Modifier::UNDERLINED),
        ));
    }
    lines.push(Line::default());
    use super::Opened;
    let (text, style) = match opened {
        Opened::No => (
            "nothing is opened until you ask; accept once you are done there".to_owned(),
            Style::default().fg(t.dim),
        ),
        Opened::Asking => ("opening…".to_owned(), Style::default().fg(t.dim)),
        Opened::Started(opener) => (
            format!("asked {opener} to open it; come back here when you are done"),
            Style::default().fg(t.dim),
        ),
        Opened::Failed(why) => (
            format!(
                "could not open it ({why}): {copy} copies the link, for a browser; then accept"
            ),
            Style::default().fg(t.error).add_modifier(Modifier::BOLD),
        ),
    };
    lines.push(Line::styled(text, style));
    lines
}

/// The sampling request and the reply area, and the lines to keep in view:
/// the reply's cursor and what follows it (the provider's error, its
/// note).
fn sample_lines(
    s: &Sample,
    provider: Option<&str>,
    t: &Theme,
) -> (Vec<Line<'static>>, Range<usize>) {
    let dim = Style::default().fg(t.dim);
    let plain = Style::default().fg(t.fg);
    let head = Style::default().fg(t.accent).add_modifier(Modifier::BOLD);
    let pair = |name: &str, value: String| {
        Line::from(vec![
            Span::styled(format!("{name:<11}"), dim),
            Span::styled(value, plain),
        ])
    };
    let mut lines = Vec::new();
    if let Some(sys) = s.system() {
        lines.push(pair("system", sys.to_owned()));
    }
    if let Some(p) = s.preferences() {
        lines.push(pair("prefers", p));
    }
    if let Some(n) = s.max_tokens() {
        lines.push(pair("maxTokens", n.to_string()));
    }
    lines.push(Line::styled("messages", head));
    for (role, text) in s.messages() {
        for (j, l) in text.lines().enumerate() {
            let who = if j == 0 { role.as_str() } else { "" };
            lines.push(Line::from(vec![
                Span::styled(format!("  {who:<10} "), Style::default().fg(t.accent)),
                Span::styled(l.to_owned(), plain),
            ]));
        }
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        "your reply (you are the model; Enter breaks the line)",
        head,
    ));
    let focus_line = lines.len() + s.reply.cursor().0;
    for row in 0..s.reply.lines().len() {
        let mut spans = vec![Span::styled("│ ", Style::default().fg(t.accent))];
        spans.extend(input_spans(&s.reply, row, true, t));
        lines.push(Line::from(spans));
    }
    let note = match (&s.error, s.waiting, &s.provided, provider) {
        (Some(e), ..) => Some(Line::styled(
            format!("✗ {e}"),
            Style::default().fg(t.error).add_modifier(Modifier::BOLD),
        )),
        (None, true, _, Some(m)) => Some(Line::styled(format!("asking {m}…"), dim)),
        (None, _, Some((_, m)), _) => Some(Line::styled(
            format!("written by {m}: send it as is, or edit it to send it as yours"),
            dim,
        )),
        _ => None,
    };
    if let Some(n) = note {
        lines.push(Line::default());
        lines.push(n);
    }
    let end = lines.len();
    (lines, focus_line..end)
}
