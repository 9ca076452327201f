//! The workbench's messages. The status line says what the last action
//! did and fades; the Messages pane (`m`) keeps what it said, in full and
//! in order, with times; every server error with its whole stderr tail;
//! and the file's diagnostics with their positions. Like lazygit's
//! command log or k9s's events: nothing shown for a moment is lost.
//!
//! [`Messages`] owns both; the pane's keys turn into a [`PaneKey`] the app
//! applies; `view` draws the pane.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};

use crate::keys::Action;

pub mod view;

/// The status line's message: it fades after a few seconds.
#[derive(Debug, Clone)]
pub struct Message {
    pub text: String,
    pub error: bool,
    pub at: Instant,
    /// The node a message about a call in flight is about (`retrying`, a
    /// task's note): dropped when that node or the run ends, as it is no
    /// longer true then.
    pub about: Option<String>,
}

/// One line of the Messages pane: a status message, a server's error in
/// full, a refusal; kept for the whole session.
#[derive(Debug, Clone)]
pub struct LogEntry {
    /// Seconds since the Unix epoch.
    pub at: u64,
    pub text: String,
    pub error: bool,
}

/// The Messages pane keeps this many entries (the oldest go first).
pub const LOG_CAP: usize = 2000;

/// How long the status line's message stays.
const FADE: Duration = Duration::from_secs(6);

/// The status line's message and the session's log.
#[derive(Debug, Default)]
pub struct Messages {
    /// What the status line shows now.
    pub status: Option<Message>,
    /// Every message of the session, in full (the Messages pane).
    pub log: Vec<LogEntry>,
}

impl Messages {
    /// Shows a message on the status line; the whole text goes to the
    /// log.
    pub fn say(&mut self, text: String, error: bool) {
        self.log_line(text.clone(), error);
        self.show(text, error);
    }

    /// Shows a message on the status line without logging it.
    pub fn show(&mut self, text: String, error: bool) {
        self.status = Some(Message {
            text,
            error,
            at: Instant::now(),
            about: None,
        });
    }

    /// Marks the status line's message as about node `id`'s call in
    /// flight.
    pub fn about(&mut self, id: &str) {
        if let Some(m) = &mut self.status {
            m.about = Some(id.to_owned());
        }
    }

    /// Drops the status message about `id`'s call in flight (any node's,
    /// with `None`).
    pub fn drop_about(&mut self, id: Option<&str>) {
        if let Some(about) = self.status.as_ref().and_then(|m| m.about.as_deref())
            && id.is_none_or(|id| id == about)
        {
            self.status = None;
        }
    }

    /// The status line's message fades once it is older than a few
    /// seconds at `now`.
    pub fn fade(&mut self, now: Instant) {
        if self
            .status
            .as_ref()
            .is_some_and(|m| now.duration_since(m.at) > FADE)
        {
            self.status = None;
        }
    }

    /// Keeps `text` in the log only, the oldest lines going past
    /// [`LOG_CAP`].
    pub fn log_line(&mut self, text: String, error: bool) {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.log.push(LogEntry { at, text, error });
        if self.log.len() > LOG_CAP {
            let extra = self.log.len() - LOG_CAP;
            self.log.drain(..extra);
        }
    }
}

/// What a key does in the open Messages pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneKey {
    /// Close the pane.
    Close,
    /// Keep it open, scrolled and wrapped so.
    Show { scroll: u16, wrap: bool },
}

/// A key in the Messages pane scrolled to `scroll`, wrapping or not;
/// `action` is the key's command binding (the pane's own key and Esc
/// close it, the wrap key switches wrapping).
pub fn pane_key(scroll: u16, wrap: bool, key: KeyEvent, action: Option<Action>) -> PaneKey {
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
mod tests;
