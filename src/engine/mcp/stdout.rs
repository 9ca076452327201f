//! A stdio server's stdout as pipewright reads it. rmcp drops a line over
//! its own cap (16 MiB) and skips lines that are not JSON-RPC without a
//! word, so a call whose answer was dropped waits forever and a server that
//! wrote junk before exiting reads as a bare "closed the connection". This
//! reader sits under rmcp's: a message (one line) longer than the limit
//! ends the connection with a reason the user can act on, and what the
//! protocol layer skips is noted for the error that follows.

use std::{
    io,
    pin::Pin,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
    task::{Context, Poll, ready},
};

use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

use super::log::ServerLog;

/// The largest message (one line of stdout) a stdio server may send, in
/// MiB, unless `PIPEWRIGHT_MAX_MESSAGE_MB` says otherwise. It matches
/// rmcp's cap on one Streamable HTTP event and JSON body.
pub const DEFAULT_MAX_MESSAGE_MB: usize = 16;

/// A line this short is checked in full for being JSON-RPC; a longer one
/// only by its first byte (it is rmcp's to parse).
const CHECKED_LINE: usize = 4 * 1024;
/// Characters of an ignored line quoted in an error.
const QUOTED: usize = 120;

/// The message size limit in force, in bytes.
pub fn max_message_bytes() -> usize {
    std::env::var("PIPEWRIGHT_MAX_MESSAGE_MB")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|mb| *mb > 0)
        .unwrap_or(DEFAULT_MAX_MESSAGE_MB)
        .saturating_mul(1024 * 1024)
}

/// What the reader saw that rmcp does not report, shared with the
/// connection so its errors can say it.
#[derive(Clone, Default)]
pub(crate) struct StdoutNotes {
    inner: Arc<Mutex<Notes>>,
}

#[derive(Default)]
struct Notes {
    /// The limit a message went over; the connection was ended for it.
    too_large: Option<usize>,
    /// Lines that were not JSON-RPC, and the last of them, quoted.
    ignored: usize,
    last_ignored: String,
    /// Bytes of a last line that never ended before the stream did.
    cut_off: Option<usize>,
}

impl StdoutNotes {
    fn lock(&self) -> MutexGuard<'_, Notes> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Why pipewright itself ended the connection, when it did.
    pub(crate) fn verdict(&self) -> Option<String> {
        self.lock().too_large.map(|limit| {
            format!(
                "it sent a message larger than {} MiB (one line of its stdout), so pipewright closed the connection; raise the limit with PIPEWRIGHT_MAX_MESSAGE_MB=N",
                limit / (1024 * 1024)
            )
        })
    }

    /// What stdout showed that explains a closed connection, as clauses
    /// for the error; empty when nothing odd was seen.
    pub(crate) fn summary(&self) -> String {
        let notes = self.lock();
        let mut parts = Vec::new();
        if let Some(bytes) = notes.cut_off {
            parts.push(format!(
                "its last message was cut off ({bytes} bytes with no end of line)"
            ));
        }
        if notes.ignored > 0 {
            let lines = if notes.ignored == 1 { "line" } else { "lines" };
            parts.push(format!(
                "it wrote {} {lines} to stdout that are not JSON-RPC (ignored), the last: `{}`",
                notes.ignored, notes.last_ignored
            ));
        }
        parts.join("; ")
    }
}

/// The server's stdout, read through the limit and the notes.
pub(crate) struct LimitedStdout<R> {
    inner: R,
    limit: usize,
    /// Bytes of the current line so far.
    line: usize,
    /// The first [`CHECKED_LINE`] bytes of the current line.
    head: Vec<u8>,
    over: bool,
    notes: StdoutNotes,
    log: ServerLog,
}

impl<R> LimitedStdout<R> {
    pub(crate) fn new(inner: R, limit: usize, notes: StdoutNotes, log: ServerLog) -> Self {
        Self {
            inner,
            limit,
            line: 0,
            head: Vec::new(),
            over: false,
            notes,
            log,
        }
    }

    fn over_limit(&self) -> io::Error {
        io::Error::other(format!(
            "a message of more than {} bytes from the server",
            self.limit
        ))
    }

    /// Follows the lines through freshly read bytes.
    fn scan(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let end = bytes.iter().position(|b| *b == b'\n');
            let part = &bytes[..end.unwrap_or(bytes.len())];
            self.line = self.line.saturating_add(part.len());
            if self.line > self.limit {
                self.over = true;
                self.notes.lock().too_large = Some(self.limit);
                return Err(self.over_limit());
            }
            let room = CHECKED_LINE.saturating_sub(self.head.len());
            self.head.extend_from_slice(&part[..part.len().min(room)]);
            match end {
                Some(i) => {
                    self.end_line();
                    bytes = &bytes[i + 1..];
                }
                None => break,
            }
        }
        Ok(())
    }

    /// Notes a finished line that rmcp will skip for not being JSON-RPC.
    fn end_line(&mut self) {
        let complete = self.line <= CHECKED_LINE;
        let line = std::mem::take(&mut self.head);
        self.line = 0;
        let text = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line);
        let text = text.trim_ascii();
        if text.is_empty() || is_json_rpc(text, complete) {
            return;
        }
        let quoted = quote(text);
        self.log.push(&format!(
            "[pipewright] ignored a line on stdout that is not JSON-RPC: {quoted}"
        ));
        let mut notes = self.notes.lock();
        notes.ignored += 1;
        notes.last_ignored = quoted;
    }
}

/// True when `line` looks like a JSON-RPC message (or batch); a line cut
/// short of `complete` is judged by its first byte.
fn is_json_rpc(line: &[u8], complete: bool) -> bool {
    if !complete {
        return matches!(line.first(), Some(b'{' | b'['));
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(message)) => message.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
        Ok(Value::Array(_)) => true,
        _ => false,
    }
}

/// The start of a line, printable, for an error message.
fn quote(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let mut out: String = text
        .chars()
        .take(QUOTED)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if text.chars().nth(QUOTED).is_some() {
        out.push('…');
    }
    out
}

impl<R: AsyncRead + Unpin> AsyncRead for LimitedStdout<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.over {
            return Poll::Ready(Err(this.over_limit()));
        }
        let before = buf.filled().len();
        let wanted = buf.remaining() > 0;
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let fresh = &buf.filled()[before..];
        if fresh.is_empty() {
            if wanted && this.line > 0 {
                this.notes.lock().cut_off = Some(this.line);
            }
            return Poll::Ready(Ok(()));
        }
        let scanned = this.scan(fresh);
        if scanned.is_err() {
            // An error reads nothing: the bytes past the limit are dropped.
            buf.set_filled(before);
        }
        Poll::Ready(scanned)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn read_all(input: &[u8], limit: usize) -> (io::Result<Vec<u8>>, StdoutNotes) {
        let notes = StdoutNotes::default();
        let mut reader = LimitedStdout::new(input, limit, notes.clone(), ServerLog::default());
        let mut out = Vec::new();
        let read = reader.read_to_end(&mut out).await.map(|_| out);
        (read, notes)
    }

    #[tokio::test]
    async fn json_rpc_lines_pass_untouched_and_unnoted() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n[{\"jsonrpc\":\"2.0\"}]\r\n";
        let (read, notes) = read_all(input, 1024).await;
        assert_eq!(read.ok().as_deref(), Some(&input[..]));
        assert_eq!(notes.summary(), "");
        assert!(notes.verdict().is_none());
    }

    #[tokio::test]
    async fn a_line_over_the_limit_ends_the_stream_with_a_verdict() {
        let mut input = b"{\"jsonrpc\":\"2.0\"}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 2 * 1024 * 1024));
        let (read, notes) = read_all(&input, 1024 * 1024).await;
        assert!(read.is_err());
        let verdict = notes.verdict().unwrap_or_default();
        assert!(
            verdict.contains("larger than 1 MiB") && verdict.contains("PIPEWRIGHT_MAX_MESSAGE_MB"),
            "{verdict}"
        );
    }

    #[tokio::test]
    async fn junk_lines_and_a_cut_off_end_are_noted() {
        let input =
            b"Listening on :3000\x1b[0m\n{\"hello\":1}\n42\n{\"jsonrpc\":\"2.0\",\"id\":1,\"res";
        let (read, notes) = read_all(input, 1024).await;
        assert!(read.is_ok());
        let summary = notes.summary();
        assert!(
            summary.contains("cut off (28 bytes")
                && summary.contains("3 lines to stdout that are not JSON-RPC")
                && summary.contains("the last: `42`")
                && !summary.contains('\u{1b}'),
            "{summary}"
        );
    }

    #[test]
    fn quotes_are_short_and_printable() {
        let long = "a\u{7}".repeat(100);
        let q = quote(long.as_bytes());
        assert!(q.ends_with('…') && !q.contains('\u{7}'), "{q}");
    }
}
