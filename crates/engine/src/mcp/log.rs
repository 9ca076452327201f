//! The server log: a bounded buffer of what a server said outside the
//! protocol (its stderr) and through `notifications/message`.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex, MutexGuard, PoisonError},
};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

/// A shared, bounded log of one server's stderr lines and logging
/// notifications. The oldest lines are dropped once the buffer holds more
/// than its capacity; nothing here is ever printed to the terminal.
///
/// Clones share the same buffer, so a UI can keep a handle and poll it.
#[derive(Clone)]
pub struct ServerLog {
    inner: Arc<Mutex<Ring>>,
}

struct Ring {
    lines: VecDeque<String>,
    bytes: usize,
    capacity: usize,
    dropped: bool,
}

/// A single line longer than this is cut into pieces while it is read.
const MAX_LINE: usize = 16 * 1024;

impl ServerLog {
    /// How much a connection keeps by default: the last 64 KiB.
    pub const DEFAULT_CAPACITY: usize = 64 * 1024;

    /// An empty log that keeps at most `capacity` bytes of text.
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Ring {
                lines: VecDeque::new(),
                bytes: 0,
                capacity: capacity.max(1),
                dropped: false,
            })),
        }
    }

    fn ring(&self) -> MutexGuard<'_, Ring> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends one line (without its newline).
    pub(crate) fn push(&self, line: &str) {
        let mut ring = self.ring();
        let capacity = ring.capacity;
        let line = keep_tail(line, capacity);
        ring.bytes += line.len() + 1;
        ring.lines.push_back(line.to_owned());
        while ring.bytes > capacity {
            match ring.lines.pop_front() {
                Some(old) => {
                    ring.bytes -= old.len() + 1;
                    ring.dropped = true;
                }
                None => break,
            }
        }
    }

    /// Everything kept, one line per entry, each ending in a newline.
    pub fn text(&self) -> String {
        let ring = self.ring();
        let mut out = String::with_capacity(ring.bytes);
        for line in &ring.lines {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// The last `max_lines` lines (fewer if they exceed `max_bytes`), for
    /// quoting in an error message.
    pub fn tail(&self, max_lines: usize, max_bytes: usize) -> String {
        let ring = self.ring();
        let mut picked: Vec<&str> = Vec::new();
        let mut bytes = 0;
        for line in ring.lines.iter().rev().take(max_lines) {
            if bytes + line.len() + 1 > max_bytes && !picked.is_empty() {
                break;
            }
            bytes += line.len() + 1;
            picked.push(keep_tail(line, max_bytes));
        }
        let mut out = String::with_capacity(bytes);
        for line in picked.iter().rev() {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    /// True when nothing has been logged yet.
    pub fn is_empty(&self) -> bool {
        self.ring().lines.is_empty()
    }

    /// True when old lines were dropped to stay within capacity.
    pub fn truncated(&self) -> bool {
        self.ring().dropped
    }
}

impl Default for ServerLog {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CAPACITY)
    }
}

impl std::fmt::Debug for ServerLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ring = self.ring();
        f.debug_struct("ServerLog")
            .field("lines", &ring.lines.len())
            .field("bytes", &ring.bytes)
            .field("capacity", &ring.capacity)
            .finish()
    }
}

/// The last `max` bytes of `s`, cut on a character boundary.
fn keep_tail(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Reads `stream` to its end, one log line per text line (lossy UTF-8,
/// `\r\n` or `\n`), then cancels `done`.
pub(crate) async fn pump<R: AsyncRead + Unpin>(
    mut stream: R,
    log: ServerLog,
    done: CancellationToken,
) {
    let mut buf = [0u8; 8192];
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let n = match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &byte in &buf[..n] {
            if byte == b'\n' {
                flush(&mut partial, &log);
            } else {
                partial.push(byte);
                if partial.len() >= MAX_LINE {
                    flush(&mut partial, &log);
                }
            }
        }
    }
    if !partial.is_empty() {
        flush(&mut partial, &log);
    }
    done.cancel();
}

fn flush(partial: &mut Vec<u8>, log: &ServerLog) {
    if partial.last() == Some(&b'\r') {
        partial.pop();
    }
    log.push(&String::from_utf8_lossy(partial));
    partial.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_only_the_newest_lines_within_capacity() {
        let log = ServerLog::new(10);
        log.push("aaaa"); // 5 bytes with newline
        log.push("bbbb"); // 10
        log.push("cc"); // 13 -> drop "aaaa"
        assert_eq!(log.text(), "bbbb\ncc\n");
        assert!(log.truncated());
    }

    #[test]
    fn a_line_longer_than_capacity_keeps_its_end() {
        let log = ServerLog::new(4);
        log.push("héllo wörld");
        let text = log.text();
        assert!(
            text.ends_with("rld\n") || text.ends_with("ld\n"),
            "{text:?}"
        );
        assert!(text.len() <= 5);
    }

    #[test]
    fn tail_takes_the_last_lines() {
        let log = ServerLog::default();
        for i in 0..10 {
            log.push(&format!("line {i}"));
        }
        assert_eq!(log.tail(2, 1000), "line 8\nline 9\n");
        assert_eq!(log.tail(5, 8), "line 9\n");
    }

    #[tokio::test]
    async fn pump_splits_lines_and_signals_the_end() {
        let log = ServerLog::default();
        let done = CancellationToken::new();
        let input: &[u8] = b"one\r\ntwo\nthree \xff";
        pump(input, log.clone(), done.clone()).await;
        assert!(done.is_cancelled());
        assert_eq!(log.text(), "one\ntwo\nthree \u{fffd}\n");
    }
}
