//! The recording view's engine side: a session file `pipewright record` is
//! writing (or a folder of them: the newest, then each new one) followed
//! off the loop. One thread tails the file and pairs its lines into calls
//! (`engine::record::calls::Live`), building what the view shows each time
//! calls arrive; another runs the engine's inference over the calls so far
//! (latest wins: calls that come while it runs are taken in by the next
//! run). Each new view is left in a slot of one (an older one not taken yet
//! is replaced) and the app is told with a [`Message`]; it never waits on
//! either thread. `W` writes the pipeline with the engine's `new --from`
//! ([`write`]), on a thread of its own. The app's side is
//! `app/recording.rs`.

mod tail;
mod view;

#[cfg(test)]
pub(crate) mod tests;

pub(crate) use view::{Counts, View};

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use pipewright_engine::record::calls::{Live, Recording};
use pipewright_engine::record::session::{Header, Line};

use crate::inbox::Message;
use tail::{Folder, Tail};
use view::Inference;

/// How often the followed file's length is looked at.
const POLL: Duration = Duration::from_millis(100);
/// A folder is listed for new sessions every this many looks.
const LIST_EVERY: u32 = 5;
/// The most calls a view holds: past them the file is still recorded and
/// written whole by `W` and `new --from`, but no more nodes are drawn.
pub(crate) const MAX_CALLS: usize = 5_000;
/// The server's stderr lines kept for the Logs tab.
const STDERR_KEPT: usize = 200;

/// A recording followed, as the app holds it; dropping it stops the
/// threads that follow it.
pub(crate) struct Following {
    /// Tells this following's messages from an earlier one's.
    pub(crate) generation: u64,
    shared: Arc<Shared>,
    /// The session file on screen.
    pub(crate) file: Option<PathBuf>,
    pub(crate) counts: Counts,
    /// How the session ended, once it has.
    pub(crate) ended: Option<String>,
    /// A pipeline is being written from it.
    pub(crate) writing: bool,
}

impl Drop for Following {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.wake.notify_all();
    }
}

impl Following {
    /// The newest view the follower left, if one waits.
    pub(crate) fn take(&self) -> Option<Snapshot> {
        self.shared.slot.lock().ok()?.take()
    }

    /// The status bar's words: what is followed and what it counts.
    pub(crate) fn label(&self) -> String {
        let c = &self.counts;
        let plural =
            |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let state = if self.ended.is_some() {
            "ENDED"
        } else {
            "LIVE"
        };
        let mut t = format!(
            "REC {state} {} · {} · {} · {}",
            plural(c.calls, "call", "calls"),
            plural(c.references, "ref", "refs"),
            plural(c.inputs, "input", "inputs"),
            plural(c.flagged, "flag", "flags"),
        );
        if c.waiting > 0 {
            t.push_str(&format!(" · inferring {}", c.waiting));
        }
        t
    }

    /// The same in a sentence, for the status line.
    pub(crate) fn summary(&self) -> String {
        let c = &self.counts;
        let mut t = format!(
            "{} call(s) → {} node(s): {} reference(s), {} for_each, {} input(s), {} flagged",
            c.calls, c.nodes, c.references, c.fan_outs, c.inputs, c.flagged
        );
        if c.failed > 0 {
            t.push_str(&format!(", {} failed call(s) left out", c.failed));
        }
        t
    }
}

/// What the follower hands the app.
pub(crate) struct Snapshot {
    /// The session file it shows.
    pub(crate) file: PathBuf,
    /// The view (none before the file has a call, or when it is not a
    /// session file).
    pub(crate) view: Option<View>,
    /// What to say, in order: a sentence and whether it is an error.
    pub(crate) notes: Vec<(String, bool)>,
    /// How the session ended, once it has.
    pub(crate) ended: Option<String>,
}

/// Where the follower and the app meet.
struct Shared {
    slot: Mutex<Option<Snapshot>>,
    stop: AtomicBool,
    /// Wakes the inference thread (new calls, or stop).
    wake: Condvar,
    /// The calls to infer from next (latest wins), by session number.
    infer: Mutex<Option<(u64, Arc<Recording>)>>,
}

/// What the driver starts a follower with.
pub struct FollowJob {
    asked: PathBuf,
    generation: u64,
    shared: Arc<Shared>,
    /// The longest line read, in bytes.
    limit: usize,
}

impl std::fmt::Debug for FollowJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FollowJob")
            .field("asked", &self.asked)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// A following of `asked` (a session file or a folder), and the job that
/// starts its threads; `limit` is the longest line read.
pub(crate) fn follow(asked: &Path, generation: u64, limit: usize) -> (Following, FollowJob) {
    let shared = Arc::new(Shared {
        slot: Mutex::new(None),
        stop: AtomicBool::new(false),
        wake: Condvar::new(),
        infer: Mutex::new(None),
    });
    let following = Following {
        generation,
        shared: Arc::clone(&shared),
        file: None,
        counts: Counts::default(),
        ended: None,
        writing: false,
    };
    let job = FollowJob {
        asked: asked.to_path_buf(),
        generation,
        shared,
        limit,
    };
    (following, job)
}

/// Starts the threads of `job`; they tell the app through `tx` and end
/// when its [`Following`] is dropped (or the app is gone).
pub(crate) fn spawn(job: FollowJob, tx: UnboundedSender<Message>) {
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(u64, Inference)>();
    let shared = Arc::clone(&job.shared);
    let _ = std::thread::Builder::new()
        .name("recording-infer".into())
        .spawn(move || infer_loop(&shared, &done_tx));
    let _ = std::thread::Builder::new()
        .name("recording-tail".into())
        .spawn(move || Follower::new(job, tx).run(&done_rx));
}

/// The inference thread: the latest calls in, a draft out, until stopped.
fn infer_loop(shared: &Shared, done: &std::sync::mpsc::Sender<(u64, Inference)>) {
    loop {
        let next = {
            let Ok(mut slot) = shared.infer.lock() else {
                return;
            };
            loop {
                if shared.stop.load(Ordering::SeqCst) {
                    return;
                }
                if let Some(next) = slot.take() {
                    break next;
                }
                slot = match shared.wake.wait_timeout(slot, Duration::from_millis(250)) {
                    Ok((s, _)) => s,
                    Err(_) => return,
                };
            }
        };
        let (session, rec) = next;
        let name = pipeline_name(Path::new(&rec.source));
        // A session whose every call failed has nothing to infer: the view
        // shows its calls as they are.
        if let Ok((draft, mut recs)) =
            pipewright_engine::record::write::infer(vec![(*rec).clone()], &name)
            && let Some(rec) = recs.pop()
            && done.send((session, Inference { draft, rec })).is_err()
        {
            return;
        }
    }
}

/// Whether `path` names a folder of recordings: one that is, or one that
/// does not exist yet and is not named like a session file.
pub(crate) fn is_folder(path: &Path) -> bool {
    path.is_dir() || (!path.exists() && path.extension().is_none_or(|x| x != "jsonl"))
}

/// The pipeline's name for a session file: its server's, as an id.
pub(crate) fn pipeline_name(session: &Path) -> String {
    let stem = session.file_stem().map_or_else(
        || "recorded".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    );
    // `20261129-120304-demo-1` is named after its server: `demo`.
    let words: Vec<&str> = stem.split('-').collect();
    let server = match words.as_slice() {
        [date, time, rest @ .., n]
            if date.len() == 8
                && time.len() == 6
                && !rest.is_empty()
                && n.chars().all(|c| c.is_ascii_digit()) =>
        {
            rest.join("-")
        }
        _ => stem.clone(),
    };
    pipewright_engine::file::loader::id_from(&server)
}

/// One session file followed.
struct Session {
    /// Counts the sessions followed, so a late inference of an earlier
    /// one is not shown over this one.
    number: u64,
    tail: Tail,
    live: Option<Live>,
    stderr: VecDeque<String>,
    ended: Option<String>,
    inferred: Option<Inference>,
    /// Calls taken in when the view was last built.
    shown: usize,
    /// Past [`MAX_CALLS`], or not a session file: nothing more is read.
    stopped: bool,
}

impl Session {
    fn new(path: &Path, limit: usize, number: u64) -> Session {
        Session {
            number,
            tail: Tail::new(path, limit),
            live: None,
            stderr: VecDeque::new(),
            ended: None,
            inferred: None,
            shown: 0,
            stopped: false,
        }
    }
}

/// The tail thread's state.
struct Follower {
    job: FollowJob,
    tx: UnboundedSender<Message>,
    folder: Option<Folder>,
    session: Option<Session>,
    sessions: u64,
    notes: Vec<(String, bool)>,
}

impl Follower {
    fn new(job: FollowJob, tx: UnboundedSender<Message>) -> Follower {
        let folder = is_folder(&job.asked).then(|| Folder::new(&job.asked));
        Follower {
            job,
            tx,
            folder,
            session: None,
            sessions: 0,
            notes: Vec::new(),
        }
    }

    fn stopped(&self) -> bool {
        self.job.shared.stop.load(Ordering::SeqCst) || self.tx.is_closed()
    }

    fn run(mut self, done: &std::sync::mpsc::Receiver<(u64, Inference)>) {
        if self.folder.is_none() {
            self.start(self.job.asked.clone());
        } else {
            self.notes.push((
                format!(
                    "following {}: its newest session, then each new one",
                    self.job.asked.display()
                ),
                false,
            ));
        }
        let mut looks: u32 = 0;
        while !self.stopped() {
            if looks.is_multiple_of(LIST_EVERY)
                && let Some(next) = self.folder.as_mut().and_then(Folder::look)
            {
                self.start(next);
            }
            looks = looks.wrapping_add(1);
            let more = self.read();
            if !self.notes.is_empty() {
                self.publish(false);
            }
            if more {
                continue;
            }
            match done.recv_timeout(POLL) {
                Ok((number, inference)) => {
                    if let Some(s) = self.session.as_mut().filter(|s| s.number == number) {
                        s.inferred = Some(inference);
                        self.publish(true);
                    }
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    /// Follows `path` from now on.
    fn start(&mut self, path: PathBuf) {
        self.sessions += 1;
        if self.folder.is_some() {
            self.notes
                .push((format!("following {}", path.display()), false));
        }
        self.session = Some(Session::new(&path, self.job.limit, self.sessions));
        self.publish(true);
    }

    /// Takes in what the file gained; whether more is waiting.
    fn read(&mut self) -> bool {
        let Some(mut s) = self.session.take() else {
            return false;
        };
        let more = self.read_into(&mut s);
        self.session = Some(s);
        if more.1 {
            self.publish(true);
        } else if more.2 {
            self.publish(false);
        }
        more.0
    }

    /// [`Follower::read`] on session `s`: whether more is waiting, whether
    /// its calls changed, and whether its end came.
    fn read_into(&mut self, s: &mut Session) -> (bool, bool, bool) {
        if s.stopped {
            return (false, false, false);
        }
        let got = match s.tail.look() {
            Ok(g) => g,
            Err(e) => {
                self.notes.push((
                    format!("cannot read {}: {e}", s.tail.path().display()),
                    true,
                ));
                s.stopped = true;
                return (false, false, false);
            }
        };
        let file = s.tail.path().display().to_string();
        if got.restarted {
            // A new session under the same name: what was read is gone.
            self.sessions += 1;
            s.number = self.sessions;
            s.live = None;
            s.stderr.clear();
            s.ended = None;
            s.inferred = None;
            s.shown = 0;
            self.notes.push((
                format!("{file} was replaced: read again from its start"),
                false,
            ));
        }
        let had_end = s.ended.is_some();
        for (n, text) in got.lines {
            let text = match text {
                Ok(t) => t,
                Err(e) => {
                    self.notes.push((format!("{file}:{n}: {e}"), true));
                    continue;
                }
            };
            let Some(live) = s.live.as_mut() else {
                match Header::parse(&text) {
                    Ok(h) => s.live = Some(Live::new(h, &file)),
                    Err(e) => {
                        self.notes.push((format!("{file}:{n}: {e}"), true));
                        s.stopped = true;
                        break;
                    }
                }
                continue;
            };
            match Line::parse(&text) {
                Ok(Some(Line::Stderr { text, .. })) => {
                    if s.stderr.len() == STDERR_KEPT {
                        s.stderr.pop_front();
                    }
                    s.stderr.push_back(text);
                }
                Ok(Some(Line::End { end, .. })) => s.ended = Some(end.reason),
                Ok(Some(line)) => {
                    if let Err(e) = live.push(line, n) {
                        self.notes.push((e.to_string(), true));
                    }
                    if live.calls().len() >= MAX_CALLS {
                        self.notes.push((
                            format!(
                                "the view holds the first {MAX_CALLS} calls; the session goes on being recorded, and W writes it whole"
                            ),
                            false,
                        ));
                        s.stopped = true;
                        break;
                    }
                }
                Ok(None) => {}
                Err(e) => self.notes.push((format!("{file}:{n}: {e}"), true)),
            }
        }
        let calls = s.live.as_ref().map_or(0, |l| l.calls().len());
        let changed = calls != s.shown || got.restarted;
        if changed {
            s.shown = calls;
            if let Some(live) = &s.live {
                let rec = Arc::new(live.recording());
                if let Ok(mut next) = self.job.shared.infer.lock() {
                    *next = Some((s.number, rec));
                }
                self.job.shared.wake.notify_all();
            }
        }
        (got.more, changed, s.ended.is_some() != had_end)
    }

    /// Leaves the view (built again when `rebuild`, else the notes alone)
    /// in the slot, and tells the app if the slot was empty.
    fn publish(&mut self, rebuild: bool) {
        let Some(s) = self.session.as_ref() else {
            if self.notes.is_empty() {
                return;
            }
            let snap = Snapshot {
                file: self.job.asked.clone(),
                view: None,
                notes: std::mem::take(&mut self.notes),
                ended: None,
            };
            self.put(snap, false);
            return;
        };
        let file = s.tail.path().to_path_buf();
        let view = if rebuild {
            s.live.as_ref().and_then(|live| {
                let rec = live.recording();
                let name = pipeline_name(&file);
                let stderr: Vec<String> = s.stderr.iter().cloned().collect();
                view::build(
                    &name,
                    &format!("{name}.yml.cassette.json"),
                    &rec,
                    s.inferred.as_ref(),
                    &stderr,
                )
            })
        } else {
            None
        };
        let snap = Snapshot {
            file,
            view,
            notes: std::mem::take(&mut self.notes),
            ended: s.ended.clone(),
        };
        self.put(snap, !rebuild);
    }

    /// Puts `snap` in the slot; `notes_only`: a view waiting there is kept.
    fn put(&self, mut snap: Snapshot, notes_only: bool) {
        let Ok(mut slot) = self.job.shared.slot.lock() else {
            return;
        };
        let was_empty = slot.is_none();
        if let Some(old) = slot.take() {
            let mut notes = old.notes;
            notes.append(&mut snap.notes);
            snap.notes = notes;
            if notes_only && old.file == snap.file {
                snap.view = snap.view.or(old.view);
            }
        }
        *slot = Some(snap);
        drop(slot);
        if was_empty {
            let _ = self.tx.send(Message::Recording {
                generation: self.job.generation,
            });
        }
    }
}

/// What the driver writes a pipeline with.
#[derive(Debug)]
pub struct WriteJob {
    /// The session file.
    pub(crate) session: PathBuf,
    /// The pipeline file to write (its cassette goes beside it).
    pub(crate) file: PathBuf,
    /// The same, absolute, for its `$schema` modeline (`None` when the
    /// working directory is unknown).
    pub(crate) at: Option<PathBuf>,
    /// The longest line read, in bytes.
    pub(crate) limit: usize,
}

/// What writing a pipeline gave: the file and `new --from`'s summary, or
/// why not.
pub(crate) type Written = Result<(PathBuf, Vec<String>), String>;

/// Writes the pipeline of what `job.session` holds so far, with the
/// engine's `new --from` (read, inferred, proved, saved beside its
/// cassette), on a thread of its own; the outcome comes back as a message.
pub(crate) fn write(job: WriteJob, tx: UnboundedSender<Message>) {
    let _ = std::thread::Builder::new()
        .name("recording-write".into())
        .spawn(move || {
            let result = write_now(&job);
            let _ = tx.send(Message::RecordingWritten { result });
        });
}

fn write_now(job: &WriteJob) -> Written {
    use std::io::{BufReader, Read};
    let shown = job.session.display().to_string();
    let len = whole_lines(&job.session).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let file =
        std::fs::File::open(&job.session).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let reader =
        pipewright_engine::record::session::Reader::new(BufReader::new(file.take(len)), job.limit)
            .map_err(|e| format!("{shown}: {e}"))?;
    let rec = pipewright_engine::record::calls::read(reader, &shown).map_err(|e| e.to_string())?;
    let name = pipewright_engine::file::loader::id_from(&job.file.file_stem().map_or_else(
        || "recorded".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    ));
    let cassette = pipewright_engine::record::write::cassette_path(&job.file);
    let cassette_name = cassette
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the writer: {e}"))?;
    let written = runtime
        .block_on(pipewright_engine::record::write::write(
            vec![rec],
            &name,
            &cassette_name,
            job.at.as_deref(),
        ))
        .map_err(|e| e.to_string())?;
    written.save(&job.file, false)?;
    Ok((job.file.clone(), written.summary()))
}

/// The length of `path` up to the end of its last whole line.
fn whole_lines(path: &Path) -> std::io::Result<u64> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let mut end = f.metadata()?.len();
    let mut buf = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut buf[..n])?;
        if let Some(i) = buf[..n].iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        end = start;
    }
    Ok(0)
}

/// A file for a pipeline of session `session` in `dir` that does not exist
/// yet, nor its cassette: `NAME.yml`, else `NAME-2.yml`…
pub(crate) fn free_file(dir: &Path, session: &Path) -> PathBuf {
    let base = pipeline_name(session);
    let mut n = 1;
    loop {
        let name = if n == 1 {
            format!("{base}.yml")
        } else {
            format!("{base}-{n}.yml")
        };
        let file = dir.join(name);
        if !file.exists() && !pipewright_engine::record::write::cassette_path(&file).exists() {
            return file;
        }
        n += 1;
    }
}
