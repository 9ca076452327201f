//! A text in a window: a pinned mock to paste, a diff between two runs,
//! the Results view; scrolled, its long lines wrapped, and searched with
//! `/`.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Widget};

use super::help::closes;
use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::window::{centred, scrolled, scrolled_lines};

/// A titled text and how far it is scrolled.
#[derive(Debug, Clone)]
pub(crate) struct TextWindow {
    title: String,
    body: Vec<String>,
    scroll: u16,
    /// It is the Results view: the judge key judges every run it lists
    /// again.
    results: bool,
}

impl TextWindow {
    /// `body` under `title`, at its top.
    pub(crate) fn new(title: String, body: Vec<String>) -> TextWindow {
        TextWindow {
            title,
            body,
            scroll: 0,
            results: false,
        }
    }

    /// The Results view: its judge key judges the runs it lists again.
    pub(crate) fn results(title: String, body: Vec<String>) -> TextWindow {
        TextWindow {
            results: true,
            ..TextWindow::new(title, body)
        }
    }

    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        centred(area, 70, 70)
    }

    /// Its title.
    #[cfg(test)]
    pub(crate) fn title(&self) -> &str {
        &self.title
    }

    /// Its lines.
    pub(crate) fn body(&self) -> &[String] {
        &self.body
    }

    /// The first line shown.
    pub(crate) fn scroll_mut(&mut self) -> &mut u16 {
        &mut self.scroll
    }
}

impl Component for TextWindow {
    /// Esc, `q`, Enter or the help key close it; the others scroll. In
    /// the Results view the judge key judges its runs again.
    fn on_key(
        &mut self,
        key: KeyEvent,
        action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        if self.results && action == Some(Action::Judge) {
            queue.push(Msg::JudgeResults);
        } else if closes(key, action) {
            queue.push(Msg::CloseOverlay);
        } else {
            self.scroll = scrolled(self.scroll, key);
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let r = Self::rect(area);
        Clear.render(r, buf);
        let lines: Vec<Line> = self.body.iter().map(|l| Line::from(l.clone())).collect();
        self.scroll = scrolled_lines(
            lines,
            self.title.clone(),
            ctx.theme,
            r,
            self.scroll,
            true,
            buf,
        );
    }
}
