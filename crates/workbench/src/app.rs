//! The workbench's state and its reactions: key and mouse input, editor
//! re-validations and session events go in; what the screen shows and a list
//! of [`Effect`]s come out. Nothing here awaits or touches the terminal, so
//! every behaviour is testable with a `TestBackend`.

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
use pipewright_engine::run::events::{Event, PauseReason};
use pipewright_engine::run::session::{Command, SessionConfig};
use pipewright_engine::run::trace::{NodeRecord, NodeStatus, RunStatus, Trace};

use super::ask::Asks;
use super::config::{Config, Dirs};
use super::dag::{DagLayout, DagState};
use super::editor::{Editor, EditorEvent};
use super::history::{Stash, Viewing};
use super::inspector::Inspector;
use super::keys::{Action, Keymap};
use super::messages::Messages;
use super::overlay::{self, Overlay};
use super::palette::Palette;
use super::session::SessionHandle;
use super::state::NodeVisual;
use super::theme::Theme;
use super::timeline::Timeline;

mod durable;
mod events;
pub(crate) mod gate;
mod input;
mod pin;
mod plan;

pub use super::mode::Mode;

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
    /// The judge `PIPEWRIGHT_JUDGE_*` declares, over the file's and
    /// config.yaml's.
    pub judge: pipewright_engine::eval::JudgeFlags,
    /// The driver's settings (its flags and `PIPEWRIGHT_*`).
    pub settings: pipewright_engine::settings::Settings,
    /// How files are loaded: the settings' limits, the `--server` names.
    pub load: pipewright_engine::file::open::LoadOptions,
}

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
    pub opts: Options,
    pub dirs: Dirs,
    pub theme: Theme,
    pub keymap: Keymap,
    pub editor: Editor,
    pub inspector: Inspector,
    pub dag: DagState,
    pub layout: Option<DagLayout>,
    /// The last plan that loaded without errors.
    pub pipeline: Option<Arc<Pipeline>>,
    pub comp: Option<Arc<Composition>>,
    /// One per `comp.nodes`.
    pub visuals: Vec<NodeVisual>,
    pub errors: usize,
    pub warnings: usize,
    pub run: RunState,
    pub trace: Option<Trace>,
    pub breakpoints: BTreeSet<String>,
    pub focus: Focus,
    pub overlay: Option<Overlay>,
    /// The status line's message and the Messages pane's log.
    pub messages: Messages,
    pub tick: u64,
    /// The engine's session, as far as the app knows it.
    pub session: SessionHandle,
    pub(crate) areas: Areas,
    pub quit: bool,
    /// The Timeline view (`T`) and the live run's clock.
    pub timeline: Timeline,
    /// A saved run opened read-only from History.
    pub viewing: Option<Viewing>,
    /// The text of the last plan that loaded without errors.
    pub(crate) plan_source: Option<String>,
    /// The text of the plan the current (or last) run started from, saved
    /// with its trace.
    pub(crate) run_source: Option<String>,
    /// Servers' questions waiting for the person; the first is shown.
    pub asks: Asks,
    /// config.yaml's `sampling:` provider (the file's wins).
    pub sampling: Option<pipewright_engine::mcp::human::provider::Provider>,
    /// Each composition and case run since the workbench opened, latest
    /// verdict each (the Results view), and the cases still to run.
    pub results: super::results::Results,
    /// The focused pane fills the screen (`z`).
    pub zoom: bool,
    /// Why the last session could not start (a server's error in full,
    /// stderr included): the Error tab of a node that did not run shows it.
    pub start_error: Option<String>,
    /// Whether the first validation has come in.
    validated_once: bool,
    /// The servers' tool lists and preflight's verdict as you type.
    pub tools: super::preflight::LiveTools,
    /// A durable run being followed: what cancels it.
    pub durable: Option<tokio_util::sync::CancellationToken>,
    /// The search in the help or the Messages pane (`/`).
    pub overlay_find: Option<super::find::Find>,
}

impl App {
    /// A workbench on an opened editor; the first validation arrives with
    /// the editor's first tick.
    pub fn new(opts: Options, dirs: Dirs, config: Config, editor: Editor) -> App {
        // A recovery question waits in the editor: give it the keys. A new
        // or empty file has nothing to show but the editor: start there.
        let focus = if editor.recovery_pending() || editor.text().trim().is_empty() {
            Focus::Editor
        } else {
            Focus::Dag
        };
        App {
            opts,
            dirs,
            theme: config.theme,
            keymap: config.keymap,
            editor,
            inspector: Inspector::new(),
            dag: DagState::default(),
            layout: None,
            pipeline: None,
            comp: None,
            visuals: Vec::new(),
            errors: 0,
            warnings: 0,
            run: RunState::Idle,
            trace: None,
            breakpoints: BTreeSet::new(),
            focus,
            overlay: None,
            messages: Messages::default(),
            tick: 0,
            session: SessionHandle::default(),
            areas: Areas::default(),
            quit: false,
            timeline: Timeline::default(),
            viewing: None,
            plan_source: None,
            run_source: None,
            asks: Asks::default(),
            sampling: None,
            results: super::results::Results::default(),
            zoom: false,
            start_error: None,
            validated_once: false,
            tools: super::preflight::LiveTools::default(),
            overlay_find: None,
            durable: None,
        }
    }

    // ----- plan -------------------------------------------------------

    /// Adopts a validation result: errors keep the last good plan; a good
    /// plan replaces it (and the session's, keeping valid outputs).
    pub fn on_validated(&mut self, loaded: &Loaded) -> Vec<Effect> {
        use pipewright_engine::diag::Severity;
        self.errors = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        self.warnings = loaded.diagnostics.len() - self.errors;
        self.editor.set_diagnostics(loaded.diagnostics.clone());
        let first = !self.validated_once;
        self.validated_once = true;
        if loaded.has_errors() {
            // A file that does not load at all has nothing to show but the
            // editor: start there, so typing is text and not commands.
            if first && self.comp.is_none() && self.overlay.is_none() {
                self.focus = Focus::Editor;
            }
            return Vec::new();
        }
        let Some(pipeline) = loaded.pipeline.clone() else {
            return Vec::new();
        };
        self.plan_source = Some(self.editor.text());
        let pipeline = Arc::new(pipeline);
        // A saved run on screen: the live plan behind it is kept current.
        self.behind_viewing(|app| {
            let mut effects = app.adopt(pipeline);
            effects.extend(app.live_preflight());
            effects
        })
    }

    /// Runs `f` on the live workbench: when a saved run is on screen, the
    /// live state is swapped in for `f` and out again after.
    pub(crate) fn behind_viewing<T>(&mut self, f: impl FnOnce(&mut App) -> T) -> T {
        let Some(mut v) = self.viewing.take() else {
            return f(self);
        };
        self.swap_stash(&mut v.stash);
        let out = f(self);
        self.swap_stash(&mut v.stash);
        self.viewing = Some(v);
        let sel = self.dag.selected;
        self.dag.select(sel);
        self.refresh_inspector();
        out
    }

    /// Exchanges what the screen shows with `stash`.
    pub(crate) fn swap_stash(&mut self, stash: &mut Stash) {
        std::mem::swap(&mut self.pipeline, &mut stash.pipeline);
        std::mem::swap(&mut self.comp, &mut stash.comp);
        std::mem::swap(&mut self.layout, &mut stash.layout);
        std::mem::swap(&mut self.visuals, &mut stash.visuals);
        let sel = self.dag.selected;
        self.dag.select(stash.selected);
        stash.selected = sel;
    }

    fn adopt(&mut self, pipeline: Arc<Pipeline>) -> Vec<Effect> {
        let name = self
            .comp
            .as_ref()
            .map(|c| c.name.clone())
            .or_else(|| self.opts.composition.clone());
        let comp = name
            .as_deref()
            .and_then(|n| pipeline.composition(n))
            .or_else(|| pipeline.compositions.first())
            .cloned();
        let Some(comp) = comp else {
            self.say("the file has no composition to run", true);
            return Vec::new();
        };
        let comp = Arc::new(comp);
        let key = session_key(&pipeline, &comp);
        let mut effects = Vec::new();
        let same_session = self.session.is_for(&key);
        let same_comp = self.comp.as_ref().is_some_and(|c| c.name == comp.name);
        if !same_session && self.session.close() {
            effects.push(Effect::DropSession);
            if self.run_in_progress() {
                self.run = RunState::Idle;
                self.say(
                    "the file's servers changed: the run was stopped; F5 starts a new one",
                    true,
                );
            }
        }
        // Keep what each surviving node showed; the session says which of
        // them went stale. Without a session (its servers changed), the
        // nodes on a changed server and their descendants are stale here.
        let old: IndexMap<String, NodeVisual> = match &self.comp {
            Some(c) if same_comp => c
                .nodes
                .iter()
                .map(|n| n.id.clone())
                .zip(self.visuals.iter().cloned())
                .collect(),
            _ => IndexMap::new(),
        };
        let servers_stale = if same_comp && !same_session {
            self.pipeline
                .as_ref()
                .map(|p| stale_by_servers(p, &pipeline, &comp))
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        self.visuals = comp
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut v = old.get(&n.id).cloned().unwrap_or_default();
                v.mocked = n.mock.is_some();
                v.breakpoint = self.breakpoints.contains(&n.id);
                if servers_stale.contains(&i) && v.record.is_some() {
                    v.status = NodeStatus::Stale;
                }
                if !same_session {
                    // Nothing runs without a session.
                    v.paused_before = false;
                    v.asking = false;
                    v.live_args = None;
                    if v.status == NodeStatus::Running {
                        v.status = NodeStatus::Cancelled;
                    }
                }
                v
            })
            .collect();
        self.breakpoints.retain(|b| comp.index_of(b).is_some());
        self.layout = Some(DagLayout::new(&comp));
        if same_session {
            effects.push(Effect::Send(Command::ReplacePlan(comp.clone())));
            // A changed `vars:` (or case row) makes its readers stale.
            effects.push(Effect::Send(Command::SetVars(self.vars(&pipeline, &comp))));
        }
        self.pipeline = Some(pipeline);
        self.comp = Some(comp.clone());
        let sel = self
            .dag
            .selected_id
            .as_deref()
            .and_then(|s| comp.index_of(s))
            .or(if comp.nodes.is_empty() { None } else { Some(0) });
        self.dag.select(sel);
        self.refresh_inspector();
        effects
    }

    /// Switches to another composition of the file.
    pub fn choose_composition(&mut self, name: &str) -> Vec<Effect> {
        let Some(p) = self.pipeline.clone() else {
            return Vec::new();
        };
        if p.composition(name).is_none() {
            self.say(format!("no composition named {name}"), true);
            return Vec::new();
        }
        self.opts.composition = Some(name.to_owned());
        // A case row belongs to its composition.
        self.opts.case = None;
        self.comp = None;
        self.dag.selected_id = None;
        self.adopt(p)
    }

    // ----- selection --------------------------------------------------

    pub fn selected_index(&self) -> Option<usize> {
        self.dag.selected
    }

    /// Selects node `i`: the inspector shows it and, unless the editor
    /// caused it, the editor moves to its definition.
    pub fn select(&mut self, i: Option<usize>, move_editor: bool) {
        self.dag.select(i);
        // A saved run's nodes are not where the buffer's are.
        let move_editor = move_editor && self.viewing.is_none();
        if move_editor && let (Some(i), Some(comp)) = (i, &self.comp) {
            let span = comp.nodes[i].id_span;
            self.editor
                .goto(span.start.line as usize, span.start.col as usize);
            // Moved by the app: not a move to follow.
            let _ = self.editor.moved_to_line();
        }
        self.refresh_inspector();
    }

    pub(super) fn refresh_inspector(&mut self) {
        let (Some(comp), Some(i)) = (self.comp.clone(), self.dag.selected) else {
            self.inspector.clear();
            self.dag.selected_id = None;
            return;
        };
        let Some(node) = comp.nodes.get(i) else {
            return;
        };
        self.dag.selected_id = Some(node.id.clone());
        // Shared, not copied: a record may hold megabytes of output.
        let record = self.visuals.get(i).and_then(|v| v.record.clone());
        // A call in flight shows the arguments it was really called with;
        // a node not run yet, a preview from this run's recorded parents.
        let live_args = self.visuals.get(i).and_then(|v| v.live_args.clone());
        let preview = match (&record, &live_args) {
            (Some(_), _) => None,
            (None, Some(args)) => Some(args.tree().clone()),
            (None, None) => Some(self.preview_args(&comp, i)),
        };
        self.inspector
            .set_node_shared(&node.id, Some(node), record, preview.as_ref());
        self.inspector.tool_doc = self.tool_doc(node);
        if live_args.is_some() {
            self.inspector.mark_args_live();
        }
        self.sync_live();
    }

    /// Gives the inspector the selected node's live state (Logs tab).
    pub(crate) fn sync_live(&mut self) {
        let Some(v) = self.dag.selected.and_then(|i| self.visuals.get(i)) else {
            return;
        };
        let elapsed_ms = match (v.status, v.started_ms) {
            (NodeStatus::Running, Some(at)) => Some(self.now_ms().saturating_sub(at)),
            _ => None,
        };
        self.inspector.set_live(crate::inspector::Live {
            running: v.status == NodeStatus::Running,
            asking: v.asking,
            note: v.note.clone(),
            logs: v.logs.clone(),
            elapsed_ms,
            stale: v.status == NodeStatus::Stale,
            start_error: self.start_error.clone(),
            task: v.task.clone(),
            protocol: self.server_protocol(),
            iterations: super::state::live_iterations(v, self.now_ms()),
            tick: self.tick,
        });
    }

    /// The MCP revision the selected node's server spoke in the run on
    /// screen.
    fn server_protocol(&self) -> Option<String> {
        let comp = self.comp.as_ref()?;
        let server = comp.nodes.get(self.dag.selected?)?.server.as_ref()?;
        let trace = self.viewing.as_ref().map(|v| &v.trace);
        let trace = trace.or(self.trace.as_ref())?;
        trace.server_protocols.get(server).cloned()
    }

    /// Milliseconds since the current run started (the frozen time in
    /// screenshots).
    pub(crate) fn now_ms(&self) -> u64 {
        self.timeline.now_ms()
    }

    /// Whether a run is starting, running or paused.
    pub fn run_in_progress(&self) -> bool {
        matches!(
            self.run,
            RunState::Connecting | RunState::Running | RunState::Paused { .. }
        )
    }

    /// Re-syncs the inspector when node `i` is the selected one.
    pub(crate) fn sync_live_of(&mut self, i: usize) {
        if self.dag.selected == Some(i) {
            self.sync_live();
        }
    }

    /// A node's args resolved as far as the outputs recorded so far allow
    /// (a fan-out's: each iteration's); the rest reads `<from node.path>`.
    pub fn preview_args(&self, comp: &Composition, i: usize) -> Value {
        // Only the outputs this node refers to are copied into the scope.
        let node = &comp.nodes[i];
        let for_each = node.for_each.iter().map(|f| &f.site);
        let wanted: Vec<&str> = (node.arg_refs.iter().chain(for_each))
            .filter_map(|r| r.reference.root.node_id())
            .collect();
        let scope = self.scope(comp, Some(&wanted));
        pipewright_engine::run::exec::preview_args(node, &scope)
    }

    /// What references see now: the recorded outputs of the nodes in
    /// `only` (all nodes when `None`), and the run's variables.
    fn scope(&self, comp: &Composition, only: Option<&[&str]>) -> Snapshot {
        let vars = match &self.pipeline {
            Some(p) => self.vars(p, comp),
            None => IndexMap::new(),
        };
        let nodes = comp
            .nodes
            .iter()
            .zip(&self.visuals)
            .filter(|(n, _)| only.is_none_or(|ids| ids.contains(&n.id.as_str())))
            .map(|(n, v)| {
                let seen = match (&v.record, v.status) {
                    (Some(r), NodeStatus::Ok | NodeStatus::Stale) => Seen::Output(r.output.clone()),
                    (_, NodeStatus::Skipped) => Seen::Skipped,
                    (_, NodeStatus::Failed) => Seen::Failed,
                    _ => Seen::NotRun,
                };
                (n.id.clone(), seen)
            })
            .collect();
        Snapshot {
            nodes,
            vars: Arc::new(vars),
            item: None,
            pass_vars: comp.passes_vars_through(),
            env: self.opts.settings.env.clone(),
        }
    }

    /// The node whose definition holds the editor's cursor line.
    fn node_at_line(&self, line: usize) -> Option<usize> {
        let comp = self.comp.as_ref()?;
        comp.nodes.iter().position(|n| {
            (n.span.start.line as usize) <= line
                && line <= (n.span.end.line as usize).max(n.span.start.line as usize)
        })
    }

    /// The cursor moved in the editor: the node it is in is selected, and
    /// moving into another composition switches to it.
    pub(crate) fn follow_editor_cursor(&mut self) -> Vec<Effect> {
        let Some(line) = self.editor.moved_to_line() else {
            return Vec::new();
        };
        let effects = self.follow_composition(line);
        if let Some(i) = self.node_at_line(line)
            && self.dag.selected != Some(i)
        {
            self.select(Some(i), false);
        }
        effects
    }

    /// Totals of what has run: (ok, failed, cost, tokens).
    pub fn totals(&self) -> (usize, usize, f64, u64) {
        let mut ok = 0;
        let mut failed = 0;
        let mut cost = 0.0;
        let mut tokens = 0;
        for v in &self.visuals {
            match v.status {
                NodeStatus::Ok => ok += 1,
                NodeStatus::Failed => failed += 1,
                _ => {}
            }
            if let Some(r) = &v.record {
                cost += r.cost_usd;
                tokens += r.tokens;
            }
        }
        (ok, failed, cost, tokens)
    }

    /// The ids of the nodes running now.
    pub fn running(&self) -> Vec<&str> {
        match &self.comp {
            Some(c) => c
                .nodes
                .iter()
                .zip(&self.visuals)
                .filter(|(_, v)| v.status == NodeStatus::Running)
                .map(|(n, _)| n.id.as_str())
                .collect(),
            None => Vec::new(),
        }
    }

    // ----- drawing ----------------------------------------------------

    /// Rows for the DAG pane: enough for the graph, at most half the
    /// column, never less than 5.
    /// The DAG pane's height; `timeline_rows` when it shows the timeline.
    pub(crate) fn dag_height(&self, total: u16, timeline_rows: Option<usize>) -> u16 {
        if let Some(rows) = timeline_rows {
            // A row per node and shown iteration, the axis and the borders.
            let rows = u16::try_from(rows).unwrap_or(u16::MAX);
            return rows.saturating_add(3).clamp(5, (total * 2 / 3).max(5));
        }
        let layers_tall = self
            .comp
            .as_ref()
            .map(|c| c.waves.iter().map(Vec::len).max().unwrap_or(1))
            .unwrap_or(1) as u16;
        let want = layers_tall.saturating_mul(2).saturating_add(3);
        want.clamp(5, (total / 2).max(5))
    }
}

/// The nodes of `comp` whose server's declaration differs between `old`
/// and `new`, and their descendants (indices into `comp.nodes`).
fn stale_by_servers(old: &Pipeline, new: &Pipeline, comp: &Composition) -> Vec<usize> {
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
