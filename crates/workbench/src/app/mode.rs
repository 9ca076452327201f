//! The mode the app is in (what the keys do now), and its ways of saying
//! things: the status line and the Messages pane are
//! [`crate::messages::Messages`]'s.

use super::{App, Focus};
use crate::mode::Mode;
use crate::overlay::Overlay;

impl App {
    /// What the keys do now.
    pub fn mode(&self) -> Mode {
        if self.asks.shown() {
            return Mode::Ask;
        }
        if matches!(self.overlay, Some(Overlay::Recover(_))) {
            return Mode::Recover;
        }
        if self.overlay.is_some() {
            return Mode::Overlay;
        }
        match self.focus {
            Focus::Editor if self.viewing.is_none() => Mode::Edit,
            Focus::Inspector if self.inspector.filter_editing() => Mode::Filter,
            Focus::Inspector if self.inspector.find_typing() => Mode::Search,
            Focus::Inspector => Mode::Inspect,
            _ => Mode::Dag,
        }
    }

    /// Adds a line to the Messages pane only (what happened, for the
    /// record), leaving the status bar as it is.
    pub fn note(&mut self, text: impl Into<String>) {
        self.messages.log_line(text.into(), false);
    }

    /// Shows a message in the status bar for a few seconds.
    /// The whole text goes to the Messages pane.
    pub fn say(&mut self, text: impl Into<String>, error: bool) {
        self.messages.say(text.into(), error);
    }

    /// Says something about node `id`'s call in flight: the message goes
    /// when the node (or the run) ends.
    pub fn say_about(&mut self, id: &str, text: impl Into<String>, error: bool) {
        self.messages.say(text.into(), error);
        self.messages.about(id);
    }
}
