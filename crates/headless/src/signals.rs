//! The stop signals of a command: SIGINT (Ctrl-C) and SIGTERM (`kill`, a
//! CI job's timeout, `docker stop`). The first asks the command to stop as
//! a cancel does; a second quits at once. `run`, `step`, `serve` and
//! `worker` all listen through [`Signals`].
//!
//! The handlers are installed once, when [`Signals::listen`] is called, and
//! stay for the whole command: a signal that comes between two waits is
//! kept for the next one rather than lost.

use pipewright_engine::options::exit;

/// A signal that stops a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT: Ctrl-C at the terminal.
    Interrupt,
    /// SIGTERM: asked to stop by another process.
    Terminate,
}

impl Stop {
    /// The exit code a shell gives a process the signal ended: 128 plus
    /// the signal's number (130, 143), which scripts and CI runners read.
    pub fn code(self) -> u8 {
        match self {
            Stop::Interrupt => exit::CANCELLED,
            Stop::Terminate => TERMINATED,
        }
    }

    /// The line `run` prints when the signal comes first.
    pub fn notice(self) -> &'static str {
        match self {
            Stop::Interrupt => "cancelling… (Ctrl-C again to quit at once)",
            Stop::Terminate => "SIGTERM: cancelling… (a second signal quits at once)",
        }
    }
}

/// 128 + SIGTERM (15).
const TERMINATED: u8 = 143;

/// The stop signals of one `run` command, from [`Signals::listen`] on.
pub struct Signals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    first: Option<Stop>,
}

impl Signals {
    /// Starts listening. Where a handler cannot be installed, that signal
    /// keeps its default action (it ends the process).
    pub fn listen() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
                first: None,
            }
        }
        #[cfg(not(unix))]
        Signals { first: None }
    }

    /// The first stop signal that came, if one did.
    pub fn first(&self) -> Option<Stop> {
        self.first
    }

    /// Waits for the first stop signal and returns it. A later one exits
    /// the process at once with its code: whoever sends it means it. The
    /// servers' process groups are killed first (the exit runs no
    /// destructors, and a server that ignores the end of its stdin would
    /// stay).
    pub async fn next(&mut self) -> Stop {
        let stop = self.recv().await;
        if self.first.is_some() {
            pipewright_engine::mcp::kill_all_servers();
            std::process::exit(i32::from(stop.code()));
        }
        self.first = Some(stop);
        stop
    }

    #[cfg(unix)]
    async fn recv(&mut self) -> Stop {
        async fn one(s: Option<&mut tokio::signal::unix::Signal>) -> Option<()> {
            match s {
                Some(s) => s.recv().await,
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            Some(()) = one(self.int.as_mut()) => Stop::Interrupt,
            Some(()) = one(self.term.as_mut()) => Stop::Terminate,
            else => std::future::pending().await,
        }
    }

    #[cfg(not(unix))]
    async fn recv(&mut self) -> Stop {
        match tokio::signal::ctrl_c().await {
            Ok(()) => Stop::Interrupt,
            Err(_) => std::future::pending().await,
        }
    }
}
