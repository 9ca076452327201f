//! A stdio server's process and its transport, with the MCP stdio shutdown:
//! close the server's stdin, give it a short grace to exit, then SIGTERM its
//! process group, the grace again, then SIGKILL. The grace is short by
//! default ([`DEFAULT_SHUTDOWN_GRACE`]) so a server that ignores the end of
//! its input costs a fraction of a second, never seconds; and whatever
//! happens (a panic, a dropped future) the group is killed when the
//! transport is dropped, so no server outlives pipewright.

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use rmcp::{
    RoleClient,
    model::JsonRpcMessage,
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{Transport, async_rw::AsyncRwTransport},
};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::log::ServerLog;
use super::stdout::{LimitedStdout, StdoutNotes, max_message_bytes};

/// How long a stdio server gets to exit after its stdin closes, and again
/// after SIGTERM, unless `--shutdown-grace` says otherwise.
pub const DEFAULT_SHUTDOWN_GRACE: Duration = Duration::from_millis(100);

static SHUTDOWN_GRACE: OnceLock<Duration> = OnceLock::new();

/// Sets the grace for the whole process (the `--shutdown-grace` flag);
/// only the first call counts.
pub fn set_shutdown_grace(grace: Duration) {
    let _ = SHUTDOWN_GRACE.set(grace);
}

/// The grace new connections get: `--shutdown-grace`, else the default.
pub fn shutdown_grace() -> Duration {
    SHUTDOWN_GRACE
        .get()
        .copied()
        .unwrap_or(DEFAULT_SHUTDOWN_GRACE)
}

/// The process groups of the stdio servers running now.
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

/// The transport to a spawned stdio server, owning the process.
pub struct StdioChild {
    transport: AsyncRwTransport<RoleClient, LimitedStdout<ChildStdout>, ChildStdin>,
    process: Guard,
    grace: Duration,
    notes: StdoutNotes,
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
    /// limit (`PIPEWRIGHT_MAX_MESSAGE_MB`), what rmcp skips noted in
    /// [`StdioChild::notes`] and `log`; rmcp's own cap is lifted, as it
    /// would drop an oversized answer without a word and leave its call
    /// waiting.
    pub(crate) fn new(
        mut child: Child,
        grace: Duration,
        log: ServerLog,
    ) -> std::io::Result<StdioChild> {
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("the server's stdio was not piped"));
        };
        let group = child.id();
        if let Some(g) = group {
            groups().insert(g);
        }
        let notes = StdoutNotes::default();
        let stdout = LimitedStdout::new(stdout, max_message_bytes(), notes.clone(), log);
        Ok(StdioChild {
            notes,
            transport: AsyncRwTransport::new(stdout, stdin).with_max_line_length(usize::MAX),
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
        let Some(child) = self.process.child.as_mut() else {
            return Ok(());
        };
        let _ = self.transport.close().await;
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
                message = self.transport.receive(), if reading => match message {
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

impl Transport<RoleClient> for StdioChild {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shutdown()
    }
}
