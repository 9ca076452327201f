//! What a session reports, in order: every change of a run as an
//! [`Event`] on one bounded channel, so a driver can render from events
//! alone.

use serde_json::Value;

use crate::mcp::human::ProgressNote;
use crate::run::trace::{NodeRecord, NodeStatus, PauseSpan, RunStatus, Trace};

/// Why a session paused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PauseReason {
    /// A `Pause` command.
    User,
    /// A `Step` dispatched its node.
    Step,
    /// The next node to dispatch has a breakpoint.
    Breakpoint,
}

/// Everything that happens in a session, in order.
#[derive(Debug, Clone)]
pub enum Event {
    /// A run (or a re-run) began; `nodes` is how many nodes it may dispatch.
    RunStarted {
        composition: String,
        case: Option<String>,
        nodes: usize,
    },
    /// A node changed state without finishing a call: pending, running,
    /// skipped (with the reason) or stale.
    NodeStatus {
        id: String,
        status: NodeStatus,
        reason: Option<String>,
    },
    /// An attempt of a node's call started, with the arguments it was
    /// called with (secrets masked; `None` for a fan-out, whose iterations
    /// each have their own).
    NodeStarted {
        id: String,
        attempt: u32,
        args: Option<crate::json::Json>,
    },
    /// An attempt failed and another follows after the backoff.
    Retrying {
        id: String,
        attempt: u32,
        error: String,
    },
    /// Fan-out iteration `index` (of `total`) started its call.
    IterationStarted {
        id: String,
        index: usize,
        total: usize,
    },
    /// One fan-out iteration ended; `done` of `total` have.
    Iteration {
        id: String,
        index: usize,
        status: NodeStatus,
        done: usize,
        total: usize,
    },
    /// The server reported progress on node `id`'s call (`iteration`: which
    /// fan-out iteration's).
    Progress {
        id: String,
        iteration: Option<usize>,
        note: ProgressNote,
    },
    /// Node `id`'s call runs as an MCP task, which changed status (or
    /// pipewright sent `tasks/cancel` for it); secrets masked.
    Task {
        id: String,
        iteration: Option<usize>,
        note: crate::mcp::human::TaskNote,
    },
    /// The server of node `id` logged a line (`notifications/message`)
    /// during its call; secrets masked.
    ServerLog { id: String, line: String },
    /// The server of node `id` asked a question (`elicitation` or
    /// `sampling`) and got this reply (`accept`, `decline`, `cancel`,
    /// `sampled`).
    Answered {
        id: String,
        kind: String,
        action: String,
    },
    /// A server's tool list changed and was read again: the tools that
    /// came and went, as `server/tool`. Each node is checked against the
    /// new list when it is dispatched.
    ToolsChanged {
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// A node reached its end (ok, failed or cancelled) with this record.
    NodeFinished { id: String, record: Box<NodeRecord> },
    /// After a failed run, node `id`'s `compensate:` call was made.
    Compensated {
        id: String,
        ok: bool,
        error: Option<String>,
    },
    /// Nothing new will be dispatched until `Resume` or `Step`; `before` is
    /// the node a breakpoint stopped at.
    Paused {
        reason: PauseReason,
        before: Option<String>,
    },
    /// Dispatching goes on.
    Resumed,
    /// The paused run has no call in flight: from `at_ms` (milliseconds
    /// into the run) its time is a pause, kept out of its duration, until
    /// [`Event::Busy`]. Only such time is a pause: calls that run on after
    /// a `Pause`, and the call a `Step` makes, count in the run's duration.
    Idle { at_ms: u64 },
    /// The pause [`Event::Idle`] began has ended (the run went on, a step
    /// or a re-run sent a call, or the run ended): the span the run's
    /// duration leaves out.
    Busy { pause: PauseSpan },
    /// A breakpoint was set (`on`) or cleared.
    Breakpoint { id: String, on: bool },
    /// A new plan was adopted: `stale` nodes' records were made with
    /// something that changed since (the node, a variable it reads, a
    /// parent's record); `fresh` nodes were stale and are back to what
    /// their records were made with (an edit undone), their status
    /// restored.
    PlanReplaced {
        stale: Vec<String>,
        fresh: Vec<String>,
        added: Vec<String>,
        removed: Vec<String>,
    },
    /// A node's output as a `mock:` fixture, as JSON and as YAML to paste.
    Pinned {
        id: String,
        mock: Value,
        yaml: String,
    },
    /// A budget cap fired; `cap` names it (`max_cost_usd` …).
    BudgetTripped { cap: String, detail: String },
    /// A command could not be carried out now, and why.
    Rejected { command: String, reason: String },
    /// The run (or re-run) ended; the trace is complete.
    RunFinished {
        status: RunStatus,
        trace: Box<Trace>,
    },
}
