//! A run session: the state machine that holds a composition's plan, every
//! node's state and recorded output, and takes commands from a driver (the
//! CLI or the workbench): run, step, pause, resume, breakpoints, re-run one
//! node or re-run from a node, skip, cancel, pin, and live plan updates.
//!
//! Every change is reported as an [`Event`] on one bounded channel, so a
//! driver can render from events alone, and a slow driver slows the run
//! down instead of growing memory.

mod commands;
mod dispatch;
mod outcomes;
mod saga;
#[cfg(test)]
mod tests;
mod tools;

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use indexmap::IndexMap;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::cost::pricing::Pricing;
use crate::environment::Environment;
use crate::file::model::{Budget, Composition, Expectation, Kind, Mock, OnError, OutputSpec};
use crate::json::Json;
use crate::lang::jq;
use crate::lang::reference;
use crate::lang::snapshot::{Seen, Snapshot};
use crate::mcp::caller::Caller;
use crate::mcp::human::Human;
use crate::redact::Redactor;
use crate::run::budget;
use crate::run::events::{Event, PauseReason};
use crate::run::exec::{NodeJob, run_node};
use crate::run::trace::{NodeRecord, NodeStatus, RunStatus, RunSummary, Trace};

/// What a driver asks of a session.
#[derive(Debug, Clone)]
pub enum Command {
    /// Start a fresh run of every node (earlier outputs are discarded).
    Run,
    /// Dispatch exactly one ready node, then pause. Starts a run if none is
    /// under way.
    Step,
    /// Dispatch nothing new; calls in flight (and started fan-out
    /// iterations) finish.
    Pause,
    /// Go on after a pause or a breakpoint.
    Resume,
    /// Pause before dispatching this node (toggles).
    ToggleBreakpoint(String),
    /// Call this node again with arguments re-resolved from its parents'
    /// recorded outputs; the parents are not called.
    Rerun(String),
    /// Re-run this node and every descendant, in order.
    RerunFrom(String),
    /// Start a fresh run of this node and its ancestors only (nothing
    /// downstream): how a node with no recorded parents is run on its own.
    RunTo(String),
    /// The `${var.X}` values changed (the file's `vars:`, a case row):
    /// taken with the next plan adoption, and every node that reads a
    /// changed variable (and its descendants) becomes stale.
    SetVars(IndexMap<String, Value>),
    /// Mark a pending node skipped (its children follow the skip rules).
    Skip(String),
    /// Cancel every call in flight (the servers get `notifications/cancelled`)
    /// and end the run as cancelled.
    Cancel,
    /// The file was edited: adopt the new plan, keeping every output that is
    /// still valid and marking changed nodes and their descendants stale.
    ReplacePlan(Arc<Composition>),
    /// Turn a node's recorded output into a `mock:` fixture (see
    /// [`Event::Pinned`]).
    Pin(String),
}

/// What to do when a budget cap fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BudgetMode {
    /// Stop dispatching and cancel what is in flight.
    #[default]
    Stop,
    /// Run to the end; the run still counts as over budget.
    Continue,
    /// Run to the end and only warn.
    Warn,
}

/// How a session runs.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// The pipeline file, as shown in the trace.
    pub file: String,
    /// The case row this session runs, if any.
    pub case: Option<String>,
    /// `${var.X}` values: file `vars:` < case row < `--var`.
    pub vars: IndexMap<String, Value>,
    pub budget: Budget,
    pub on_budget: BudgetMode,
    /// Timeout for calls whose node sets none.
    pub default_timeout: Option<Duration>,
    /// Expectations checked at the end of every run.
    pub expect: Vec<Expectation>,
    /// Capacity of the event channel.
    pub event_capacity: usize,
    /// Prices calls and projects the next one before it is dispatched.
    pub pricing: Arc<Pricing>,
    /// `--max-cost-per-call`: a per-call cap for nodes that set none.
    pub max_cost_per_call_usd: Option<f64>,
    /// Who answers the servers' questions (elicitation, sampling).
    pub human: Human,
    /// What `${env.X}` reads: the driver's environment (the default:
    /// nothing is set; `serve` gives a caller's pipeline only what
    /// `--allow-env` names).
    pub env: Environment,
    /// The lock the file is held to: a tool list read again mid-run
    /// (`list_changed`) is checked against it before the next call.
    pub pinned: Option<Arc<crate::lock::Pinned>>,
}

impl Default for SessionConfig {
    fn default() -> Self {
        Self {
            file: String::new(),
            case: None,
            vars: IndexMap::new(),
            budget: Budget::default(),
            on_budget: BudgetMode::Stop,
            default_timeout: None,
            expect: Vec::new(),
            event_capacity: 1024,
            pricing: Arc::new(Pricing::default()),
            max_cost_per_call_usd: None,
            human: Human::default(),
            env: Environment::default(),
            pinned: None,
        }
    }
}

/// The driver's side of a session. Dropping every handle ends the session
/// once a run in progress has finished.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    tx: mpsc::UnboundedSender<Command>,
}

impl SessionHandle {
    /// Sends a command; false when the session has ended.
    pub fn send(&self, command: Command) -> bool {
        self.tx.send(command).is_ok()
    }
}

/// A started session: its handle, its events, and the task that returns
/// the last trace when the session ends.
pub struct Session {
    pub handle: SessionHandle,
    pub events: mpsc::Receiver<Event>,
    pub task: JoinHandle<Option<Trace>>,
}

/// Starts a session on the current tokio runtime. Nothing runs until a
/// command says so.
pub fn start(
    comp: Arc<Composition>,
    caller: Arc<dyn Caller>,
    cfg: SessionConfig,
    redactor: Redactor,
) -> Session {
    register_env_secrets(&comp, &cfg.env, &redactor);
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::channel(cfg.event_capacity.max(1));
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let (paused_tx, _) = watch::channel(false);
    let n = comp.nodes.len();
    let actor = Actor {
        records: vec![NodeRecord::default(); n],
        made: vec![None; n],
        made_seq: 0,
        gens: vec![0; n],
        ids: ids_of(&comp),
        settled_prefix: 0,
        rank: rank_of(&comp),
        rescan: true,
        candidates: Vec::new(),
        comp,
        in_flight: HashMap::new(),
        mode: Mode::Idle,
        step_pending: false,
        step_pause: false,
        targets: None,
        breakpoints: HashSet::new(),
        released: None,
        paused_before: None,
        stopping: None,
        budget_tripped: None,
        budget_blocked: None,
        started: None,
        paused_since: None,
        idle_from: None,
        paused_total: Duration::ZERO,
        pauses: Vec::new(),
        run_id: String::new(),
        started_at: None,
        iterations: Arc::default(),
        compensations: Vec::new(),
        completed: Vec::new(),
        failed_step: None,
        cost_total: 0.0,
        tokens_total: 0,
        pending_plan: None,
        pending_vars: None,
        run_cancel: CancellationToken::new(),
        paused_tx,
        done_tx,
        events: ev_tx,
        caller,
        vars: Arc::new(cfg.vars.clone()),
        cfg,
        redactor,
        last_trace: None,
        tools: None,
        tools_at_start: None,
    };
    let task = tokio::spawn(actor.main(cmd_rx, done_rx));
    Session {
        handle: SessionHandle { tx: cmd_tx },
        events: ev_rx,
        task,
    }
}

/// Every `${env.X}` a node uses is a secret: its value is masked wherever
/// it would be recorded.
fn register_env_secrets(comp: &Composition, env: &Environment, redactor: &Redactor) {
    for node in &comp.nodes {
        for site in node.refs() {
            if let reference::Root::Env(name) = &site.reference.root
                && let Some(value) = env.var(name)
            {
                redactor.add(value.to_owned());
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No run has started.
    Idle,
    Running,
    Paused,
    /// The last run ended; re-runs may start new ones.
    Finished,
}

#[derive(Debug, Clone, PartialEq)]
enum Stop {
    Failure(String),
    Budget(String),
    Cancel,
}

/// What a node's record was made with. An edited plan makes the node
/// stale only when one of these differs from what it is now, so an edit
/// undone makes it fresh again.
#[derive(Debug, Clone)]
struct Made {
    /// This record among those the session made, in order.
    seq: u64,
    /// The node's definition hash.
    hash: String,
    /// The `${var.X}` values it saw.
    vars: Arc<IndexMap<String, Value>>,
    /// The parents' records it read: each parent's id and its record's
    /// `seq` (0: the parent had none).
    parents: Vec<(String, u64)>,
    /// How the record ended: a stale node gets it back once fresh.
    status: NodeStatus,
    /// The `mock:` result `Pin` gave for this record: the node with that
    /// mock written in is the node that ran.
    pinned: Option<Value>,
}

struct Actor {
    comp: Arc<Composition>,
    records: Vec<NodeRecord>,
    /// Beside `records`: what each was made with (`None`: no record yet).
    made: Vec<Option<Made>>,
    /// How many records the session made.
    made_seq: u64,
    /// Bumped whenever a node is reset, so late results of an older dispatch
    /// are ignored.
    gens: Vec<u64>,
    /// Node index by id.
    ids: HashMap<String, usize>,
    /// How many nodes at the start of `comp.order` are settled for this
    /// run (finished, or not part of it), so `pump` need not look at them
    /// again. Reset whenever nodes go back to pending.
    settled_prefix: usize,
    /// `rank[i]`: node `i`'s position in `comp.order`.
    rank: Vec<usize>,
    /// Look at every unsettled node on the next `pump` (after a command).
    rescan: bool,
    /// Nodes that may have become ready since the last `pump` (children of
    /// nodes that just finished or were skipped), so a long run does not
    /// rescan the whole plan after every call.
    candidates: Vec<usize>,
    in_flight: HashMap<usize, (u64, CancellationToken)>,
    mode: Mode,
    step_pending: bool,
    /// The current pause came from a step: the stepped node's fan-out runs on.
    step_pause: bool,
    /// The nodes this run may dispatch (`None`: all).
    targets: Option<HashSet<usize>>,
    breakpoints: HashSet<String>,
    /// A breakpointed node allowed through once after a resume or step.
    released: Option<usize>,
    paused_before: Option<usize>,
    stopping: Option<Stop>,
    budget_tripped: Option<String>,
    /// The node the budget gate kept from being called, and the sentence
    /// that decided it (nothing was spent on it).
    budget_blocked: Option<(usize, String)>,
    started: Option<Instant>,
    /// When the run last paused, while it is paused.
    paused_since: Option<Instant>,
    /// When the session went to `Paused` with nothing in flight: the pause
    /// began then, before `Paused` was said, though its clock is settled
    /// after.
    idle_from: Option<Instant>,
    /// The time this run spent paused before `paused_since`.
    paused_total: Duration,
    /// The pauses of this run that have ended.
    pauses: Vec<crate::run::trace::PauseSpan>,
    /// The id of the current (or last) run.
    run_id: String,
    /// When the current (or last) run started, as the trace gives it.
    started_at: Option<String>,
    /// Fan-out iterations started in this run (`budget.max_iterations`).
    iterations: Arc<std::sync::atomic::AtomicU64>,
    /// The undo calls made after this run failed.
    compensations: Vec<crate::run::trace::Compensation>,
    completed: Vec<String>,
    failed_step: Option<String>,
    cost_total: f64,
    tokens_total: u64,
    pending_plan: Option<Arc<Composition>>,
    /// New `${var.X}` values, adopted with the next plan.
    pending_vars: Option<IndexMap<String, Value>>,
    run_cancel: CancellationToken,
    paused_tx: watch::Sender<bool>,
    done_tx: mpsc::UnboundedSender<(usize, u64, NodeRecord)>,
    events: mpsc::Sender<Event>,
    caller: Arc<dyn Caller>,
    vars: Arc<IndexMap<String, Value>>,
    cfg: SessionConfig,
    redactor: Redactor,
    last_trace: Option<Trace>,
    /// Every server's tool list, once one changed mid-run and was re-read.
    tools: Option<IndexMap<String, Vec<crate::mcp::ToolInfo>>>,
    /// The tool lists before the first change, to tell a changed schema.
    tools_at_start: Option<IndexMap<String, Vec<crate::mcp::ToolInfo>>>,
}

impl Actor {
    async fn main(
        mut self,
        mut cmd_rx: mpsc::UnboundedReceiver<Command>,
        mut done_rx: mpsc::UnboundedReceiver<(usize, u64, NodeRecord)>,
    ) -> Option<Trace> {
        let mut closed = false;
        loop {
            let deadline = self.deadline();
            tokio::select! {
                cmd = cmd_rx.recv(), if !closed => match cmd {
                    Some(c) => self.command(c).await,
                    None => closed = true,
                },
                Some((idx, generation, rec)) = done_rx.recv() => {
                    self.node_done(idx, generation, rec).await;
                }
                () = sleep_until(deadline), if deadline.is_some() => {
                    let limit = self.cfg.budget.max_duration.unwrap_or_default();
                    self.trip("max_duration_ms", format!("the run took longer than {limit:?}")).await;
                }
            }
            self.pump().await;
            if closed {
                match self.mode {
                    Mode::Running => {}
                    Mode::Paused => {
                        // Nobody can resume any more: end the run.
                        self.stop(Stop::Cancel);
                        self.mode = Mode::Running;
                        self.pump().await;
                    }
                    Mode::Idle | Mode::Finished if self.in_flight.is_empty() => break,
                    _ => {}
                }
            }
        }
        self.last_trace
    }

    fn deadline(&self) -> Option<Instant> {
        let limit = self.cfg.budget.max_duration?;
        if self.budget_tripped.is_some() || !matches!(self.mode, Mode::Running | Mode::Paused) {
            return None;
        }
        // Past the clock's end (a limit from a library caller; the loader
        // refuses such durations): no deadline rather than a panic.
        self.started?.checked_add(limit)
    }

    async fn emit(&self, event: Event) {
        let _ = self.events.send(event).await;
    }

    async fn reject(&self, command: &str, reason: impl Into<String>) {
        self.emit(Event::Rejected {
            command: command.to_owned(),
            reason: reason.into(),
        })
        .await;
    }

    fn index(&self, id: &str) -> Option<usize> {
        self.ids.get(id).copied()
    }
}

fn rank_of(comp: &Composition) -> Vec<usize> {
    let mut rank = vec![0; comp.nodes.len()];
    for (r, &i) in comp.order.iter().enumerate() {
        rank[i] = r;
    }
    rank
}

fn ids_of(comp: &Composition) -> HashMap<String, usize> {
    comp.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.clone(), i))
        .collect()
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d.into()).await,
        None => std::future::pending().await,
    }
}
