//! The recovery dialog: unsaved text of this file, left by a workbench
//! that ended without saving it (a crash, a kill), found at start. It has
//! its own mode (`RECOVER`) and footer, and takes every key until it is
//! answered: `r` takes the copy into the editor, `d` deletes it, `v` shows
//! how it differs from the file, Esc decides later (the copy is kept for
//! the next start). It is never shown for the copy of a workbench that
//! still runs (see `editor/recovery.rs`).

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Widget, Wrap};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::editor::recovery::{Recovered, format_time};
use crate::keys::Action;
use crate::msg::Msg;
use crate::msg::RecoveryAnswer;
use crate::window::centred;

/// The copy found at start, and the file it is of.
#[derive(Debug, Clone)]
pub(crate) struct RecoverDialog {
    file: PathBuf,
    found: Recovered,
}

impl RecoverDialog {
    /// The question for copy `found` of `file`.
    pub(crate) fn new(file: PathBuf, found: Recovered) -> RecoverDialog {
        RecoverDialog { file, found }
    }

    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        let r = centred(area, 70, 40);
        Rect::new(r.x, r.y, r.width, r.height.max(10).min(area.height))
    }

    /// Its keys, for the footer.
    pub(crate) fn keys() -> Vec<(String, &'static str)> {
        vec![
            ("r".into(), "recover"),
            ("d".into(), "discard"),
            ("v".into(), "view the difference"),
            ("Esc".into(), "decide later"),
        ]
    }
}

impl Component for RecoverDialog {
    /// `r`, `d` and Esc answer (and close it); `v` shows the difference
    /// over it; other keys leave it open.
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        let answer = match key.code {
            KeyCode::Char('r') | KeyCode::Char('R') => Some(RecoveryAnswer::Recover),
            KeyCode::Char('d') | KeyCode::Char('D') => Some(RecoveryAnswer::Discard),
            KeyCode::Esc => Some(RecoveryAnswer::Later),
            KeyCode::Char('v') | KeyCode::Char('V') => {
                queue.push(Msg::RecoveryDiff);
                None
            }
            _ => {
                queue.push(Msg::Say {
                    text: "unsaved text waits for an answer: r recovers it, d discards it, v shows the difference, Esc decides later".into(),
                    error: false,
                });
                None
            }
        };
        if let Some(a) = answer {
            queue.push(Msg::CloseOverlay);
            queue.push(Msg::Recovery(a));
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let t = ctx.theme;
        let r = Self::rect(area);
        Clear.render(r, buf);
        let key = |k: &'static str| {
            Span::styled(
                format!("{k:<5}"),
                Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
            )
        };
        let plain = Style::default().fg(t.fg);
        let lines = vec![
            Line::styled(
                format!(
                    "{} has unsaved text from {}: a workbench on it ended without saving it.",
                    self.file.display(),
                    format_time(self.found.saved_at)
                ),
                plain,
            ),
            Line::default(),
            Line::from(vec![
                key("r"),
                Span::styled("recover it into the editor (Ctrl-S saves it)", plain),
            ]),
            Line::from(vec![key("d"), Span::styled("discard it", plain)]),
            Line::from(vec![
                key("v"),
                Span::styled("view how it differs from the file", plain),
            ]),
            Line::from(vec![
                key("Esc"),
                Span::styled("decide later (offered again at the next start)", plain),
            ]),
        ];
        // Esc answers here (later), it does not only close.
        let block = Block::bordered()
            .title(Span::styled(
                " unsaved text found ",
                Style::default().fg(t.accent).add_modifier(Modifier::BOLD),
            ))
            .title_bottom(
                Line::from(Span::styled(
                    " Esc decide later ",
                    Style::default().fg(t.dim),
                ))
                .right_aligned(),
            )
            .border_style(t.border_style(true))
            .style(t.base());
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block)
            .render(r, buf);
    }
}
