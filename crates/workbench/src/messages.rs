//! The workbench's messages. The status line says what the last action
//! did and fades; the Messages pane (`m`) keeps what it said, in full and
//! in order, with times; every server error with its whole stderr tail;
//! and the file's diagnostics with their positions. Like lazygit's
//! command log or k9s's events: nothing shown for a moment is lost.
//!
//! [`Messages`] owns both; `view` lays out the pane's lines, which the
//! Messages overlay (`overlay/messages.rs`) scrolls and draws.

use std::time::{Duration, Instant};

pub(crate) mod view;

/// The status line's message: it fades after a few seconds.
#[derive(Debug, Clone)]
pub(crate) struct Message {
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
pub(crate) struct LogEntry {
    /// Seconds since the Unix epoch.
    pub at: u64,
    pub text: String,
    pub error: bool,
}

/// The Messages pane keeps this many entries (the oldest go first).
pub(crate) const LOG_CAP: usize = 2000;

/// How long the status line's message stays.
const FADE: Duration = Duration::from_secs(6);

/// The status line's message and the session's log.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    /// What the status line shows now.
    status: Option<Message>,
    /// Every message of the session, in full (the Messages pane).
    log: Vec<LogEntry>,
}

impl Messages {
    /// What the status line shows now.
    pub(crate) fn status(&self) -> Option<&Message> {
        self.status.as_ref()
    }

    /// Every message of the session, oldest first.
    pub(crate) fn log(&self) -> &[LogEntry] {
        &self.log
    }

    /// The text of the latest message logged.
    pub(crate) fn last_logged(&self) -> Option<&str> {
        self.log.last().map(|e| e.text.as_str())
    }

    /// Forgets the status line's message and the log (a test's screen
    /// starts from none).
    #[cfg(test)]
    pub(crate) fn forget(&mut self) {
        self.status = None;
        self.log.clear();
    }

    /// The status line goes blank (the next key makes its message no
    /// longer true).
    pub(crate) fn clear_status(&mut self) {
        self.status = None;
    }

    /// Shows a message on the status line; the whole text goes to the
    /// log.
    pub(crate) fn say(&mut self, text: String, error: bool) {
        self.log_line(text.clone(), error);
        self.show(text, error);
    }

    /// Shows a message on the status line without logging it.
    pub(crate) fn show(&mut self, text: String, error: bool) {
        self.status = Some(Message {
            text,
            error,
            at: Instant::now(),
            about: None,
        });
    }

    /// Marks the status line's message as about node `id`'s call in
    /// flight.
    pub(crate) fn about(&mut self, id: &str) {
        if let Some(m) = &mut self.status {
            m.about = Some(id.to_owned());
        }
    }

    /// Drops the status message about `id`'s call in flight (any node's,
    /// with `None`).
    pub(crate) fn drop_about(&mut self, id: Option<&str>) {
        if let Some(about) = self.status.as_ref().and_then(|m| m.about.as_deref())
            && id.is_none_or(|id| id == about)
        {
            self.status = None;
        }
    }

    /// The status line's message fades once it is older than a few
    /// seconds at `now`.
    pub(crate) fn fade(&mut self, now: Instant) {
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
    pub(crate) fn log_line(&mut self, text: String, error: bool) {
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

#[cfg(test)]
mod tests;
