//! What a component asks the app to do: the one message enum the panes and
//! overlays push into their [`Queue`](crate::component::Queue), applied by
//! the app in one place (`app/update.rs`). A message says what happened or
//! what is wanted in the app's words; the app decides what it changes and
//! which [`Effect`](crate::app::Effect)s the event loop carries out.

use std::path::PathBuf;
use std::sync::Arc;

use crossterm::event::KeyEvent;
use serde_json::Value;

use pipewright_engine::file::loader::Loaded;
use pipewright_engine::run::store::Entry;

use crate::keys::Action;
use crate::state::Focus;

/// A message from a component to the app.
#[derive(Debug)]
pub(crate) enum Msg {
    /// Carry out this action, as its key would (a palette row, `q` in a
    /// question's modal).
    Act(Action),
    /// Give the keys to this pane.
    Focus(Focus),
    /// Say this on the status line, and keep it in the Messages log.
    Say { text: String, error: bool },
    /// Select this node (or none): the inspector shows it and the editor
    /// moves to its definition.
    Select(Option<usize>),
    /// Select the node with this id (the palette's "go to node").
    SelectNode(String),
    /// The editor took `key`: the completion popup and the DAG's selection
    /// follow its text and cursor.
    Edited { key: KeyEvent },
    /// The answer to the recovery dialog: the editor takes, deletes or
    /// keeps the copy found at start.
    Recovery(RecoveryAnswer),
    /// Show the difference between the file and the recovery copy on
    /// offer (over the dialog).
    RecoveryDiff,
    /// The editor's cursor moved without a key (a click): the node under
    /// it is selected.
    CursorMoved,
    /// Write the completion chosen in the popup: `text` replaces what the
    /// line holds from column `from` (0-based) to the cursor.
    Complete { from: usize, text: String },
    /// Close the completion popup, writing nothing.
    CloseCompletion,
    /// Close the open overlay.
    CloseOverlay,
    /// Run the doctor's checklist for this server and show it.
    Doctor(String),
    /// The DAG's Esc while a saved run is on screen: back to the live
    /// workbench.
    LeaveViewing,
    /// A server's question was answered (its node's `?` goes).
    Answered {
        node: Option<String>,
        action: &'static str,
    },
    /// Open this link in the browser.
    OpenUrl(String),
    /// Put `text` on the clipboard; `what` says what it is.
    Copy { text: String, what: String },
    /// Ask the sampling provider to write the reply to question `ticket`.
    AskProvider { ticket: u64, request: Value },
    /// Use the colour theme of this name.
    Theme(String),
    /// Show and run this composition of the file.
    Composition(String),
    /// Run with this case row of the composition on screen.
    Case(String),
    /// Run the saved file durably on Restate (`edit --on`).
    Durable,
    /// Open the new-pipeline chooser over the servers' tools.
    OpenScaffold,
    /// Follow this session file, or this folder's newest session and each
    /// new one (the recording view).
    FollowRecording(PathBuf),
    /// The buffer becomes the scaffold of `chosen` (indices into `tools`,
    /// in the order chosen).
    WriteScaffold {
        tools: Vec<ToolOffer>,
        chosen: Vec<usize>,
    },
    /// Ask which format saved run `entry` is exported in (a choice over
    /// History).
    ChooseExport(Entry),
    /// Export saved run `entry` in the format key `format` names (none or
    /// another key: not exported).
    Export {
        entry: Option<Entry>,
        format: Option<char>,
    },
    /// Put a saved run's file text back in the editor and run it.
    RerunSaved(Entry),
    /// Judge these saved runs again with the file on screen.
    JudgeSaved(Vec<String>),
    /// Judge again every run the Results view lists.
    JudgeResults,
    /// Open a saved run read-only.
    OpenRun(Entry),
    /// Put a saved run's file text back in the editor; the overlay closes
    /// when it could.
    RestoreRun(Entry),
    /// Mark the nodes whose run differs between a saved run and the run
    /// on screen, and show the report.
    DiffRun(Entry),
    /// Save the buffer, then quit if it was saved.
    SaveAndQuit,
    /// Quit now: `discard` the unsaved edits' recovery copy, and say that
    /// the `running` run is being cancelled.
    Quit { discard: bool, running: bool },
    /// The person allowed these destructive calls (`node→tool`): the held
    /// session goes on.
    AllowDestructive(Vec<String>),
    /// The person did not allow the destructive calls: nothing runs.
    RefuseDestructive,
    /// The editor's debounced validation of the buffer came back.
    Validated(Arc<Loaded>),
    /// The editor wrote the buffer to this file.
    Saved(PathBuf),
    /// The file changed on disk; `dirty`: the buffer has unsaved edits too
    /// (the editor asks reload-or-keep and needs the keys).
    ExternalChange { dirty: bool },
}

/// One tool the new-pipeline chooser offers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolOffer {
    /// The server that lists it.
    pub(crate) server: String,
    pub(crate) name: String,
    pub(crate) description: Option<String>,
}

/// What the person answered about a recovery copy found at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RecoveryAnswer {
    /// Take the copy into the buffer (one undoable edit; Ctrl-S saves).
    Recover,
    /// Delete the copy.
    Discard,
    /// Keep the copy for the next start; this session writes its own.
    Later,
}
