//! The Messages pane (`m`): every message of the session in full, the
//! file's diagnostics, and the last server error with its stderr; scrolled,
//! wrapped or cut (`w`), and searched with `/`; `D` opens the doctor for a
//! server that could not start.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::{Clear, Widget};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::messages::view::lines;
use crate::msg::Msg;
use crate::window::{centred, scrolled_lines};

/// The pane: how far it is scrolled and whether long lines wrap.
#[derive(Debug, Clone)]
pub(crate) struct MessagesPane {
    scroll: u16,
    wrap: bool,
    /// The server that could not start, which `D` examines.
    doctor: Option<String>,
}

impl MessagesPane {
    /// The pane at its end (the latest message), wrapping.
    pub(crate) fn new() -> MessagesPane {
        MessagesPane {
            scroll: u16::MAX,
            wrap: true,
            doctor: None,
        }
    }

    /// The pane, with `D` examining `server` (the one that could not start).
    pub(crate) fn with_doctor(mut self, server: Option<String>) -> MessagesPane {
        self.doctor = server;
        self
    }

    /// The server `D` examines, if one could not start.
    pub(crate) fn doctor(&self) -> Option<&str> {
        self.doctor.as_deref()
    }

    /// Where it is drawn on a screen of `area`.
    pub(crate) fn rect(area: Rect) -> Rect {
        centred(area, 90, 85)
    }

    /// The first line shown.
    pub(crate) fn scroll_mut(&mut self) -> &mut u16 {
        &mut self.scroll
    }

    /// Whether long lines wrap (a search's marks are then not drawn).
    pub(crate) fn wraps(&self) -> bool {
        self.wrap
    }
}

impl Component for MessagesPane {
    fn on_key(
        &mut self,
        key: KeyEvent,
        action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        if let (KeyCode::Char('D'), Some(server)) = (key.code, &self.doctor) {
            queue.push(Msg::Doctor(server.clone()));
            return Handled::Taken;
        }
        match pane_key(self.scroll, self.wrap, key, action) {
            PaneKey::Close => queue.push(Msg::CloseOverlay),
            PaneKey::Show { scroll, wrap } => {
                self.scroll = scroll;
                self.wrap = wrap;
            }
        }
        Handled::Taken
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        let r = Self::rect(area);
        Clear.render(r, buf);
        let mut title = if self.wrap {
            "messages · w: cut long lines".to_owned()
        } else {
            "messages · w: wrap long lines".to_owned()
        };
        if let Some(server) = &self.doctor {
            title.push_str(&format!(" · D: doctor for server {server}"));
        }
        let t = ctx.theme;
        let lines = lines(ctx.log, ctx.diagnostics, t);
        self.scroll = scrolled_lines(lines, title, t, r, self.scroll, self.wrap, buf);
    }
}

/// What a key does in the open Messages pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PaneKey {
    /// Close the pane.
    Close,
    /// Keep it open, scrolled and wrapped so.
    Show { scroll: u16, wrap: bool },
}

/// A key in the Messages pane scrolled to `scroll`, wrapping or not;
/// `action` is the key's command binding (the pane's own key and Esc
/// close it, the wrap key switches wrapping).
fn pane_key(scroll: u16, wrap: bool, key: KeyEvent, action: Option<Action>) -> PaneKey {
    if matches!(key.code, KeyCode::Esc | KeyCode::Char('q')) || action == Some(Action::Messages) {
        return PaneKey::Close;
    }
    if action == Some(Action::Wrap) {
        return PaneKey::Show {
            scroll,
            wrap: !wrap,
        };
    }
    PaneKey::Show {
        scroll: crate::window::scrolled(scroll, key),
        wrap,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn pane_keys_scroll_wrap_and_close() {
        assert_eq!(
            pane_key(3, false, key(KeyCode::Char('j')), None),
            PaneKey::Show {
                scroll: 4,
                wrap: false
            }
        );
        assert_eq!(
            pane_key(0, false, key(KeyCode::Up), None),
            PaneKey::Show {
                scroll: 0,
                wrap: false
            }
        );
        assert_eq!(
            pane_key(2, false, key(KeyCode::Char('w')), Some(Action::Wrap)),
            PaneKey::Show {
                scroll: 2,
                wrap: true
            }
        );
        assert_eq!(
            pane_key(2, true, key(KeyCode::Char('m')), Some(Action::Messages)),
            PaneKey::Close
        );
        assert_eq!(pane_key(2, true, key(KeyCode::Esc), None), PaneKey::Close);
    }
}
