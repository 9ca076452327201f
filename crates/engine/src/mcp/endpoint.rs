//! What is at the other end of a connection (a child process or an HTTP
//! server), and what pipewright saw of it that rmcp does not report.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::log::ServerLog;
use super::stdout::StdoutNotes;

/// How long a failed connection waits for the server's last stderr lines.
const STDERR_SETTLE: Duration = Duration::from_millis(500);
/// Lines of stderr quoted in an error message.
const TAIL_LINES: usize = 20;
const TAIL_BYTES: usize = 4 * 1024;

/// What is at the other end, and what we know about it.
pub(super) enum Endpoint {
    Stdio {
        pid: Option<u32>,
        /// Cancelled once the child's stderr reached its end.
        stderr_done: CancellationToken,
        /// What its stdout showed that rmcp does not report.
        notes: StdoutNotes,
    },
    Http,
}

impl Endpoint {
    /// The last stderr lines, after giving a dying child a moment to finish
    /// writing them.
    pub(super) async fn stderr_tail(&self, log: &ServerLog) -> String {
        match self {
            Endpoint::Stdio { stderr_done, .. } => {
                let _ = tokio::time::timeout(STDERR_SETTLE, stderr_done.cancelled()).await;
                log.tail(TAIL_LINES, TAIL_BYTES)
            }
            Endpoint::Http => String::new(),
        }
    }

    /// Why pipewright ended the connection itself (a message over the
    /// size limit), when it did.
    pub(super) fn verdict(&self) -> Option<String> {
        match self {
            Endpoint::Stdio { notes, .. } => notes.verdict(),
            Endpoint::Http => None,
        }
    }

    /// What stdout showed before the connection closed, or empty.
    pub(super) fn stdout_note(&self) -> String {
        match self {
            Endpoint::Stdio { notes, .. } => notes.summary(),
            Endpoint::Http => String::new(),
        }
    }

    /// Why the handshake failed: pipewright's own reason when it ended the
    /// connection, else `reason`, with what stdout showed.
    pub(super) fn handshake_reason(&self, reason: String) -> String {
        if let Some(verdict) = self.verdict() {
            return verdict;
        }
        match self.stdout_note() {
            note if note.is_empty() => reason,
            note => format!("{reason}; {note}"),
        }
    }
}
