//! Windows drawn over the panes: the help, the command palette, the dry-run
//! plan, a text viewer (pinned mocks) and the unsaved-changes question.

use crossterm::event::KeyEvent;
use pipewright_engine::plan::dry_run::CompositionPlan;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use super::keys::{Action, Keymap};
use super::theme::Theme;
use crate::window::{centred, frame, scrolled, scrolled_lines, wrap_words};

pub mod scaffold;

use crate::palette::Palette;

/// An open overlay.
#[derive(Debug, Clone)]
pub enum Overlay {
    Help {
        scroll: u16,
    },
    Palette(Palette),
    Plan(Box<PlanView>),
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
    /// Every message of the session in full, the file's diagnostics, and
    /// the last server error with its stderr (`m`).
    Messages {
        scroll: u16,
        wrap: bool,
    },
    /// The palette's "new pipeline": tools to scaffold a node each.
    Scaffold(scaffold::ScaffoldChooser),
}

impl Overlay {
    /// The overlay after a scrolling key.
    pub fn scrolled(self, key: KeyEvent) -> Overlay {
        let mv = |s: u16| scrolled(s, key);
        match self {
            Overlay::Help { scroll } => Overlay::Help { scroll: mv(scroll) },
            Overlay::Messages { scroll, wrap } => Overlay::Messages {
                scroll: mv(scroll),
                wrap,
            },
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

    /// The scroll offset of a scrolling overlay.
    pub fn scroll_mut(&mut self) -> Option<&mut u16> {
        match self {
            Overlay::Help { scroll }
            | Overlay::Messages { scroll, .. }
            | Overlay::Text { scroll, .. } => Some(scroll),
            Overlay::Plan(p) => Some(&mut p.scroll),
            _ => None,
        }
    }

    /// The word the status bar shows for it.
    pub fn name(&self) -> &'static str {
        match self {
            Overlay::Help { .. } => "help",
            Overlay::Palette(_) => "palette",
            Overlay::Plan(p) if p.estimate => "estimate",
            Overlay::Plan(_) => "dry run",
            Overlay::Text { .. } => "text",
            Overlay::ConfirmQuit { .. } => "quit?",
            Overlay::ConfirmDestructive { .. } => "destructive?",
            Overlay::History(_) => "history",
            Overlay::Messages { .. } => "messages",
            Overlay::Scaffold(_) => "new pipeline",
        }
    }
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
        use pipewright_engine::plan::text::{View, composition_as};
        let view = if estimate {
            View::Estimate
        } else {
            View::DryRun
        };
        let lines = composition_as(file, &plan, view)
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

/// The help: a table generated from the keymap, its columns as wide as
/// their longest entry, descriptions wrapped under their own column.
pub fn help_lines(keymap: &Keymap, t: &Theme, width: u16) -> Vec<Line<'static>> {
    use unicode_width::UnicodeWidthStr;
    let keys_of = |a: Action| -> String {
        keymap
            .keys(a)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let extra: &[(&str, &str)] = &[
        (
            "← ↓ ↑ → h j k l",
            "DAG: move (left: parents, right: children)",
        ),
        ("Enter", "DAG: to the inspector; a row: open or fold it"),
        ("i", "DAG: to the editor (also on an empty or broken file)"),
        ("Esc", "back: editor, inspector and overlays to the DAG"),
        ("1-7  [ ]", "inspector: the tabs"),
        ("/", "inspector Output: filter with jq (Enter keeps it)"),
        (
            "E R F5 /",
            "History: export the run, restore its file, restore and run it, search",
        ),
        (
            "Ctrl-Z Ctrl-Y",
            "editor: undo, redo (a pin or reload is one step)",
        ),
        ("Ctrl-F  Ctrl-G", "editor: find, go to line"),
        (
            "mouse",
            "click selects or focuses; the wheel scrolls; overlays too",
        ),
    ];
    let global: Vec<Action> = Action::ALL
        .iter()
        .copied()
        .filter(|a| !a.is_modal())
        .collect();
    let modal: Vec<Action> = Action::ALL
        .iter()
        .copied()
        .filter(|a| a.is_modal())
        .collect();
    let key_w = global
        .iter()
        .chain(&modal)
        .map(|a| keys_of(*a).width())
        .chain(extra.iter().map(|(k, _)| k.width()))
        .max()
        .unwrap_or(8)
        + 2;
    let name_w = Action::ALL
        .iter()
        .map(|a| a.name().len())
        .max()
        .unwrap_or(8)
        + 2;
    let inner = width.saturating_sub(2) as usize;
    // On a narrow screen the description goes under the key.
    let narrow = inner < key_w + name_w + 24;
    let desc_at = if narrow { 4 } else { key_w + name_w };
    let desc_w = inner.saturating_sub(desc_at).max(16);
    let bold = Style::default().add_modifier(Modifier::BOLD);
    let mut lines = vec![
        Line::from(Span::styled(
            "Keys, from the keymap (rebind them in config.yaml under keys:)",
            bold,
        )),
        Line::from(Span::styled(
            "Plain keys act in the DAG and the inspector; in the editor they are text.",
            Style::default().fg(t.dim),
        )),
        Line::default(),
    ];
    let row = |lines: &mut Vec<Line<'static>>, keys: String, name: &str, what: &str| {
        let parts = wrap_words(what, desc_w);
        let mut first = vec![Span::styled(
            format!("{keys:<key_w$}"),
            Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
        )];
        if narrow {
            first.push(Span::styled(name.to_owned(), Style::default().fg(t.fg)));
            lines.push(Line::from(first));
            for p in parts {
                lines.push(Line::from(Span::styled(
                    format!("{:desc_at$}{p}", ""),
                    Style::default().fg(t.dim),
                )));
            }
            return;
        }
        first.push(Span::styled(
            format!("{name:<name_w$}"),
            Style::default().fg(t.fg),
        ));
        let mut parts = parts.into_iter();
        first.push(Span::styled(
            parts.next().unwrap_or_default(),
            Style::default().fg(t.dim),
        ));
        lines.push(Line::from(first));
        for p in parts {
            lines.push(Line::from(Span::styled(
                format!("{:desc_at$}{p}", ""),
                Style::default().fg(t.dim),
            )));
        }
    };
    for a in &global {
        row(&mut lines, keys_of(*a), a.name(), a.describe());
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("Moving around", bold)));
    for (k, what) in extra {
        row(&mut lines, (*k).to_owned(), "", what);
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled(
        "When a server asks (the modal has the keys; Ctrl-Q still quits):",
        bold,
    )));
    for a in &modal {
        row(&mut lines, keys_of(*a), a.name(), a.describe());
    }
    lines.push(Line::default());
    lines.push(Line::from(Span::styled("What the glyphs mean", bold)));
    let glyph_w = super::theme::GLYPHS
        .iter()
        .map(|(g, _)| g.width())
        .max()
        .unwrap_or(1)
        + 2;
    for (glyph, what) in super::theme::GLYPHS {
        let pad = glyph_w.saturating_sub(glyph.width());
        for (i, part) in wrap_words(what, inner.saturating_sub(glyph_w).max(16))
            .into_iter()
            .enumerate()
        {
            let head = if i == 0 {
                format!("{glyph}{:pad$}", "")
            } else {
                format!("{:glyph_w$}", "")
            };
            lines.push(Line::from(vec![
                Span::styled(
                    head,
                    Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
                ),
                Span::styled(part, Style::default().fg(t.dim)),
            ]));
        }
    }
    lines
}

/// Draws an overlay over the screen: help lists `keymap`. Returns the
/// scroll offset clamped to what there is to see (for the caller to keep).
pub fn render(
    ov: &Overlay,
    t: &Theme,
    keymap: &Keymap,
    area: Rect,
    buf: &mut Buffer,
) -> Option<u16> {
    match ov {
        Overlay::Scaffold(c) => {
            let r = rect_of(ov, area);
            Clear.render(r, buf);
            c.render(t, r, frame("new pipeline: a node per tool".into(), t), buf);
        }
        Overlay::History(h) => {
            let r = rect_of(ov, area);
            Clear.render(r, buf);
            h.render(
                t,
                r,
                frame(super::history::HistoryView::TITLE.into(), t),
                buf,
            );
        }
        Overlay::Help { scroll } => {
            let r = centred(area, 80, 90);
            Clear.render(r, buf);
            let lines = help_lines(keymap, t, r.width);
            return Some(scrolled_lines(
                lines,
                "help".into(),
                t,
                r,
                *scroll,
                false,
                buf,
            ));
        }
        Overlay::Messages { .. } => {}
        Overlay::Palette(p) => {
            let r = centred(area, 60, 60);
            Clear.render(r, buf);
            p.render(t, r, buf);
        }
        Overlay::Plan(plan) => {
            let r = centred(area, 90, 85);
            Clear.render(r, buf);
            let (title, note) = if plan.estimate {
                (
                    "cost estimate",
                    "nothing is called · each call's projected cost, the totals, the budget · d: waves and args",
                )
            } else {
                (
                    "dry run",
                    "nothing is called · waves and args; <from x.y> waits on a node not run yet · e: cost",
                )
            };
            let mut lines = vec![Line::from(Span::styled(note, Style::default().fg(t.dim)))];
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
            return Some(scrolled_lines(
                lines,
                title.into(),
                t,
                r,
                plan.scroll,
                false,
                buf,
            ));
        }
        Overlay::Text {
            title,
            body,
            scroll,
        } => {
            let r = centred(area, 70, 70);
            Clear.render(r, buf);
            let lines: Vec<Line> = body.iter().map(|l| Line::from(l.clone())).collect();
            return Some(scrolled_lines(
                lines,
                title.clone(),
                t,
                r,
                *scroll,
                true,
                buf,
            ));
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
    None
}

/// Where an overlay is drawn on a screen of `area` (for the mouse).
pub fn rect_of(ov: &Overlay, area: Rect) -> Rect {
    match ov {
        // Its columns need the whole width of a narrow screen.
        Overlay::History(_) if area.width < 100 => centred(area, 100, 70),
        Overlay::History(_) => centred(area, 90, 70),
        Overlay::Help { .. } => centred(area, 80, 90),
        Overlay::Palette(_) => centred(area, 60, 60),
        Overlay::Plan(_) => centred(area, 90, 85),
        Overlay::Text { .. } => centred(area, 70, 70),
        Overlay::Messages { .. } => centred(area, 90, 85),
        Overlay::ConfirmDestructive { .. } => centred(area, 70, 40),
        Overlay::Scaffold(_) => centred(area, 80, 70),
        Overlay::ConfirmQuit { .. } => {
            let r = centred(area, 50, 20);
            Rect::new(r.x, r.y, r.width, r.height.max(6))
        }
    }
}

/// The DAG pane before any plan loaded.
pub fn empty_dag(area: Rect, buf: &mut Buffer, t: &Theme, errors: usize, focused: bool) {
    let text = if errors > 0 {
        format!("no plan: the file has {errors} error(s); see the editor (i edits, m lists them)")
    } else {
        "no plan yet: i (or Enter) edits the file".to_owned()
    };
    Paragraph::new(Span::styled(text, Style::default().fg(t.dim)))
        .wrap(Wrap { trim: true })
        .block(
            Block::bordered()
                .title(t.pane_title("DAG", focused))
                .border_style(t.border_style(focused))
                .style(t.base()),
        )
        .render(area, buf);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyModifiers};

    #[test]
    fn scrolling_stays_in_range() {
        let ov = Overlay::Help { scroll: 0 };
        let ov = ov.scrolled(KeyEvent::new(KeyCode::Up, KeyModifiers::NONE));
        assert!(matches!(ov, Overlay::Help { scroll: 0 }));
        let ov = ov.scrolled(KeyEvent::new(KeyCode::PageDown, KeyModifiers::NONE));
        assert!(matches!(ov, Overlay::Help { scroll: 10 }));
    }
}
