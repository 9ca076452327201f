//! What can go wrong talking to an MCP server, in sentences a user can act on.

use std::{fmt, time::Duration};

use serde_json::Value;

/// A failure to reach, start or talk to an MCP server.
///
/// Every variant names the server as declared in the pipeline file. Messages
/// never carry header or environment values: those are secrets.
#[derive(Debug, Clone, PartialEq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(tag = "error", rename_all = "snake_case")]
#[non_exhaustive]
pub enum McpError {
    /// The stdio server's process could not be started.
    #[error("could not start server `{server}`: {reason}")]
    Spawn {
        server: String,
        command: String,
        /// Why, e.g. "`npx` not found on PATH".
        reason: String,
    },
    /// The HTTP server could not be reached (refused, DNS, TLS, timeout).
    #[error("could not connect to server `{server}` at {url}: {reason}")]
    Connect {
        server: String,
        url: String,
        reason: String,
    },
    /// The server was reached but the MCP handshake (`initialize`, then
    /// `tools/list`) failed.
    #[error(
        "server `{server}` failed the MCP handshake: {reason}{}",
        StderrTail(stderr_tail)
    )]
    Handshake {
        server: String,
        reason: String,
        /// The last lines the server wrote to stderr (stdio servers), or empty.
        stderr_tail: String,
    },
    /// The server description itself is unusable (a bad URL or header).
    #[error("server `{server}` is misconfigured: {reason}")]
    InvalidSpec { server: String, reason: String },
    /// The call did not finish in time; the server was sent
    /// `notifications/cancelled`.
    #[error("`{tool}` on server `{server}` timed out after {}", HumanDuration(*after))]
    Timeout {
        server: String,
        tool: String,
        after: Duration,
    },
    /// The caller cancelled the call; the server was sent
    /// `notifications/cancelled`.
    #[error("`{tool}` on server `{server}` was cancelled")]
    Cancelled { server: String, tool: String },
    /// The connection ended: the server exited or crashed, or it was closed.
    #[error(
        "server `{server}` closed the connection{}{}",
        Clause(stdout_note),
        StderrTail(stderr_tail)
    )]
    Closed {
        server: String,
        /// What its stdout showed before (a message cut off, lines that
        /// are not JSON-RPC), or empty.
        stdout_note: String,
        stderr_tail: String,
    },
    /// The server answered with a JSON-RPC error instead of a result.
    #[error("server `{server}` answered `{method}` with error {code}: {message}")]
    Protocol {
        server: String,
        method: String,
        code: i32,
        message: String,
        /// The error's `data`, boxed to keep `McpError` small.
        data: Option<Box<Value>>,
    },
    /// A request could not be delivered, or its answer made no sense.
    #[error("talking to server `{server}` failed: {reason}")]
    Transport { server: String, reason: String },
    /// The server answered, but its answer cannot be read (not UTF-8, not
    /// JSON, nested too deep, not the shape of an answer). The call failed
    /// at once; what arrived is kept, escaped, in `received`.
    #[error("server `{server}` answered `{method}` with a message pipewright cannot read: {what}")]
    Unreadable {
        server: String,
        method: String,
        /// What is wrong and where: `expected value at byte 1234 of the
        /// answer (near `…"score":NaN}…`)`.
        what: String,
        /// What arrived: its first 64 KiB, control characters and bytes
        /// that are not UTF-8 escaped as `\xNN`, with its size.
        received: Box<Value>,
    },
}

impl McpError {
    /// True when the server could not be reached at all: it did not start,
    /// did not accept a connection, or failed the handshake. The CLI maps
    /// these to exit code 4.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            McpError::Spawn { .. } | McpError::Connect { .. } | McpError::Handshake { .. }
        )
    }

    /// The server this error is about.
    pub fn server(&self) -> &str {
        match self {
            McpError::Spawn { server, .. }
            | McpError::Connect { server, .. }
            | McpError::Handshake { server, .. }
            | McpError::InvalidSpec { server, .. }
            | McpError::Timeout { server, .. }
            | McpError::Cancelled { server, .. }
            | McpError::Closed { server, .. }
            | McpError::Protocol { server, .. }
            | McpError::Transport { server, .. }
            | McpError::Unreadable { server, .. } => server,
        }
    }
}

/// Renders a non-empty clause after the sentence, after a semicolon.
struct Clause<'a>(&'a str);

impl fmt::Display for Clause<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            "" => Ok(()),
            clause => write!(f, "; {clause}"),
        }
    }
}

/// Renders a non-empty stderr tail as an indented block after the sentence.
struct StderrTail<'a>(&'a str);

impl fmt::Display for StderrTail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tail = self.0.trim_end();
        if tail.is_empty() {
            return Ok(());
        }
        f.write_str("; its stderr ends with:")?;
        for line in tail.lines() {
            write!(f, "\n    {line}")?;
        }
        Ok(())
    }
}

/// `1.5s`, `30s`, `2m`, `250ms`: durations as a user wrote them.
pub(crate) struct HumanDuration(pub Duration);

impl fmt::Display for HumanDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        let ms = d.as_millis();
        if ms < 1000 {
            write!(f, "{ms}ms")
        } else if ms.is_multiple_of(60_000) {
            write!(f, "{}m", ms / 60_000)
        } else if ms.is_multiple_of(1000) {
            write!(f, "{}s", ms / 1000)
        } else {
            write!(f, "{:.1}s", d.as_secs_f64())
        }
    }
}

/// The messages of an error and its sources, joined with ": ", skipping a
/// source whose text the previous message already contains.
pub(crate) fn chain_message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(current) = source {
        let text = current.to_string();
        if !text.is_empty() && !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = current.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_error_reads_as_a_sentence() {
        let e = McpError::Spawn {
            server: "memory".into(),
            command: "npx".into(),
            reason: "`npx` not found on PATH".into(),
        };
        assert_eq!(
            e.to_string(),
            "could not start server `memory`: `npx` not found on PATH"
        );
        assert!(e.is_unreachable());
        assert_eq!(e.server(), "memory");
    }

    #[test]
    fn closed_error_shows_the_stderr_tail_indented() {
        let e = McpError::Closed {
            server: "s".into(),
            stdout_note: String::new(),
            stderr_tail: "boom\nbang\n".into(),
        };
        assert_eq!(
            e.to_string(),
            "server `s` closed the connection; its stderr ends with:\n    boom\n    bang"
        );
        assert!(!e.is_unreachable());
        let quiet = McpError::Closed {
            server: "s".into(),
            stdout_note: String::new(),
            stderr_tail: String::new(),
        };
        assert_eq!(quiet.to_string(), "server `s` closed the connection");
        let noted = McpError::Closed {
            server: "s".into(),
            stdout_note: "its last message was cut off".into(),
            stderr_tail: "boom\n".into(),
        };
        assert_eq!(
            noted.to_string(),
            "server `s` closed the connection; its last message was cut off; its stderr ends with:\n    boom"
        );
    }

    #[test]
    fn durations_read_like_a_pipeline_file() {
        let cases = [
            (Duration::from_millis(250), "250ms"),
            (Duration::from_secs(30), "30s"),
            (Duration::from_secs(120), "2m"),
            (Duration::from_millis(1500), "1.5s"),
        ];
        for (d, want) in cases {
            assert_eq!(HumanDuration(d).to_string(), want);
        }
    }

    #[test]
    fn timeout_and_cancel_are_not_unreachable() {
        let t = McpError::Timeout {
            server: "s".into(),
            tool: "t".into(),
            after: Duration::from_secs(2),
        };
        assert_eq!(t.to_string(), "`t` on server `s` timed out after 2s");
        assert!(!t.is_unreachable());
        let c = McpError::Cancelled {
            server: "s".into(),
            tool: "t".into(),
        };
        assert!(!c.is_unreachable());
    }
}
