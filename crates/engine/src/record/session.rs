//! The session file: one client's MCP session with one server, as
//! `pipewright record` keeps it, written as it happens and read back by
//! `pipewright new --from`, the workbench and the tests.
//!
//! # Format (version 1)
//!
//! JSON Lines, UTF-8, one JSON object a line. The first line is the header:
//!
//! ```json
//! {"pipewright_session":1,"started":"2026-11-29T02:00:00.123Z","recorder":"pipewright 0.1.0",
//!  "server":{"transport":"stdio","name":"demo","command":"pipewright","args":["demo-server"]}}
//! ```
//!
//! (`"server":{"transport":"http","name":"…","url":"…"}` over Streamable
//! HTTP, with `"session_id"` when the server gave an `Mcp-Session-Id`.)
//! Every later line has `at_ms`, the milliseconds since the session started
//! (fractional), and one of:
//!
//! - `"from":"client"|"server","message":{…}`: a JSON-RPC message as it
//!   crossed (requests, answers, notifications, either way), compact, with
//!   `"http":"post"|"post_stream"|"get_stream"` saying how it travelled over
//!   HTTP;
//! - `"from":…,"too_large":BYTES`: a message over the size limit, passed
//!   on but not kept;
//! - `"from":…,"unreadable":"TEXT","error":"…"`: a line that is not one
//!   JSON value (its first 4 KiB);
//! - `"stderr":"TEXT"`: a line the server wrote to stderr;
//! - `"end":{"reason":"…","exit_code":N}`: how the session ended (the last
//!   line; a recorder that was killed leaves none).
//!
//! Secrets are masked before a line is written, as traces mask them: the
//! values a [`Redactor`] holds (header values, secret environment values)
//! read `***`. A reader takes lines it does not know the keys of as the
//! version's readers before it would: a newer minor addition is skipped, a
//! newer `pipewright_session` version is refused with a sentence.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::json::Json;
use crate::redact::Redactor;

/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// How much of an unreadable line is kept.
const UNREADABLE_KEPT: usize = 4096;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The format version ([`VERSION`]).
    #[serde(rename = "pipewright_session")]
    pub version: u32,
    /// When the session started, RFC 3339 in UTC.
    pub started: String,
    /// What wrote the file, e.g. `pipewright 0.1.0`.
    pub recorder: String,
    /// The server the client talked to.
    pub server: Server,
    /// Streamable HTTP's `Mcp-Session-Id`, when the server gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

impl Header {
    /// Reads a header line (the first line of a file), refusing a line
    /// that is not one and a version newer than this build reads; the
    /// error is a sentence without the line's place.
    pub fn parse(text: &str) -> Result<Header, String> {
        let head: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        match head
            .get("pipewright_session")
            .and_then(serde_json::Value::as_u64)
        {
            None => Err(
                "this is not a pipewright session file (its first line has no `pipewright_session`)"
                    .to_owned(),
            ),
            Some(v) if v > u64::from(VERSION) => Err(format!(
                "session file version {v} is newer than this pipewright reads ({VERSION}); update pipewright"
            )),
            Some(_) => serde_json::from_value(head).map_err(|e| e.to_string()),
        }
    }
}

/// The server end of a recorded session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "lowercase")]
pub enum Server {
    /// A server the recorder started and spoke to over stdin and stdout.
    Stdio {
        /// The name the client's config gives it (else the command's).
        name: String,
        command: String,
        #[serde(default)]
        args: Vec<String>,
    },
    /// A Streamable HTTP server the recorder stood in front of.
    Http { name: String, url: String },
}

impl Server {
    /// The server's name, as a pipeline written from the session names it.
    pub fn name(&self) -> &str {
        match self {
            Server::Stdio { name, .. } | Server::Http { name, .. } => name,
        }
    }
}

/// Which side sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Client,
    Server,
}

/// How a message travelled over Streamable HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// A POST's body, or its JSON answer.
    Post,
    /// An event of the stream a POST was answered with.
    PostStream,
    /// An event of the GET stream a client keeps open.
    GetStream,
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    /// In words: `client closed stdin`, `server exited`, `DELETE`, …
    pub reason: String,
    /// The server process's exit status, when it exited with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended the server process, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

/// One line after the header.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A JSON-RPC message.
    Message {
        at_ms: f64,
        from: Side,
        message: Json,
        http: Option<Via>,
    },
    /// A message over the limit: passed on, not kept.
    TooLarge { at_ms: f64, from: Side, bytes: u64 },
    /// Text that is not one JSON value.
    Unreadable {
        at_ms: f64,
        from: Side,
        text: String,
        error: String,
    },
    /// A line of the server's stderr.
    Stderr { at_ms: f64, text: String },
    /// The end of the session.
    End { at_ms: f64, end: End },
}

impl Line {
    /// Reads one line after the header (its text without the line's
    /// end); `None` for a kind of line this build does not know (a later
    /// minor addition, skipped), an error as a sentence without its place.
    /// A reader that follows a file being written reads it line by line
    /// with this.
    pub fn parse(text: &str) -> Result<Option<Line>, String> {
        let raw: Raw = serde_json::from_str(text).map_err(|e| e.to_string())?;
        raw.line()
    }

    /// Milliseconds since the session started.
    pub fn at_ms(&self) -> f64 {
        match self {
            Line::Message { at_ms, .. }
            | Line::TooLarge { at_ms, .. }
            | Line::Unreadable { at_ms, .. }
            | Line::Stderr { at_ms, .. }
            | Line::End { at_ms, .. } => *at_ms,
        }
    }
}

/// A line as it is written: the keys of every kind, each kind setting its
/// own.
#[derive(Default, Serialize, Deserialize)]
struct Raw {
    at_ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    from: Option<Side>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<Json>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    http: Option<Via>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    too_large: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unreadable: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stderr: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end: Option<End>,
}

impl Raw {
    fn of(line: Line) -> Raw {
        match line {
            Line::Message {
                at_ms,
                from,
                message,
                http,
            } => Raw {
                at_ms,
                from: Some(from),
                message: Some(message),
                http,
                ..Raw::default()
            },
            Line::TooLarge { at_ms, from, bytes } => Raw {
                at_ms,
                from: Some(from),
                too_large: Some(bytes),
                ..Raw::default()
            },
            Line::Unreadable {
                at_ms,
                from,
                text,
                error,
            } => Raw {
                at_ms,
                from: Some(from),
                unreadable: Some(text),
                error: Some(error),
                ..Raw::default()
            },
            Line::Stderr { at_ms, text } => Raw {
                at_ms,
                stderr: Some(text),
                ..Raw::default()
            },
            Line::End { at_ms, end } => Raw {
                at_ms,
                end: Some(end),
                ..Raw::default()
            },
        }
    }

    /// The line this is; `None` for a line of a kind this build does not
    /// know (a later minor addition).
    fn line(self) -> Result<Option<Line>, String> {
        let at_ms = self.at_ms;
        let from = || self.from.ok_or("a message line needs `from`");
        Ok(Some(if let Some(message) = self.message {
            Line::Message {
                at_ms,
                from: from()?,
                message,
                http: self.http,
            }
        } else if let Some(bytes) = self.too_large {
            Line::TooLarge {
                at_ms,
                from: from()?,
                bytes,
            }
        } else if let Some(text) = self.unreadable {
            Line::Unreadable {
                at_ms,
                from: from()?,
                text,
                error: self.error.unwrap_or_default(),
            }
        } else if let Some(text) = self.stderr {
            Line::Stderr { at_ms, text }
        } else if let Some(end) = self.end {
            Line::End { at_ms, end }
        } else {
            return Ok(None);
        }))
    }
}

/// Writes a session file as the session goes, masking secrets first. Each
/// line is flushed when written, so a reader following the file (the
/// workbench) sees a message as soon as it crossed, and a recorder killed
/// mid-session leaves every line before.
pub struct Writer<W: Write> {
    out: BufWriter<W>,
    redactor: Redactor,
    started: Instant,
    /// The largest message kept, in bytes.
    limit: usize,
}

impl Writer<File> {
    /// Creates `path` (failing if it exists) and writes the header.
    pub fn create(
        path: &Path,
        header: &Header,
        redactor: Redactor,
        limit: usize,
    ) -> io::Result<Writer<File>> {
        let file = File::options().write(true).create_new(true).open(path)?;
        Writer::new(file, header, redactor, limit)
    }
}

impl<W: Write> Writer<W> {
    /// A writer on `out`, the header written; `limit` is the largest
    /// message kept, in bytes.
    pub fn new(out: W, header: &Header, redactor: Redactor, limit: usize) -> io::Result<Writer<W>> {
        let mut w = Writer {
            out: BufWriter::new(out),
            redactor,
            started: Instant::now(),
            limit,
        };
        let mut header = header.clone();
        header.server = match header.server {
            Server::Stdio {
                name,
                command,
                args,
            } => Server::Stdio {
                name,
                command: w.redactor.text(&command),
                args: args.iter().map(|a| w.redactor.text(a)).collect(),
            },
            Server::Http { name, url } => Server::Http {
                name,
                url: w.redactor.text(&url),
            },
        };
        serde_json::to_writer(&mut w.out, &header)?;
        w.out.write_all(b"\n")?;
        w.out.flush()?;
        Ok(w)
    }

    /// The milliseconds since the session started.
    pub fn now_ms(&self) -> f64 {
        self.started.elapsed().as_secs_f64() * 1000.0
    }

    /// The milliseconds from the session's start to `at` (0 for a moment
    /// before it).
    pub fn ms_at(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.started).as_secs_f64() * 1000.0
    }

    /// Keeps one message as it crossed (`text`: its bytes, without the
    /// line's end): checked and compacted, masked, then written; an
    /// oversized or unreadable one is kept as such.
    pub fn message(&mut self, from: Side, text: &[u8], http: Option<Via>) -> io::Result<()> {
        self.message_at(Instant::now(), from, text, http)
    }

    /// [`Writer::message`] for a message that crossed at `at`: a recorder
    /// stamps bytes when they pass and writes them a moment later.
    pub fn message_at(
        &mut self,
        at: Instant,
        from: Side,
        text: &[u8],
        http: Option<Via>,
    ) -> io::Result<()> {
        let at_ms = self.ms_at(at);
        let line = if text.len() > self.limit {
            Line::TooLarge {
                at_ms,
                from,
                bytes: text.len() as u64,
            }
        } else {
            match std::str::from_utf8(text)
                .map_err(|e| e.to_string())
                .and_then(|t| Json::parse(t.to_owned()).map_err(|e| e.to_string()))
            {
                Ok(message) => Line::Message {
                    at_ms,
                    from,
                    message: self.redactor.json(&message),
                    http,
                },
                Err(error) => {
                    let kept = &text[..text.len().min(UNREADABLE_KEPT)];
                    Line::Unreadable {
                        at_ms,
                        from,
                        text: self.redactor.text(&String::from_utf8_lossy(kept)),
                        error,
                    }
                }
            }
        };
        self.write(line)
    }

    /// Keeps a line of the server's stderr.
    pub fn stderr(&mut self, text: &str) -> io::Result<()> {
        self.stderr_at(Instant::now(), text)
    }

    /// [`Writer::stderr`] for a line written at `at`.
    pub fn stderr_at(&mut self, at: Instant, text: &str) -> io::Result<()> {
        let at_ms = self.ms_at(at);
        let text = self.redactor.text(text);
        self.write(Line::Stderr { at_ms, text })
    }

    /// Ends the file with how the session ended.
    pub fn end(&mut self, end: End) -> io::Result<()> {
        let at_ms = self.now_ms();
        let end = End {
            reason: self.redactor.text(&end.reason),
            ..end
        };
        self.write(Line::End { at_ms, end })
    }

    /// The output the lines went to (each was flushed as it was written).
    pub fn into_inner(self) -> io::Result<W> {
        self.out
            .into_inner()
            .map_err(io::IntoInnerError::into_error)
    }

    /// Writes a line as it is (masked already) and flushes it.
    pub fn write(&mut self, line: Line) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, &Raw::of(line))?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }
}

/// A line of a session file that could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// 1-based line number (0: the file itself).
    pub line: usize,
    pub what: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.what)
        } else {
            write!(f, "line {}: {}", self.line, self.what)
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads a session file line by line: the header first, then each line as
/// it is asked for, so a session of any length is read in bounded memory.
pub struct Reader<R: BufRead> {
    input: R,
    header: Header,
    line: usize,
    /// The longest line read, in bytes.
    limit: usize,
}

impl Reader<BufReader<File>> {
    /// Opens `path` and reads its header; `limit` is the longest line read
    /// (a message's limit and room for its keys).
    pub fn open(path: &Path, limit: usize) -> Result<Reader<BufReader<File>>, ReadError> {
        let file = File::open(path).map_err(|e| ReadError {
            line: 0,
            what: format!("cannot read `{}`: {e}", path.display()),
        })?;
        Reader::new(BufReader::new(file), limit)
    }
}

impl<R: BufRead> Reader<R> {
    /// Reads the header from `input`.
    pub fn new(input: R, limit: usize) -> Result<Reader<R>, ReadError> {
        let mut r = Reader {
            input,
            header: Header {
                version: VERSION,
                started: String::new(),
                recorder: String::new(),
                server: Server::Http {
                    name: String::new(),
                    url: String::new(),
                },
                session_id: None,
            },
            line: 0,
            limit,
        };
        let Some(text) = r.next_text()? else {
            return Err(ReadError {
                line: 1,
                what: "the file is empty: a session file starts with its header".into(),
            });
        };
        r.header = Header::parse(&text).map_err(|e| r.err(e))?;
        Ok(r)
    }

    /// The session's header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The 1-based number of the line read last (blank lines counted), so
    /// a reader of the lines can say where one it refuses is.
    pub fn line(&self) -> usize {
        self.line
    }

    fn err(&self, what: impl std::fmt::Display) -> ReadError {
        ReadError {
            line: self.line,
            what: what.to_string(),
        }
    }

    /// The next non-empty line's text, read through the length limit.
    fn next_text(&mut self) -> Result<Option<String>, ReadError> {
        loop {
            let mut buf = Vec::new();
            let cap = self.limit as u64 + 1;
            let n = (&mut self.input)
                .take(cap)
                .read_until(b'\n', &mut buf)
                .map_err(|e| self.err(e))?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            if buf.last() != Some(&b'\n') && n as u64 == cap {
                return Err(self.err(format!(
                    "a line longer than {} bytes (the message limit)",
                    self.limit
                )));
            }
            let text = String::from_utf8(buf).map_err(|_| self.err("not UTF-8"))?;
            let text = text.trim_end_matches(['\n', '\r']);
            if !text.trim().is_empty() {
                return Ok(Some(text.to_owned()));
            }
        }
    }
}

impl<R: BufRead> Iterator for Reader<R> {
    type Item = Result<Line, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let text = match self.next_text() {
                Ok(Some(t)) => t,
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            };
            match Line::parse(&text) {
                Ok(Some(line)) => return Some(Ok(line)),
                // A kind of line a later pipewright added: skipped.
                Ok(None) => continue,
                Err(e) => return Some(Err(self.err(e))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            version: VERSION,
            started: "2026-11-29T02:00:00Z".into(),
            recorder: "pipewright test".into(),
            server: Server::Stdio {
                name: "demo".into(),
                command: "pipewright".into(),
                args: vec!["demo-server".into(), "--token=s3cret-value".into()],
            },
            session_id: None,
        }
    }

    fn written(f: impl FnOnce(&mut Writer<&mut Vec<u8>>)) -> Vec<u8> {
        let redactor = Redactor::default();
        redactor.add("s3cret-value");
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out, &header(), redactor, 1024).unwrap();
        f(&mut w);
        drop(w);
        out
    }

    #[test]
    fn lines_read_back_as_written_with_secrets_masked() {
        let out = written(|w| {
            w.message(Side::Client, br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"s3cret-value"}}}"#, None).unwrap();
            w.message(
                Side::Server,
                b"{ \"jsonrpc\": \"2.0\", \"id\": 1, \"result\": {} }",
                Some(Via::PostStream),
            )
            .unwrap();
            w.stderr("started with s3cret-value").unwrap();
            w.message(Side::Server, b"not json", None).unwrap();
            w.message(Side::Client, &[b'x'; 2000], None).unwrap();
            w.end(End {
                reason: "server exited".into(),
                exit_code: Some(0),
                signal: None,
            })
            .unwrap();
        });
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(!text.contains("s3cret-value"), "{text}");
        let mut r = Reader::new(&out[..], 1 << 20).unwrap();
        assert_eq!(
            r.header().server,
            Server::Stdio {
                name: "demo".into(),
                command: "pipewright".into(),
                args: vec!["demo-server".into(), "--token=***".into()],
            }
        );
        let lines: Vec<Line> = r.by_ref().map(Result::unwrap).collect();
        assert_eq!(lines.len(), 6);
        match &lines[0] {
            Line::Message {
                from,
                message,
                http,
                ..
            } => {
                assert_eq!(*from, Side::Client);
                assert_eq!(http, &None);
                assert_eq!(message.tree()["params"]["arguments"]["message"], "***");
            }
            other => panic!("{other:?}"),
        }
        match &lines[1] {
            Line::Message { message, http, .. } => {
                assert_eq!(message.text(), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
                assert_eq!(*http, Some(Via::PostStream));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&lines[2], Line::Stderr { text, .. } if text == "started with ***"));
        assert!(
            matches!(&lines[3], Line::Unreadable { text, error, .. } if text == "not json" && !error.is_empty())
        );
        assert!(matches!(&lines[4], Line::TooLarge { bytes: 2000, .. }));
        assert!(matches!(&lines[5], Line::End { end, .. } if end.exit_code == Some(0)));
        let times: Vec<f64> = lines.iter().map(Line::at_ms).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    }

    #[test]
    fn a_bad_file_is_a_sentence_with_its_line() {
        let not_ours = Reader::new(&b"{\"hello\":1}\n"[..], 1024).err().unwrap();
        assert_eq!(not_ours.line, 1);
        assert!(
            not_ours.what.contains("not a pipewright session file"),
            "{not_ours}"
        );
        let newer = Reader::new(&b"{\"pipewright_session\":9}\n"[..], 1024)
            .err()
            .unwrap();
        assert!(newer.to_string().contains("version 9 is newer"), "{newer}");
        assert!(
            Reader::new(&b""[..], 1024)
                .err()
                .unwrap()
                .what
                .contains("empty")
        );

        let mut file = written(|_| {});
        file.extend_from_slice(
            b"\n{\"at_ms\":1,\"message\":{}}\n{\"at_ms\":2,\"later_kind\":true}\n{broken\n",
        );
        let mut r = Reader::new(&file[..], 1024).unwrap();
        let e = r.next().unwrap().err().unwrap();
        assert_eq!(
            (e.line, e.what.as_str()),
            (3, "a message line needs `from`")
        );
        // A line of a kind this build does not know is skipped.
        let e = r.next().unwrap().err().unwrap();
        assert_eq!(e.line, 5);
        assert!(r.next().is_none());
    }

    #[test]
    fn a_line_past_the_limit_is_refused_without_reading_it_whole() {
        let mut file = written(|_| {});
        file.extend_from_slice(
            format!("{{\"at_ms\":1,\"stderr\":\"{}\"}}\n", "x".repeat(5000)).as_bytes(),
        );
        let mut r = Reader::new(&file[..], 1024).unwrap();
        let e = r.next().unwrap().err().unwrap();
        assert!(e.what.contains("longer than 1024 bytes"), "{e}");
    }
}
