//! The workbench loop's inbox: what background tasks tell it. They never
//! touch the view state: they send a [`Message`], and the loop hands it to
//! the app.

use tokio::sync::oneshot;

use pipewright_engine::mcp::human::{Answer, Question};

/// Something a background task tells the app loop.
#[derive(Debug)]
pub enum Message {
    /// A server asked a question during a call of the session started as
    /// `generation`; the call waits until `reply` is answered (a dropped
    /// `reply` reads as cancel).
    Question {
        question: Question,
        reply: oneshot::Sender<Answer>,
        generation: u64,
    },
    /// A durable run followed here (`edit --on`) asks a question: shown
    /// and answered like a session's, its answer resolves the question in
    /// Restate. The workbench going away answers nothing (the question
    /// keeps waiting for `pipewright runs answer`).
    DurableQuestion {
        question: Question,
        reply: oneshot::Sender<Answer>,
    },
    /// The sampling provider wrote (or failed to write) the reply asked for
    /// question `ticket`: the text and the model that wrote it.
    Sampled {
        ticket: u64,
        result: Result<(String, String), String>,
    },
    /// A run was judged (`eval:`): the graded trace (saved already: over
    /// the run just finished, or as a new run when judged again), or why
    /// it could not be.
    Judged {
        result: Result<Box<pipewright_engine::run::trace::Trace>, String>,
        /// Judged again (a new run), not the run that just finished.
        again: bool,
    },
    /// A durable run's journal says a call began: its node (when it was
    /// a node's call) is in flight until the call's outcome comes.
    DurableOpened { node: Option<String> },
    /// A durable run's journal gained an outcome: the node (when the call
    /// was one), whether it answered without error, and its line.
    DurableCall {
        node: Option<String>,
        ok: bool,
        line: String,
    },
    /// A durable run ended: its trace (with the file's text it ran), or
    /// why it could not be followed.
    DurableDone {
        result: Result<Box<pipewright_engine::run::trace::Trace>, String>,
        source: String,
    },
    /// The tool lists of the servers `key` names, fetched for preflight as
    /// you type, or why they could not be.
    Tools {
        key: String,
        result: Result<pipewright_engine::plan::preflight::ToolLists, String>,
    },
    /// The recording followed as `generation` left a new view in its slot
    /// (`ui::recording`).
    Recording { generation: u64 },
    /// A pipeline was written from the recording: the file and what
    /// `new --from` says of it, or why it was not.
    RecordingWritten {
        result: Result<(std::path::PathBuf, Vec<String>), String>,
    },
    /// The doctor's checklist for `server`, or why it could not run.
    Doctored {
        server: String,
        result: Result<Box<pipewright_engine::doctor::Report>, String>,
    },
}
