//! Windows drawn over the panes: the help, the command palette, the dry-run
//! plan, a text viewer (pinned mocks) and the unsaved-changes question.

use crate::engine::plan::dry_run::CompositionPlan;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use super::keys::{Action, Keymap};
use super::theme::Theme;

/// An open overlay.
#[derive(Debug, Clone)]
pub enum Overlay {
    Help {
        scroll: u16,
    },
    Palette(Palette),
    Plan(PlanView),
    Text {
        title: String,
        body: Vec<String>,
        scroll: u16,
    },
    /// `q` with unsaved edits or a run in progress.
    ConfirmQuit {
        unsaved: bool,
        running: bool,
    },
    /// Preflight found destructive calls; `calls` are asked about.
    ConfirmDestructive {
        calls: Vec<String>,
        body: Vec<String>,
    },
    /// The saved runs of this file.
    History(super::history::HistoryView),
}

impl Overlay {
    /// The overlay after a scrolling key.
    pub fn scrolled(self, key: KeyEvent) -> Overlay {
        let delta: i32 = match key.code {
            KeyCode::Down | KeyCode::Char('j') => 1,
            KeyCode::Up | KeyCode::Char('k') => -1,
            KeyCode::PageDown | KeyCode::Char(' ') => 10,
            KeyCode::PageUp => -10,
            KeyCode::Home => -10_000,
            _ => 0,
        };
        let mv = |s: u16| (s as i32 + delta).clamp(0, u16::MAX as i32) as u16;
        match self {
            Overlay::Help { scroll } => Overlay::Help { scroll: mv(scroll) },
            Overlay::Plan(mut p) => {
                p.scroll = mv(p.scroll);
                Overlay::Plan(p)
            }
            Overlay::Text {
                title,
                body,
                scroll,
            } => Overlay::Text {
                title,
                body,
                scroll: mv(scroll),
            },
            other => other,
        }
    }
}

/// One thing the palette can do.
#[derive(Debug, Clone, PartialEq)]
pub enum PaletteItem {
    /// An action and its key label.
    Action(Action, String),
    Theme(String),
    Composition(String),
    /// Use this case row of the composition.
    Case(String),
    /// Jump to a node.
    Node(String),
}

impl PaletteItem {
    /// The short name typed to find it.
    fn name(&self) -> String {
        match self {
            PaletteItem::Action(a, _) => a.name().to_owned(),
            PaletteItem::Theme(t) => format!("theme {t}"),
            PaletteItem::Composition(c) => format!("composition {c}"),
            PaletteItem::Case(c) => format!("case {c}"),
            PaletteItem::Node(n) => format!("node {n}"),
        }
    }

    fn text(&self) -> String {
        match self {
            PaletteItem::Action(a, _) => format!("{} — {}", a.name(), a.describe()),
            PaletteItem::Theme(t) => format!("theme {t}"),
            PaletteItem::Composition(c) => format!("composition {c}"),
            PaletteItem::Case(c) => format!("case {c}: run with this case row's vars"),
            PaletteItem::Node(n) => format!("go to node {n}"),
        }
    }
}

/// The command palette: type to filter, arrows to choose, Enter to do.
#[derive(Debug, Clone)]
pub struct Palette {
    pub input: String,
    items: Vec<PaletteItem>,
    shown: Vec<usize>,
    pub selected: usize,
}

impl Palette {
    pub fn new(items: Vec<PaletteItem>) -> Palette {
        let mut p = Palette {
            input: String::new(),
            shown: Vec::new(),
            items,
            selected: 0,
        };
        p.filter();
        p
    }

    /// Items whose text holds the typed characters in order, best first:
    /// a match in the name beats a match in the description.
    fn filter(&mut self) {
        let q: Vec<char> = self
            .input
            .to_lowercase()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let mut scored: Vec<(u8, usize)> = self
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| {
                let name = it.name().to_lowercase();
                let qs: String = q.iter().collect();
                let score = if name.contains(&qs) {
                    0
                } else if subsequence(&q, &name) {
                    1
                } else if subsequence(&q, &it.text().to_lowercase()) {
                    2
                } else {
                    return None;
                };
                Some((score, i))
            })
            .collect();
        scored.sort_by_key(|(s, _)| *s);
        self.shown = scored.into_iter().map(|(_, i)| i).collect();
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
    }

    pub fn key(&mut self, key: KeyEvent) {
        match key.code {
            KeyCode::Char(c) => {
                self.input.push(c);
                self.selected = 0;
                self.filter();
            }
            KeyCode::Backspace => {
                self.input.pop();
                self.filter();
            }
            KeyCode::Down | KeyCode::Tab if self.selected + 1 < self.shown.len() => {
                self.selected += 1;
            }
            KeyCode::Up | KeyCode::BackTab => self.selected = self.selected.saturating_sub(1),
            _ => {}
        }
    }

    /// The highlighted item.
    pub fn chosen(&self) -> Option<&PaletteItem> {
        self.shown.get(self.selected).map(|&i| &self.items[i])
    }

    /// The items shown now, in order.
    pub fn shown(&self) -> impl Iterator<Item = &PaletteItem> {
        self.shown.iter().map(|&i| &self.items[i])
    }
}

fn subsequence(q: &[char], text: &str) -> bool {
    let mut it = q.iter().peekable();
    for c in text.chars() {
        if it.peek() == Some(&&c) {
            it.next();
        }
    }
    it.peek().is_none()
}

/// The dry-run plan and cost estimate (`d`, `e`): the engine's plan of the
/// composition and case on screen, in the words `pipewright plan` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanView {
    /// Opened as the cost estimate (`e`) rather than the dry run (`d`).
    pub estimate: bool,
    /// What `plan` computes for the same file, composition and case.
    pub plan: CompositionPlan,
    /// `plan`'s text of it, a line each.
    pub lines: Vec<String>,
    pub scroll: u16,
}

impl PlanView {
    /// The view of `plan` for `file`.
    pub fn new(file: &str, plan: CompositionPlan, estimate: bool) -> PlanView {
        let lines = crate::engine::plan::text::composition(file, &plan)
            .lines()
            .map(str::to_owned)
            .collect();
        PlanView {
            estimate,
            plan,
            lines,
            scroll: 0,
        }
    }
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
    Block::bordered()
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
        .style(theme.base())
}

/// Draws an overlay over the screen: help lists `keymap`.
pub fn render(ov: &Overlay, t: &Theme, keymap: &Keymap, area: Rect, buf: &mut Buffer) {
    match ov {
        Overlay::History(h) => {
            let r = centred(area, 90, 70);
            Clear.render(r, buf);
            h.render(
                t,
                r,
                frame(super::history::HistoryView::TITLE.into(), t),
                buf,
            );
        }
        Overlay::Help { scroll } => {
            let r = centred(area, 70, 80);
            Clear.render(r, buf);
            let mut lines = vec![Line::from(Span::styled(
                "Keys (rebind them in config.yaml under keys:)",
                Style::default().add_modifier(Modifier::BOLD),
            ))];
            lines.push(Line::from(Span::styled(
                "Plain keys act in the DAG and inspector; in the editor they are text.",
                Style::default().fg(t.dim),
            )));
            lines.push(Line::default());
            let action_line = |a: Action| {
                let keys: Vec<String> = keymap.keys(a).iter().map(ToString::to_string).collect();
                Line::from(vec![
                    Span::styled(
                        format!("{:<16}", keys.join(" ")),
                        Style::default().fg(t.accent),
                    ),
                    Span::styled(format!("{:<16}", a.name()), Style::default().fg(t.fg)),
                    Span::styled(a.describe(), Style::default().fg(t.dim)),
                ])
            };
            lines.extend(
                Action::ALL
                    .iter()
                    .filter(|a| !a.is_modal())
                    .map(|a| action_line(*a)),
            );
            lines.push(Line::default());
            for (k, what) in [
                (
                    "arrows h j k l",
                    "move in the DAG (left: parents, right: children)",
                ),
                ("Enter / i", "DAG: to the inspector / to the editor"),
                ("Esc", "editor and inspector: back to the DAG"),
                ("1-7, ← →", "inspector tabs; / filters the output with jq"),
                (
                    "Ctrl-Z Ctrl-Y",
                    "editor: undo, redo; Ctrl-F search; Ctrl-G go to line",
                ),
                ("mouse", "click to select or focus; wheel scrolls"),
            ] {
                lines.push(Line::from(vec![
                    Span::styled(format!("{k:<16}"), Style::default().fg(t.accent)),
                    Span::styled(what, Style::default().fg(t.dim)),
                ]));
            }
            lines.push(Line::default());
            lines.push(Line::from(Span::styled(
                "When a server asks (the modal over the screen has every key):",
                Style::default().add_modifier(Modifier::BOLD),
            )));
            lines.extend(
                Action::ALL
                    .iter()
                    .filter(|a| a.is_modal())
                    .map(|a| action_line(*a)),
            );
            Paragraph::new(lines)
                .block(frame("help".into(), t))
                .scroll((*scroll, 0))
                .render(r, buf);
        }
        Overlay::Palette(p) => {
            let r = centred(area, 60, 60);
            Clear.render(r, buf);
            let mut lines = vec![
                Line::from(vec![
                    Span::styled("> ", Style::default().fg(t.accent)),
                    Span::styled(p.input.clone(), Style::default().fg(t.fg)),
                    Span::styled("█", Style::default().fg(t.accent)),
                ]),
                Line::default(),
            ];
            let room = r.height.saturating_sub(4) as usize;
            let skip = p.selected.saturating_sub(room.saturating_sub(1));
            for (i, item) in p.shown().enumerate().skip(skip).take(room) {
                let style = if i == p.selected {
                    Style::default()
                        .bg(t.selection_bg)
                        .fg(t.fg)
                        .add_modifier(Modifier::BOLD)
                } else {
                    Style::default().fg(t.fg)
                };
                let key = match item {
                    PaletteItem::Action(_, k) => k.clone(),
                    _ => String::new(),
                };
                lines.push(Line::from(vec![
                    Span::styled(format!(" {:<50}", item.text()), style),
                    Span::styled(format!(" {key}"), Style::default().fg(t.dim)),
                ]));
            }
            Paragraph::new(lines)
                .block(frame("command".into(), t))
                .render(r, buf);
        }
        Overlay::Plan(plan) => {
            let r = centred(area, 90, 85);
            Clear.render(r, buf);
            let title = if plan.estimate {
                "plan and cost estimate"
            } else {
                "dry run"
            };
            let mut lines = vec![Line::from(Span::styled(
                "nothing is called; <from x.y> waits on a node that has not run (as `pipewright plan` prints it)",
                Style::default().fg(t.dim),
            ))];
            for l in &plan.lines {
                let style = if l.contains("OVER BUDGET") || l.contains(" trips at ") {
                    Style::default().fg(t.failed).add_modifier(Modifier::BOLD)
                } else if l.contains("within budget") {
                    Style::default().fg(t.ok)
                } else if l.starts_with("plan ") || l.trim_start().starts_with("total ") {
                    Style::default().fg(t.accent).add_modifier(Modifier::BOLD)
                } else if l.trim_start().starts_with("args ") {
                    Style::default().fg(t.dim)
                } else if l.trim_start().starts_with('!') {
                    Style::default().fg(t.error)
                } else {
                    Style::default().fg(t.fg)
                };
                lines.push(Line::from(Span::styled(l.clone(), style)));
            }
            Paragraph::new(lines)
                .block(frame(title.into(), t))
                .scroll((plan.scroll, 0))
                .render(r, buf);
        }
        Overlay::Text {
            title,
            body,
            scroll,
        } => {
            let r = centred(area, 70, 70);
            Clear.render(r, buf);
            let lines: Vec<Line> = body.iter().map(|l| Line::from(l.clone())).collect();
            Paragraph::new(lines)
                .block(frame(title.clone(), t))
                .wrap(Wrap { trim: false })
                .scroll((*scroll, 0))
                .render(r, buf);
        }
        Overlay::ConfirmDestructive { body, .. } => {
            let r = centred(area, 70, 40);
            Clear.render(r, buf);
            let lines: Vec<Line> = body
                .iter()
                .map(|l| Line::from(Span::styled(l.clone(), Style::default().fg(t.fg))))
                .collect();
            Paragraph::new(lines)
                .block(
                    frame("destructive tools".into(), t)
                        .border_style(Style::default().fg(t.failed)),
                )
                .wrap(Wrap { trim: false })
                .render(r, buf);
        }
        Overlay::ConfirmQuit { unsaved, running } => {
            let r = centred(area, 50, 20);
            let r = Rect::new(r.x, r.y, r.width, r.height.max(6));
            Clear.render(r, buf);
            let key = |k: &'static str| {
                Span::styled(
                    k,
                    Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
                )
            };
            let mut lines = Vec::new();
            if *running {
                lines.push(Line::from(
                    "A run is in progress: quitting cancels it and saves its trace.",
                ));
            }
            if *unsaved {
                lines.push(Line::from("The buffer has unsaved edits."));
            }
            let mut keys = Vec::new();
            if *unsaved {
                keys.extend([key("s"), Span::raw(" save and quit   ")]);
                keys.extend([key("q"), Span::raw(" quit without saving   ")]);
            } else {
                keys.extend([key("q"), Span::raw(" cancel the run and quit   ")]);
            }
            keys.extend([key("Esc"), Span::raw(" stay")]);
            lines.push(Line::from(keys));
            Paragraph::new(lines)
                .wrap(Wrap { trim: true })
                .block(frame("quit?".into(), t))
                .render(r, buf);
        }
    }
}

/// The DAG pane before any plan loaded.
pub fn empty_dag(area: Rect, buf: &mut Buffer, t: &Theme, errors: usize, focused: bool) {
    let text = if errors > 0 {
        format!("no plan: the file has {errors} error(s); see the editor")
    } else {
        "loading…".to_owned()
    };
    Paragraph::new(Span::styled(text, Style::default().fg(t.dim)))
        .block(
            Block::bordered()
                .title(" DAG ")
                .border_style(t.border_style(focused))
                .style(t.base()),
        )
        .render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    #[test]
    fn palette_filters_by_subsequence_and_chooses() {
        let mut p = Palette::new(vec![
            PaletteItem::Action(Action::Run, "F5".into()),
            PaletteItem::Action(Action::RerunFrom, "R".into()),
            PaletteItem::Theme("light".into()),
        ]);
        assert_eq!(p.shown().count(), 3);
        for c in "rrf".chars() {
            p.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        assert_eq!(
            p.chosen(),
            Some(&PaletteItem::Action(Action::RerunFrom, "R".into()))
        );
        p.key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
        p.key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
        p.key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
        for c in "theme".chars() {
            p.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        assert_eq!(p.chosen(), Some(&PaletteItem::Theme("light".into())));
        for c in "zzz".chars() {
            p.key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        }
        assert_eq!(p.chosen(), None);
    }

    #[test]
    fn scrolling_stays_in_range() {
        let ov = Overlay::Help { scroll: 0 };
        let ov = ov.scrolled(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE));
        assert!(matches!(ov, Overlay::Help { scroll: 0 }));
        let ov = ov.scrolled(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
        assert!(matches!(ov, Overlay::Help { scroll: 10 }));
    }
}
