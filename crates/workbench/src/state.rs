//! What the panes draw from: a view of each node's state, kept up to date by
//! the app from session events, where the run is, and which pane has the
//! keys. Panes never talk to the session themselves.

use pipewright_engine::run::events::PauseReason;
use pipewright_engine::run::trace::{IterationRecord, NodeRecord, NodeStatus, RunStatus};

/// The pane with the keyboard focus.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Editor,
    Dag,
    Inspector,
}

/// Where the run is, as the status bar says it.
#[derive(Debug, Clone, PartialEq)]
pub enum RunState {
    /// Nothing has run since the workbench opened.
    Idle,
    /// Starting and handshaking with the servers.
    Connecting,
    Running,
    Paused {
        reason: PauseReason,
        before: Option<String>,
    },
    Finished(RunStatus),
}

/// One node as the DAG pane and the status bar see it, indexed like
/// `Composition::nodes`.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeVisual {
    pub status: NodeStatus,
    /// Fan-out progress: iterations done of total, while or after it runs.
    pub progress: Option<(usize, usize)>,
    /// Of those done, the iterations that failed: the counter shows them,
    /// so `4/4` never hides four failures.
    pub failed_iterations: usize,
    /// A breakpoint is set on it: the run pauses before dispatching it.
    pub breakpoint: bool,
    /// It answers from its `mock:` and calls no server.
    pub mocked: bool,
    /// The run is paused right before this node (a breakpoint or a step).
    pub paused_before: bool,
    /// Its last finished record, when it has one.
    pub record: Option<std::sync::Arc<NodeRecord>>,
    /// When it started, in milliseconds from the start of the run (set
    /// live, before its record exists).
    pub started_ms: Option<u64>,
    /// It differs from the run it was compared with (History `D`).
    pub changed: bool,
    /// The server's last progress report for its call (live).
    pub note: Option<pipewright_engine::mcp::human::ProgressNote>,
    /// What its server logged during its call, as it came (live; the
    /// record keeps them too).
    pub logs: Vec<String>,
    /// A question of its server waits for an answer in the modal.
    pub asking: bool,
    /// The arguments its call in flight was made with (masked), until its
    /// record arrives.
    pub live_args: Option<pipewright_engine::json::Json>,
    /// The task its call in flight runs as (the latest, for a fan-out), as
    /// its statuses come (live; the record keeps them too).
    pub task: Option<pipewright_engine::mcp::human::TaskRecord>,
    /// Its fan-out iterations as they start and end (live, until its
    /// record arrives).
    pub iterations: Vec<LiveIteration>,
}

/// One fan-out iteration seen live: when it started and, once it has,
/// how it ended and when (milliseconds from the start of the run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveIteration {
    pub index: usize,
    pub status: NodeStatus,
    pub started_ms: u64,
    pub ended_ms: Option<u64>,
}

impl Default for NodeVisual {
    fn default() -> Self {
        NodeVisual {
            status: NodeStatus::Pending,
            progress: None,
            failed_iterations: 0,
            breakpoint: false,
            mocked: false,
            paused_before: false,
            record: None,
            started_ms: None,
            changed: false,
            note: None,
            logs: Vec::new(),
            asking: false,
            live_args: None,
            task: None,
            iterations: Vec::new(),
        }
    }
}

/// A running fan-out's iterations so far, as the Iterations tab shows
/// them: a running one's time is how long it has run until `now_ms`.
pub fn live_iterations(v: &NodeVisual, now_ms: u64) -> Vec<IterationRecord> {
    if v.status != NodeStatus::Running || v.record.is_some() {
        return Vec::new();
    }
    v.iterations
        .iter()
        .map(|it| IterationRecord {
            index: it.index,
            status: it.status,
            duration_ms: it.ended_ms.unwrap_or(now_ms).saturating_sub(it.started_ms),
            ..IterationRecord::default()
        })
        .collect()
}

/// The iterations of a fan-out's record that failed.
pub fn failed_iterations(record: &NodeRecord) -> usize {
    record
        .iterations
        .iter()
        .filter(|r| r.status == NodeStatus::Failed)
        .count()
}

/// A fan-out's progress as its record tells it: the iterations that ran to
/// an end (ok, failed, skipped) of every item, those that never started
/// included.
pub fn fan_out_progress(record: &NodeRecord) -> Option<(usize, usize)> {
    if record.iterations.is_empty() {
        return None;
    }
    let done = record
        .iterations
        .iter()
        .filter(|r| {
            matches!(
                r.status,
                NodeStatus::Ok | NodeStatus::Failed | NodeStatus::Skipped
            )
        })
        .count();
    Some((done, record.iterations.len()))
}
