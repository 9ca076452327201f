//! The workbench: [`App`] holds the components (the panes, the overlays,
//! the question modal) and the state they share (the plan on screen, its
//! node visuals, where the run is, which pane has the keys), routes input
//! to the component that has the keys, and applies the messages they send
//! back in one place (`update.rs`). Key and mouse input, editor
//! re-validations and session events go in; what the screen shows and a
//! list of [`Effect`]s come out. Nothing here awaits or touches the
//! terminal, so every behaviour is testable with a `TestBackend`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use indexmap::IndexMap;
use ratatui::layout::{Position, Rect};
use serde_json::Value;

use pipewright_engine::cost::pricing::{Pricing, PricingTable};
use pipewright_engine::file::loader::Loaded;
use pipewright_engine::file::model::{Budget, Composition, Pipeline};
use pipewright_engine::lang::snapshot::{Seen, Snapshot};
use pipewright_engine::mcp::servers::ServerArg;
use pipewright_engine::plan::preflight::Preflight;
use pipewright_engine::run::events::Event;
use pipewright_engine::run::session::{Command, SessionConfig};
use pipewright_engine::run::trace::{NodeRecord, NodeStatus, RunStatus, Trace};

use crate::ask::Asks;
use crate::complete::Popup;
use crate::component::{Component, Handled, Queue};
use crate::config::{Config, Dirs};
use crate::dag::Dag;
use crate::editor::Editor;
use crate::find::Find;
use crate::inspector::Inspector;
use crate::keys::{Action, Keymap};
use crate::messages::Messages;
use crate::msg::Msg;
use crate::overlay::{self, Overlay};
use crate::palette::Palette;
use crate::results::Results;
use crate::session::SessionHandle;
use crate::state::NodeVisual;
use crate::theme::Theme;
use crate::timeline::Timeline;
use crate::tools::LiveTools;
use crate::viewing::Viewing;

/// A [`Ctx`](crate::component::Ctx) of the app's shared state for a
/// component call: borrowed field by field, because a method would borrow
/// the whole app and the component called is one of its fields. Focus, the
/// editor's cursor, the sampling provider and the Messages log are left
/// out; a caller that needs them sets them.
macro_rules! ctx {
    ($app:ident) => {
        crate::component::Ctx {
            theme: &$app.theme,
            keymap: &$app.keymap,
            tick: $app.tick,
            comp: $app.comp.as_deref(),
            visuals: &$app.visuals,
            run: &$app.run,
            errors: $app.errors,
            trace: $app
                .viewing
                .as_ref()
                .map(|v| &v.trace)
                .or($app.trace.as_ref()),
            viewing: $app.viewing.as_ref().map(|v| v.entry.id.as_str()),
            selected: $app.dag.selected(),
            focused: false,
            cursor: None,
            provider: None,
            log: &[],
            diagnostics: &[],
        }
    };
}

mod act;
mod adopt;
mod completion;
mod doctor;
mod draw;
mod durable;
mod events;
mod export;
mod gate;
mod history;
mod input;
mod judging;
mod mode;
mod overlay_find;
mod palette;
mod pin;
mod plan;
mod preflight;
mod questions;
mod recording;
mod recover;
mod results;
mod scaffold;
mod selection;
pub(crate) mod status;
mod theme;
mod update;
mod viewing;
mod yank;

pub(crate) use crate::mode::Mode;
pub(crate) use crate::state::{Focus, RunState};

/// What `pipewright edit` was started with.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub file: PathBuf,
    pub composition: Option<String>,
    pub case: Option<String>,
    /// `--var K=V`, over the file's `vars:` and the case row.
    pub vars: IndexMap<String, Value>,
    pub servers: Vec<ServerArg>,
    pub url: Option<String>,
    pub theme: Option<String>,
    pub timeout: Option<Duration>,
    /// `--on restate://…`: the palette can run the composition durably
    /// there.
    pub restate: Option<pipewright_engine::run::durable::client::Restate>,
    /// `--record PATH`: the session file (or folder of them) the
    /// workbench opens following.
    pub record: Option<PathBuf>,
    /// The judge `PIPEWRIGHT_JUDGE_*` declares, over the file's and
    /// config.yaml's.
    pub judge: pipewright_engine::eval::JudgeFlags,
    /// The driver's settings (its flags and `PIPEWRIGHT_*`).
    pub settings: pipewright_engine::settings::Settings,
    /// How files are loaded: the settings' limits, the `--server` names.
    pub load: pipewright_engine::file::open::LoadOptions,
}

/// Work the event loop carries out for the app (the app never awaits).
#[derive(Debug)]
pub enum Effect {
    /// Start a session for this plan (connecting its servers), then send
    /// the breakpoints and these commands.
    Start {
        pipeline: Arc<Pipeline>,
        comp: Arc<Composition>,
        cfg: Box<SessionConfig>,
        breakpoints: Vec<String>,
        then: Vec<Command>,
    },
    /// Send a command to the running session.
    Send(Command),
    /// End the session (the file's servers changed, or another composition
    /// was chosen); the next run starts a new one.
    DropSession,
    /// The user allowed the destructive calls preflight found: go on with
    /// the session held back for the answer.
    Proceed,
    /// Hand the buffer to `$EDITOR` and take it back.
    ExternalEditor,
    /// Keep a finished run's trace where `pipewright run` keeps them.
    SaveTrace(Box<Trace>),
    /// Ask the sampling provider to write the reply to question `ticket`;
    /// its answer comes back as a message.
    AskProvider {
        ticket: u64,
        provider: Box<pipewright_engine::mcp::human::provider::Provider>,
        request: Value,
    },
    /// Grade a run's `eval:` off the loop (see `ui::judging`); the graded
    /// run comes back as a message.
    Judge(Box<crate::judging::Job>),
    /// Put this text on the terminal's clipboard: the loop writes it as
    /// OSC 52 (see `ui::copy`).
    Copy(String),
    /// Open a server's link in the browser (asked for with a key).
    OpenUrl(String),
    /// Fetch the `tools/list` of the servers this plan calls (`key` names
    /// them) for preflight as you type; the lists come back as a message.
    FetchTools {
        key: String,
        pipeline: Arc<Pipeline>,
        comp: Arc<Composition>,
        vars: IndexMap<String, Value>,
    },
    /// Submit a durable run to Restate and follow it; `source` is the
    /// file's text it runs.
    Durable {
        restate: Box<pipewright_engine::run::durable::client::Restate>,
        request: Box<pipewright_engine::run::durable::client::RunRequest>,
        source: String,
        /// Cancelled by `x` while the run is followed: Restate cancels the
        /// invocation, the worker compensates, the trace still comes.
        cancel: tokio_util::sync::CancellationToken,
    },
    /// Start following a recording (the threads of `ui::recording`).
    Follow(Box<crate::recording::FollowJob>),
    /// Write the pipeline of a recording, off the loop.
    WriteRecording(Box<crate::recording::WriteJob>),
    /// Run the doctor's checklist for `server` of this pipeline, off the
    /// loop; the report comes back as a message.
    Doctor {
        server: String,
        pipeline: Arc<Pipeline>,
        vars: IndexMap<String, Value>,
    },
    Quit,
}

/// What to do with a freshly connected session after preflight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preflighted {
    /// Send the commands.
    Go,
    /// Hold it: the user is asked about destructive calls.
    Ask,
    /// Close it: a node would fail (unknown tool, invalid args).
    Stop,
}

/// Where each pane was last drawn, for the mouse.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Areas {
    pub(crate) editor: Rect,
    pub(crate) dag: Rect,
    pub(crate) inspector: Rect,
    /// The open overlay's window.
    pub(crate) overlay: Rect,
}

/// The whole workbench.
pub struct App {
    pub(crate) opts: Options,
    pub(crate) dirs: Dirs,
    pub(crate) theme: Theme,
    pub(crate) keymap: Keymap,
    // The components: each pane, the overlay open over them, the question
    // modal, the status line and its log.
    pub(crate) editor: Editor,
    /// The completion popup under the editor's cursor, while it is open.
    pub(crate) completion: Option<Popup>,
    pub(crate) dag: Dag,
    /// The Timeline view (`T`, in the DAG's place) and the live run's
    /// clock.
    pub(crate) timeline: Timeline,
    pub(crate) inspector: Inspector,
    pub(crate) overlay: Option<Overlay>,
    /// The overlay the open one was opened from (History under its diff):
    /// closing the open one goes back to it, as Esc goes back a view in
    /// k9s.
    pub(crate) overlay_under: Option<Overlay>,
    /// The search in the help, the Messages pane, a text or History (`/`).
    pub(crate) overlay_find: Option<Find>,
    /// Servers' questions waiting for the person; the first is shown.
    pub(crate) asks: Asks,
    /// The status line's message and the Messages pane's log.
    pub(crate) messages: Messages,
    // What the components share: the plan on screen and its run.
    /// The last plan that loaded without errors.
    pub(crate) pipeline: Option<Arc<Pipeline>>,
    pub(crate) comp: Option<Arc<Composition>>,
    /// One per `comp.nodes`.
    pub(crate) visuals: Vec<NodeVisual>,
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
    pub(crate) run: RunState,
    pub(crate) trace: Option<Trace>,
    pub(crate) breakpoints: BTreeSet<String>,
    pub(crate) focus: Focus,
    pub(crate) tick: u64,
    /// The focused pane fills the screen (`z`).
    pub(crate) zoom: bool,
    /// A saved run opened read-only from History.
    pub(crate) viewing: Option<Viewing>,
    // The app's own bookkeeping.
    /// The engine's session, as far as the app knows it.
    pub(crate) session: SessionHandle,
    pub(crate) areas: Areas,
    pub(crate) quit: bool,
    /// The text of the last plan that loaded without errors.
    pub(crate) plan_source: Option<String>,
    /// The text of the plan the current (or last) run started from, saved
    /// with its trace.
    pub(crate) run_source: Option<String>,
    /// config.yaml's `sampling:` provider (the file's wins).
    pub(crate) sampling: Option<pipewright_engine::mcp::human::provider::Provider>,
    /// Each composition and case run since the workbench opened, latest
    /// verdict each (the Results view), and the cases still to run.
    pub(crate) results: Results,
    /// Why the last session could not start (a server's error in full,
    /// stderr included): the Error tab of a node that did not run shows it.
    pub(crate) start_error: Option<String>,
    /// Why the nodes marked ✗ without a record did not start (`server
    /// `py` could not start`), until the next run starts.
    pub(crate) not_started: Option<String>,
    /// The last server that could not start: `D` in the Messages pane
    /// runs the doctor's checklist for it.
    pub(crate) failed_server: Option<String>,
    /// Whether the first validation has come in.
    validated_once: bool,
    /// The servers' tool lists and preflight's verdict as you type.
    pub(crate) tools: LiveTools,
    /// A durable run being followed: what cancels it.
    pub(crate) durable: Option<tokio_util::sync::CancellationToken>,
    /// The recording on screen (`edit --record`), while one is followed.
    pub(crate) recording: Option<crate::recording::Following>,
    /// No `--theme` and no `theme:` in config.yaml chose the theme: the
    /// default may fit the terminal's background.
    pub(crate) theme_default: bool,
    /// Opened with `--on`: whether the first local run said that it runs
    /// here, and how to run on Restate.
    pub(crate) said_where: bool,
}

impl App {
    /// A workbench on an opened editor; the first validation arrives with
    /// the editor's first tick.
    pub fn new(opts: Options, dirs: Dirs, config: Config, editor: Editor) -> App {
        // A new or empty file has nothing to show but the editor: start
        // there. (Unsaved text found at start is asked about in a dialog
        // over the panes, whatever has the focus.)
        let focus = if editor.text().trim().is_empty() {
            Focus::Editor
        } else {
            Focus::Dag
        };
        let mut app = App {
            opts,
            dirs,
            theme: config.theme,
            keymap: config.keymap,
            editor,
            completion: None,
            dag: Dag::default(),
            timeline: Timeline::default(),
            inspector: Inspector::new(),
            overlay: None,
            overlay_under: None,
            overlay_find: None,
            asks: Asks::default(),
            messages: Messages::default(),
            pipeline: None,
            comp: None,
            visuals: Vec::new(),
            errors: 0,
            warnings: 0,
            run: RunState::Idle,
            trace: None,
            breakpoints: BTreeSet::new(),
            focus,
            tick: 0,
            zoom: false,
            viewing: None,
            session: SessionHandle::default(),
            areas: Areas::default(),
            quit: false,
            plan_source: None,
            run_source: None,
            sampling: None,
            results: Results::default(),
            start_error: None,
            not_started: None,
            failed_server: None,
            validated_once: false,
            tools: LiveTools::default(),
            durable: None,
            recording: None,
            theme_default: false,
            said_where: false,
        };
        app.ask_about_recovery();
        app
    }

    /// What the workbench does as it opens: follows `--record`'s
    /// recording.
    pub fn opening(&mut self) -> Vec<Effect> {
        match self.opts.record.clone() {
            Some(path) => self.follow_recording(&path),
            None => Vec::new(),
        }
    }

    /// The composition on screen, once a plan has loaded.
    pub fn composition(&self) -> Option<&Composition> {
        self.comp.as_deref()
    }

    /// The editor pane.
    pub fn editor(&self) -> &Editor {
        &self.editor
    }

    /// The editor pane, to type into or move in (benches and tests drive
    /// it as a person would).
    pub fn editor_mut(&mut self) -> &mut Editor {
        &mut self.editor
    }

    /// The inspector pane, to choose its tab and take in its background
    /// work (benches draw it as the loop would).
    pub fn inspector_mut(&mut self) -> &mut Inspector {
        &mut self.inspector
    }

    /// What preflight as you type found on the plan adopted last (`None`:
    /// the servers' tool lists have not come).
    pub fn preflight(&self) -> Option<&Preflight> {
        self.tools.report()
    }

    /// Turns the spinners a step, as a tick does, without the rest of one
    /// (the render bench draws frame after frame).
    pub fn turn(&mut self) {
        self.tick = self.tick.wrapping_add(1);
    }

    /// Whether a run is starting, running or paused.
    pub fn run_in_progress(&self) -> bool {
        matches!(
            self.run,
            RunState::Connecting | RunState::Running | RunState::Paused { .. }
        )
    }
}

/// The nodes of `comp` whose server's declaration differs between `old`
/// and `new`, and their descendants (indices into `comp.nodes`).
pub(crate) fn stale_by_servers(old: &Pipeline, new: &Pipeline, comp: &Composition) -> Vec<usize> {
    let source = |p: &Pipeline, n: &str| p.servers.get(n).map(|d| d.source.clone());
    let changed = |name: Option<&String>| match name {
        Some(n) => source(old, n) != source(new, n),
        // The default server: any change of the declarations may move it.
        None => server_sources(old) != server_sources(new),
    };
    let mut out: BTreeSet<usize> = BTreeSet::new();
    for (i, n) in comp.nodes.iter().enumerate() {
        if n.mock.is_none() && changed(n.server.as_ref()) {
            out.insert(i);
            out.extend(comp.descendants(i));
        }
    }
    out.into_iter().collect()
}

/// What a session depends on besides the plan: the composition chosen and
/// the server declarations.
pub(crate) fn session_key(p: &Pipeline, c: &Composition) -> String {
    format!("{}\u{0}{:?}", c.name, server_sources(p))
}

/// The servers as declared, without where they are in the file: moving a
/// declaration is not a change.
fn server_sources(p: &Pipeline) -> Vec<(&str, &pipewright_engine::file::model::ServerSource)> {
    p.servers
        .iter()
        .map(|(name, d)| (name.as_str(), &d.source))
        .collect()
}
