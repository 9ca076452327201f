//! A question with a few answers, a key each: History's `E` (which format
//! to export the chosen run in). A popup in the middle of the screen lists
//! every answer with its key, so all of them can be read at any size
//! (80×24 cut the status line's version to `export as: j JSO …`); a key
//! that is no answer leaves it open, and Esc answers none.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget};

use pipewright_engine::run::store::Entry;

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::window::frame;

/// What the answer is for.
#[derive(Debug, Clone)]
enum Purpose {
    /// The format saved run `0` is exported in.
    Export(Entry),
}

/// The question, its answers and what the answer is for.
#[derive(Debug, Clone)]
pub(crate) struct Choice {
    title: String,
    /// Each answer's key and what it does.
    answers: Vec<(char, &'static str)>,
    /// What Esc does.
    none: &'static str,
    purpose: Purpose,
}

impl Choice {
    /// Which format saved run `entry` is exported in (History's `E`).
    pub(crate) fn export(entry: Entry) -> Choice {
        Choice {
            title: format!("export as · run {}", entry.id),
            answers: vec![
                ('j', "JSON trace (as run --format json)"),
                ('u', "JUnit XML (as run --format junit)"),
                ('o', "OTLP/JSON (as runs export --otlp)"),
                ('c', "cassette (for run --replay)"),
            ],
            none: "no export",
            purpose: Purpose::Export(entry),
        }
    }

    /// Its answers: each key and what it does.
    pub(crate) fn answers(&self) -> &[(char, &'static str)] {
        &self.answers
    }

    /// What Esc does.
    pub(crate) fn none(&self) -> &'static str {
        self.none
    }

    /// Where it is drawn on a screen of `area`: as wide as its longest
    /// line (and its title), a row an answer.
    pub(crate) fn rect(&self, area: Rect) -> Rect {
        let widest = self
            .answers
            .iter()
            .map(|(_, what)| what.chars().count() + 3)
            .chain([
                self.title.chars().count() + 2,
                self.none.chars().count() + 5,
            ])
            .max()
            .unwrap_or(20);
        let w = u16::try_from(widest + 4)
            .unwrap_or(u16::MAX)
            .min(area.width);
        let h = u16::try_from(self.answers.len() + 4)
            .unwrap_or(u16::MAX)
            .min(area.height);
        Rect::new(
            area.x + (area.width - w) / 2,
            area.y + (area.height - h) / 2,
            w,
            h,
        )
    }

    /// The answer's messages: the overlay closes (back to where it was
    /// asked from), then what the answer (`None`: Esc) does.
    fn answer(&self, key: Option<char>, queue: &mut Queue) {
        queue.push(Msg::CloseOverlay);
        match &self.purpose {
            Purpose::Export(entry) => queue.push(Msg::Export {
                entry: Some(entry.clone()),
                format: key,
            }),
        }
    }
}

impl Component for Choice {
    /// An answer's key answers; Esc answers none; any other key leaves the
    /// question open and says what answers it.
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match key.code {
            KeyCode::Char(c) if self.answers.iter().any(|(k, _)| *k == c) => {
                self.answer(Some(c), queue)
            }
            KeyCode::Esc => self.answer(None, queue),
            _ => {
                let keys: Vec<String> = self.answers.iter().map(|(k, _)| k.to_string()).collect();
                queue.push(Msg::Say {
                    text: format!("{} answer; Esc: {}", keys.join(", "), self.none),
                    error: false,
                });
            }
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let t = ctx.theme;
        let r = self.rect(area);
        Clear.render(r, buf);
        let key = Style::default().fg(t.accent).add_modifier(Modifier::BOLD);
        let mut lines: Vec<Line<'_>> = self
            .answers
            .iter()
            .map(|(k, what)| {
                Line::from(vec![
                    Span::styled(format!("{k}  "), key),
                    Span::styled(*what, Style::default().fg(t.fg)),
                ])
            })
            .collect();
        lines.push(Line::default());
        lines.push(Line::from(vec![
            Span::styled("Esc  ", key),
            Span::styled(self.none, Style::default().fg(t.dim)),
        ]));
        Paragraph::new(lines)
            .block(frame(self.title.clone(), t))
            .render(r, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Keymap;
    use crate::theme::Theme;
    use crossterm::event::KeyModifiers;

    fn entry() -> Entry {
        Entry {
            id: "r1".into(),
            ..Entry::default()
        }
    }

    #[test]
    fn a_key_answers_esc_answers_none_and_another_key_waits() {
        let (theme, keymap) = (Theme::dark(), Keymap::default());
        let ctx = Ctx::plain(&theme, &keymap);
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        let mut choice = Choice::export(entry());
        let mut queue = Queue::default();
        choice.on_key(key(KeyCode::Char('x')), None, &ctx, &mut queue);
        assert!(matches!(queue.pop(), Some(Msg::Say { .. })));
        assert!(queue.pop().is_none(), "still open");
        choice.on_key(key(KeyCode::Char('c')), None, &ctx, &mut queue);
        assert!(matches!(queue.pop(), Some(Msg::CloseOverlay)));
        assert!(matches!(
            queue.pop(),
            Some(Msg::Export {
                format: Some('c'),
                entry: Some(_)
            })
        ));
        choice.on_key(key(KeyCode::Esc), None, &ctx, &mut queue);
        assert!(matches!(queue.pop(), Some(Msg::CloseOverlay)));
        assert!(matches!(
            queue.pop(),
            Some(Msg::Export { format: None, .. })
        ));
    }
}
