//! A foldable view of one JSON value that only looks at what it shows.
//!
//! The tree keeps a flat list of rows for the expanded part of the value
//! only: a collapsed container is one row whose summary (`{…} 3 keys`) needs
//! nothing but its length. Expanding splices the container's rows in,
//! collapsing cuts them out, and drawing touches only the rows on screen, so
//! a 5 MB output costs what its visible part costs. Big containers start
//! collapsed: the first view opens containers breadth-first only while they
//! fit in a small row budget. A container with more than [`BUCKET`] entries
//! opens into groups (`[0 … 9999]`) of at most [`BUCKET`] groups or entries
//! each, so no single unfold adds more than a hundred-odd rows.

use std::collections::{HashSet, VecDeque};

use serde_json::Value;

use super::shared::SharedValue;

mod draw;

/// Rows the first view may open containers into.
const INITIAL_ROW_BUDGET: usize = 200;
/// Containers longer than this start collapsed (the root excepted).
const AUTO_OPEN_MAX_LEN: usize = 50;
/// "Expand all" stops opening containers once the view has this many rows.
pub const MAX_ROWS: usize = 100_000;
/// Most rows one unfold adds: bigger containers open into groups.
pub const BUCKET: usize = 100;
/// Characters of a string shown in its row; longer ones get a length marker.
const MAX_STRING_CHARS: usize = 200;
/// Characters of an object key shown in its row.
const MAX_KEY_CHARS: usize = 80;

/// One step of a path from the root to a value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
    /// A group of a big container's entries, `start..end`; it names the
    /// group's fold and does not move to another value.
    Bucket(usize, usize),
}

/// What a row is called in its parent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Label {
    Root,
    Key(String),
    Index(usize),
}

/// The JSON type of a scalar row, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    Null,
    Bool,
    Number,
    String,
}

/// What one row shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowKind {
    /// The first row of an object or array; `len` is its number of entries.
    Open {
        object: bool,
        len: usize,
        expanded: bool,
    },
    /// The closing bracket of an expanded container.
    Close { object: bool },
    /// A group of entries `start..end` of a big container.
    Bucket {
        start: usize,
        end: usize,
        expanded: bool,
    },
    /// A scalar: its JSON text (strings cut to a prefix) and, when cut, a
    /// note with the full length.
    Scalar {
        kind: ScalarKind,
        text: String,
        note: Option<String>,
    },
}

/// One line of the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub depth: usize,
    pub label: Label,
    pub kind: RowKind,
    /// Where the value is, for container rows (empty for the others); for
    /// a group, its container's path and the group.
    pub path: Vec<Seg>,
}

/// Which containers are open.
#[derive(Debug, Default)]
struct Folds {
    /// Open containers (when `all_open` is off).
    expanded: HashSet<Vec<Seg>>,
    /// Closed containers (when `all_open` is on).
    collapsed: HashSet<Vec<Seg>>,
    all_open: bool,
}

impl Folds {
    fn is_open(&self, path: &[Seg]) -> bool {
        if self.all_open {
            !self.collapsed.contains(path)
        } else {
            self.expanded.contains(path)
        }
    }

    fn set(&mut self, path: &[Seg], open: bool) {
        // With `all_open` the closed ones are kept, otherwise the open ones.
        if self.all_open {
            if open {
                self.collapsed.remove(path);
            } else {
                self.collapsed.insert(path.to_vec());
            }
        } else if open {
            self.expanded.insert(path.to_vec());
        } else {
            self.expanded.remove(path);
        }
    }
}

/// A foldable, scrollable JSON view over a shared value.
#[derive(Debug)]
pub struct JsonTree {
    value: SharedValue,
    rows: Vec<Row>,
    folds: Folds,
    selected: usize,
    offset: usize,
    /// Rows visible at the last draw, for paging.
    page: usize,
    /// Values looked at since the tree was made (a measure of laziness).
    visits: usize,
    /// "Expand all" hit [`MAX_ROWS`] and left some containers closed.
    capped: bool,
    /// The selected row is drawn whole, over as many lines as it takes.
    pub wrap: bool,
    /// The extra lines the selected row took at the last draw (for the
    /// mouse): (its line on screen, extra lines).
    wrapped: (usize, usize),
}

impl JsonTree {
    /// A view of `value` with the root open and small containers near the
    /// top opened while they fit a small row budget.
    pub fn new(value: impl Into<SharedValue>) -> JsonTree {
        let mut tree = JsonTree {
            value: value.into(),
            rows: Vec::new(),
            folds: Folds::default(),
            selected: 0,
            offset: 0,
            page: 10,
            visits: 0,
            capped: false,
            wrap: false,
            wrapped: (0, 0),
        };
        tree.open_initial();
        tree.rebuild();
        tree
    }

    /// The value shown.
    pub fn value(&self) -> &Value {
        self.value.get()
    }

    /// The rows of the expanded part of the value.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Index of the selected row.
    pub fn selected(&self) -> usize {
        self.selected
    }

    #[cfg(test)]
    /// Index of the first row drawn.
    pub fn offset(&self) -> usize {
        self.offset
    }

    #[cfg(test)]
    /// How many values the tree has looked at since it was made; building
    /// the first view of any value stays within a few hundred.
    pub fn visits(&self) -> usize {
        self.visits
    }

    #[cfg(test)]
    /// "Expand all" stopped at [`MAX_ROWS`] rows.
    pub fn capped(&self) -> bool {
        self.capped
    }

    /// Breadth-first: open the root, then containers short enough to fit
    /// the remaining budget, nearest first.
    fn open_initial(&mut self) {
        let root = self.value.clone();
        let mut used = 0usize;
        let mut queue: VecDeque<(Vec<Seg>, &Value)> = VecDeque::new();
        queue.push_back((Vec::new(), root.get()));
        while let Some((path, v)) = queue.pop_front() {
            self.visits += 1;
            let len = container_len(v);
            let Some(len) = len else { continue };
            let is_root = path.is_empty();
            if !is_root && (len > AUTO_OPEN_MAX_LEN || used + len + 1 > INITIAL_ROW_BUDGET) {
                continue;
            }
            used += len + 1;
            self.folds.expanded.insert(path.clone());
            if used >= INITIAL_ROW_BUDGET {
                break;
            }
            let room = INITIAL_ROW_BUDGET - used;
            for (seg, child) in entries(v, 0, room) {
                self.visits += 1;
                if container_len(child).is_some_and(|n| n > 0) {
                    let mut p = path.clone();
                    p.push(seg);
                    queue.push_back((p, child));
                }
            }
        }
    }

    /// Recomputes every row from the fold state.
    fn rebuild(&mut self) {
        let value = self.value.clone();
        let mut e = Emitter::new(&self.folds, Vec::new(), 0);
        e.value(value.get(), Label::Root, 0);
        self.capped = false;
        self.rows = {
            let parts = e.into_parts();
            self.absorb(parts)
        };
        self.clamp();
    }

    fn clamp(&mut self) {
        let last = self.rows.len().saturating_sub(1);
        self.selected = self.selected.min(last);
        self.offset = self.offset.min(last);
    }

    /// Opens or closes the container at row `i` (a closing bracket folds its
    /// opener). Returns whether anything changed.
    pub fn toggle(&mut self, i: usize) -> bool {
        let Some(row) = self.rows.get(i) else {
            return false;
        };
        match row.kind {
            RowKind::Open { expanded, .. } | RowKind::Bucket { expanded, .. } => {
                if expanded {
                    self.collapse_at(i)
                } else {
                    self.expand_at(i)
                }
            }
            RowKind::Close { .. } => match self.opener_of(i) {
                Some(o) => {
                    self.selected = o;
                    self.collapse_at(o)
                }
                None => false,
            },
            RowKind::Scalar { .. } => false,
        }
    }

    /// Toggles the selected row.
    pub fn toggle_selected(&mut self) -> bool {
        self.toggle(self.selected)
    }

    fn opener_of(&self, close: usize) -> Option<usize> {
        let depth = self.rows[close].depth;
        (0..close).rev().find(|&j| {
            self.rows[j].depth == depth && matches!(self.rows[j].kind, RowKind::Open { .. })
        })
    }

    fn collapse_at(&mut self, i: usize) -> bool {
        let depth = self.rows[i].depth;
        let n = self.rows.len();
        // A container's rows end with its closing bracket; a group's where
        // the next row at its depth or above starts.
        let end = match self.rows[i].kind {
            RowKind::Bucket { .. } => (i + 1..n)
                .find(|&j| self.rows[j].depth <= depth)
                .unwrap_or(n),
            _ => (i + 1..n)
                .find(|&j| self.rows[j].depth == depth)
                .map_or(n, |j| j + 1),
        };
        self.rows.drain(i + 1..end);
        set_expanded(&mut self.rows[i].kind, false);
        let path = self.rows[i].path.clone();
        self.folds.set(&path, false);
        if self.selected > i {
            self.selected = if self.selected < end {
                i
            } else {
                self.selected - (end - i - 1)
            };
        }
        self.clamp();
        true
    }

    fn expand_at(&mut self, i: usize) -> bool {
        let path = self.rows[i].path.clone();
        let depth = self.rows[i].depth;
        let value = self.value.clone();
        let Some(v) = value_at(value.get(), &path) else {
            return false;
        };
        self.folds.set(&path, true);
        let out = match (&self.rows[i].kind, path.split_last()) {
            (RowKind::Bucket { start, end, .. }, Some((_, container))) => {
                let mut e = Emitter::new(&self.folds, container.to_vec(), self.rows.len());
                e.range(v, *start, *end, depth + 1);
                {
                    let parts = e.into_parts();
                    self.absorb(parts)
                }
            }
            _ => {
                let mut e = Emitter::new(&self.folds, path, self.rows.len());
                e.children(v, depth);
                {
                    let parts = e.into_parts();
                    self.absorb(parts)
                }
            }
        };
        set_expanded(&mut self.rows[i].kind, true);
        let added = out.len();
        self.rows.splice(i + 1..i + 1, out);
        if self.selected > i {
            self.selected += added;
        }
        true
    }

    /// Takes an emitter's rows, counting its visits and closing what it
    /// had to leave closed.
    fn absorb(&mut self, (out, capped, visits): EmitterParts) -> Vec<Row> {
        self.visits += visits;
        self.capped |= !capped.is_empty();
        for p in capped {
            self.folds.set(&p, false);
        }
        out
    }

    /// Opens every container (up to [`MAX_ROWS`] rows).
    pub fn expand_all(&mut self) {
        self.folds = Folds {
            all_open: true,
            ..Folds::default()
        };
        self.rebuild();
    }

    /// Closes every container but the root.
    pub fn collapse_all(&mut self) {
        self.folds = Folds::default();
        self.folds.expanded.insert(Vec::new());
        self.selected = 0;
        self.offset = 0;
        self.rebuild();
    }

    /// Moves the selection by `delta` rows, stopping at the ends.
    pub fn move_by(&mut self, delta: isize) {
        let last = self.rows.len().saturating_sub(1) as isize;
        self.selected = (self.selected as isize + delta).clamp(0, last) as usize;
    }

    /// Moves the selection one page up (negative) or down.
    pub fn page_by(&mut self, pages: isize) {
        self.move_by(pages * self.page.max(1) as isize);
    }

    /// Selects the first row.
    pub fn home(&mut self) {
        self.selected = 0;
    }

    /// Selects the last row.
    pub fn end(&mut self) {
        self.selected = self.rows.len().saturating_sub(1);
    }

    /// Selects row `i` (clamped).
    pub fn select(&mut self, i: usize) {
        self.selected = i.min(self.rows.len().saturating_sub(1));
    }

    /// Scrolls the view without moving the selection past the ends.
    pub fn scroll_by(&mut self, delta: isize) {
        let last = self.rows.len().saturating_sub(1) as isize;
        self.offset = (self.offset as isize + delta).clamp(0, last) as usize;
        let page = self.page.max(1);
        if self.selected < self.offset {
            self.selected = self.offset;
        } else if self.selected >= self.offset + page {
            self.selected = self.offset + page - 1;
        }
        self.clamp();
    }

    /// The row under a screen line `dy` lines below the top of the last
    /// drawn area.
    pub fn row_at(&self, dy: usize) -> Option<usize> {
        let (at, extra) = self.wrapped;
        let dy = if dy > at + extra {
            dy - extra
        } else if dy > at {
            at
        } else {
            dy
        };
        let i = self.offset + dy;
        (i < self.rows.len()).then_some(i)
    }
}

/// What an emitter made: rows, containers left closed, values visited.
type EmitterParts = (Vec<Row>, Vec<Vec<Seg>>, usize);

/// Turns the open part of a value into rows.
struct Emitter<'f> {
    folds: &'f Folds,
    out: Vec<Row>,
    /// Containers "expand all" left closed because of [`MAX_ROWS`].
    capped: Vec<Vec<Seg>>,
    visits: usize,
    /// Rows already in the view besides `out`.
    base: usize,
    path: Vec<Seg>,
}

impl<'f> Emitter<'f> {
    fn new(folds: &'f Folds, path: Vec<Seg>, base: usize) -> Self {
        Emitter {
            folds,
            out: Vec::new(),
            capped: Vec::new(),
            visits: 0,
            base,
            path,
        }
    }

    fn into_parts(self) -> EmitterParts {
        (self.out, self.capped, self.visits)
    }

    /// Rows of `v` (at `self.path`) and of its open descendants.
    fn value(&mut self, v: &Value, label: Label, depth: usize) {
        self.visits += 1;
        let Some(len) = container_len(v) else {
            self.out.push(Row {
                depth,
                label,
                kind: scalar_kind(v),
                path: Vec::new(),
            });
            return;
        };
        let mut open = len > 0 && self.folds.is_open(&self.path);
        if open && self.over_cap(len) {
            self.capped.push(self.path.clone());
            open = false;
        }
        self.out.push(Row {
            depth,
            label,
            kind: RowKind::Open {
                object: v.is_object(),
                len,
                expanded: open,
            },
            path: self.path.clone(),
        });
        if open {
            self.children(v, depth);
        }
    }

    /// "Expand all" would pass [`MAX_ROWS`] by opening `len` entries.
    fn over_cap(&self, len: usize) -> bool {
        self.folds.all_open && self.base + self.out.len() + len.min(BUCKET) > MAX_ROWS
    }

    /// The rows inside an open container, and its closing bracket.
    fn children(&mut self, v: &Value, depth: usize) {
        let len = container_len(v).unwrap_or(0);
        self.range(v, 0, len, depth + 1);
        self.out.push(Row {
            depth,
            label: Label::Root,
            kind: RowKind::Close {
                object: v.is_object(),
            },
            path: Vec::new(),
        });
    }

    /// Entries `start..end` of container `v` at `depth`: themselves when
    /// there are at most [`BUCKET`], else groups of them.
    fn range(&mut self, v: &Value, start: usize, end: usize, depth: usize) {
        let n = end - start;
        if n <= BUCKET {
            for (seg, child) in entries(v, start, end) {
                let label = match &seg {
                    Seg::Key(k) => Label::Key(k.clone()),
                    Seg::Index(i) => Label::Index(*i),
                    Seg::Bucket(..) => Label::Root,
                };
                self.path.push(seg);
                self.value(child, label, depth);
                self.path.pop();
            }
            return;
        }
        let mut size = BUCKET;
        while n.div_ceil(size) > BUCKET {
            size = size.saturating_mul(BUCKET);
        }
        for s in (start..end).step_by(size) {
            let e = (s + size).min(end);
            self.visits += 1;
            self.path.push(Seg::Bucket(s, e));
            let mut open = self.folds.is_open(&self.path);
            if open && self.over_cap(e - s) {
                self.capped.push(self.path.clone());
                open = false;
            }
            self.out.push(Row {
                depth,
                label: Label::Root,
                kind: RowKind::Bucket {
                    start: s,
                    end: e,
                    expanded: open,
                },
                path: self.path.clone(),
            });
            self.path.pop();
            if open {
                self.range(v, s, e, depth + 1);
            }
        }
    }
}

fn set_expanded(kind: &mut RowKind, open: bool) {
    if let RowKind::Open { expanded, .. } | RowKind::Bucket { expanded, .. } = kind {
        *expanded = open;
    }
}

/// Entries `start..end` of a container.
fn entries(v: &Value, start: usize, end: usize) -> Box<dyn Iterator<Item = (Seg, &Value)> + '_> {
    let n = end.saturating_sub(start);
    match v {
        Value::Object(m) => Box::new(
            m.iter()
                .skip(start)
                .take(n)
                .map(|(k, c)| (Seg::Key(k.clone()), c)),
        ),
        Value::Array(a) => Box::new(
            a.iter()
                .enumerate()
                .skip(start)
                .take(n)
                .map(|(i, c)| (Seg::Index(i), c)),
        ),
        _ => Box::new(std::iter::empty()),
    }
}

fn container_len(v: &Value) -> Option<usize> {
    match v {
        Value::Object(m) => Some(m.len()),
        Value::Array(a) => Some(a.len()),
        _ => None,
    }
}

/// The value at `path` under `root`.
pub fn value_at<'a>(root: &'a Value, path: &[Seg]) -> Option<&'a Value> {
    path.iter().try_fold(root, |v, seg| match (seg, v) {
        (Seg::Key(k), Value::Object(m)) => m.get(k),
        (Seg::Index(i), Value::Array(a)) => a.get(*i),
        (Seg::Bucket(..), v) => Some(v),
        _ => None,
    })
}

fn scalar_kind(v: &Value) -> RowKind {
    let (kind, text, note) = match v {
        Value::Null => (ScalarKind::Null, "null".to_owned(), None),
        Value::Bool(b) => (ScalarKind::Bool, b.to_string(), None),
        Value::Number(n) => (ScalarKind::Number, n.to_string(), None),
        Value::String(s) => {
            let (text, note) = string_text(s);
            (ScalarKind::String, text, note)
        }
        Value::Array(_) | Value::Object(_) => (ScalarKind::Null, String::new(), None),
    };
    RowKind::Scalar { kind, text, note }
}

/// A string as a JSON literal cut to [`MAX_STRING_CHARS`], with a note of
/// its full length when cut.
fn string_text(s: &str) -> (String, Option<String>) {
    match s.char_indices().nth(MAX_STRING_CHARS) {
        None => (quote(s), None),
        Some((cut, _)) => {
            let mut text = quote(&s[..cut]);
            text.pop();
            text.push_str("…\"");
            let chars = MAX_STRING_CHARS + s[cut..].chars().count();
            (text, Some(format!("({chars} chars)")))
        }
    }
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn cut_chars(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        None => s.to_owned(),
        Some((cut, _)) => format!("{}…", &s[..cut]),
    }
}

/// `3 keys`, `1 item`.
pub fn count_text(object: bool, len: usize) -> String {
    let noun = match (object, len == 1) {
        (true, true) => "key",
        (true, false) => "keys",
        (false, true) => "item",
        (false, false) => "items",
    };
    format!("{len} {noun}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::theme::Theme;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use serde_json::json;
    use std::sync::Arc;

    fn tree(v: Value) -> JsonTree {
        JsonTree::new(Arc::new(v))
    }

    fn texts(t: &JsonTree) -> Vec<String> {
        (0..t.rows().len()).map(|i| t.row_text(i)).collect()
    }

    /// An array of `n` objects, each about 120 bytes of JSON.
    pub(crate) fn big_array(n: usize) -> Value {
        Value::Array(
            (0..n)
                .map(|i| json!({"id": i, "name": format!("user-{i}"), "email": format!("u{i}@example.com"), "tags": ["a", "b"], "bio": format!("user {i} likes long walks")}))
                .collect(),
        )
    }

    #[test]
    fn small_values_open_fully_with_keys_and_closers() {
        let t = tree(json!({"users": [{"id": 1}], "next": null}));
        assert_eq!(
            texts(&t),
            vec![
                "▾ { 2 keys",
                "  ▾ \"users\": [ 1 item",
                "    ▾ 0: { 1 key",
                "        \"id\": 1",
                "      }",
                "    ]",
                "    \"next\": null",
                "  }",
            ]
        );
    }

    #[test]
    fn scalars_and_empty_containers_are_one_row() {
        assert_eq!(texts(&tree(json!(42))), vec!["  42"]);
        assert_eq!(texts(&tree(json!({}))), vec!["  {}"]);
        assert_eq!(texts(&tree(json!("hi"))), vec!["  \"hi\""]);
    }

    #[test]
    fn big_containers_start_collapsed_with_summaries() {
        let t = tree(json!({"many": (0..120).collect::<Vec<_>>(), "few": [1, 2]}));
        let rows = texts(&t);
        assert!(
            rows.contains(&"  ▸ \"many\": […] 120 items".to_owned()),
            "{rows:?}"
        );
        assert!(
            rows.contains(&"  ▾ \"few\": [ 2 items".to_owned()),
            "{rows:?}"
        );
    }

    #[test]
    fn folding_and_unfolding_restore_the_rows() {
        let mut t = tree(json!({"a": {"b": [1, 2, 3]}, "c": true}));
        let before = texts(&t);
        assert!(t.toggle(1)); // "a"
        assert_eq!(texts(&t)[1], "  ▸ \"a\": {…} 1 key");
        assert_eq!(t.rows().len(), 4);
        assert!(t.toggle(1));
        assert_eq!(texts(&t), before);
        // A nested fold survives folding its parent.
        assert!(t.toggle(2)); // "b"
        let folded_b = texts(&t);
        t.toggle(1);
        t.toggle(1);
        assert_eq!(texts(&t), folded_b);
    }

    #[test]
    fn a_closing_bracket_folds_its_opener() {
        let mut t = tree(json!({"a": [1, 2]}));
        // rows: { , "a": [ , 1 , 2 , ] , }
        assert!(matches!(t.rows()[4].kind, RowKind::Close { object: false }));
        t.select(4);
        assert!(t.toggle_selected());
        assert_eq!(t.selected(), 1);
        assert_eq!(t.rows().len(), 3);
    }

    #[test]
    fn scalars_do_not_toggle() {
        let mut t = tree(json!({"a": 1}));
        assert!(!t.toggle(1));
        assert!(!t.toggle(99));
    }

    #[test]
    fn expand_all_and_collapse_all() {
        let mut t = tree(json!({"many": (0..120).collect::<Vec<_>>(), "o": {"p": {"q": 1}}}));
        t.expand_all();
        // The 120 items open in two groups of at most 100.
        assert_eq!(t.rows().len(), 1 + 1 + 2 + 120 + 1 + 1 + 1 + 1 + 1 + 1 + 1);
        assert_eq!(t.row_text(2), "    ▾ [0 … 99]");
        assert!(!t.capped());
        t.collapse_all();
        assert_eq!(
            texts(&t),
            vec![
                "▾ { 2 keys",
                "  ▸ \"many\": […] 120 items",
                "  ▸ \"o\": {…} 1 key",
                "  }"
            ]
        );
        // After collapse all, a toggle opens just one level.
        t.toggle(2);
        assert_eq!(t.row_text(3), "    ▸ \"p\": {…} 1 key");
    }

    #[test]
    fn expand_all_stops_at_the_row_cap() {
        let mut t = tree(big_array(MAX_ROWS / 3));
        t.expand_all();
        assert!(t.capped());
        assert!(
            t.rows().len() <= MAX_ROWS + MAX_ROWS / 3 + 2,
            "{}",
            t.rows().len()
        );
        // A capped container can still be opened by hand.
        let closed = t
            .rows()
            .iter()
            .rposition(|r| {
                matches!(
                    r.kind,
                    RowKind::Open {
                        expanded: false,
                        ..
                    } | RowKind::Bucket {
                        expanded: false,
                        ..
                    }
                )
            })
            .expect("a capped row");
        assert!(t.toggle(closed));
    }

    #[test]
    fn long_strings_are_cut_with_their_length() {
        let long = "x".repeat(10_000);
        let t = tree(json!({ "s": long, "nl": "a\nb" }));
        let row = t.row_text(1);
        assert!(row.ends_with("…\" (10000 chars)"), "{row}");
        assert!(row.len() < 300);
        assert_eq!(t.row_text(2), "    \"nl\": \"a\\nb\"");
    }

    #[test]
    fn navigation_stays_in_bounds_and_follows_the_selection() {
        let mut t = tree(json!((0..40).collect::<Vec<_>>()));
        assert_eq!(t.rows().len(), 42);
        t.move_by(-3);
        assert_eq!(t.selected(), 0);
        t.end();
        assert_eq!(t.selected(), 41);
        let mut buf = Buffer::empty(Rect::new(0, 0, 30, 10));
        t.render(buf.area, &mut buf, &Theme::dark(), true);
        assert_eq!(t.offset(), 32);
        t.page_by(-1);
        assert_eq!(t.selected(), 31);
        t.home();
        t.render(buf.area, &mut buf, &Theme::dark(), true);
        assert_eq!(t.offset(), 0);
        t.move_by(1000);
        assert_eq!(t.selected(), 41);
        t.scroll_by(-100);
        assert_eq!((t.offset(), t.selected()), (0, 9));
    }

    #[test]
    fn a_five_megabyte_value_is_viewed_lazily() {
        let v = big_array(50_000);
        let bytes = serde_json::to_string(&v).unwrap().len();
        assert!(bytes > 5_000_000, "{bytes}");
        let mut t = tree(v);
        // The root is open into five groups of 10,000; nothing under them
        // was looked at.
        assert_eq!(
            texts(&t),
            vec![
                "▾ [ 50000 items",
                "  ▸ [0 … 9999]",
                "  ▸ [10000 … 19999]",
                "  ▸ [20000 … 29999]",
                "  ▸ [30000 … 39999]",
                "  ▸ [40000 … 49999]",
                "  ]",
            ]
        );
        assert!(t.visits() < 20, "{}", t.visits());
        // Each unfold adds at most a hundred-odd rows and looks at no more.
        let before = t.visits();
        t.toggle(5);
        assert_eq!(t.rows().len(), 7 + 100);
        assert_eq!(t.row_text(105), "    ▸ [49900 … 49999]");
        t.toggle(105);
        assert_eq!(t.rows().len(), 7 + 200);
        assert_eq!(t.row_text(205), "      ▸ 49999: {…} 5 keys");
        t.toggle(205);
        assert_eq!(t.row_text(206), "          \"id\": 49999");
        assert!(t.visits() - before < 220, "{}", t.visits() - before);
        // Folding a group folds everything under it, and unfolding it
        // brings back what was open.
        let open = t.rows().len();
        t.toggle(5);
        assert_eq!(t.rows().len(), 7);
        t.toggle(5);
        assert_eq!(t.rows().len(), open);
        // Drawing looks at the visible rows only.
        let before = t.visits();
        let mut buf = Buffer::empty(Rect::new(0, 0, 60, 20));
        t.end();
        t.render(buf.area, &mut buf, &Theme::dark(), true);
        assert_eq!(t.visits(), before);
    }

    #[test]
    fn groups_of_a_big_object_keep_its_keys() {
        let m: serde_json::Map<String, Value> =
            (0..250).map(|i| (format!("k{i}"), json!(i))).collect();
        let mut t = tree(Value::Object(m));
        assert_eq!(t.row_text(3), "  ▸ [200 … 249]");
        t.toggle(3);
        assert_eq!(t.row_text(4), "      \"k200\": 200");
        assert_eq!(t.row_text(53), "      \"k249\": 249");
        assert_eq!(t.row_text(54), "  }");
    }

    #[test]
    fn a_deep_big_value_builds_with_few_visits() {
        // Big arrays under a small root: the first view stays tiny.
        let v = json!({"data": {"users": big_array(50_000)}, "meta": {"count": 50_000}});
        let t = tree(v);
        assert!(t.visits() < 50, "{}", t.visits());
        assert!(
            texts(&t).contains(&"    ▸ \"users\": […] 50000 items".to_owned()),
            "{:?}",
            texts(&t)
        );
    }
}
