//! `pipewright record -- COMMAND ARGS…`: the server started in its own
//! process group and every byte passed both ways unchanged and at once.
//!
//! Three threads pump bytes with blocking reads and writes — the client's
//! stdin to the server's, the server's stdout to the client's, its stderr
//! to ours — and each hands a copy of a chunk to the writer
//! ([`crate::sink`]) over a bounded channel, then passes the chunk on: the
//! byte path never parses, never touches the file, and waits only if the
//! writer is a channel behind; and the copy of a request is queued before
//! the server can have answered it, so the file keeps the order things
//! happened in. A fourth thread waits for the server to exit. The task
//! here follows what happens: the client closing stdin (the server's
//! stdin is closed; after the grace SIGTERM, the grace again, SIGKILL, as
//! `engine::mcp` shuts its own stdio servers down), the client going away
//! (its stdout breaks: the same), SIGINT and SIGTERM (forwarded to the
//! server's group, then the same escalation), and the server's exit,
//! whose status becomes the recorder's (128 + the signal when killed).
//! Whatever ends it, the server's group is killed before the recorder
//! returns, so nothing it started is left behind.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio as Piped};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use pipewright_engine::record::session::{End, Header, Server, Side, VERSION};
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};

use crate::frame::Framing;
use crate::secrets::Secrets;
use crate::sink::{self, Event, Kind, Report, Sink, Written};

/// The size of one read on a pipe.
const CHUNK: usize = 64 * 1024;
/// How long the server's stdout and stderr get to reach their end once
/// it has exited and its group is killed.
const DRAIN: Duration = Duration::from_secs(2);

/// The stream numbers of a stdio session.
const FROM_CLIENT: u64 = 0;
const FROM_SERVER: u64 = 1;
const STDERR: u64 = 2;

/// A stdio recording: what to start and where the session goes.
pub struct Stdio {
    pub command: String,
    pub args: Vec<String>,
    /// The server's name in the session (else one made from the command).
    pub name: Option<String>,
    /// The folder of the session file.
    pub out: PathBuf,
    pub secrets: Secrets,
    /// The largest message kept, in bytes.
    pub limit: usize,
    /// How long the server gets to exit at each step of its shutdown.
    pub grace: Duration,
    pub report: Report,
    /// Whether a line is reported per call.
    pub lines: bool,
}

/// The client's end: where its messages come from and its answers and
/// the server's stderr go. [`ClientIo::process`] is this process's own
/// stdin, stdout and stderr.
pub struct ClientIo {
    pub input: Box<dyn Read + Send>,
    pub output: Box<dyn Write + Send>,
    pub errors: Box<dyn Write + Send>,
}

impl ClientIo {
    /// This process's stdin, stdout and stderr, read and written without
    /// buffers (each a duplicate of the descriptor).
    pub fn process() -> std::io::Result<ClientIo> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            let dup = |fd: std::os::fd::BorrowedFd<'_>| -> std::io::Result<std::fs::File> {
                Ok(std::fs::File::from(fd.try_clone_to_owned()?))
            };
            Ok(ClientIo {
                input: Box::new(dup(std::io::stdin().as_fd())?),
                output: Box::new(dup(std::io::stdout().as_fd())?),
                errors: Box::new(dup(std::io::stderr().as_fd())?),
            })
        }
        #[cfg(not(unix))]
        Ok(ClientIo {
            input: Box::new(std::io::stdin()),
            output: Box::new(std::io::stdout()),
            errors: Box::new(std::io::stderr()),
        })
    }
}

/// How a recording ended.
#[derive(Debug)]
pub struct Exit {
    /// The recorder's exit status: the server's, or 128 + the signal
    /// that ended it.
    pub code: u8,
    pub written: Written,
}

/// What the pumps and the waiter tell the task.
#[derive(Debug)]
enum Happened {
    /// The client's stdin ended.
    ClientClosed,
    /// Writing to the client failed: it is gone.
    ClientGone,
    StdoutClosed,
    StderrClosed,
    Exited(std::io::Result<ExitStatus>),
}

/// The next step of a shutdown, and when.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Term,
    Kill,
}

impl Stdio {
    /// Starts the server and passes bytes until it exits (or is stopped);
    /// an error is a sentence: the server could not be started, or the
    /// session file's folder cannot be made.
    pub async fn run(self, io: ClientIo) -> Result<Exit, String> {
        // Listening first: a signal that comes as the server starts is the
        // server's to get, not the recorder's death.
        let mut signals = Signals::listen();
        std::fs::create_dir_all(&self.out).map_err(|e| {
            format!(
                "cannot make the recordings folder `{}`: {e}",
                self.out.display()
            )
        })?;
        let name = self
            .name
            .clone()
            .unwrap_or_else(|| name_of(&self.command, &self.args));
        let mut child = spawn(&self.command, &self.args)?;
        let group = Group(Some(child.id()));
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the server's stdio was not piped".into());
        };
        let (sink, finished) = sink::start(sink::Config {
            dir: self.out.clone(),
            redactor: self.secrets.redactor().clone(),
            limit: self.limit,
            report: self.report.clone(),
            lines: self.lines,
        })
        .map_err(|e| format!("cannot start the recorder's writer: {e}"))?;
        sink.send(Event::Open {
            file: 0,
            header: Box::new(Header {
                version: VERSION,
                started: crate::now_rfc3339(),
                recorder: crate::RECORDER.to_owned(),
                server: Server::Stdio {
                    name,
                    command: self.command.clone(),
                    args: self.args.clone(),
                },
                session_id: None,
            }),
        })
        .await;

        let (tell, mut happened) = unbounded_channel();
        let ClientIo {
            input,
            output,
            errors,
        } = io;
        let threads = [
            thread("stdin", {
                let (sink, tell) = (sink.clone(), tell.clone());
                move || pump_in(input, stdin, &sink, &tell)
            }),
            thread("stdout", {
                let (sink, tell) = (sink.clone(), tell.clone());
                move || pump_out(stdout, output, &sink, &tell)
            }),
            thread("stderr", {
                let (sink, tell) = (sink.clone(), tell.clone());
                move || pump_err(stderr, errors, &sink, &tell)
            }),
            thread("wait", {
                let tell = tell.clone();
                move || {
                    let mut child = child;
                    let _ = tell.send(Happened::Exited(child.wait()));
                }
            }),
        ];
        if let Some(e) = threads.into_iter().find_map(Result::err) {
            group.kill();
            return Err(format!("cannot start the recorder's threads: {e}"));
        }
        drop(tell);

        let mut reason: Option<String> = None;
        let mut next: Option<(tokio::time::Instant, Step)> = None;
        let mut open = (true, true);
        let status = loop {
            let deadline = next.map(|(at, _)| at);
            tokio::select! {
                h = happened.recv() => match h {
                    Some(Happened::Exited(status)) => break status,
                    Some(Happened::ClientClosed) => {
                        reason.get_or_insert_with(|| "the client closed its end (stdin)".into());
                        next.get_or_insert((tokio::time::Instant::now() + self.grace, Step::Term));
                    }
                    Some(Happened::ClientGone) => {
                        reason.get_or_insert_with(|| "the client went away (its stdout closed)".into());
                        next.get_or_insert((tokio::time::Instant::now() + self.grace, Step::Term));
                    }
                    Some(Happened::StdoutClosed) => open.0 = false,
                    Some(Happened::StderrClosed) => open.1 = false,
                    None => break Err(std::io::Error::other("the server's waiter stopped")),
                },
                signal = signals.next() => {
                    let Some(signal) = signal else { continue };
                    if reason.as_deref() == Some(signal.name()) {
                        // The same signal twice: no more waiting.
                        group.kill();
                    } else {
                        reason = Some(signal.name().to_owned());
                        group.signal(signal);
                        next = Some((tokio::time::Instant::now() + self.grace, Step::Term));
                    }
                }
                () = sleep_until(deadline) => match next.take() {
                    Some((_, Step::Term)) => {
                        group.term();
                        next = Some((tokio::time::Instant::now() + self.grace, Step::Kill));
                    }
                    Some((_, Step::Kill)) => group.kill(),
                    None => {}
                },
            }
        };
        // The server is gone: so is whatever it left in its group, and its
        // pipes reach their end once every holder has exited.
        group.kill();
        let drain = tokio::time::Instant::now() + DRAIN;
        while open != (false, false) {
            tokio::select! {
                h = happened.recv() => match h {
                    Some(Happened::StdoutClosed) => open.0 = false,
                    Some(Happened::StderrClosed) => open.1 = false,
                    Some(_) => {}
                    None => break,
                },
                () = tokio::time::sleep_until(drain) => break,
            }
        }
        let (code, exit_code, signal) = match &status {
            Ok(s) => code_of(*s),
            Err(_) => (1, None, None),
        };
        sink.send(Event::End {
            file: 0,
            end: End {
                reason: reason.unwrap_or_else(|| "the server exited".into()),
                exit_code,
                signal,
            },
        })
        .await;
        sink.send(Event::Finish {
            reason: "the recorder stopped".into(),
        })
        .await;
        let written = finished.wait().await;
        Ok(Exit { code, written })
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn thread(name: &str, f: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(format!("pipewright-record-{name}"))
        .spawn(f)
        .map(drop)
}

/// The recorder's status for the server's: its code, or 128 + the signal
/// that ended it; and the code and signal as the session keeps them.
fn code_of(status: ExitStatus) -> (u8, Option<i32>, Option<i32>) {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return (u8::try_from(128 + sig).unwrap_or(u8::MAX), None, Some(sig));
        }
    }
    match status.code() {
        Some(c) => ((c & 0xff) as u8, Some(c), None),
        None => (1, None, None),
    }
}

/// Starts the server in its own process group, its stdio piped and the
/// rest of our environment inherited.
fn spawn(command: &str, args: &[String]) -> Result<std::process::Child, String> {
    if command.trim().is_empty() {
        return Err("no server command given: `pipewright record -- COMMAND ARGS…`".into());
    }
    let mut cmd = std::process::Command::new(command);
    cmd.args(args)
        .stdin(Piped::piped())
        .stdout(Piped::piped())
        .stderr(Piped::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound if command.contains(std::path::MAIN_SEPARATOR) => {
            format!("cannot start the server: `{command}` does not exist")
        }
        std::io::ErrorKind::NotFound => {
            format!("cannot start the server: `{command}` not found on PATH")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot start the server: `{command}` is not executable (permission denied)")
        }
        _ => format!("cannot start the server `{command}`: {e}"),
    })
}

/// The server's name when none is given: the command's, or for a
/// launcher (`npx`, `uvx`, `node`, `python` …) the package or script it
/// runs.
fn name_of(command: &str, args: &[String]) -> String {
    const LAUNCHERS: &[&str] = &[
        "npx",
        "uvx",
        "uv",
        "node",
        "python",
        "python3",
        "bunx",
        "bun",
        "deno",
        "pipx",
        "docker",
        "podman",
        "sh",
        "bash",
        "pnpm",
        "yarn",
        "pipewright",
    ];
    let base = |s: &str| {
        std::path::Path::new(s)
            .file_stem()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let cmd = base(command);
    let inline = matches!(cmd.as_str(), "sh" | "bash") && args.first().is_some_and(|a| a == "-c");
    if !LAUNCHERS.contains(&cmd.as_str()) || inline {
        return cmd;
    }
    let skip = ["run", "exec", "tool", "-y", "--yes", "-m", "-c"];
    match args
        .iter()
        .find(|a| !a.starts_with('-') && !skip.contains(&a.as_str()))
    {
        Some(a) => {
            // A script: named by the first part of its path that says
            // more than `index` or `dist` (`…/server-everything/dist/index.js`).
            let script = [".js", ".mjs", ".cjs", ".ts", ".py"]
                .iter()
                .any(|ext| a.ends_with(ext));
            if script || a.starts_with('.') || std::path::Path::new(a).is_absolute() {
                const VAGUE: &[&str] = &[
                    "index", "main", "cli", "server", "dist", "build", "lib", "src", "bin", "out",
                ];
                let path = std::path::Path::new(a);
                let mut parts = path.iter().rev().map(|p| base(&p.to_string_lossy()));
                if let Some(found) = parts.find(|p| !p.is_empty() && !VAGUE.contains(&p.as_str())) {
                    return found;
                }
            }
            // `@scope/name@1.2.3` → `name`
            let a = a.rsplit('/').next().unwrap_or(a);
            let a = a.split('@').find(|p| !p.is_empty()).unwrap_or(a);
            let stem = base(a);
            if stem.is_empty() { cmd } else { stem }
        }
        None => cmd,
    }
}

/// The client's stdin to the server's: at its end, the server's stdin is
/// closed.
fn pump_in(
    mut from: Box<dyn Read + Send>,
    mut to: std::process::ChildStdin,
    sink: &Sink,
    tell: &UnboundedSender<Happened>,
) {
    let mut buf = vec![0u8; CHUNK];
    let mut server_open = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let at = Instant::now();
        sink.send_blocking(chunk(FROM_CLIENT, Side::Client, at, &buf[..n]));
        // A server that has closed its stdin (or exited) takes no more;
        // the client's bytes are still kept.
        if server_open && to.write_all(&buf[..n]).is_err() {
            server_open = false;
        }
    }
    drop(to);
    sink.send_blocking(Event::Done {
        stream: FROM_CLIENT,
        at: Instant::now(),
    });
    let _ = tell.send(Happened::ClientClosed);
}

/// The server's stdout to the client's; a client that is gone is told
/// once, and the server's output is still read (and kept) to its end.
fn pump_out(
    mut from: std::process::ChildStdout,
    mut to: Box<dyn Write + Send>,
    sink: &Sink,
    tell: &UnboundedSender<Happened>,
) {
    let mut buf = vec![0u8; CHUNK];
    let mut client_open = true;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let at = Instant::now();
        sink.send_blocking(chunk(FROM_SERVER, Side::Server, at, &buf[..n]));
        if client_open && to.write_all(&buf[..n]).and_then(|()| to.flush()).is_err() {
            client_open = false;
            let _ = tell.send(Happened::ClientGone);
        }
    }
    sink.send_blocking(Event::Done {
        stream: FROM_SERVER,
        at: Instant::now(),
    });
    let _ = tell.send(Happened::StdoutClosed);
}

/// The server's stderr to ours, and kept line by line.
fn pump_err(
    mut from: std::process::ChildStderr,
    mut to: Box<dyn Write + Send>,
    sink: &Sink,
    tell: &UnboundedSender<Happened>,
) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let at = Instant::now();
        sink.send_blocking(Event::Chunk {
            file: 0,
            stream: STDERR,
            kind: Kind::Stderr,
            at,
            bytes: Bytes::copy_from_slice(&buf[..n]),
        });
        let _ = to.write_all(&buf[..n]).and_then(|()| to.flush());
    }
    sink.send_blocking(Event::Done {
        stream: STDERR,
        at: Instant::now(),
    });
    let _ = tell.send(Happened::StderrClosed);
}

fn chunk(stream: u64, from: Side, at: Instant, bytes: &[u8]) -> Event {
    Event::Chunk {
        file: 0,
        stream,
        kind: Kind::Messages {
            from,
            via: None,
            framing: Framing::Lines,
            resumed: false,
        },
        at,
        bytes: Bytes::copy_from_slice(bytes),
    }
}

/// The server's process group (its id is the server's pid).
struct Group(Option<u32>);

/// A signal the recorder passes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forwarded {
    Interrupt,
    Terminate,
}

impl Forwarded {
    fn name(self) -> &'static str {
        match self {
            Forwarded::Interrupt => "SIGINT",
            Forwarded::Terminate => "SIGTERM",
        }
    }
}

impl Group {
    fn send(&self, signal: Option<Forwarded>, kill: bool) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|g| i32::try_from(g).ok()) {
            use nix::sys::signal::{Signal, killpg};
            let s = match (kill, signal) {
                (true, _) => Signal::SIGKILL,
                (false, Some(Forwarded::Interrupt)) => Signal::SIGINT,
                (false, _) => Signal::SIGTERM,
            };
            let _ = killpg(nix::unistd::Pid::from_raw(pid), s);
        }
        #[cfg(not(unix))]
        let _ = (signal, kill);
    }

    fn signal(&self, signal: Forwarded) {
        self.send(Some(signal), false);
    }

    fn term(&self) {
        self.send(Some(Forwarded::Terminate), false);
    }

    fn kill(&self) {
        self.send(None, true);
    }
}

impl Drop for Group {
    /// Whatever way the recorder leaves (an error, a panic), the group
    /// goes with it.
    fn drop(&mut self) {
        self.kill();
    }
}

/// SIGINT and SIGTERM, as they come.
struct Signals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn listen() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The next signal (never, where none can be listened to).
    async fn next(&mut self) -> Option<Forwarded> {
        #[cfg(unix)]
        {
            async fn one(s: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
                match s {
                    Some(s) => s.recv().await,
                    None => std::future::pending().await,
                }
            }
            tokio::select! {
                s = one(&mut self.int) => s.map(|()| Forwarded::Interrupt),
                s = one(&mut self.term) => s.map(|()| Forwarded::Terminate),
            }
        }
        #[cfg(not(unix))]
        std::future::pending().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launcher_is_named_by_what_it_runs() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(name_of("/usr/bin/my-server", &[]), "my-server");
        assert_eq!(
            name_of(
                "npx",
                &args(&["-y", "@modelcontextprotocol/server-everything@1.2"])
            ),
            "server-everything"
        );
        assert_eq!(
            name_of("python3", &args(&["tests/hitl_server.py"])),
            "hitl_server"
        );
        assert_eq!(name_of("uvx", &args(&["mcp-server-git"])), "mcp-server-git");
        assert_eq!(
            name_of("pipewright", &args(&["demo-server"])),
            "demo-server"
        );
    }
}
