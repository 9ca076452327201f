//! A run session: the state machine that holds a composition's plan, every
//! node's state and recorded output, and takes commands from a driver (the
//! CLI or the workbench): run, step, pause, resume, breakpoints, re-run one
//! node or re-run from a node, skip, cancel, pin, and live plan updates.
//!
//! Every change is reported as an [`Event`] on one bounded channel, so a
//! driver can render from events alone, and a slow driver slows the run
//! down instead of growing memory.

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

use crate::engine::cost::pricing::Pricing;
use crate::engine::file::model::{
    Budget, Composition, Expectation, Kind, Mock, OnError, OutputSpec,
};
use crate::engine::lang::jq;
use crate::engine::lang::reference;
use crate::engine::lang::snapshot::{Seen, Snapshot};
use crate::engine::mcp::caller::Caller;
use crate::engine::redact::Redactor;
use crate::engine::run::budget;
use crate::engine::run::events::{Event, PauseReason};
use crate::engine::run::exec::{NodeJob, run_node};
use crate::engine::run::trace::{NodeRecord, NodeStatus, RunStatus, RunSummary, Trace};

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
    register_env_secrets(&comp, &redactor);
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::channel(cfg.event_capacity.max(1));
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let (paused_tx, _) = watch::channel(false);
    let n = comp.nodes.len();
    let actor = Actor {
        records: vec![NodeRecord::default(); n],
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
        started: None,
        completed: Vec::new(),
        failed_step: None,
        cost_total: 0.0,
        tokens_total: 0,
        pending_plan: None,
        run_cancel: CancellationToken::new(),
        paused_tx,
        done_tx,
        events: ev_tx,
        caller,
        vars: Arc::new(cfg.vars.clone()),
        cfg,
        redactor,
        last_trace: None,
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
fn register_env_secrets(comp: &Composition, redactor: &Redactor) {
    for node in &comp.nodes {
        for site in node.refs() {
            if let reference::Root::Env(name) = &site.reference.root
                && let Ok(value) = std::env::var(name)
            {
                redactor.add(value);
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

struct Actor {
    comp: Arc<Composition>,
    records: Vec<NodeRecord>,
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
    started: Option<Instant>,
    completed: Vec<String>,
    failed_step: Option<String>,
    cost_total: f64,
    tokens_total: u64,
    pending_plan: Option<Arc<Composition>>,
    run_cancel: CancellationToken,
    paused_tx: watch::Sender<bool>,
    done_tx: mpsc::UnboundedSender<(usize, u64, NodeRecord)>,
    events: mpsc::Sender<Event>,
    caller: Arc<dyn Caller>,
    vars: Arc<IndexMap<String, Value>>,
    cfg: SessionConfig,
    redactor: Redactor,
    last_trace: Option<Trace>,
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
                    self.trip("max_duration", format!("the run took longer than {limit:?}")).await;
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
        Some(self.started? + limit)
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

    async fn command(&mut self, c: Command) {
        // Commands are rare and may change anything: look at every node.
        self.rescan = true;
        match c {
            Command::Run => self.begin(None, false).await,
            Command::Step => match self.mode {
                Mode::Idle | Mode::Finished => self.begin(None, true).await,
                Mode::Paused => {
                    self.step_pending = true;
                    self.released = self.paused_before.take();
                    self.set_mode(Mode::Running);
                    self.emit(Event::Resumed).await;
                }
                Mode::Running => self.step_pending = true,
            },
            Command::Pause => {
                if self.mode == Mode::Running {
                    self.step_pause = false;
                    self.set_mode(Mode::Paused);
                    self.emit(Event::Paused {
                        reason: PauseReason::User,
                        before: None,
                    })
                    .await;
                } else {
                    self.reject("pause", "no run is in progress").await;
                }
            }
            Command::Resume => {
                if self.mode == Mode::Paused {
                    self.released = self.paused_before.take();
                    self.set_mode(Mode::Running);
                    self.emit(Event::Resumed).await;
                } else {
                    self.reject("resume", "the session is not paused").await;
                }
            }
            Command::ToggleBreakpoint(id) => {
                if self.index(&id).is_none() {
                    return self
                        .reject("breakpoint", format!("there is no node `{id}`"))
                        .await;
                }
                let on = !self.breakpoints.remove(&id);
                if on {
                    self.breakpoints.insert(id.clone());
                }
                self.emit(Event::Breakpoint { id, on }).await;
            }
            Command::Rerun(id) => self.rerun(&id, false).await,
            Command::RerunFrom(id) => self.rerun(&id, true).await,
            Command::Skip(id) => {
                let Some(i) = self.index(&id) else {
                    return self
                        .reject("skip", format!("there is no node `{id}`"))
                        .await;
                };
                if !matches!(
                    self.records[i].status,
                    NodeStatus::Pending | NodeStatus::Stale
                ) {
                    let status = self.records[i].status.as_str();
                    return self.reject("skip", format!("node `{id}` is {status}; only a pending or stale node can be skipped")).await;
                }
                self.set_skipped(i, "skipped by the user".into()).await;
            }
            Command::Cancel => {
                if self.in_flight.is_empty() && !matches!(self.mode, Mode::Running | Mode::Paused) {
                    return self.reject("cancel", "nothing is running").await;
                }
                self.stop(Stop::Cancel);
                self.set_mode(Mode::Running);
            }
            Command::ReplacePlan(plan) => {
                self.pending_plan = Some(plan);
            }
            Command::Pin(id) => self.pin(&id).await,
        }
    }

    fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        // Fan-outs in flight start no new iteration while the session is
        // paused by the user or a breakpoint (a step's own node runs on).
        let _ = self
            .paused_tx
            .send(mode == Mode::Paused && !self.step_pause);
    }

    /// Starts a run of `targets` (all nodes when `None`); a full run resets
    /// every record first.
    async fn begin(&mut self, targets: Option<HashSet<usize>>, step: bool) {
        if !self.in_flight.is_empty() || matches!(self.mode, Mode::Running) {
            return self.reject("run", "a run is already in progress").await;
        }
        if self.pending_plan.is_some() {
            self.apply_plan().await;
        }
        let count = match &targets {
            None => {
                for i in 0..self.records.len() {
                    self.reset(i);
                }
                self.completed.clear();
                self.failed_step = None;
                self.cost_total = 0.0;
                self.tokens_total = 0;
                self.comp.nodes.len()
            }
            Some(t) => t.len(),
        };
        self.targets = targets;
        self.settled_prefix = 0;
        self.stopping = None;
        self.budget_tripped = None;
        self.run_cancel = CancellationToken::new();
        self.started = Some(Instant::now());
        self.step_pending = step;
        self.released = None;
        self.paused_before = None;
        self.step_pause = false;
        self.set_mode(Mode::Running);
        self.emit(Event::RunStarted {
            composition: self.comp.name.clone(),
            case: self.cfg.case.clone(),
            nodes: count,
        })
        .await;
    }

    fn reset(&mut self, i: usize) {
        self.gens[i] += 1;
        self.records[i] = NodeRecord::default();
    }

    async fn rerun(&mut self, id: &str, from: bool) {
        let what = if from { "rerun-from" } else { "rerun" };
        let Some(i) = self.index(id) else {
            return self.reject(what, format!("there is no node `{id}`")).await;
        };
        if self.in_flight.contains_key(&i) {
            return self.reject(what, format!("node `{id}` is running")).await;
        }
        for &p in &self.comp.parents[i] {
            let rec = &self.records[p];
            if !(rec.status.is_terminal() || rec.status == NodeStatus::Stale) {
                let parent = &self.comp.nodes[p].id;
                return self
                    .reject(
                        what,
                        format!("parent `{parent}` of `{id}` has not run yet; run it first"),
                    )
                    .await;
            }
        }
        let mut set: Vec<usize> = vec![i];
        if from {
            set.extend(self.comp.descendants(i));
        }
        if set.iter().any(|n| self.in_flight.contains_key(n)) {
            return self
                .reject(what, "a descendant is running; wait for it or cancel")
                .await;
        }
        for &n in &set {
            self.reset(n);
            self.completed.retain(|c| *c != self.comp.nodes[n].id);
            if self.failed_step.as_deref() == Some(self.comp.nodes[n].id.as_str()) {
                self.failed_step = None;
            }
            // A paused run that stopped because this node failed may go on
            // once the node is fixed.
            if self.stopping == Some(Stop::Failure(self.comp.nodes[n].id.clone())) {
                self.stopping = None;
            }
            self.emit(Event::NodeStatus {
                id: self.comp.nodes[n].id.clone(),
                status: NodeStatus::Pending,
                reason: None,
            })
            .await;
        }
        self.settled_prefix = 0;
        match self.mode {
            Mode::Paused => {
                // Part of the paused run: the re-run node goes now, its
                // descendants when the run resumes.
                if let Some(t) = &mut self.targets {
                    t.extend(set.iter().copied());
                }
                self.dispatch_if_ready(i).await;
            }
            _ => self.begin(Some(set.into_iter().collect()), false).await,
        }
    }

    async fn pin(&mut self, id: &str) {
        let Some(i) = self.index(id) else {
            return self.reject("pin", format!("there is no node `{id}`")).await;
        };
        let node = &self.comp.nodes[i];
        let rec = &self.records[i];
        if node.for_each.is_some() {
            return self
                .reject(
                    "pin",
                    format!(
                        "node `{id}` fans out; a single `mock:` cannot stand for its iterations"
                    ),
                )
                .await;
        }
        if rec.status != NodeStatus::Ok {
            return self
                .reject("pin", format!("node `{id}` has no recorded output to pin"))
                .await;
        }
        // The fixture is what the tool returned, before `transform`, since a
        // mock is reshaped by the node's transform too.
        let result = match (&node.mock, &rec.raw) {
            (Some(Mock::Result(v)), _) => v.clone(),
            (_, Value::Null) => rec.output.clone(),
            (_, raw) => crate::engine::mcp::output_of(raw),
        };
        let mock = json!({ "result": result });
        let yaml = format!("mock:\n{}", indent_yaml(&mock["result"], "result"));
        self.emit(Event::Pinned {
            id: id.to_owned(),
            mock,
            yaml,
        })
        .await;
    }

    /// Marks every in-flight call cancelled (for `Cancel` and budget stops)
    /// and records why the run stops.
    fn stop(&mut self, why: Stop) {
        if matches!(why, Stop::Cancel | Stop::Budget(_)) {
            self.run_cancel.cancel();
            for (_, token) in self.in_flight.values() {
                token.cancel();
            }
        }
        if self.stopping.is_none() || why == Stop::Cancel {
            self.stopping = Some(why);
        }
    }

    async fn trip(&mut self, cap: &str, detail: String) {
        if self.budget_tripped.is_some() {
            return;
        }
        self.budget_tripped = Some(cap.to_owned());
        self.emit(Event::BudgetTripped {
            cap: cap.to_owned(),
            detail,
        })
        .await;
        if self.cfg.on_budget == BudgetMode::Stop {
            self.stop(Stop::Budget(cap.to_owned()));
        }
    }

    /// Checks node `i`'s projected figures against every cap before it is
    /// dispatched; false when a cap fired and the run stops.
    async fn within_budget(&mut self, i: usize, scope: &Snapshot) -> bool {
        let node = &self.comp.nodes[i];
        let projection = budget::project_node(&self.cfg.pricing, node, scope);
        let caps = budget::Caps::of(node, self.cfg.budget, self.cfg.max_cost_per_call_usd);
        let spent = budget::Spent {
            cost_usd: self.cost_total,
            tokens: self.tokens_total,
            elapsed: self.started.map_or(Duration::ZERO, |s| s.elapsed()),
        };
        let id = node.id.clone();
        if let Some(b) = budget::breaches(&id, caps, spent, &projection)
            .into_iter()
            .next()
        {
            self.trip(&b.cap, b.detail).await;
        }
        self.stopping.is_none()
    }

    async fn node_done(&mut self, idx: usize, generation: u64, rec: NodeRecord) {
        if self.gens.get(idx) != Some(&generation) {
            return;
        }
        self.in_flight.remove(&idx);
        let node = &self.comp.nodes[idx];
        let id = node.id.clone();
        self.cost_total += rec.cost_usd;
        self.tokens_total += rec.tokens;
        let status = rec.status;
        // Per-call caps compare one call: a fan-out's figures are shared
        // out over its iterations.
        let calls = rec.iterations.len().max(1);
        let (cost, tokens) = (rec.cost_usd / calls as f64, rec.tokens / calls as u64);
        let on_error = node.on_error;
        let caps = (
            node.max_cost_per_call_usd
                .or(self.cfg.max_cost_per_call_usd),
            node.max_tokens_per_call,
        );
        self.records[idx] = rec;
        self.candidates.extend_from_slice(&self.comp.children[idx]);
        if status == NodeStatus::Ok {
            self.completed.push(id.clone());
        }
        self.emit(Event::NodeFinished {
            id: id.clone(),
            record: Box::new(self.records[idx].clone()),
        })
        .await;
        if status == NodeStatus::Failed && on_error != OnError::Continue {
            if self.failed_step.is_none() {
                self.failed_step = Some(id.clone());
            }
            self.stop(Stop::Failure(id.clone()));
        }
        if let Some(cap) = caps.0.filter(|c| cost > *c) {
            self.trip(
                "max_cost_per_call_usd",
                format!("a call of `{id}` cost ${cost:.4}, over its cap of ${cap:.4}"),
            )
            .await;
        }
        if let Some(cap) = caps.1.filter(|c| tokens > *c) {
            self.trip(
                "max_tokens_per_call",
                format!("a call of `{id}` used {tokens} tokens, over its cap of {cap}"),
            )
            .await;
        }
        let budget = self.cfg.budget;
        if let Some(max) = budget.max_cost_usd.filter(|m| self.cost_total > *m) {
            let total = self.cost_total;
            self.trip(
                "max_cost_usd",
                format!("the run cost ${total:.4}, over the cap of ${max:.4}"),
            )
            .await;
        }
        if let Some(max) = budget.max_tokens.filter(|m| self.tokens_total > *m) {
            let total = self.tokens_total;
            self.trip(
                "max_tokens",
                format!("the run used {total} tokens, over the cap of {max}"),
            )
            .await;
        }
    }

    fn in_targets(&self, i: usize) -> bool {
        self.targets.as_ref().is_none_or(|t| t.contains(&i))
    }

    /// Dispatches what can go, decides skips, and finishes the run when
    /// nothing is left.
    async fn pump(&mut self) {
        if self.pending_plan.is_some() && self.in_flight.is_empty() {
            self.apply_plan().await;
        }
        if self.mode != Mode::Running {
            return;
        }
        let comp = self.comp.clone();
        self.advance_settled_prefix();
        while self.mode == Mode::Running && self.stopping.is_none() {
            let batch: Vec<usize> = if std::mem::take(&mut self.rescan) {
                self.candidates.clear();
                comp.order[self.settled_prefix..].to_vec()
            } else {
                let mut batch = std::mem::take(&mut self.candidates);
                batch.sort_unstable_by_key(|&i| self.rank[i]);
                batch.dedup();
                batch
            };
            if batch.is_empty() {
                break;
            }
            for i in batch {
                if self.mode != Mode::Running || self.stopping.is_some() {
                    break;
                }
                if !self.in_targets(i)
                    || self.records[i].status != NodeStatus::Pending
                    || self.in_flight.contains_key(&i)
                    || !self.parents_settled(i)
                {
                    continue;
                }
                self.dispatch_if_ready(i).await;
            }
        }
        // Every ready node has been dispatched (or the run is stopping, or
        // paused): with nothing in flight, the run is over.
        if self.mode == Mode::Running && self.in_flight.is_empty() {
            self.finish().await;
        }
    }

    /// Moves `settled_prefix` past the nodes that have finished (or are not
    /// part of this run).
    fn advance_settled_prefix(&mut self) {
        let order = &self.comp.order;
        while let Some(&i) = order.get(self.settled_prefix) {
            let done = !self.in_targets(i)
                || (self.records[i].status.is_terminal() && !self.in_flight.contains_key(&i));
            if !done {
                break;
            }
            self.settled_prefix += 1;
        }
    }

    fn parents_settled(&self, i: usize) -> bool {
        self.comp.parents[i].iter().all(|&p| {
            let s = self.records[p].status;
            (s.is_terminal() || s == NodeStatus::Stale) && !self.in_flight.contains_key(&p)
        })
    }

    /// Decides node `i` (whose parents have settled): skip it, fail it, stop
    /// at its breakpoint, or dispatch it. True when its state changed.
    async fn dispatch_if_ready(&mut self, i: usize) -> bool {
        if !self.parents_settled(i) {
            return false;
        }
        if let Some(reason) = self.skip_reason(i) {
            self.set_skipped(i, reason).await;
            return true;
        }
        let scope = self.snapshot(i);
        match self.eval_when(i, &scope) {
            Ok(true) => {}
            Ok(false) => {
                let source = self.comp.nodes[i]
                    .when
                    .as_ref()
                    .map(|w| w.source.clone())
                    .unwrap_or_default();
                self.set_skipped(i, format!("`when: {source}` was false"))
                    .await;
                return true;
            }
            Err(e) => {
                let rec = NodeRecord {
                    status: NodeStatus::Failed,
                    error: Some(format!("`when` could not be evaluated: {e}")),
                    ..NodeRecord::default()
                };
                let generation = self.gens[i];
                self.node_done(i, generation, rec).await;
                return true;
            }
        }
        if self.mode == Mode::Running
            && self.breakpoints.contains(&self.comp.nodes[i].id)
            && self.released != Some(i)
        {
            self.paused_before = Some(i);
            self.step_pause = false;
            self.set_mode(Mode::Paused);
            self.emit(Event::Paused {
                reason: PauseReason::Breakpoint,
                before: Some(self.comp.nodes[i].id.clone()),
            })
            .await;
            return false;
        }
        if self.released == Some(i) {
            self.released = None;
        }
        if !self.within_budget(i, &scope).await {
            return true;
        }
        self.dispatch(i, scope).await;
        if self.step_pending && self.mode == Mode::Running {
            self.step_pending = false;
            self.step_pause = true;
            self.set_mode(Mode::Paused);
            self.emit(Event::Paused {
                reason: PauseReason::Step,
                before: None,
            })
            .await;
        }
        true
    }

    fn skip_reason(&self, i: usize) -> Option<String> {
        if self.comp.kind == Kind::Pipe {
            return None;
        }
        self.comp.parents[i].iter().find_map(|&p| {
            let parent = &self.comp.nodes[p];
            match self.records[p].status {
                NodeStatus::Skipped => Some(format!("parent `{}` was skipped", parent.id)),
                NodeStatus::Cancelled => Some(format!("parent `{}` was cancelled", parent.id)),
                NodeStatus::Failed if parent.on_error != OnError::Continue => {
                    Some(format!("parent `{}` failed", parent.id))
                }
                _ => None,
            }
        })
    }

    async fn set_skipped(&mut self, i: usize, reason: String) {
        self.candidates.extend_from_slice(&self.comp.children[i]);
        self.records[i].status = NodeStatus::Skipped;
        self.records[i].skip_reason = Some(reason.clone());
        self.emit(Event::NodeStatus {
            id: self.comp.nodes[i].id.clone(),
            status: NodeStatus::Skipped,
            reason: Some(reason),
        })
        .await;
    }

    /// What node `i`'s references may read: its parents (a pipe step: every
    /// earlier step).
    fn snapshot(&self, i: usize) -> Snapshot {
        let node = &self.comp.nodes[i];
        let visible: Vec<usize> = match self.comp.kind {
            Kind::Dag => self.comp.parents[i].clone(),
            // A `when` without a subject reads every earlier step.
            Kind::Pipe if node.when.as_ref().is_some_and(|w| w.subject.is_none()) => {
                (0..i).collect()
            }
            // Otherwise only the steps it names: copying every earlier
            // output for each step would make a long pipe quadratic.
            Kind::Pipe => {
                let mut named: Vec<usize> = node
                    .refs()
                    .filter_map(|site| match &site.reference.root {
                        reference::Root::Node(id) => self.index(id).filter(|&p| p < i),
                        _ => None,
                    })
                    .collect();
                named.sort_unstable();
                named.dedup();
                named
            }
        };
        let mut nodes = HashMap::with_capacity(visible.len());
        for p in visible {
            let rec = &self.records[p];
            let seen = match rec.status {
                NodeStatus::Ok => Seen::Output(rec.output.clone()),
                // A stale node keeps the output it recorded before the edit.
                NodeStatus::Stale if rec.attempts > 0 || rec.output != Value::Null => {
                    Seen::Output(rec.output.clone())
                }
                NodeStatus::Skipped => Seen::Skipped,
                NodeStatus::Failed | NodeStatus::Cancelled => Seen::Failed,
                _ => Seen::NotRun,
            };
            nodes.insert(self.comp.nodes[p].id.clone(), seen);
        }
        Snapshot {
            nodes,
            vars: self.vars.clone(),
            item: None,
        }
    }

    fn eval_when(&self, i: usize, scope: &Snapshot) -> Result<bool, String> {
        let Some(when) = &self.comp.nodes[i].when else {
            return Ok(true);
        };
        let input = match &when.subject {
            Some(site) => {
                reference::resolve_reference(&site.reference, scope).map_err(|e| e.to_string())?
            }
            None => {
                let mut parents = Map::new();
                for (id, seen) in &scope.nodes {
                    if let Seen::Output(v) = seen {
                        parents.insert(id.clone(), v.clone());
                    }
                }
                // Keep declaration order for readable jq output.
                let mut ordered = Map::new();
                for node in &self.comp.nodes {
                    if let Some(v) = parents.remove(&node.id) {
                        ordered.insert(node.id.clone(), v);
                    }
                }
                json!({ "parents": ordered })
            }
        };
        match &when.filter {
            Some(p) => p.test(&input).map_err(|e| e.to_string()),
            None => Ok(jq::truthy(&input)),
        }
    }

    async fn dispatch(&mut self, i: usize, scope: Snapshot) {
        self.gens[i] += 1;
        let generation = self.gens[i];
        let token = self.run_cancel.child_token();
        self.records[i] = NodeRecord {
            status: NodeStatus::Running,
            ..NodeRecord::default()
        };
        self.in_flight.insert(i, (generation, token.clone()));
        self.emit(Event::NodeStatus {
            id: self.comp.nodes[i].id.clone(),
            status: NodeStatus::Running,
            reason: None,
        })
        .await;
        let job = NodeJob {
            comp: self.comp.clone(),
            idx: i,
            scope,
            caller: self.caller.clone(),
            cancel: token,
            paused: self.paused_tx.subscribe(),
            events: self.events.clone(),
            redactor: self.redactor.clone(),
            default_timeout: self.cfg.default_timeout,
            pricing: self.cfg.pricing.clone(),
        };
        let done = self.done_tx.clone();
        tokio::spawn(async move {
            let rec = AssertUnwindSafe(run_node(job))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| NodeRecord {
                    status: NodeStatus::Failed,
                    error: Some(
                        "internal error while running this node (a bug in pipewright)".into(),
                    ),
                    ..NodeRecord::default()
                });
            let _ = done.send((i, generation, rec));
        });
    }

    async fn finish(&mut self) {
        let reason = match &self.stopping {
            Some(Stop::Cancel) => "the run was cancelled".to_owned(),
            Some(Stop::Budget(cap)) => format!("budget cap `{cap}` was exceeded"),
            Some(Stop::Failure(id)) => format!("the run stopped after `{id}` failed"),
            None => "it was not reachable".to_owned(),
        };
        for i in 0..self.records.len() {
            if self.in_targets(i) && self.records[i].status == NodeStatus::Pending {
                self.set_skipped(i, format!("not run: {reason}")).await;
            }
        }
        let status = match (&self.stopping, &self.budget_tripped) {
            (Some(Stop::Cancel), _) => RunStatus::Cancelled,
            (_, Some(_)) if self.cfg.on_budget != BudgetMode::Warn => RunStatus::BudgetExceeded,
            _ => {
                let failed = self.comp.nodes.iter().zip(&self.records).any(|(n, r)| {
                    r.status == NodeStatus::Failed && n.on_error != OnError::Continue
                });
                if !failed {
                    RunStatus::Completed
                } else if self.records.iter().any(|r| r.status == NodeStatus::Ok) {
                    RunStatus::Partial
                } else {
                    RunStatus::Failed
                }
            }
        };
        let trace = self.trace(status);
        self.last_trace = Some(trace.clone());
        self.targets = None;
        self.stopping = None;
        self.step_pending = false;
        self.set_mode(Mode::Finished);
        self.emit(Event::RunFinished {
            status,
            trace: Box::new(trace),
        })
        .await;
    }

    /// The trace of the session as it stands.
    fn trace(&self, status: RunStatus) -> Trace {
        let mut nodes = IndexMap::with_capacity(self.records.len());
        for (node, rec) in self.comp.nodes.iter().zip(&self.records) {
            nodes.insert(node.id.clone(), rec.clone());
        }
        let output = self.output();
        let ran = self
            .records
            .iter()
            .any(|r| r.attempts > 0 || r.status == NodeStatus::Ok);
        let mut trace = Trace {
            file: self.cfg.file.clone(),
            composition: RunSummary {
                name: self.comp.name.clone(),
                case: self.cfg.case.clone(),
                ran,
                status,
                budget_tripped: self.budget_tripped.clone(),
                cost_total: self.cost_total,
                tokens_total: self.tokens_total,
                duration_ms: self.started.map_or(0, |s| s.elapsed().as_millis() as u64),
                output_tokens: crate::engine::cost::tokens::count_value(&output),
                output_tokens_all: self.records.iter().map(|r| r.output_tokens).sum(),
            },
            nodes,
            completed_step_ids: self.completed.clone(),
            failed_step: self.failed_step.clone(),
            output,
            expect: Vec::new(),
            server_logs: self
                .caller
                .logs()
                .into_iter()
                .map(|(k, v)| (k, self.redactor.text(&v)))
                .collect(),
        };
        trace.check(&self.cfg.expect);
        trace
    }

    fn output(&self) -> Value {
        match &self.comp.output {
            Some(OutputSpec::Node { id, .. }) => self
                .index(id)
                .map_or(Value::Null, |i| self.records[i].output.clone()),
            Some(OutputSpec::Assemble(p)) => {
                let mut nodes = Map::new();
                for (node, rec) in self.comp.nodes.iter().zip(&self.records) {
                    nodes.insert(node.id.clone(), rec.output.clone());
                }
                p.run_one(&json!({ "nodes": nodes }))
                    .unwrap_or_else(|e| json!({ "error": format!("output.assemble failed: {e}") }))
            }
            None => self
                .comp
                .order
                .last()
                .map_or(Value::Null, |&i| self.records[i].output.clone()),
        }
    }

    /// Adopts the pending plan: unchanged nodes keep their records, changed
    /// nodes and their descendants become stale, new nodes are pending.
    async fn apply_plan(&mut self) {
        let Some(new) = self.pending_plan.take() else {
            return;
        };
        let mut old: HashMap<&str, (usize, &str)> = HashMap::new();
        for (i, n) in self.comp.nodes.iter().enumerate() {
            old.insert(n.id.as_str(), (i, n.hash.as_str()));
        }
        let n = new.nodes.len();
        let mut records = vec![NodeRecord::default(); n];
        let mut gens = vec![0u64; n];
        let mut changed = vec![false; n];
        let mut added = Vec::new();
        for (j, node) in new.nodes.iter().enumerate() {
            match old.get(node.id.as_str()) {
                Some(&(i, hash)) => {
                    records[j] = self.records[i].clone();
                    gens[j] = self.gens[i] + 1;
                    changed[j] = hash != node.hash;
                }
                None => added.push(node.id.clone()),
            }
        }
        let mut stale_set = vec![false; n];
        for j in 0..n {
            if changed[j] {
                stale_set[j] = true;
                for d in new.descendants(j) {
                    stale_set[d] = true;
                }
            }
        }
        let mut stale = Vec::new();
        for j in 0..n {
            if stale_set[j] && records[j].status != NodeStatus::Pending {
                records[j].status = NodeStatus::Stale;
                stale.push(new.nodes[j].id.clone());
            }
        }
        let removed: Vec<String> = self
            .comp
            .nodes
            .iter()
            .filter(|o| new.index_of(&o.id).is_none())
            .map(|o| o.id.clone())
            .collect();
        self.breakpoints.retain(|b| new.index_of(b).is_some());
        self.completed
            .retain(|c| new.index_of(c).is_some_and(|j| !stale_set[j]));
        self.records = records;
        self.gens = gens;
        self.ids = ids_of(&new);
        self.rank = rank_of(&new);
        self.rescan = true;
        self.comp = new;
        self.settled_prefix = 0;
        self.targets = None;
        self.released = None;
        self.paused_before = None;
        self.emit(Event::PlanReplaced {
            stale,
            added,
            removed,
        })
        .await;
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

/// A JSON value as the YAML block under `mock:` (JSON is valid YAML; the
/// value is written as an indented flow document).
fn indent_yaml(v: &Value, key: &str) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    let mut out = format!("  {key}: ");
    for (k, line) in text.lines().enumerate() {
        if k > 0 {
            out.push_str("\n    ");
        }
        out.push_str(line);
    }
    out.push('\n');
    out
}
