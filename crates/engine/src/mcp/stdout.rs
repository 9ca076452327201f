//! A stdio server's stdout as pipewright reads it, line by line. rmcp would
//! drop a line over its own cap (16 MiB) and skip lines that are not
//! JSON-RPC without a word, so a call whose answer was dropped would wait
//! forever and a server that wrote junk before exiting would read as a bare
//! "closed the connection". Here a message (one line) longer than the
//! limit ends the connection with a reason the user can act on, and what is
//! skipped is noted for the error that follows; each line then goes to
//! [`super::reply`].

use std::{
    io,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use super::log::ServerLog;

/// The largest message (one line of stdout) a stdio server may send, in
/// MiB, unless `PIPEWRIGHT_MAX_MESSAGE_MB` says otherwise. It matches
/// rmcp's cap on one Streamable HTTP event and JSON body.
pub const DEFAULT_MAX_MESSAGE_MB: usize = 16;

/// Bytes of an ignored line looked at for its quote.
const CHECKED_LINE: usize = 4 * 1024;
/// Characters of an ignored line quoted in an error.
const QUOTED: usize = 120;

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

/// One read from the server's stdout.
pub(crate) enum Stdout {
    /// A whole line, without its end.
    Line(Vec<u8>),
    /// The stream ended.
    End,
    /// A line went over the limit: the connection is to be closed (noted
    /// in the notes).
    TooLarge,
    Failed(io::Error),
}

/// The server's stdout, read line by line through the limit, the way rmcp
/// reads it: a read cancelled half-way (`receive` is polled in a
/// `select!`) keeps its bytes for the next one.
pub(crate) struct LineReader<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    limit: usize,
    notes: StdoutNotes,
    log: ServerLog,
}

/// A line this long gets its buffer trimmed to its size before it is kept.
const TRIM_OVER: usize = 1024 * 1024;

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(read: R, limit: usize, notes: StdoutNotes, log: ServerLog) -> Self {
        Self {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            limit,
            notes,
            log,
        }
    }

    /// The next line (cancel-safe).
    pub(crate) async fn next(&mut self) -> Stdout {
        loop {
            let (used, done) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(e) => return Stdout::Failed(e),
                };
                if available.is_empty() {
                    if !self.line.is_empty() {
                        self.notes.lock().cut_off = Some(self.line.len());
                        self.line.clear();
                    }
                    return Stdout::End;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.unwrap_or(available.len());
                if self.line.len().saturating_add(take) > self.limit {
                    self.notes.lock().too_large = Some(self.limit);
                    self.line = Vec::new();
                    return Stdout::TooLarge;
                }
                self.line.extend_from_slice(&available[..take]);
                (newline.map_or(take, |i| i + 1), newline.is_some())
            };
            self.read.consume(used);
            if done {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                if line.capacity() > TRIM_OVER && line.capacity() > line.len() + line.len() / 8 {
                    line.shrink_to_fit();
                }
                return Stdout::Line(line);
            }
        }
    }

    /// Notes a line that is not JSON-RPC (kept in the server's log, quoted
    /// in the error when the server goes).
    pub(crate) fn junk(&self, line: &[u8]) {
        let text = line
            .strip_prefix(b"\xEF\xBB\xBF")
            .unwrap_or(line)
            .trim_ascii();
        let quoted = quote(&text[..text.len().min(CHECKED_LINE)]);
        self.log.push(&format!(
            "[pipewright] ignored a line on stdout that is not JSON-RPC: {quoted}"
        ));
        let mut notes = self.notes.lock();
        notes.ignored += 1;
        notes.last_ignored = quoted;
    }
}

/// The start of a line, printable, for an error message.
pub(crate) fn quote(line: &[u8]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &[u8], limit: usize) -> (Vec<Vec<u8>>, bool, StdoutNotes) {
        let notes = StdoutNotes::default();
        let mut reader = LineReader::new(input, limit, notes.clone(), ServerLog::default());
        let mut lines = Vec::new();
        loop {
            match reader.next().await {
                Stdout::Line(line) => {
                    if !line.is_empty() && !line.starts_with(b"{") && !line.starts_with(b"[") {
                        reader.junk(&line);
                    }
                    lines.push(line);
                }
                Stdout::End => return (lines, false, notes),
                Stdout::TooLarge => return (lines, true, notes),
                Stdout::Failed(e) => panic!("{e}"),
            }
        }
    }

    #[tokio::test]
    async fn lines_come_whole_without_their_ends() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n[{\"jsonrpc\":\"2.0\"}]\r\n";
        let (lines, too_large, notes) = read_all(input, 1024).await;
        assert!(!too_large);
        assert_eq!(
            lines,
            vec![
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".to_vec(),
                Vec::new(),
                b"[{\"jsonrpc\":\"2.0\"}]".to_vec()
            ]
        );
        assert_eq!(notes.summary(), "");
        assert!(notes.verdict().is_none());
    }

    #[tokio::test]
    async fn a_line_over_the_limit_ends_the_stream_with_a_verdict() {
        let mut input = b"{\"jsonrpc\":\"2.0\"}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 2 * 1024 * 1024));
        let (lines, too_large, notes) = read_all(&input, 1024 * 1024).await;
        assert!(too_large && lines.len() == 1);
        let verdict = notes.verdict().unwrap_or_default();
        assert!(
            verdict.contains("larger than 1 MiB") && verdict.contains("PIPEWRIGHT_MAX_MESSAGE_MB"),
            "{verdict}"
        );
    }

    #[tokio::test]
    async fn junk_lines_and_a_cut_off_end_are_noted() {
        let input = b"Listening on :3000\x1b[0m\n42\n{\"jsonrpc\":\"2.0\",\"id\":1,\"res";
        let (_, _, notes) = read_all(input, 1024).await;
        let summary = notes.summary();
        assert!(
            summary.contains("cut off (28 bytes")
                && summary.contains("2 lines to stdout that are not JSON-RPC")
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
