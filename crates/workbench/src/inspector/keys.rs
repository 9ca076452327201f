//! The inspector as a component: a key is taken (tabs, the trees, the jq
//! box, the search), hands the focus back (Esc it had no use for), or is
//! left to the app; the mouse clicks and scrolls; it draws itself.

use crossterm::event::{KeyCode, KeyEvent, MouseEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use super::Inspector;
use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::Action;
use crate::msg::Msg;
use crate::state::Focus;

/// What a key does in the inspector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InspectorEffect {
    /// The inspector used it.
    Taken,
    /// Esc with nothing of the inspector's to close: the DAG takes the
    /// keys.
    Leave,
    /// Not the inspector's: the app says what it would do elsewhere.
    Ignored,
}

impl Inspector {
    /// What a key does while the inspector has the focus.
    pub(crate) fn key_effect(&mut self, key: KeyEvent) -> InspectorEffect {
        if self.handle_key(key) {
            InspectorEffect::Taken
        } else if key.code == KeyCode::Esc {
            InspectorEffect::Leave
        } else {
            InspectorEffect::Ignored
        }
    }
}

impl Component for Inspector {
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        _ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        match self.key_effect(key) {
            InspectorEffect::Taken => Handled::Taken,
            InspectorEffect::Leave => {
                queue.push(Msg::Focus(Focus::Dag));
                Handled::Taken
            }
            InspectorEffect::Ignored => Handled::Ignored,
        }
    }

    fn on_mouse(
        &mut self,
        ev: MouseEvent,
        area: Rect,
        _ctx: &Ctx<'_>,
        _queue: &mut Queue,
    ) -> Handled {
        if self.handle_mouse(ev, area) {
            Handled::Taken
        } else {
            Handled::Ignored
        }
    }

    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        self.render(area, buf, ctx.theme, ctx.focused);
    }
}
