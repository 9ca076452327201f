//! The two questions the workbench asks before it acts: quit with unsaved
//! edits or a run in progress (`q`), and run the calls preflight found
//! destructive.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::window::{centred, frame};

/// `q` with unsaved edits or a run in progress.
#[derive(Debug, Clone)]
pub(crate) struct ConfirmQuit {
    unsaved: bool,
    running: bool,
}

impl ConfirmQuit {
    /// The question for a buffer with `unsaved` edits and a `running` run.
    pub(crate) fn new(unsaved: bool, running: bool) -> ConfirmQuit {
        ConfirmQuit { unsaved, running }
    }

    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        let r = centred(area, 50, 20);
        Rect::new(r.x, r.y, r.width, r.height.max(6))
    }

    /// Whether the buffer has unsaved edits.
    pub(crate) fn unsaved(&self) -> bool {
        self.unsaved
    }

    /// Whether a run is in progress.
    pub(crate) fn running(&self) -> bool {
        self.running
    }
}

impl Component for ConfirmQuit {
    /// `s` saves and quits (with unsaved edits), `q` or `y` quits, Esc
    /// stays; other keys leave the question open.
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match key.code {
            KeyCode::Char('s') | KeyCode::Char('S') if self.unsaved => {
                queue.push(Msg::CloseOverlay);
                queue.push(Msg::SaveAndQuit);
            }
            KeyCode::Char('q') | KeyCode::Char('Q') | KeyCode::Char('y') => {
                queue.push(Msg::CloseOverlay);
                queue.push(Msg::Quit {
                    discard: self.unsaved,
                    running: self.running,
                });
            }
            KeyCode::Esc => queue.push(Msg::CloseOverlay),
            _ => {}
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let t = ctx.theme;
        let r = Self::rect(area);
        Clear.render(r, buf);
        let key = |k: &'static str| {
            Span::styled(
                k,
                Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
            )
        };
        let mut lines = Vec::new();
        if self.running {
            lines.push(Line::from(
                "A run is in progress: quitting cancels it and saves its trace.",
            ));
        }
        if self.unsaved {
            lines.push(Line::from("The buffer has unsaved edits."));
        }
        let mut keys = Vec::new();
        if self.unsaved {
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

/// Preflight found destructive calls: the person allows them (`y`) or
/// nothing runs.
#[derive(Debug, Clone)]
pub(crate) struct ConfirmDestructive {
    /// The calls asked about, `node→tool`.
    calls: Vec<String>,
    /// What the window says.
    body: Vec<String>,
}

impl ConfirmDestructive {
    /// Asks about `calls`, saying `body`.
    pub(crate) fn new(calls: Vec<String>, body: Vec<String>) -> ConfirmDestructive {
        ConfirmDestructive { calls, body }
    }

    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        centred(area, 70, 40)
    }
}

impl Component for ConfirmDestructive {
    /// `y` runs them; any other key runs nothing. Either closes it.
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        queue.push(Msg::CloseOverlay);
        if matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y')) {
            queue.push(Msg::AllowDestructive(std::mem::take(&mut self.calls)));
        } else {
            queue.push(Msg::RefuseDestructive);
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let t = ctx.theme;
        let r = Self::rect(area);
        Clear.render(r, buf);
        let lines: Vec<Line> = self
            .body
            .iter()
            .map(|l| Line::from(Span::styled(l.clone(), Style::default().fg(t.fg))))
            .collect();
        Paragraph::new(lines)
            .block(frame("destructive tools".into(), t).border_style(Style::default().fg(t.failed)))
            .wrap(Wrap { trim: false })
            .render(r, buf);
    }
}
