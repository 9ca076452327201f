//! The workbench's state and its reactions: key and mouse input, editor
//! re-validations and session events go in; what the screen shows and a list
//! of [`Effect`]s come out. Nothing here awaits or touches the terminal, so
//! every behaviour is testable with a `TestBackend`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use indexmap::IndexMap;
use ratatui::Frame;
use ratatui::layout::{Constraint, Direction, Layout, Position, Rect};
use serde_json::Value;

use crate::engine::cost::pricing::{Pricing, PricingTable};
use crate::engine::file::loader::Loaded;
use crate::engine::file::model::{Budget, Composition, Pipeline};
use crate::engine::lang::reference;
use crate::engine::mcp::servers::ServerArg;
use crate::engine::plan::preflight::Preflight;
use crate::engine::run::budget::{self, Projection};
use crate::engine::run::exec::{Seen, Snapshot};
use crate::engine::run::session::{Command, Event, PauseReason, SessionConfig};
use crate::engine::run::trace::{NodeRecord, NodeStatus, RunStatus, Trace};

use super::config::{Config, Dirs};
use super::dag::{DagLayout, DagState, DagView};
use super::editor::{Editor, EditorEvent};
use super::inspector::Inspector;
use super::keys::{Action, Keymap};
use super::overlay::{self, Overlay, Palette, PaletteItem};
use super::state::NodeVisual;
use super::status;
use super::theme::Theme;

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

/// A line at the bottom that fades after a few seconds.
#[derive(Debug, Clone)]
pub struct Message {
    pub text: String,
    pub error: bool,
    pub at: Instant,
}

/// Where each pane was last drawn, for the mouse.
#[derive(Debug, Clone, Copy, Default)]
struct Areas {
    editor: Rect,
    dag: Rect,
    inspector: Rect,
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
    pub message: Option<Message>,
    pub tick: u64,
    /// A session exists (or is being started) for the current plan.
    pub has_session: bool,
    /// The servers and composition the session was started for; a change
    /// means a new session.
    session_key: Option<String>,
    /// The destructive calls the user allowed, as `node→tool` (asked again
    /// when the plan calls another one).
    allowed_destructive: BTreeSet<String>,
    selected: Option<String>,
    last_cursor_line: usize,
    areas: Areas,
    pub quit: bool,
}

impl App {
    /// A workbench on an opened editor; the first validation arrives with
    /// the editor's first tick.
    pub fn new(opts: Options, dirs: Dirs, config: Config, editor: Editor) -> App {
        // A recovery question waits in the editor: give it the keys.
        let focus = if editor.recovery_pending() {
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
            message: None,
            tick: 0,
            has_session: false,
            session_key: None,
            allowed_destructive: BTreeSet::new(),
            selected: None,
            last_cursor_line: 0,
            areas: Areas::default(),
            quit: false,
        }
    }

    /// Shows a message in the status bar for a few seconds.
    pub fn say(&mut self, text: impl Into<String>, error: bool) {
        self.message = Some(Message {
            text: text.into(),
            error,
            at: Instant::now(),
        });
    }

    // ----- plan -------------------------------------------------------

    /// Adopts a validation result: errors keep the last good plan; a good
    /// plan replaces it (and the session's, keeping valid outputs).
    pub fn on_validated(&mut self, loaded: &Loaded) -> Vec<Effect> {
        use crate::engine::file::diag::Severity;
        self.errors = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        self.warnings = loaded.diagnostics.len() - self.errors;
        self.editor.set_diagnostics(loaded.diagnostics.clone());
        if loaded.has_errors() {
            return Vec::new();
        }
        let Some(pipeline) = loaded.pipeline.clone() else {
            return Vec::new();
        };
        self.adopt(Arc::new(pipeline))
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
        let same_session = self.has_session && self.session_key.as_deref() == Some(key.as_str());
        if self.has_session && !same_session {
            effects.push(Effect::DropSession);
            self.has_session = false;
            self.session_key = None;
        }
        // Keep what each surviving node showed; the session says which of
        // them went stale.
        let old: IndexMap<String, NodeVisual> = match &self.comp {
            Some(c) if same_session => c
                .nodes
                .iter()
                .map(|n| n.id.clone())
                .zip(self.visuals.iter().cloned())
                .collect(),
            _ => IndexMap::new(),
        };
        self.visuals = comp
            .nodes
            .iter()
            .map(|n| {
                let mut v = old.get(&n.id).cloned().unwrap_or_default();
                v.mocked = n.mock.is_some();
                v.breakpoint = self.breakpoints.contains(&n.id);
                v
            })
            .collect();
        self.breakpoints.retain(|b| comp.index_of(b).is_some());
        self.layout = Some(DagLayout::new(&comp));
        if same_session {
            effects.push(Effect::Send(Command::ReplacePlan(comp.clone())));
        }
        self.pipeline = Some(pipeline);
        self.comp = Some(comp.clone());
        let sel = self
            .selected
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
        self.comp = None;
        self.selected = None;
        self.adopt(p)
    }

    /// The case row in use: `--case`, else the composition's first.
    fn case_row<'c>(&self, comp: &'c Composition) -> Option<&'c crate::engine::file::model::Case> {
        match &self.opts.case {
            Some(name) => comp.cases.iter().find(|c| &c.name == name),
            None => comp.cases.first(),
        }
    }

    /// `${var.X}` values: file `vars:` < case row < `--var`.
    fn vars(&self, pipeline: &Pipeline, comp: &Composition) -> IndexMap<String, Value> {
        let mut vars = pipeline.vars.clone();
        if let Some(r) = self.case_row(comp) {
            vars.extend(r.vars.clone());
        }
        vars.extend(self.opts.vars.clone());
        vars
    }

    fn session_config(&self, pipeline: &Pipeline, comp: &Composition) -> SessionConfig {
        let row = self.case_row(comp);
        let vars = self.vars(pipeline, comp);
        let expect = row
            .and_then(|r| r.expect.clone())
            .unwrap_or_else(|| comp.expect.clone());
        SessionConfig {
            pricing: Arc::new(pricing_of(pipeline)),
            file: self.opts.file.display().to_string(),
            case: row.map(|r| r.name.clone()),
            vars,
            budget: comp.budget.or(pipeline.budget),
            default_timeout: self.opts.timeout,
            expect,
            ..SessionConfig::default()
        }
    }

    /// The budget in force, for the status bar.
    pub fn budget(&self) -> Budget {
        match (&self.pipeline, &self.comp) {
            (Some(p), Some(c)) => c.budget.or(p.budget),
            _ => Budget::default(),
        }
    }

    // ----- selection --------------------------------------------------

    pub fn selected_index(&self) -> Option<usize> {
        self.dag.selected
    }

    /// Selects node `i`: the inspector shows it and, unless the editor
    /// caused it, the editor moves to its definition.
    pub fn select(&mut self, i: Option<usize>, move_editor: bool) {
        self.dag.select(i);
        if move_editor && let (Some(i), Some(comp)) = (i, &self.comp) {
            let span = comp.nodes[i].id_span;
            self.editor
                .goto(span.start.line as usize, span.start.col as usize);
            self.last_cursor_line = self.editor.cursor().0;
        }
        self.refresh_inspector();
    }

    fn refresh_inspector(&mut self) {
        let (Some(comp), Some(i)) = (self.comp.clone(), self.dag.selected) else {
            self.inspector.clear();
            self.selected = None;
            return;
        };
        let Some(node) = comp.nodes.get(i) else {
            return;
        };
        self.selected = Some(node.id.clone());
        // Shared, not copied: a record may hold megabytes of output.
        let record = self.visuals.get(i).and_then(|v| v.record.clone());
        let preview = if record.is_none() {
            Some(self.preview_args(&comp, i))
        } else {
            None
        };
        self.inspector
            .set_node_shared(&node.id, Some(node), record, preview.as_ref());
    }

    /// A node's args resolved as far as the outputs recorded so far allow;
    /// the rest reads `<from node.path>`.
    pub fn preview_args(&self, comp: &Composition, i: usize) -> Value {
        // Only the outputs this node refers to are copied into the scope.
        let wanted: Vec<&str> = comp.nodes[i]
            .arg_refs
            .iter()
            .filter_map(|r| r.reference.root.node_id())
            .collect();
        let scope = self.scope(comp, Some(&wanted));
        reference::resolve_value_partial(&comp.nodes[i].args, &scope).value
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

    fn follow_editor_cursor(&mut self) {
        let line = self.editor.cursor().0;
        if line == self.last_cursor_line {
            return;
        }
        self.last_cursor_line = line;
        if let Some(i) = self.node_at_line(line)
            && self.dag.selected != Some(i)
        {
            self.select(Some(i), false);
        }
    }

    // ----- input ------------------------------------------------------

    /// A key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if let Some(ov) = self.overlay.take() {
            return self.on_overlay_key(ov, key);
        }
        let in_editor = self.focus == Focus::Editor;
        let action = self.keymap.action(&key, in_editor);
        // The pane gets the key first unless it is a global binding; the
        // inspector's filter box takes letters while it is open.
        if let Some(a) = action
            && (in_editor || !self.pane_wants(key))
        {
            return self.act(a);
        }
        match self.focus {
            Focus::Editor => {
                if key.code == KeyCode::Esc && !self.editor.handle_key(key) {
                    self.focus = Focus::Dag;
                    return Vec::new();
                }
                if key.code != KeyCode::Esc {
                    self.editor.handle_key(key);
                }
                self.follow_editor_cursor();
            }
            Focus::Inspector => {
                if !self.inspector.handle_key(key) && key.code == KeyCode::Esc {
                    self.focus = Focus::Dag;
                }
            }
            Focus::Dag => self.dag_key(key),
        }
        Vec::new()
    }

    /// Whether the focused pane takes this key before the command keys
    /// (the inspector's filter box does while it is open).
    fn pane_wants(&mut self, key: KeyEvent) -> bool {
        if self.focus != Focus::Inspector || Key::from(key).is_global() {
            return false;
        }
        self.inspector.handle_key(key)
    }

    fn dag_key(&mut self, key: KeyEvent) {
        let Some(layout) = &self.layout else {
            return;
        };
        let before = self.dag.selected;
        match key.code {
            KeyCode::Left | KeyCode::Char('h') => self.dag.move_left(layout),
            KeyCode::Right | KeyCode::Char('l') => self.dag.move_right(layout),
            KeyCode::Up | KeyCode::Char('k') => self.dag.move_up(layout),
            KeyCode::Down | KeyCode::Char('j') => self.dag.move_down(layout),
            KeyCode::Enter => {
                self.focus = Focus::Inspector;
                return;
            }
            KeyCode::Char('i') => {
                self.focus = Focus::Editor;
                return;
            }
            _ => return,
        }
        if self.dag.selected != before {
            let sel = self.dag.selected;
            self.select(sel, true);
        }
    }

    /// A mouse event, routed to the pane under it.
    pub fn on_mouse(&mut self, ev: MouseEvent) -> Vec<Effect> {
        if self.overlay.is_some() {
            return Vec::new();
        }
        let at = Position::new(ev.column, ev.row);
        let a = self.areas;
        if a.dag.contains(at) {
            match ev.kind {
                MouseEventKind::Down(MouseButton::Left) => {
                    self.focus = Focus::Dag;
                    if let Some(layout) = &self.layout
                        && let Some(i) = self.dag.hit(layout, ev.column, ev.row)
                    {
                        self.select(Some(i), true);
                    }
                }
                MouseEventKind::ScrollDown => self.dag.scroll_by(0, 2),
                MouseEventKind::ScrollUp => self.dag.scroll_by(0, -2),
                MouseEventKind::ScrollRight => self.dag.scroll_by(4, 0),
                MouseEventKind::ScrollLeft => self.dag.scroll_by(-4, 0),
                _ => {}
            }
        } else if a.editor.contains(at) {
            if matches!(ev.kind, MouseEventKind::Down(_)) {
                self.focus = Focus::Editor;
            }
            self.editor.handle_mouse(ev, a.editor);
            self.follow_editor_cursor();
        } else if a.inspector.contains(at) {
            if matches!(ev.kind, MouseEventKind::Down(_)) {
                self.focus = Focus::Inspector;
            }
            self.inspector.handle_mouse(ev, a.inspector);
        }
        Vec::new()
    }

    /// Text pasted into the terminal goes into the editor as one edit.
    pub fn on_paste(&mut self, text: &str) {
        if self.focus != Focus::Editor || self.overlay.is_some() {
            return;
        }
        self.editor.paste_text(text);
        self.follow_editor_cursor();
    }

    /// Carries out an action.
    pub fn act(&mut self, action: Action) -> Vec<Effect> {
        let sel = self.selected_node_id();
        match action {
            Action::Run => self.command(Command::Run, true),
            Action::Step => self.command(Command::Step, true),
            Action::Continue => match self.run {
                RunState::Paused { .. } => self.command(Command::Resume, false),
                RunState::Idle | RunState::Finished(_) => self.command(Command::Run, true),
                _ => Vec::new(),
            },
            Action::Pause => self.command(Command::Pause, false),
            Action::Cancel => self.command(Command::Cancel, false),
            Action::Breakpoint => {
                let Some(id) = sel else {
                    return self.no_selection();
                };
                let on = !self.breakpoints.remove(&id);
                if on {
                    self.breakpoints.insert(id.clone());
                }
                if let Some(i) = self.dag.selected
                    && let Some(v) = self.visuals.get_mut(i)
                {
                    v.breakpoint = on;
                }
                if self.has_session {
                    vec![Effect::Send(Command::ToggleBreakpoint(id))]
                } else {
                    Vec::new()
                }
            }
            Action::Rerun | Action::RerunFrom | Action::Skip | Action::Pin => {
                let Some(id) = sel else {
                    return self.no_selection();
                };
                let cmd = match action {
                    Action::Rerun => Command::Rerun(id),
                    Action::RerunFrom => Command::RerunFrom(id),
                    Action::Skip => Command::Skip(id),
                    _ => Command::Pin(id),
                };
                let start = matches!(cmd, Command::Rerun(_) | Command::RerunFrom(_));
                self.command(cmd, start)
            }
            Action::DryRun | Action::Estimate => {
                self.overlay = Some(self.plan_overlay(action == Action::Estimate));
                Vec::new()
            }
            Action::NextPane | Action::PrevPane => {
                let order = [Focus::Editor, Focus::Dag, Focus::Inspector];
                let at = order.iter().position(|f| *f == self.focus).unwrap_or(0);
                let step = if action == Action::NextPane { 1 } else { 2 };
                self.focus = order[(at + step) % 3];
                Vec::new()
            }
            Action::Save => {
                match self.editor.save() {
                    Ok(()) => self.say(format!("saved {}", self.editor.path().display()), false),
                    Err(e) => self.say(
                        format!("could not save {}: {e}", self.editor.path().display()),
                        true,
                    ),
                }
                Vec::new()
            }
            Action::ExternalEditor => vec![Effect::ExternalEditor],
            Action::Palette => {
                self.overlay = Some(Overlay::Palette(Palette::new(self.palette_items())));
                Vec::new()
            }
            Action::Help => {
                self.overlay = Some(Overlay::Help { scroll: 0 });
                Vec::new()
            }
            Action::Quit => {
                if self.editor.is_dirty() {
                    self.overlay = Some(Overlay::ConfirmQuit);
                    Vec::new()
                } else {
                    self.quit = true;
                    vec![Effect::Quit]
                }
            }
        }
    }

    fn no_selection(&mut self) -> Vec<Effect> {
        self.say("select a node first", true);
        Vec::new()
    }

    fn selected_node_id(&self) -> Option<String> {
        let comp = self.comp.as_ref()?;
        Some(comp.nodes.get(self.dag.selected?)?.id.clone())
    }

    /// Sends `cmd` to the session, starting one first when `start` allows.
    fn command(&mut self, cmd: Command, start: bool) -> Vec<Effect> {
        if self.has_session {
            if matches!(cmd, Command::Run) {
                self.trace = None;
            }
            return vec![Effect::Send(cmd)];
        }
        if !start {
            self.say("nothing is running (F5 runs, F10 steps)", true);
            return Vec::new();
        }
        if self.errors > 0 && self.pipeline.is_none() {
            self.say("the file has errors; fix them to run", true);
            return Vec::new();
        }
        let (Some(p), Some(c)) = (self.pipeline.clone(), self.comp.clone()) else {
            self.say("no valid plan yet", true);
            return Vec::new();
        };
        let then = match cmd {
            // A re-run needs its parents' outputs: without a session there
            // are none, so run up to it instead.
            Command::Rerun(_) | Command::RerunFrom(_) => vec![Command::Run],
            other => vec![other],
        };
        self.has_session = true;
        self.session_key = Some(session_key(&p, &c));
        self.run = RunState::Connecting;
        let cfg = Box::new(self.session_config(&p, &c));
        vec![Effect::Start {
            pipeline: p,
            comp: c,
            cfg,
            breakpoints: self.breakpoints.iter().cloned().collect(),
            then,
        }]
    }

    fn palette_items(&self) -> Vec<PaletteItem> {
        let mut items: Vec<PaletteItem> = Action::ALL
            .iter()
            .map(|a| PaletteItem::Action(*a, self.keymap.label(*a)))
            .collect();
        for (name, _) in super::theme::BUILTIN {
            items.push(PaletteItem::Theme((*name).to_owned()));
        }
        if let Some(p) = &self.pipeline {
            for c in &p.compositions {
                items.push(PaletteItem::Composition(c.name.clone()));
            }
        }
        if let Some(c) = &self.comp {
            for n in &c.nodes {
                items.push(PaletteItem::Node(n.id.clone()));
            }
        }
        items
    }

    fn on_overlay_key(&mut self, ov: Overlay, key: KeyEvent) -> Vec<Effect> {
        match ov {
            Overlay::ConfirmQuit => match key.code {
                KeyCode::Char('s') | KeyCode::Char('S') => {
                    let mut e = self.act(Action::Save);
                    if !self.editor.is_dirty() {
                        self.quit = true;
                        e.push(Effect::Quit);
                    }
                    e
                }
                KeyCode::Char('q') | KeyCode::Char('Q') | KeyCode::Char('y') => {
                    self.editor.discard_recovery();
                    self.quit = true;
                    vec![Effect::Quit]
                }
                _ => Vec::new(),
            },
            Overlay::ConfirmDestructive { calls, .. } => {
                if matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y')) {
                    self.allowed_destructive.extend(calls);
                    vec![Effect::Proceed]
                } else {
                    self.on_start_failed("not run: destructive calls were not allowed");
                    vec![Effect::DropSession]
                }
            }
            Overlay::Palette(mut p) => match key.code {
                KeyCode::Esc => Vec::new(),
                KeyCode::Enter => match p.chosen().cloned() {
                    Some(item) => self.run_palette_item(item),
                    None => Vec::new(),
                },
                _ => {
                    p.key(key);
                    self.overlay = Some(Overlay::Palette(p));
                    Vec::new()
                }
            },
            other => {
                let closes = matches!(key.code, KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter)
                    || self.keymap.action(&key, false) == Some(Action::Help);
                if !closes {
                    self.overlay = Some(other.scrolled(key));
                }
                Vec::new()
            }
        }
    }

    fn run_palette_item(&mut self, item: PaletteItem) -> Vec<Effect> {
        match item {
            PaletteItem::Action(a, _) => self.act(a),
            PaletteItem::Theme(name) => {
                match Theme::load(&name, self.dirs.config.as_deref()) {
                    Ok(t) => {
                        self.theme = t;
                        self.say(format!("theme {name}"), false);
                    }
                    Err(e) => self.say(e.to_string(), true),
                }
                Vec::new()
            }
            PaletteItem::Composition(name) => self.choose_composition(&name),
            PaletteItem::Node(id) => {
                let i = self.comp.as_ref().and_then(|c| c.index_of(&id));
                self.select(i, true);
                Vec::new()
            }
        }
    }

    fn plan_overlay(&self, estimate: bool) -> Overlay {
        let Some(comp) = &self.comp else {
            return Overlay::Text {
                title: "plan".into(),
                body: vec!["no valid plan: fix the file's errors first".into()],
                scroll: 0,
            };
        };
        // One scope for the whole plan, not one per node.
        let scope = self.scope(comp, None);
        let args: Vec<Value> = comp
            .nodes
            .iter()
            .map(|n| reference::resolve_value_partial(&n.args, &scope).value)
            .collect();
        let projections: Vec<Projection> = if estimate {
            let pricing = self
                .pipeline
                .as_deref()
                .map(pricing_of)
                .unwrap_or_else(|| Pricing::new(PricingTable::bundled(), None));
            comp.nodes
                .iter()
                .map(|n| budget::project_node(&pricing, n, &scope))
                .collect()
        } else {
            Vec::new()
        };
        Overlay::Plan(overlay::plan_lines(
            comp,
            &self.visuals,
            &args,
            estimate.then_some(projections.as_slice()),
        ))
    }

    // ----- ticks and session events ------------------------------------

    /// Called on every tick: animates, lets the editor validate and watch
    /// the file, and picks up the inspector's background work.
    pub fn on_tick(&mut self, now: Instant) -> Vec<Effect> {
        self.tick = self.tick.wrapping_add(1);
        let mut effects = Vec::new();
        for ev in self.editor.tick(now) {
            match ev {
                EditorEvent::Validated { loaded, .. } => effects.extend(self.on_validated(&loaded)),
                EditorEvent::Saved(p) => self.say(format!("saved {}", p.display()), false),
                EditorEvent::ExternalChange { dirty } => {
                    if dirty {
                        // The editor asks reload-or-keep; it needs the keys.
                        self.focus = Focus::Editor;
                        self.overlay = None;
                    } else {
                        self.say("the file changed on disk: reloaded", false);
                    }
                }
                EditorEvent::Message(m) => self.say(m, false),
            }
        }
        self.inspector.poll();
        if let Some(m) = &self.message
            && now.duration_since(m.at) > Duration::from_secs(6)
        {
            self.message = None;
        }
        effects
    }

    /// Writes the recovery copy now (SIGTERM, SIGHUP): the editor's
    /// debounce is skipped by ticking it from the future.
    pub fn editor_flush_recovery(&mut self) {
        let _ = self.editor.tick(Instant::now() + Duration::from_secs(60));
    }

    /// Preflight ran on the connected servers' tool lists. Problems go to
    /// the editor's gutter at their nodes and nothing runs; destructive
    /// calls not yet allowed are asked about first.
    pub fn on_preflight(&mut self, report: &Preflight) -> Preflighted {
        if !report.ok() {
            let mut diags = self.editor.diagnostics().to_vec();
            for p in &report.problems {
                if !diags.contains(p) {
                    diags.push(p.clone());
                }
            }
            let n = report.problems.len();
            self.editor.set_diagnostics(diags);
            self.on_start_failed(&format!(
                "preflight: {n} problem(s) (see the editor); nothing was called"
            ));
            return Preflighted::Stop;
        }
        let new: Vec<String> = report
            .destructive
            .iter()
            .map(|d| format!("{}→{}", d.node, d.tool))
            .filter(|k| !self.allowed_destructive.contains(k))
            .collect();
        if new.is_empty() {
            return Preflighted::Go;
        }
        let mut body = vec![
            "This run calls tools their servers mark destructive:".to_owned(),
            String::new(),
        ];
        for d in &report.destructive {
            body.push(format!(
                "  node {:<16} {} on server {}",
                d.node, d.tool, d.server
            ));
        }
        body.push(String::new());
        body.push("y: run them   Esc: do not run".to_owned());
        self.overlay = Some(Overlay::ConfirmDestructive { calls: new, body });
        Preflighted::Ask
    }

    /// The session could not start (a server did not answer, …).
    pub fn on_start_failed(&mut self, error: &str) {
        self.has_session = false;
        self.session_key = None;
        self.run = RunState::Idle;
        self.say(error.to_owned(), true);
    }

    /// A session event: the panes redraw from the state it leaves.
    pub fn on_session(&mut self, ev: Event) -> Vec<Effect> {
        let idx = |app: &App, id: &str| app.comp.as_ref().and_then(|c| c.index_of(id));
        match ev {
            Event::RunStarted { .. } => {
                self.run = RunState::Running;
                for v in &mut self.visuals {
                    v.paused_before = false;
                }
            }
            Event::NodeStatus { id, status, reason } => {
                if let Some(i) = idx(self, &id) {
                    let v = &mut self.visuals[i];
                    v.status = status;
                    if status == NodeStatus::Pending {
                        v.progress = None;
                        v.record = None;
                    }
                    if status == NodeStatus::Skipped
                        && let Some(r) = reason
                    {
                        v.record = Some(Arc::new(NodeRecord {
                            status: NodeStatus::Skipped,
                            skip_reason: Some(r),
                            ..NodeRecord::default()
                        }));
                    }
                }
            }
            Event::NodeStarted { id, .. } => {
                if let Some(i) = idx(self, &id) {
                    self.visuals[i].status = NodeStatus::Running;
                    self.visuals[i].paused_before = false;
                }
            }
            Event::Retrying { id, attempt, error } => {
                self.say(
                    format!("{id}: attempt {attempt} failed, retrying: {error}"),
                    false,
                );
            }
            Event::Iteration {
                id, done, total, ..
            } => {
                if let Some(i) = idx(self, &id) {
                    self.visuals[i].progress = Some((done, total));
                }
            }
            Event::NodeFinished { id, record } => {
                if let Some(i) = idx(self, &id) {
                    let v = &mut self.visuals[i];
                    v.status = record.status;
                    if !record.iterations.is_empty() {
                        let done = record
                            .iterations
                            .iter()
                            .filter(|r| r.status.is_terminal())
                            .count();
                        v.progress = Some((done, record.iterations.len()));
                    }
                    v.record = Some(Arc::from(record));
                    if self.dag.selected == Some(i) {
                        self.refresh_inspector();
                    }
                }
            }
            Event::Paused { reason, before } => {
                for v in &mut self.visuals {
                    v.paused_before = false;
                }
                if let Some(b) = &before
                    && let Some(i) = idx(self, b)
                {
                    self.visuals[i].paused_before = true;
                }
                self.run = RunState::Paused { reason, before };
            }
            Event::Resumed => {
                for v in &mut self.visuals {
                    v.paused_before = false;
                }
                self.run = RunState::Running;
            }
            Event::Breakpoint { id, on } => {
                if let Some(i) = idx(self, &id) {
                    self.visuals[i].breakpoint = on;
                }
                if on {
                    self.breakpoints.insert(id);
                } else {
                    self.breakpoints.remove(&id);
                }
            }
            Event::PlanReplaced { stale, .. } => {
                for id in stale {
                    if let Some(i) = idx(self, &id) {
                        self.visuals[i].status = NodeStatus::Stale;
                    }
                }
                if !matches!(self.run, RunState::Running) {
                    self.refresh_inspector();
                }
            }
            Event::Pinned { id, yaml, .. } => {
                let mut body = vec![
                    format!("# paste under node `{id}` to answer from this output without a call"),
                    String::new(),
                ];
                body.extend(yaml.lines().map(str::to_owned));
                self.overlay = Some(Overlay::Text {
                    title: format!("mock for {id}"),
                    body,
                    scroll: 0,
                });
            }
            Event::BudgetTripped { cap, detail } => {
                self.say(format!("budget: {cap} tripped: {detail}"), true);
            }
            Event::Rejected { command, reason } => {
                self.say(format!("{command}: {reason}"), true);
            }
            Event::RunFinished { status, trace } => {
                self.run = RunState::Finished(status);
                for v in &mut self.visuals {
                    v.paused_before = false;
                }
                self.refresh_inspector();
                self.trace = Some((*trace).clone());
                return vec![Effect::SaveTrace(trace)];
            }
        }
        Vec::new()
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

    /// Draws the whole screen.
    pub fn draw(&mut self, f: &mut Frame<'_>) {
        let area = f.area();
        let rows = Layout::default()
            .direction(Direction::Vertical)
            .constraints([Constraint::Min(3), Constraint::Length(1)])
            .split(area);
        let editor_share = if area.width >= 160 { 42 } else { 50 };
        let cols = Layout::default()
            .direction(Direction::Horizontal)
            .constraints([
                Constraint::Percentage(editor_share),
                Constraint::Percentage(100 - editor_share),
            ])
            .split(rows[0]);
        let dag_rows = self.dag_height(cols[1].height);
        let right = Layout::default()
            .direction(Direction::Vertical)
            .constraints([Constraint::Length(dag_rows), Constraint::Min(3)])
            .split(cols[1]);
        self.areas = Areas {
            editor: cols[0],
            dag: right[0],
            inspector: right[1],
        };
        let buf = f.buffer_mut();
        self.editor
            .render(cols[0], buf, &self.theme, self.focus == Focus::Editor);
        if let (Some(comp), Some(layout)) = (&self.comp, &self.layout) {
            let view = DagView {
                comp,
                layout,
                nodes: &self.visuals,
                theme: &self.theme,
                tick: self.tick,
                focused: self.focus == Focus::Dag,
            };
            ratatui::widgets::StatefulWidget::render(view, right[0], buf, &mut self.dag);
        } else {
            overlay::empty_dag(
                right[0],
                buf,
                &self.theme,
                self.errors,
                self.focus == Focus::Dag,
            );
        }
        self.inspector
            .render(right[1], buf, &self.theme, self.focus == Focus::Inspector);
        status::render(self, rows[1], buf);
        if let Some(ov) = &self.overlay {
            overlay::render(ov, self, area, buf);
        }
    }

    /// Rows for the DAG pane: enough for the graph, at most half the
    /// column, never less than 5.
    fn dag_height(&self, total: u16) -> u16 {
        let layers_tall = self
            .comp
            .as_ref()
            .map(|c| c.waves.iter().map(Vec::len).max().unwrap_or(1))
            .unwrap_or(1) as u16;
        let want = layers_tall.saturating_mul(2).saturating_add(3);
        want.clamp(5, (total / 2).max(5))
    }
}

/// The bundled pricing table with the file's `pricing:` over it; a bad
/// inline table falls back to the bundled one (the loader reports it).
fn pricing_of(p: &Pipeline) -> Pricing {
    let base = PricingTable::bundled();
    let table = match p.pricing.as_ref().map(PricingTable::from_value) {
        Some(Ok(over)) => base.overlay(over),
        _ => base,
    };
    Pricing::new(table, None)
}

/// What a session depends on besides the plan: the composition chosen and
/// the server declarations.
fn session_key(p: &Pipeline, c: &Composition) -> String {
    format!("{}\u{0}{:?}", c.name, p.servers)
}

/// `crossterm`'s key, folded like the keymap does.
use super::keys::Key;
impl From<KeyEvent> for Key {
    fn from(ev: KeyEvent) -> Key {
        Key::from_event(&ev)
    }
}
