//! The contract every pane and overlay of the workbench keeps. Keys (and
//! the mouse and pasted text, where they apply) go in; what the app is to
//! do comes out as [`Msg`]s pushed into a [`Queue`], which the app applies
//! in one place (`app/update.rs`). A component draws from its own state and
//! a read-only [`Ctx`]. Its fields are its own: the app asks and tells it
//! things through methods, and never reaches into its state.

use std::collections::VecDeque;

use crossterm::event::{KeyEvent, MouseEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};

use pipewright_engine::diag::Diagnostic;
use pipewright_engine::file::model::Composition;
use pipewright_engine::run::trace::Trace;

use crate::keys::{Action, Keymap};
use crate::messages::LogEntry;
use crate::msg::Msg;
use crate::state::{NodeVisual, RunState};
use crate::theme::Theme;

/// A pane or an overlay of the workbench.
pub(crate) trait Component {
    /// A key while the component has the keys. `action` is the keymap's
    /// binding of the key where the app resolves one for this place (the
    /// overlays'), so a component matches actions, not the keys bound to
    /// them. What the app is to do goes into `queue`.
    fn on_key(
        &mut self,
        key: KeyEvent,
        action: Option<Action>,
        ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled;

    /// The mouse over the component, which was last drawn in `area`.
    fn on_mouse(
        &mut self,
        _ev: MouseEvent,
        _area: Rect,
        _ctx: &Ctx<'_>,
        _queue: &mut Queue,
    ) -> Handled {
        Handled::Ignored
    }

    /// Text pasted while the component has the keys.
    fn on_paste(&mut self, _text: &str, _queue: &mut Queue) -> Handled {
        Handled::Ignored
    }

    /// Draws the component into `area` from its own state and `ctx`.
    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>);
}

/// Whether a component used an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handled {
    /// It was the component's: nothing else sees it.
    Taken,
    /// Not the component's: the app may give it to something else, or
    /// say that it does nothing here.
    Ignored,
}

/// Where components put what the app is to do, in order.
#[derive(Debug, Default)]
pub(crate) struct Queue(VecDeque<Msg>);

impl Queue {
    /// Adds a message after those already queued.
    pub(crate) fn push(&mut self, msg: Msg) {
        self.0.push_back(msg);
    }

    /// The oldest message, taken off the queue.
    pub(crate) fn pop(&mut self) -> Option<Msg> {
        self.0.pop_front()
    }
}

/// What a component may read besides its own state: the settings it draws
/// with, the plan on screen and where its run is. The app builds it for
/// each call; nothing in it can be changed through it.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    /// The colours everything is drawn in.
    pub(crate) theme: &'a Theme,
    /// The keys, for the labels components show and the modal's actions.
    pub(crate) keymap: &'a Keymap,
    /// Ticks since the workbench opened (spinners turn with it).
    pub(crate) tick: u64,
    /// The composition on screen (the live one, or a saved run's).
    pub(crate) comp: Option<&'a Composition>,
    /// What each of its nodes shows, indexed like its nodes.
    pub(crate) visuals: &'a [NodeVisual],
    /// Where the live run is.
    pub(crate) run: &'a RunState,
    /// The file's errors (a pane with no plan to show says how many).
    pub(crate) errors: usize,
    /// The run on screen: the saved run open read-only, else the last one
    /// that finished.
    pub(crate) trace: Option<&'a Trace>,
    /// The id of the saved run open read-only, when one is.
    pub(crate) viewing: Option<&'a str>,
    /// The selected node, indexed like the composition's nodes.
    pub(crate) selected: Option<usize>,
    /// The component has the keys (its frame is drawn brighter).
    pub(crate) focused: bool,
    /// Where the editor's cursor is on screen (the completion popup opens
    /// under it).
    pub(crate) cursor: Option<Position>,
    /// The model of the sampling provider, when one is configured (a
    /// server's sampling question can ask it).
    pub(crate) provider: Option<&'a str>,
    /// The session's messages, oldest first (the Messages pane).
    pub(crate) log: &'a [LogEntry],
    /// The file's diagnostics (the Messages pane lists them).
    pub(crate) diagnostics: &'a [Diagnostic],
}

impl<'a> Ctx<'a> {
    /// A context with nothing on screen (no plan, no run), for tests of a
    /// component on its own.
    #[cfg(test)]
    pub(crate) fn plain(theme: &'a Theme, keymap: &'a Keymap) -> Ctx<'a> {
        const IDLE: RunState = RunState::Idle;
        Ctx {
            theme,
            keymap,
            tick: 0,
            comp: None,
            visuals: &[],
            run: &IDLE,
            errors: 0,
            trace: None,
            viewing: None,
            selected: None,
            focused: false,
            cursor: None,
            provider: None,
            log: &[],
            diagnostics: &[],
        }
    }

    /// The same context, for a component that has the keys or not.
    pub(crate) fn focused(self, focused: bool) -> Ctx<'a> {
        Ctx { focused, ..self }
    }
}
