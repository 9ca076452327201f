//! A stdio server's process and its transport, with the MCP stdio shutdown:
//! close the server's stdin, give it a short grace to exit, then SIGTERM its
//! process group, the grace again, then SIGKILL. The grace is short by
//! default ([`DEFAULT_SHUTDOWN_GRACE`]) so a server that ignores the end of
//! its input costs a fraction of a second, never seconds; and whatever
//! happens (a panic, a dropped future) the group is killed when the
//! transport is dropped, so no server outlives pipewright.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::{
    RoleClient,
    model::JsonRpcMessage,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::Transport,
};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::Mutex as AsyncMutex;

use super::log::ServerLog;
use super::reply::{self, Read, Replies};
use super::stdout::{LineReader, Stdout, StdoutNotes};

/// How long a stdio server gets to exit after its stdin closes, and again
/// after SIGTERM, unless `--shutdown-grace` says otherwise (the driver puts
/// it in `ConnectOptions::shutdown_grace`).
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_millis(100);

/// The process groups of the stdio servers running now. Allowed to be
/// process-wide: it is a fact of the process (the children alive), not a
/// setting, and a second Ctrl-C must reach every one of them.
static GROUPS: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

fn groups() -> std::sync::MutexGuard<'static, BTreeSet<u32>> {
    GROUPS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Kills the process group of every stdio server still running, at once.
/// For a process about to exit without running its destructors (a second
/// Ctrl-C quits with `std::process::exit`): a server that ignores the end
/// of its stdin would otherwise outlive it.
pub fn kill_all_servers() {
    let running = std::mem::take(&mut *groups());
    for group in running {
        signal_group(Some(group), Signal::Kill);
    }
}

/// The transport to a spawned stdio server, owning the process: its
/// stdout read line by line through the size limit and [`reply::read`],
/// its stdin written one message a line.
pub struct StdioChild {
    io: Io,
    process: Guard,
    grace: Duration,
    notes: StdoutNotes,
}

/// The server's stdout and stdin.
struct Io {
    stdout: LineReader<ChildStdout>,
    /// `None` once closed.
    stdin: Arc<AsyncMutex<Option<ChildStdin>>>,
    replies: Replies,
}

/// Kills the server's process group if it is still around when dropped.
struct Guard {
    child: Option<Child>,
    group: Option<u32>,
}

impl Guard {
    /// The server has exited and been reaped: its group id may be reused.
    fn forget(&mut self) {
        self.child = None;
        if let Some(g) = self.group {
            groups().remove(&g);
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(g) = self.group {
            groups().remove(&g);
        }
        if let Some(mut child) = self.child.take() {
            signal_group(self.group, Signal::Kill);
            // Reaped by tokio's orphan queue once it has exited.
            let _ = child.start_kill();
        }
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

/// Kills the process group `group` at once (a probe's server and whatever
/// it started).
pub(crate) fn kill_group(group: Option<u32>) {
    signal_group(group, Signal::Kill);
}

/// Sends `signal` to the process group `group` (the server and whatever it
/// started: `npx` and the node it runs, a shell and its children).
fn signal_group(group: Option<u32>, signal: Signal) {
    #[cfg(unix)]
    if let Some(pid) = group.and_then(|g| i32::try_from(g).ok()) {
        use nix::sys::signal::{Signal as S, killpg};
        let signal = match signal {
            Signal::Term => S::SIGTERM,
            Signal::Kill => S::SIGKILL,
        };
        let _ = killpg(nix::unistd::Pid::from_raw(pid), signal);
    }
    #[cfg(not(unix))]
    let _ = (group, signal);
}

impl StdioChild {
    /// Wraps a child spawned with piped stdin and stdout, as the leader of
    /// its own process group. Its stdout is read through the message size
    /// limit (`PIPEWRIGHT_MAX_MESSAGE_MB`), what is skipped noted in
    /// [`StdioChild::notes`] and `log`; the answers to `tools/call`s go to
    /// `replies`.
    pub(crate) fn new(
        mut child: Child,
        grace: Duration,
        log: ServerLog,
        replies: Replies,
    ) -> std::io::Result<StdioChild> {
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("the server's stdio was not piped"));
        };
        let group = child.id();
        if let Some(g) = group {
            groups().insert(g);
        }
        let notes = StdoutNotes::default();
        Ok(StdioChild {
            io: Io {
                stdout: LineReader::new(
                    stdout,
                    replies.limits().max_message_bytes(),
                    notes.clone(),
                    log,
                ),
                stdin: Arc::new(AsyncMutex::new(Some(stdin))),
                replies,
            },
            notes,
            process: Guard {
                child: Some(child),
                group,
            },
            grace,
        })
    }

    /// What the server's stdout showed that rmcp does not report.
    pub(crate) fn notes(&self) -> StdoutNotes {
        self.notes.clone()
    }

    /// The server's process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.process.child.as_ref().and_then(Child::id)
    }

    /// Closes stdin, waits `grace` for the exit, then SIGTERM and `grace`
    /// again, then SIGKILL. A server that sends a request once its stdin
    /// is closed gets SIGTERM at once: it waits for an answer that cannot
    /// come. Members of the group left behind by a leader that exited are
    /// killed too.
    async fn shutdown(&mut self) -> std::io::Result<()> {
        let group = self.process.group;
        if self.process.child.is_none() {
            return Ok(());
        }
        self.io.close_stdin().await;
        let Some(child) = self.process.child.as_mut() else {
            return Ok(());
        };
        let mut exited = false;
        let deadline = tokio::time::sleep(self.grace);
        tokio::pin!(deadline);
        let mut reading = true;
        loop {
            tokio::select! {
                _ = child.wait() => {
                    exited = true;
                    break;
                }
                () = &mut deadline => break,
                message = self.io.next_message(), if reading => match message {
                    // A request now can never be answered: the server will
                    // wait on it rather than exit, so the grace is over.
                    Some(JsonRpcMessage::Request(_)) => {
                        tracing::debug!("server sent a request after stdin closed");
                        break;
                    }
                    Some(_) => {}
                    None => reading = false,
                },
            }
        }
        if !exited {
            tracing::debug!("server did not exit within the grace after stdin closed: SIGTERM");
            signal_group(group, Signal::Term);
            exited = tokio::time::timeout(self.grace, child.wait()).await.is_ok();
        }
        signal_group(group, Signal::Kill);
        if !exited {
            tracing::debug!("server did not exit after SIGTERM: SIGKILL");
            child.kill().await?;
        }
        self.process.forget();
        Ok(())
    }
}

impl Io {
    /// The next message for rmcp; `None` once stdout ended (or went over
    /// the limit, which closes the connection).
    async fn next_message(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let line = match self.stdout.next().await {
                Stdout::Line(line) => line,
                Stdout::End | Stdout::TooLarge => return None,
                Stdout::Failed(e) => {
                    tracing::debug!("reading the server's stdout failed: {e}");
                    return None;
                }
            };
            match reply::read(line, &self.replies) {
                Read::Message(message) => return Some(*message),
                Read::Junk(line) => self.stdout.junk(&line),
                Read::Skip => {}
                Read::Refuse(answer) => {
                    let _ = write_message(&self.stdin, &answer).await;
                }
            }
        }
    }

    /// Closes the server's stdin.
    async fn close_stdin(&self) {
        let stdin = self.stdin.lock().await.take();
        if let Some(mut stdin) = stdin {
            let _ = stdin.shutdown().await;
        }
    }
}

/// One message as the line it is written as.
fn encode(message: &TxJsonRpcMessage<RoleClient>) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

/// Writes one message and its line end.
async fn write_message(
    stdin: &AsyncMutex<Option<ChildStdin>>,
    message: &TxJsonRpcMessage<RoleClient>,
) -> std::io::Result<()> {
    write_line(stdin, &encode(message)?).await
}

/// Writes one line.
async fn write_line(stdin: &AsyncMutex<Option<ChildStdin>>, line: &[u8]) -> std::io::Result<()> {
    let mut stdin = stdin.lock().await;
    let Some(stdin) = stdin.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the server's stdin is closed",
        ));
    };
    stdin.write_all(line).await?;
    stdin.flush().await
}

impl Transport<RoleClient> for StdioChild {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.io.replies.sent(&item);
        let line = encode(&item);
        if let Ok(line) = &line {
            self.io.replies.sent_as(&item, line);
        }
        let stdin = Arc::clone(&self.io.stdin);
        async move { write_line(&stdin, &line?).await }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.io.next_message()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shutdown()
    }
}
