//! The doctor (`D` in the Messages pane, for a server that could not
//! start): the engine's checklist for that server (`engine::doctor`), run
//! off the loop, shown here when it comes; scrolled, and run again with
//! `r`.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Clear, Widget};

use pipewright_engine::doctor::{Report, Status};

use super::help::closes;
use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::window::{centred, scrolled, scrolled_lines};

/// The server examined, its checklist once it came, and the scroll.
#[derive(Debug, Clone)]
pub(crate) struct DoctorView {
    server: String,
    /// `None` while the checklist runs; `Err` when it could not.
    report: Option<Result<Report, String>>,
    scroll: u16,
}

impl DoctorView {
    /// The view of `server`, its checklist running.
    pub(crate) fn examining(server: String) -> DoctorView {
        DoctorView {
            server,
            report: None,
            scroll: 0,
        }
    }

    /// The server it examines.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// The checklist came (or why it could not run).
    pub(crate) fn show(&mut self, report: Result<Report, String>) {
        self.report = Some(report);
        self.scroll = 0;
    }

    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        centred(area, 90, 85)
    }

    /// The first line shown.
    pub(crate) fn scroll_mut(&mut self) -> &mut u16 {
        &mut self.scroll
    }

    /// Its text, a line each.
    pub(crate) fn body(&self) -> Vec<String> {
        match &self.report {
            None => vec![format!("examining server {} …", self.server)],
            Some(Ok(report)) => report.lines(),
            Some(Err(e)) => vec![format!("the doctor could not run: {e}")],
        }
    }

    /// The first failing step, for the title.
    fn verdict(&self) -> &'static str {
        match &self.report {
            None => "running",
            Some(Ok(r)) if r.failed() => "a step fails",
            Some(Ok(r)) if r.steps.iter().any(|s| s.status == Status::Warn) => "warnings",
            Some(Ok(_)) => "all steps pass",
            Some(Err(_)) => "not run",
        }
    }
}

impl Component for DoctorView {
    /// `r` runs the checklist again; Esc, `q`, Enter or the help key close
    /// it; the others scroll.
    fn on_key(
        &mut self,
        key: KeyEvent,
        action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        if key.code == KeyCode::Char('r') && key.modifiers.is_empty() {
            queue.push(Msg::Doctor(self.server.clone()));
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
        let t = ctx.theme;
        let lines: Vec<Line> = self
            .body()
            .into_iter()
            .map(|l| {
                let color = match l.trim_start().chars().next() {
                    Some('✗') => t.error,
                    Some('!') => t.warning,
                    Some('✓') => t.ok,
                    _ => t.fg,
                };
                Line::styled(l, Style::new().fg(color))
            })
            .collect();
        let title = format!(
            "doctor · server {} · {} · r: again · Esc: close",
            self.server,
            self.verdict()
        );
        self.scroll = scrolled_lines(lines, title, t, r, self.scroll, true, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Keymap;
    use crate::theme::Theme;
    use crossterm::event::KeyModifiers;

    #[test]
    fn r_runs_it_again_and_esc_closes() {
        let (theme, keymap) = (Theme::dark(), Keymap::default());
        let ctx = Ctx::plain(&theme, &keymap);
        let mut view = DoctorView::examining("api".into());
        assert_eq!(view.body(), vec!["examining server api …".to_owned()]);
        let mut queue = Queue::default();
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        view.on_key(key(KeyCode::Char('r')), None, &ctx, &mut queue);
        view.on_key(key(KeyCode::Esc), None, &ctx, &mut queue);
        let msgs: Vec<String> = std::iter::from_fn(|| queue.pop())
            .map(|m| format!("{m:?}"))
            .collect();
        assert_eq!(msgs, vec!["Doctor(\"api\")", "CloseOverlay"]);
        view.show(Err("no server `api` in the file".into()));
        assert_eq!(
            view.body(),
            vec!["the doctor could not run: no server `api` in the file".to_owned()]
        );
    }
}
