//! The per-node trace inspector pane: tabs for a node's resolved args, its
//! output as a foldable JSON tree with a jq filter box, its error, timing,
//! fan-out iterations, the raw JSON-RPC exchange, and what the server said
//! besides its result (progress, questions, log lines).
//!
//! Nothing here walks a whole value on the input or render path: trees
//! flatten only what is open and draw only what is on screen; jq filters and
//! the pretty-printing of the Raw tab run on background threads and come
//! back through [`Inspector::poll`], tagged so that stale work is dropped.

mod details;
mod filter;
mod find;
mod iterations;
mod json_tree;
mod keys;
mod logs;
mod navigation;
mod pretty;
mod render;
mod shared;
pub(crate) mod text;
mod yank;

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};

use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::Rect;
use serde_json::Value;

use pipewright_engine::file::model::Node;
use pipewright_engine::run::trace::{IterationRecord, NodeRecord, NodeStatus};

use filter::{Edit, FilterBox, FilterDone};
use iterations::IterationsView;
use json_tree::JsonTree;
pub use logs::Live;
use navigation::{scroll_text, tree_click, tree_key};
use pretty::{PrettyText, TextView};
use shared::SharedValue;

/// The inspector's tabs, in display order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Tab {
    Args,
    Output,
    Error,
    Timing,
    Iterations,
    Raw,
    /// The server's progress, questions and log lines.
    Logs,
}

impl Tab {
    /// Every tab, in display order (keys 1-7).
    pub const ALL: [Tab; 7] = [
        Tab::Args,
        Tab::Output,
        Tab::Error,
        Tab::Timing,
        Tab::Iterations,
        Tab::Raw,
        Tab::Logs,
    ];

    /// The tab's name in the title bar.
    pub fn name(self) -> &'static str {
        match self {
            Tab::Args => "Args",
            Tab::Output => "Output",
            Tab::Error => "Error",
            Tab::Timing => "Timing",
            Tab::Iterations => "Iterations",
            Tab::Raw => "Raw",
            Tab::Logs => "Logs",
        }
    }

    /// The name in a narrow pane.
    pub fn short(self) -> &'static str {
        match self {
            Tab::Args => "Args",
            Tab::Output => "Out",
            Tab::Error => "Err",
            Tab::Timing => "Time",
            Tab::Iterations => "Iter",
            Tab::Raw => "Raw",
            Tab::Logs => "Logs",
        }
    }

    fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    fn step(self, delta: isize) -> Tab {
        let n = Tab::ALL.len() as isize;
        Tab::ALL[((self.index() as isize + delta).rem_euclid(n)) as usize]
    }
}

/// Where the Args tab's value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgsSource {
    /// The record's resolved args.
    Resolved,
    /// A preview resolved from the parents' recorded outputs.
    Preview,
    /// The arguments of the call in flight.
    Live,
    /// The args as written in the file (references unresolved).
    AsWritten,
}

/// The shown node.
#[derive(Debug)]
pub(crate) struct Shown {
    id: String,
    tool: Option<String>,
    server: Option<String>,
    /// What a fan-out iterates over (its `for_each:` as written).
    for_each: Option<String>,
    /// The last run, shared with the app when it passed an `Arc`.
    record: Option<Arc<NodeRecord>>,
    args_source: ArgsSource,
    /// Identifies what `set_node` was given, so that showing the same
    /// record again costs nothing.
    key: ShownKey,
}

/// A cheap fingerprint of `set_node`'s arguments.
#[derive(Debug, Clone, PartialEq)]
struct ShownKey {
    id: String,
    node_hash: Option<String>,
    record: Option<RecordKey>,
    /// A hash of the preview's text (previews are small, and a new one
    /// may sit where the last one was).
    preview: Option<u64>,
}

/// The fields of a record that change between runs, and the addresses of
/// its big values (a new record lives elsewhere).
#[derive(Debug, Clone, PartialEq)]
struct RecordKey {
    status: NodeStatus,
    attempts: u32,
    duration_ms: u64,
    started_at: Option<String>,
    iterations: usize,
    error_len: usize,
    output_at: usize,
    args_at: usize,
}

impl ShownKey {
    fn of(
        id: &str,
        node: Option<&Node>,
        record: Option<&NodeRecord>,
        preview: Option<&Value>,
    ) -> ShownKey {
        ShownKey {
            id: id.to_owned(),
            node_hash: node.map(|n| n.hash.clone()),
            record: record.map(|r| RecordKey {
                status: r.status,
                attempts: r.attempts,
                duration_ms: r.duration_ms,
                started_at: r.started_at.clone(),
                iterations: r.iterations.len(),
                error_len: r.error.as_ref().map_or(0, String::len),
                output_at: std::ptr::from_ref(&r.output) as usize,
                args_at: std::ptr::from_ref(&r.args) as usize,
            }),
            preview: preview.map(|p| {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                p.to_string().hash(&mut h);
                h.finish()
            }),
        }
    }
}

/// Work finished on a background thread.
#[derive(Debug)]
enum Done {
    Filter(FilterDone),
    Pretty { generation: u64, text: PrettyText },
}

impl From<FilterDone> for Done {
    fn from(d: FilterDone) -> Self {
        Done::Filter(d)
    }
}

/// The Raw tab's text: made on first view, once per shown record.
#[derive(Debug)]
enum RawText {
    NotStarted,
    Pending,
    Ready(PrettyText),
}

/// The per-node trace inspector pane.
pub struct Inspector {
    tab: Tab,
    shown: Option<Shown>,
    args: Option<JsonTree>,
    output: Option<JsonTree>,
    /// The output filtered by the jq box, when a filter ran.
    filtered: Option<JsonTree>,
    filter: FilterBox,
    /// Each node's own jq filter, by context (the live workbench or a
    /// saved run) and node id: a filter typed on one node stays with it.
    filters: std::collections::HashMap<(String, String), String>,
    /// The context filters are kept under (`""`: the live workbench).
    context: String,
    error_scroll: u16,
    iterations: IterationsView,
    raw: RawText,
    raw_view: TextView,
    /// The Raw tab's search (`/`).
    find: Option<crate::find::Find>,
    /// The shown node's live state (Logs tab).
    live: Live,
    logs_scroll: u16,
    /// Rows the Logs tab showed when last drawn (a search keeps its match
    /// in them).
    logs_page: usize,
    /// Long lines wrap (`w`): the selected tree row is drawn whole, Raw's
    /// lines continue on the next rows.
    wrap: bool,
    /// How much the tab names are cut to fit the pane (set at each draw):
    /// 0 whole, 1 short, 2 the active tab's name and the others' keys.
    compact: u8,
    /// Whether the pane had the focus at the last draw (its title's mark).
    focused: bool,
    /// The shown node's tool as its server lists it (Args tab, below the
    /// arguments): description and argument schema.
    tool_doc: Option<(String, String)>,
    /// Bumped whenever the shown node or record changes.
    generation: u64,
    done_tx: Sender<Done>,
    done_rx: Receiver<Done>,
}

impl Default for Inspector {
    fn default() -> Self {
        Inspector::new()
    }
}

impl Inspector {
    /// An empty inspector on the Output tab.
    pub fn new() -> Inspector {
        let (done_tx, done_rx) = mpsc::channel();
        Inspector {
            tab: Tab::Output,
            shown: None,
            args: None,
            output: None,
            filtered: None,
            filter: FilterBox::default(),
            filters: std::collections::HashMap::new(),
            context: String::new(),
            error_scroll: 0,
            iterations: IterationsView::default(),
            raw: RawText::NotStarted,
            raw_view: TextView::default(),
            find: None,
            live: Live::default(),
            logs_scroll: 0,
            logs_page: 0,
            wrap: false,
            compact: 0,
            focused: false,
            tool_doc: None,
            generation: 0,
            done_tx,
            done_rx,
        }
    }

    /// Shows this node: its definition and its record (None = never ran;
    /// then Args shows `preview`, or the args as written). Showing the same
    /// record again is cheap; a new record is copied once (use
    /// [`Inspector::set_node_shared`] to avoid the copy). The tab, the
    /// filter and (for the same node) the iteration selection are kept.
    pub fn set_node(
        &mut self,
        id: &str,
        node: Option<&Node>,
        record: Option<&NodeRecord>,
        preview: Option<&Value>,
    ) {
        let key = ShownKey::of(id, node, record, preview);
        if self.shown.as_ref().is_some_and(|s| s.key == key) {
            return;
        }
        let record = record.map(|r| Arc::new(copy_record(r)));
        self.show(id, node, record, preview, key);
    }

    /// Like [`Inspector::set_node`] with a record the app shares: nothing is
    /// copied, so showing a record with tens of MB of output is immediate.
    pub fn set_node_shared(
        &mut self,
        id: &str,
        node: Option<&Node>,
        record: Option<Arc<NodeRecord>>,
        preview: Option<&Value>,
    ) {
        let key = ShownKey::of(id, node, record.as_deref(), preview);
        if self.shown.as_ref().is_some_and(|s| s.key == key) {
            return;
        }
        self.show(id, node, record, preview, key);
    }

    fn show(
        &mut self,
        id: &str,
        node: Option<&Node>,
        record: Option<Arc<NodeRecord>>,
        preview: Option<&Value>,
        key: ShownKey,
    ) {
        let same_node = self.shown.as_ref().is_some_and(|s| s.id == id);
        if !same_node {
            self.switch_filter(Some(id));
        }
        self.generation += 1;
        let (args, args_source) = match (&record, preview, node) {
            // A fan-out's own args only say what it iterates over: each
            // iteration's resolved args are what was called.
            (Some(r), _, _) if r.iterations.iter().any(|i| !i.args.is_null()) => (
                Value::Array(r.iterations.iter().map(|i| i.args.tree().clone()).collect()),
                ArgsSource::Resolved,
            ),
            (Some(r), _, _) => (r.args.tree().clone(), ArgsSource::Resolved),
            (None, Some(p), _) => (p.clone(), ArgsSource::Preview),
            (None, None, Some(n)) => (n.args.clone(), ArgsSource::AsWritten),
            (None, None, None) => (Value::Null, ArgsSource::AsWritten),
        };
        self.args = Some(JsonTree::new(args));
        self.output = record
            .as_ref()
            .map(|r| JsonTree::new(SharedValue::Output(Arc::clone(r))));
        self.filtered = None;
        self.error_scroll = 0;
        if !same_node {
            self.logs_scroll = 0;
        }
        self.raw = RawText::NotStarted;
        self.raw_view = TextView::default();
        let n_iter = record.as_ref().map_or(0, |r| r.iterations.len());
        if same_node {
            self.iterations.clamp(n_iter);
        } else {
            self.iterations.reset();
        }
        self.shown = Some(Shown {
            id: id.to_owned(),
            tool: node.map(|n| n.tool.clone()),
            server: node.and_then(|n| n.server.clone()),
            for_each: node.and_then(|n| n.for_each.as_ref().map(|f| f.source.clone())),
            record,
            args_source,
            key,
        });
        self.filter.invalidate();
        self.run_filter();
        if self.tab == Tab::Raw {
            self.start_raw();
        }
    }

    /// What the shown node's tool is, as its server lists it (the Args
    /// tab shows it under the arguments): its title and text.
    pub(crate) fn set_tool_doc(&mut self, doc: Option<(String, String)>) {
        self.tool_doc = doc;
    }

    /// Shows nothing.
    pub fn clear(&mut self) {
        self.switch_filter(None);
        self.generation += 1;
        self.shown = None;
        self.args = None;
        self.output = None;
        self.filtered = None;
        self.filter.invalidate();
        self.error_scroll = 0;
        self.iterations.reset();
        self.raw = RawText::NotStarted;
        self.raw_view = TextView::default();
    }

    /// Says that the preview given to `set_node*` is the arguments of the
    /// shown node's call in flight, not a preview.
    pub fn mark_args_live(&mut self) {
        if let Some(s) = &mut self.shown
            && s.args_source == ArgsSource::Preview
        {
            s.args_source = ArgsSource::Live;
        }
    }

    /// What the shown node is doing now, for the Logs tab: set by the app
    /// with each progress report, log line and question.
    pub fn set_live(&mut self, live: Live) {
        self.live = live;
    }

    /// The active tab.
    pub fn tab(&self) -> Tab {
        self.tab
    }

    /// Switches to tab `t`.
    pub fn set_tab(&mut self, t: Tab) {
        if t != self.tab {
            // A search belongs to the text it searched.
            self.find = None;
        }
        self.tab = t;
        if t == Tab::Raw {
            self.start_raw();
        }
    }

    /// The id of the shown node.
    pub fn node_id(&self) -> Option<&str> {
        self.shown.as_ref().map(|s| s.id.as_str())
    }

    /// Whether the jq filter box takes the keys.
    /// Whether long lines wrap.
    pub fn wrap(&self) -> bool {
        self.wrap
    }

    /// Wraps long lines (or cuts them).
    pub fn set_wrap(&mut self, on: bool) {
        self.wrap = on;
    }

    pub fn filter_editing(&self) -> bool {
        self.tab == Tab::Output && self.filter.editing()
    }

    /// Keys while the inspector has focus; true when consumed. While the jq
    /// filter box is open every character goes to it; Enter or Esc leaves it.
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        if self.filter_editing() {
            return match self.filter.edit(key) {
                Edit::Changed => {
                    self.run_filter();
                    true
                }
                Edit::Moved | Edit::Closed => true,
                Edit::Ignored => false,
            };
        }
        if let Some(took) = self.find_key(key) {
            return took;
        }
        if key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
        {
            return false;
        }
        match key.code {
            KeyCode::Left => {
                self.set_tab(self.tab.step(-1));
                return true;
            }
            KeyCode::Right => {
                self.set_tab(self.tab.step(1));
                return true;
            }
            KeyCode::Char(c @ '1'..='7') => {
                self.set_tab(Tab::ALL[c as usize - '1' as usize]);
                return true;
            }
            _ => {}
        }
        match self.tab {
            Tab::Args => self.args.as_mut().is_some_and(|t| tree_key(t, key.code)),
            Tab::Output => match key.code {
                KeyCode::Char('/') | KeyCode::Char('f') if self.output.is_some() => {
                    self.filter.open();
                    true
                }
                code => self.output_tree_mut().is_some_and(|t| tree_key(t, code)),
            },
            Tab::Error => self.scroll_error(key.code),
            Tab::Timing => false,
            Tab::Iterations => self.iterations_key(key.code),
            Tab::Raw => self.raw_key(key.code),
            Tab::Logs => scroll_text(&mut self.logs_scroll, key.code),
        }
    }

    /// Mouse events inside `area` (the pane's whole rectangle, border
    /// included): a click on a tab name switches to it, a click on a row
    /// selects it (on its fold mark, toggles it), the wheel scrolls.
    pub fn handle_mouse(&mut self, ev: MouseEvent, area: Rect) -> bool {
        let inside = ev.column >= area.x
            && ev.column < area.right()
            && ev.row >= area.y
            && ev.row < area.bottom();
        if !inside {
            return false;
        }
        match ev.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                if ev.row == area.y {
                    return match self.tab_at(area, ev.column) {
                        Some(t) => {
                            self.set_tab(t);
                            true
                        }
                        None => false,
                    };
                }
                let areas = self.areas(area);
                let b = areas.body;
                if ev.row < b.y || ev.row >= b.bottom() || ev.column < b.x {
                    return false;
                }
                let dy = (ev.row - b.y) as usize;
                let dx = (ev.column - b.x) as usize;
                self.click(dy, dx)
            }
            MouseEventKind::ScrollDown => self.wheel(3),
            MouseEventKind::ScrollUp => self.wheel(-3),
            _ => false,
        }
    }

    /// Picks up finished background work (jq filter results, the Raw tab's
    /// pretty text); true if something changed on screen.
    pub fn poll(&mut self) -> bool {
        let mut changed = false;
        while let Ok(done) = self.done_rx.try_recv() {
            changed |= self.apply(done);
        }
        changed
    }

    fn apply(&mut self, done: Done) -> bool {
        match done {
            Done::Filter(d) => {
                let before = self.filter.state().clone();
                match self.filter.finish(d) {
                    Some(mut values) => {
                        let v = if values.len() == 1 {
                            values.remove(0)
                        } else {
                            Value::Array(values)
                        };
                        self.filtered = Some(JsonTree::new(v));
                        true
                    }
                    None => {
                        // A filter that fails shows no stale result under
                        // its text: only its error.
                        if self.filter.failed() {
                            self.filtered = None;
                        }
                        *self.filter.state() != before
                    }
                }
            }
            Done::Pretty { generation, text } => {
                if generation != self.generation {
                    return false;
                }
                self.raw = RawText::Ready(text);
                true
            }
        }
    }

    fn start_raw(&mut self) {
        if !matches!(self.raw, RawText::NotStarted) {
            return;
        }
        let Some(rec) = self.shown.as_ref().and_then(|s| s.record.as_ref()) else {
            return;
        };
        if rec.rpc.is_null() && rec.raw.is_null() {
            return;
        }
        let rec = Arc::clone(rec);
        self.raw = RawText::Pending;
        let generation = self.generation;
        let tx = self.done_tx.clone();
        // The wire messages are put together off the UI thread: the result
        // may be megabytes.
        std::thread::spawn(move || {
            // Each attempt under its label; a run saved before attempts
            // were kept, its one exchange as it was.
            let text = match text::raw_text(&rec) {
                Some(t) => PrettyText::from_text(t),
                None => PrettyText::of(&pipewright_engine::run::trace::wire_messages(&rec)),
            };
            let _ = tx.send(Done::Pretty { generation, text });
        });
    }

    fn scroll_error(&mut self, code: KeyCode) -> bool {
        scroll_text(&mut self.error_scroll, code)
    }

    fn iteration_count(&self) -> usize {
        iteration_items(self.shown.as_ref(), &self.live).len()
    }

    fn iterations_key(&mut self, code: KeyCode) -> bool {
        if let Some(tree) = self.iterations.detail_mut() {
            return match code {
                KeyCode::Esc | KeyCode::Backspace => {
                    self.iterations.close_detail();
                    true
                }
                code => tree_key(tree, code),
            };
        }
        let n = self.iteration_count();
        let v = &mut self.iterations;
        match code {
            KeyCode::Up | KeyCode::Char('k') => v.move_by(-1, n),
            KeyCode::Down | KeyCode::Char('j') => v.move_by(1, n),
            KeyCode::PageUp => v.page_by(-1, n),
            KeyCode::PageDown => v.page_by(1, n),
            KeyCode::Home | KeyCode::Char('g') => v.move_by(isize::MIN / 2, n),
            KeyCode::End | KeyCode::Char('G') => v.move_by(isize::MAX / 2, n),
            KeyCode::Enter => {
                let items = iteration_items(self.shown.as_ref(), &self.live);
                return self.iterations.open(items);
            }
            _ => return false,
        }
        true
    }

    /// Up, Down, pages, Home and End scroll Raw (a row at a time when
    /// wrapped); cut, `h` and `l` scroll it sideways and `0` back.
    fn raw_key(&mut self, code: KeyCode) -> bool {
        let RawText::Ready(text) = &self.raw else {
            return false;
        };
        let page = self.raw_view.page.max(1) as isize;
        let delta = match code {
            KeyCode::Up | KeyCode::Char('k') => -1,
            KeyCode::Down | KeyCode::Char('j') => 1,
            KeyCode::PageUp => -page,
            KeyCode::PageDown => page,
            KeyCode::Home | KeyCode::Char('g') => isize::MIN / 2,
            KeyCode::End | KeyCode::Char('G') => isize::MAX / 2,
            KeyCode::Char('h') if !self.wrap => return self.sideways(-8),
            KeyCode::Char('l') if !self.wrap => return self.sideways(8),
            KeyCode::Char('0') if !self.wrap => return self.sideways(isize::MIN / 2),
            _ => return false,
        };
        self.raw_view.scroll(text, delta);
        true
    }

    /// Scrolls Raw's cut lines sideways.
    fn sideways(&mut self, delta: isize) -> bool {
        self.raw_view.scroll_sideways(delta);
        true
    }

    fn wheel(&mut self, delta: isize) -> bool {
        match self.tab {
            Tab::Args => self.args.as_mut().is_some_and(|t| {
                t.scroll_by(delta);
                true
            }),
            Tab::Output => self.output_tree_mut().is_some_and(|t| {
                t.scroll_by(delta);
                true
            }),
            Tab::Error => {
                self.error_scroll =
                    (self.error_scroll as isize + delta).clamp(0, u16::MAX as isize) as u16;
                true
            }
            Tab::Timing => false,
            Tab::Logs => {
                self.logs_scroll =
                    (self.logs_scroll as isize + delta).clamp(0, u16::MAX as isize) as u16;
                true
            }
            Tab::Iterations => {
                let n = self.iteration_count();
                match self.iterations.detail_mut() {
                    Some(t) => t.scroll_by(delta),
                    None => self.iterations.move_by(delta, n),
                }
                true
            }
            Tab::Raw => match &self.raw {
                RawText::Ready(text) => {
                    self.raw_view.scroll(text, delta);
                    true
                }
                _ => false,
            },
        }
    }

    /// A click `dy` lines and `dx` columns into the body.
    fn click(&mut self, dy: usize, dx: usize) -> bool {
        match self.tab {
            Tab::Args => self.args.as_mut().is_some_and(|t| tree_click(t, dy, dx)),
            Tab::Output => self
                .output_tree_mut()
                .is_some_and(|t| tree_click(t, dy, dx)),
            // Both the table and the opened element have a title line.
            Tab::Iterations if dy > 0 => {
                let n = self.iteration_count();
                match self.iterations.detail_mut() {
                    Some(t) => tree_click(t, dy - 1, dx),
                    None => self.iterations.click(dy - 1, n),
                }
            }
            _ => false,
        }
    }
}

/// A copy of `r` for the inspector.
#[allow(clippy::needless_update)]
/// The Iterations tab's rows: the record's, or, while a fan-out runs,
/// those started so far.
fn iteration_items<'a>(shown: Option<&'a Shown>, live: &'a Live) -> &'a [IterationRecord] {
    match shown.and_then(|s| s.record.as_ref()) {
        Some(r) => r.iterations.as_slice(),
        None if shown.is_some() => live.iterations.as_slice(),
        None => &[],
    }
}

fn copy_record(r: &NodeRecord) -> NodeRecord {
    NodeRecord {
        status: r.status,
        args: r.args.clone(),
        output: r.output.clone(),
        // The exchange refers to it rather than holding a copy.
        raw: r.raw.clone(),
        error: r.error.clone(),
        error_code: r.error_code.clone(),
        skip_reason: r.skip_reason.clone(),
        attempts: r.attempts,
        started_at: r.started_at.clone(),
        duration_ms: r.duration_ms,
        cost_usd: r.cost_usd,
        tokens: r.tokens,
        model: r.model.clone(),
        mocked: r.mocked,
        iterations: r.iterations.clone(),
        rpc: r.rpc.clone(),
        extras: r.extras.clone(),
        calls: r.calls.clone(),
        // Fields added later are not shown by the inspector.
        ..NodeRecord::default()
    }
}

#[cfg(test)]
mod tests;
