//! The recorder's writer: the copies of the bytes that crossed, sent by
//! the pumps over one bounded channel, cut into messages ([`frame`]),
//! written to their session files (masked, one line each, by the
//! engine's session `Writer`) and followed for the terminal's lines
//! ([`lines`]), on a thread of its own. The pumps never wait on it unless
//! it falls a channel's worth behind; then they wait, so memory stays
//! bounded whatever the session's length. The channel's order is the
//! file's: a pump queues a chunk's copy before it passes the chunk on.
//!
//! [`frame`]: crate::frame
//! [`lines`]: crate::lines

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use axum::body::Bytes;
use pipewright_engine::record::session::{End, Header, Side, Via, Writer};
use pipewright_engine::redact::Redactor;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use crate::frame::{Framer, Framing, Piece};
use crate::lines::{CallLine, Summary, Tracker};

/// Chunks in flight to the writer at most. With stdio's 64 KiB reads
/// that is 8 MiB; an HTTP body's chunks are smaller.
const CHANNEL: usize = 128;
/// SSE event ids remembered per session, to keep a resumed stream's
/// replayed events once.
const EVENT_IDS: usize = 4096;

/// What the recorder tells the person running it; the command line
/// prints these.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// A session file was started.
    Recording(PathBuf),
    /// A call was answered (only when lines are asked for).
    Call(CallLine),
    /// Something went wrong with the recording (the traffic still passes).
    Warning(String),
}

/// Where notices go.
pub type Report = Arc<dyn Fn(Notice) + Send + Sync>;

/// A session file, by the recorder's own number.
pub(crate) type FileId = u64;
/// One direction of bytes (a pipe, a body, a stream), by number.
pub(crate) type StreamId = u64;

/// What a stream carries.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// JSON-RPC messages from `from`; `resumed`: a stream that replays
    /// events after a `Last-Event-ID`, whose events already kept are
    /// dropped.
    Messages {
        from: Side,
        via: Option<Via>,
        framing: Framing,
        resumed: bool,
    },
    /// The server's stderr, a line at a time.
    Stderr,
}

/// One thing for the writer to do.
#[derive(Debug)]
pub(crate) enum Event {
    /// Start a session file.
    Open { file: FileId, header: Box<Header> },
    /// Bytes that crossed at `at`.
    Chunk {
        file: FileId,
        stream: StreamId,
        kind: Kind,
        at: Instant,
        bytes: Bytes,
    },
    /// A stream ended: what is left of it is a last message.
    Done { stream: StreamId, at: Instant },
    /// A session ended.
    End { file: FileId, end: End },
    /// The recording is over: every file still open ends with `reason`.
    Finish { reason: String },
}

/// The pumps' end of the channel.
#[derive(Clone)]
pub(crate) struct Sink {
    tx: mpsc::Sender<Event>,
}

impl Sink {
    /// Sends from a task; waits only while the writer is a channel behind.
    pub(crate) async fn send(&self, event: Event) {
        // Closed: the writer is gone (finished); nothing is kept any more.
        let _ = self.tx.send(event).await;
    }

    /// Sends from a thread of its own (never from a task).
    pub(crate) fn send_blocking(&self, event: Event) {
        let _ = self.tx.blocking_send(event);
    }
}

/// How the writer writes.
pub(crate) struct Config {
    /// The folder of the session files.
    pub dir: PathBuf,
    pub redactor: Redactor,
    /// The largest message kept, in bytes.
    pub limit: usize,
    pub report: Report,
    /// Whether a line is reported per call.
    pub lines: bool,
}

/// What a recording wrote.
#[derive(Debug, Clone, Default)]
pub struct Written {
    /// The session files, in the order they were started.
    pub files: Vec<PathBuf>,
    pub summary: Summary,
}

/// Waits for the writer to finish (after [`Event::Finish`]).
pub(crate) struct Finished(oneshot::Receiver<Written>);

impl Finished {
    pub(crate) async fn wait(self) -> Written {
        self.0.await.unwrap_or_default()
    }
}

/// Starts the writer's thread.
pub(crate) fn start(config: Config) -> std::io::Result<(Sink, Finished)> {
    let (tx, rx) = mpsc::channel(CHANNEL);
    let (done, finished) = oneshot::channel();
    std::thread::Builder::new()
        .name("pipewright-record-writer".into())
        .spawn(move || {
            let written = Files::new(config).run(rx);
            let _ = done.send(written);
        })?;
    Ok((Sink { tx }, Finished(finished)))
}

/// A session file being written.
struct Session {
    path: PathBuf,
    /// `None` once writing failed: the session goes on unrecorded.
    writer: Option<Writer<File>>,
    tracker: Tracker,
    /// The event ids kept lately, oldest first.
    ids: VecDeque<String>,
    known: HashSet<String>,
}

/// A stream being cut into messages.
struct Stream {
    file: FileId,
    kind: Kind,
    framer: Framer,
}

/// The writer's state: the open files and streams.
struct Files {
    config: Config,
    sessions: HashMap<FileId, Session>,
    streams: HashMap<StreamId, Stream>,
    written: Written,
}

impl Files {
    fn new(config: Config) -> Files {
        Files {
            config,
            sessions: HashMap::new(),
            streams: HashMap::new(),
            written: Written::default(),
        }
    }

    fn run(mut self, mut rx: mpsc::Receiver<Event>) -> Written {
        while let Some(event) = rx.blocking_recv() {
            match event {
                Event::Open { file, header } => self.open(file, &header),
                Event::Chunk {
                    file,
                    stream,
                    kind,
                    at,
                    bytes,
                } => self.chunk(file, stream, kind, at, &bytes),
                Event::Done { stream, at } => self.done(stream, at),
                Event::End { file, end } => self.end(file, end),
                Event::Finish { reason } => {
                    self.finish(&reason);
                    break;
                }
            }
        }
        self.written
    }

    fn open(&mut self, file: FileId, header: &Header) {
        let name = header.server.name().to_owned();
        let writer = match create(&self.config.dir, header, &self.config) {
            Ok((path, writer)) => {
                (self.config.report)(Notice::Recording(path.clone()));
                self.written.files.push(path.clone());
                Some((path, writer))
            }
            Err(e) => {
                (self.config.report)(Notice::Warning(format!(
                    "cannot start a session file in `{}`: {e}; this session is passed on but not recorded",
                    self.config.dir.display()
                )));
                None
            }
        };
        let (path, writer) = match writer {
            Some((p, w)) => (p, Some(w)),
            None => (PathBuf::new(), None),
        };
        self.sessions.insert(
            file,
            Session {
                path,
                writer,
                tracker: Tracker::new(&name, self.config.redactor.clone()),
                ids: VecDeque::new(),
                known: HashSet::new(),
            },
        );
    }

    fn chunk(&mut self, file: FileId, stream: StreamId, kind: Kind, at: Instant, bytes: &[u8]) {
        let limit = self.config.limit;
        let st = self.streams.entry(stream).or_insert_with(|| Stream {
            file,
            kind,
            framer: Framer::new(
                match kind {
                    Kind::Messages { framing, .. } => framing,
                    Kind::Stderr => Framing::Lines,
                },
                limit,
            ),
        });
        let Some(session) = self.sessions.get_mut(&st.file) else {
            return;
        };
        let config = &self.config;
        let kind = st.kind;
        st.framer
            .push(bytes, &mut |piece| session.piece(kind, at, piece, config));
    }

    fn done(&mut self, stream: StreamId, at: Instant) {
        let Some(mut st) = self.streams.remove(&stream) else {
            return;
        };
        let Some(session) = self.sessions.get_mut(&st.file) else {
            return;
        };
        let config = &self.config;
        st.framer
            .finish(&mut |piece| session.piece(st.kind, at, piece, config));
    }

    fn end(&mut self, file: FileId, end: End) {
        self.streams.retain(|_, s| s.file != file);
        if let Some(mut session) = self.sessions.remove(&file) {
            session.end(end, &self.config);
            self.written.summary.add(session.tracker.summary());
        }
    }

    fn finish(&mut self, reason: &str) {
        let open: Vec<FileId> = self.sessions.keys().copied().collect();
        for file in open {
            self.end(
                file,
                End {
                    reason: reason.to_owned(),
                    exit_code: None,
                    signal: None,
                },
            );
        }
    }
}

/// Creates `DIR/YYYYMMDD-HHMMSS-<server>-<n>.jsonl`, `n` the first that
/// is free.
fn create(
    dir: &Path,
    header: &Header,
    config: &Config,
) -> std::io::Result<(PathBuf, Writer<File>)> {
    std::fs::create_dir_all(dir)?;
    let stamp = time::OffsetDateTime::now_utc();
    let prefix = format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}-{}",
        stamp.year(),
        u8::from(stamp.month()),
        stamp.day(),
        stamp.hour(),
        stamp.minute(),
        stamp.second(),
        file_name_part(header.server.name())
    );
    let mut n = 1;
    loop {
        let path = dir.join(format!("{prefix}-{n}.jsonl"));
        match Writer::create(&path, header, config.redactor.clone(), config.limit) {
            Ok(w) => return Ok((path, w)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// A server's name as part of a file name: letters, digits, `-`, `_`
/// and `.`; anything else `-`.
pub(crate) fn file_name_part(name: &str) -> String {
    let part: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(60)
        .collect();
    let part = part.trim_matches(['-', '.']);
    if part.is_empty() {
        "server".to_owned()
    } else {
        part.to_owned()
    }
}

impl Session {
    /// One piece of a stream of this session.
    fn piece(&mut self, kind: Kind, at: Instant, piece: Piece<'_>, config: &Config) {
        let Kind::Messages {
            from, via, resumed, ..
        } = kind
        else {
            let text = match piece {
                Piece::Message(text, _) => String::from_utf8_lossy(text).into_owned(),
                Piece::TooLarge(n, _) => format!("[a line of {n} bytes, not kept]"),
            };
            self.write(config, |w| w.stderr_at(at, &text));
            return;
        };
        let (id, bytes) = match piece {
            Piece::Message(bytes, id) => (id, Some(bytes)),
            Piece::TooLarge(n, id) => {
                if !self.new_event(id, resumed) {
                    return;
                }
                self.write(config, |w| {
                    let at_ms = w.ms_at(at);
                    w.write(pipewright_engine::record::session::Line::TooLarge {
                        at_ms,
                        from,
                        bytes: n,
                    })
                });
                return;
            }
        };
        let Some(bytes) = bytes else { return };
        if !self.new_event(id, resumed) {
            return;
        }
        // A batch (a JSON array, 2025-03-26) is kept a message a line.
        let batch = bytes
            .iter()
            .find(|b| !b.is_ascii_whitespace())
            .is_some_and(|&b| b == b'[');
        let parts: Vec<&RawValue> = if batch {
            serde_json::from_slice(bytes).unwrap_or_default()
        } else {
            Vec::new()
        };
        if parts.is_empty() {
            self.message(from, via, at, bytes, config);
        } else {
            for part in parts {
                self.message(from, via, at, part.get().as_bytes(), config);
            }
        }
    }

    fn message(
        &mut self,
        from: Side,
        via: Option<Via>,
        at: Instant,
        bytes: &[u8],
        config: &Config,
    ) {
        self.write(config, |w| w.message_at(at, from, bytes, via));
        if let Some(line) = self.tracker.see(from, bytes, at)
            && config.lines
        {
            (config.report)(Notice::Call(line));
        }
    }

    /// Whether an event with `id` is one not kept yet (always, for an
    /// event without an id or on a stream that is not a resumption).
    fn new_event(&mut self, id: Option<&str>, resumed: bool) -> bool {
        let Some(id) = id else { return true };
        if resumed && self.known.contains(id) {
            return false;
        }
        if self.known.insert(id.to_owned()) {
            self.ids.push_back(id.to_owned());
            if self.ids.len() > EVENT_IDS
                && let Some(old) = self.ids.pop_front()
            {
                self.known.remove(&old);
            }
        }
        true
    }

    fn end(&mut self, end: End, config: &Config) {
        self.write(config, |w| w.end(end));
    }

    /// Writes with the session's writer; a failure stops this session's
    /// recording and says so once.
    fn write(&mut self, config: &Config, f: impl FnOnce(&mut Writer<File>) -> std::io::Result<()>) {
        let Some(w) = self.writer.as_mut() else {
            return;
        };
        if let Err(e) = f(w) {
            self.writer = None;
            (config.report)(Notice::Warning(format!(
                "cannot write `{}`: {e}; the rest of this session is passed on but not recorded",
                self.path.display()
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipewright_engine::record::session::{Line, Reader, Server, VERSION};
    use std::sync::Mutex;

    #[tokio::test(flavor = "current_thread")]
    async fn chunks_become_lines_of_a_session_file_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let notices = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&notices);
        let redactor = Redactor::default();
        redactor.add("s3cret-value");
        let (sink, finished) = start(Config {
            dir: dir.path().to_owned(),
            redactor,
            limit: 1024,
            report: Arc::new(move |n| seen.lock().unwrap().push(n)),
            lines: true,
        })
        .unwrap();
        let header = Header {
            version: VERSION,
            started: "2026-01-01T00:00:00Z".into(),
            recorder: "test".into(),
            server: Server::Stdio {
                name: "demo server".into(),
                command: "demo".into(),
                args: vec![],
            },
            session_id: None,
        };
        let client = Kind::Messages {
            from: Side::Client,
            via: None,
            framing: Framing::Lines,
            resumed: false,
        };
        let server = Kind::Messages {
            from: Side::Server,
            via: None,
            framing: Framing::Lines,
            resumed: false,
        };
        let chunk = |stream, kind, text: &'static str| Event::Chunk {
            file: 0,
            stream,
            kind,
            at: Instant::now(),
            bytes: Bytes::from_static(text.as_bytes()),
        };
        sink.send(Event::Open {
            file: 0,
            header: Box::new(header),
        })
        .await;
        sink.send(chunk(
            0,
            client,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",",
        ))
        .await;
        sink.send(chunk(0, client, "\"params\":{\"name\":\"echo\",\"arguments\":{\"m\":\"s3cret-value\"}}}\n[{\"jsonrpc\":\"2.0\",\"method\":\"a\"},{\"jsonrpc\":\"2.0\",\"method\":\"b\"}]\n")).await;
        sink.send(chunk(
            1,
            server,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n",
        ))
        .await;
        sink.send(chunk(2, Kind::Stderr, "starting\npartial")).await;
        sink.send(Event::Done {
            stream: 2,
            at: Instant::now(),
        })
        .await;
        sink.send(Event::Finish {
            reason: "done".into(),
        })
        .await;
        let written = finished.wait().await;
        assert_eq!(written.files.len(), 1);
        assert_eq!(written.summary.calls, 1);
        let name = written.files[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.ends_with("-demo-server-1.jsonl"), "{name}");
        let text = std::fs::read_to_string(&written.files[0]).unwrap();
        assert!(!text.contains("s3cret-value"), "{text}");
        let lines: Vec<Line> = Reader::open(&written.files[0], 1 << 20)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let kinds: Vec<String> = lines
            .iter()
            .map(|l| match l {
                Line::Message { from, message, .. } => format!(
                    "{from:?} {}",
                    message
                        .tree()
                        .get("method")
                        .or(message.tree().get("id"))
                        .unwrap()
                ),
                Line::Stderr { text, .. } => format!("stderr {text}"),
                Line::End { end, .. } => format!("end {}", end.reason),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "Client \"tools/call\"",
                "Client \"a\"",
                "Client \"b\"",
                "Server 1",
                "stderr starting",
                "stderr partial",
                "end done"
            ]
        );
        let notices = notices.lock().unwrap();
        assert!(matches!(&notices[0], Notice::Recording(_)));
        assert!(
            matches!(&notices[1], Notice::Call(l) if l.tool == "echo" && l.args.contains("***"))
        );
    }
}
