//! `pipewright run --step` and `--break NODE`: drive a session from the
//! terminal. After each node (with `--step`) or before a breakpointed node,
//! the run pauses and reads one line from stdin:
//!
//! - Enter: go on (the next node with `--step`, else to the next breakpoint);
//! - `r`: re-run the node that finished last (its parents are not called);
//! - `s`: skip the next node, then ask again;
//! - `q`: cancel the run.
//!
//! When stdin ends, the run goes on without asking again.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};

use super::progress::Progress;
use super::run::watch::Watch;
use pipewright_engine::file::model::{Composition, Kind};
use pipewright_engine::run::events::{Event, PauseReason};
use pipewright_engine::run::session::{Command, Session};
use pipewright_engine::run::trace::{NodeStatus, Trace};
use pipewright_headless::Signals;

/// How often the live progress line is redrawn.
const TICK: Duration = Duration::from_millis(100);

/// What the user asked for on the command line.
#[derive(Debug, Clone, Default)]
pub struct Stepping {
    /// Pause after every node.
    pub step: bool,
    /// Pause before these nodes.
    pub breaks: Vec<String>,
}

impl Stepping {
    /// Whether the run is interactive at all.
    pub fn active(&self) -> bool {
        self.step || !self.breaks.is_empty()
    }
}

/// The lines the user types (stdin), read one prompt at a time.
pub struct Input {
    lines: Lines<BufReader<Stdin>>,
    ended: bool,
}

impl Input {
    pub fn stdin() -> Input {
        Input {
            lines: BufReader::new(tokio::io::stdin()).lines(),
            ended: false,
        }
    }

    /// The next line, trimmed; `None` once stdin has ended.
    async fn line(&mut self) -> Option<String> {
        if self.ended {
            return None;
        }
        match self.lines.next_line().await {
            Ok(Some(l)) => Some(l.trim().to_owned()),
            _ => {
                self.ended = true;
                None
            }
        }
    }
}

/// Where a prompt stands: the node that finished last and the node that
/// would go next.
struct Stop {
    last: Option<String>,
    next: Option<String>,
}

/// The driver's view of the run, kept from events.
struct View<'a> {
    comp: &'a Composition,
    status: Vec<NodeStatus>,
    paused: bool,
    last_finished: Option<String>,
}

impl View<'_> {
    fn set(&mut self, id: &str, status: NodeStatus) {
        if let Some(i) = self.comp.index_of(id) {
            self.status[i] = status;
        }
    }

    /// The first pending node whose parents have all finished: the one the
    /// session dispatches next.
    fn next_ready(&self) -> Option<String> {
        self.comp.order.iter().copied().find_map(|i| {
            if self.status[i] != NodeStatus::Pending {
                return None;
            }
            let parents = &self.comp.parents[i];
            let ready = parents.iter().all(|&p| self.status[p].is_terminal());
            let doomed = self.comp.kind == Kind::Dag
                && parents.iter().any(|&p| {
                    matches!(self.status[p], NodeStatus::Skipped | NodeStatus::Cancelled)
                });
            (ready && !doomed).then(|| self.comp.nodes[i].id.clone())
        })
    }

    fn any_pending(&self) -> bool {
        self.status.contains(&NodeStatus::Pending)
    }
}

/// Drives one session interactively to the end of its run; returns the
/// trace (`None` if the session ended without one).
pub(crate) async fn drive(
    comp: &Composition,
    mut s: Session,
    opts: &Stepping,
    input: &mut Input,
    progress: &mut Progress,
    watch: &mut Watch,
) -> Option<Trace> {
    for b in &opts.breaks {
        if comp.index_of(b).is_some() {
            s.handle.send(Command::ToggleBreakpoint(b.clone()));
        }
    }
    let mut stepping = opts.step;
    s.handle.send(if stepping {
        Command::Step
    } else {
        Command::Run
    });
    let mut view = View {
        comp,
        status: vec![NodeStatus::Pending; comp.nodes.len()],
        paused: false,
        last_finished: None,
    };
    // A node re-run or skipped from a prompt: ask again once it is done.
    let mut waiting_on: Option<String> = None;
    let mut ticker = tokio::time::interval(TICK);
    loop {
        let ev = tokio::select! {
            ev = s.events.recv() => ev,
            _ = ticker.tick(), if progress.is_live() => {
                progress.tick();
                continue;
            }
            stop = watch.signals.next() => {
                progress.println(&format!("\n{}", stop.notice()));
                s.handle.send(Command::Cancel);
                continue;
            }
        };
        let ev = ev?;
        watch.saw(&ev);
        progress.event(&ev);
        let mut ask: Option<Option<String>> = None;
        match &ev {
            Event::RunFinished { trace, .. } => {
                progress.clear();
                return Some((**trace).clone());
            }
            Event::NodeStatus { id, status, .. } => {
                view.set(id, *status);
                if *status == NodeStatus::Skipped && waiting_on.as_deref() == Some(id) {
                    waiting_on = None;
                    ask = Some(None);
                }
            }
            Event::NodeFinished { id, record } => {
                view.set(id, record.status);
                view.last_finished = Some(id.clone());
                let asked_for = waiting_on.as_deref() == Some(id);
                if asked_for {
                    waiting_on = None;
                }
                if view.paused && (stepping || asked_for) {
                    ask = Some(None);
                }
            }
            Event::Paused { reason, before } => {
                view.paused = true;
                if *reason == PauseReason::Breakpoint {
                    ask = Some(before.clone());
                }
            }
            Event::Resumed => view.paused = false,
            Event::Rejected { .. } if waiting_on.is_some() => {
                waiting_on = None;
                ask = Some(None);
            }
            _ => {}
        }
        let Some(before) = ask else {
            continue;
        };
        let stop = Stop {
            last: view.last_finished.clone(),
            next: before.or_else(|| view.next_ready()),
        };
        // After the last node too: it may still be re-run before the run ends.
        progress.clear();
        match prompt(&stop, input, progress, &mut watch.signals).await {
            Answer::Continue => {
                s.handle.send(if stepping && view.any_pending() {
                    Command::Step
                } else {
                    Command::Resume
                });
            }
            Answer::Rerun(id) => {
                waiting_on = Some(id.clone());
                s.handle.send(Command::Rerun(id));
            }
            Answer::Skip(id) => {
                waiting_on = Some(id.clone());
                s.handle.send(Command::Skip(id));
            }
            Answer::Quit => {
                s.handle.send(Command::Cancel);
            }
            Answer::Ended => {
                stepping = false;
                s.handle.send(Command::Resume);
            }
        }
    }
}

enum Answer {
    Continue,
    Rerun(String),
    Skip(String),
    Quit,
    /// stdin ended: run on without asking.
    Ended,
}

/// Asks until the answer makes sense here.
async fn prompt(
    stop: &Stop,
    input: &mut Input,
    progress: &mut Progress,
    signals: &mut Signals,
) -> Answer {
    loop {
        let mut choices = vec!["Enter continue".to_owned()];
        if let Some(last) = &stop.last {
            choices.push(format!("r re-run {last}"));
        }
        if let Some(next) = &stop.next {
            choices.push(format!("s skip {next}"));
        }
        choices.push("q cancel".to_owned());
        let at = match (&stop.last, &stop.next) {
            (_, Some(next)) => format!("next: {next}"),
            (Some(last), None) => format!("after {last}"),
            (None, None) => "paused".to_owned(),
        };
        progress.println(&format!("  ⏸ {at} · {}", choices.join(" · ")));
        let line = tokio::select! {
            line = input.line() => line,
            _ = signals.next() => return Answer::Quit,
        };
        let Some(line) = line else {
            return Answer::Ended;
        };
        match line.as_str() {
            "" | "c" => return Answer::Continue,
            "r" => match &stop.last {
                Some(id) => return Answer::Rerun(id.clone()),
                None => progress.println("  no node has finished yet"),
            },
            "s" => match &stop.next {
                Some(id) => return Answer::Skip(id.clone()),
                None => progress.println("  no node is next"),
            },
            "q" => return Answer::Quit,
            other => progress.println(&format!("  `{other}`? answer with Enter, r, s or q")),
        }
    }
}
