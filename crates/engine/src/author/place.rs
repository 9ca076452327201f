//! Where a place in a file's text is, read from the text around it as
//! typed (it need not parse): inside a `${…}` reference, at a key, or at a
//! key's value, under which keys, and in which node.
//!
//! Only block-style YAML is read this way (what the scaffold and every
//! example write); a place inside a flow mapping (`{ a: 1 }`) has none.

use crate::diag::Pos;

/// What the text at a place is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// After an unclosed `${`: the text typed since it (leading spaces
    /// dropped).
    Reference { typed: String },
    /// After `key:` on the line: the word typed so far.
    Value {
        key: String,
        parents: Vec<String>,
        word: String,
    },
    /// Where a key goes: the word typed so far and the keys the mapping
    /// already has.
    Key {
        parents: Vec<String>,
        word: String,
        present: Vec<String>,
    },
}

/// The node block around a place, as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeAt {
    pub id: Option<String>,
    pub tool: Option<String>,
    pub server: Option<String>,
    /// Its `for_each:` as written (quotes dropped).
    pub for_each: Option<String>,
    /// Whether it has a `transform:` key.
    pub transform: bool,
    /// The 1-based line of its `- ` and of its last line.
    pub line: u32,
    pub end: u32,
}

/// The kind of mapping keys go into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    Top,
    Composition,
    Node,
    Other,
}

/// Which mapping a key under `parents` is in.
pub fn block_of(parents: &[String], in_node: bool) -> Block {
    match parents.last().map(String::as_str) {
        None => Block::Top,
        Some("pipe" | "nodes") if in_node => Block::Node,
        Some("compositions") => Block::Composition,
        _ => Block::Other,
    }
}

/// One line read for its shape.
#[derive(Debug, Clone, Copy)]
struct Shape<'a> {
    /// Spaces before anything.
    indent: usize,
    /// Whether it starts a list item (`- `).
    item: bool,
    /// The column (0-based, in characters) where its key or text starts,
    /// after any `- `.
    key_col: usize,
    /// `key` of `key:` or `key: value`, when the line is one.
    key: Option<&'a str>,
    /// The text after `key:`, trimmed.
    value: &'a str,
    /// Blank or a comment.
    blank: bool,
}

fn shape(line: &str) -> Shape<'_> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let mut rest = &line[indent..];
    let mut item = false;
    while let Some(r) = rest
        .strip_prefix("- ")
        .or_else(|| (rest == "-").then_some(""))
    {
        item = true;
        rest = r.trim_start_matches(' ');
    }
    let blank = (rest.trim().is_empty() && !item) || rest.starts_with('#');
    let (key, value) = match rest.find(':') {
        Some(i) if is_key(&rest[..i]) && rest[i + 1..].chars().next().is_none_or(|c| c == ' ') => {
            (Some(&rest[..i]), rest[i + 1..].trim())
        }
        _ => (None, ""),
    };
    // Columns count characters; the indent and `- ` are ASCII.
    let key_col = line.len() - rest.len();
    Shape {
        indent,
        item,
        key_col,
        key,
        value,
        blank,
    }
}

fn is_key(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '$' | '.'))
}

fn lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// What the text at `at` is.
pub fn at(text: &str, at: Pos) -> Option<Place> {
    let all = lines(text);
    let row = usize::try_from(at.line).ok()?.checked_sub(1)?;
    let line = *all.get(row)?;
    let col = usize::try_from(at.col).ok()?.saturating_sub(1);
    let cut = line.char_indices().nth(col).map_or(line.len(), |(b, _)| b);
    let prefix = &line[..cut];
    if let Some(open) = prefix.rfind("${")
        && !prefix[open..].contains('}')
        && !prefix[..open].ends_with('$')
    {
        let typed = prefix[open + 2..].trim_start();
        if typed.chars().all(|c| !c.is_whitespace()) {
            return Some(Place::Reference {
                typed: typed.to_owned(),
            });
        }
        return None;
    }
    if prefix.trim_start().starts_with('#') {
        return None;
    }
    let here = shape(prefix);
    let parents_of = |col: usize| parents(&all, row, col);
    if let Some(key) = here.key {
        let word_start = prefix
            .rfind([' ', '[', ',', '{', '"', '\'', ':'])
            .map_or(0, |i| i + 1);
        let word = &prefix[word_start..];
        return Some(Place::Value {
            key: key.to_owned(),
            parents: parents_of(here.key_col).0,
            word: word.to_owned(),
        });
    }
    let rest = prefix.trim_start_matches([' ', '-']);
    if !rest.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let (parents, mut present) = parents_of(here.key_col);
    present.extend(siblings_below(&all, row, here.key_col));
    Some(Place::Key {
        parents,
        word: rest.to_owned(),
        present,
    })
}

/// The keys enclosing a key at column `col` of line `row` (outermost
/// first; a list item counts as the key that holds the list), and the keys
/// above it in its own mapping.
fn parents(all: &[&str], row: usize, col: usize) -> (Vec<String>, Vec<String>) {
    let mut out = Vec::new();
    let mut present = Vec::new();
    let mut level = col;
    // Whether the mapping at `level` began at a `- ` (its owner may then
    // sit at the item's own column).
    let mut in_item = false;
    if let Some(line) = all.get(row) {
        let s = shape(line);
        if s.item && s.key_col == col {
            level = s.indent;
            in_item = true;
        }
    }
    for line in all[..row].iter().rev() {
        let s = shape(line);
        if s.blank {
            continue;
        }
        if !in_item && s.key_col == level {
            // The same mapping, above.
            if out.is_empty()
                && let Some(k) = s.key
            {
                present.push(k.to_owned());
            }
            if s.item {
                level = s.indent;
                in_item = true;
            }
            continue;
        }
        if in_item && s.item && s.indent == level {
            // An item before, in the same list.
            continue;
        }
        let owner = s.key_col < level || (in_item && s.key_col == level && !s.item);
        if !owner {
            continue;
        }
        level = s.key_col;
        in_item = false;
        if let Some(k) = s.key {
            out.push(k.to_owned());
        }
        if s.item {
            level = s.indent;
            in_item = true;
        }
        if level == 0 && !in_item {
            break;
        }
    }
    out.reverse();
    (out, present)
}

/// Keys at column `col` after line `row` in the same mapping.
fn siblings_below(all: &[&str], row: usize, col: usize) -> Vec<String> {
    let mut out = Vec::new();
    for line in all.iter().skip(row + 1) {
        let s = shape(line);
        if s.blank {
            continue;
        }
        if s.key_col < col || (s.item && s.indent < col) {
            break;
        }
        if s.key_col == col
            && let Some(k) = s.key
        {
            out.push(k.to_owned());
        }
    }
    out
}

fn unquote(v: &str) -> String {
    let v = v.split(" #").next().unwrap_or(v).trim();
    v.trim_matches(['"', '\'']).to_owned()
}

/// The node block (an item of `pipe:` or of a composition's `nodes:`)
/// that holds 1-based line `line`.
pub fn node_at(text: &str, line: u32) -> Option<NodeAt> {
    let all = lines(text);
    let row = usize::try_from(line).ok()?.checked_sub(1)?;
    let here = shape(all.get(row)?);
    // Only lines left of this column can hold the place.
    let mut limit = if here.blank && here.indent == 0 {
        usize::MAX
    } else {
        here.key_col
    };
    for start in (0..=row).rev() {
        let s = shape(all[start]);
        if s.blank {
            continue;
        }
        if s.item && (s.indent < limit || start == row) {
            let (owners, _) = parents(&all, start, s.key_col);
            if matches!(owners.last().map(String::as_str), Some("pipe" | "nodes")) {
                return Some(read_node(&all, start, s));
            }
            limit = s.indent;
        } else if s.key_col < limit {
            limit = s.key_col;
        }
        if limit == 0 {
            return None;
        }
    }
    None
}

fn read_node(all: &[&str], start: usize, first: Shape<'_>) -> NodeAt {
    let mut node = NodeAt {
        line: u32::try_from(start + 1).unwrap_or(u32::MAX),
        ..NodeAt::default()
    };
    let mut end = start;
    for (i, line) in all.iter().enumerate().skip(start) {
        let s = shape(line);
        if i > start
            && !s.blank
            && (s.key_col < first.key_col || (s.item && s.indent <= first.indent))
        {
            break;
        }
        if !s.blank {
            end = i;
        }
        if s.key_col != first.key_col {
            continue;
        }
        match s.key {
            Some("id") => node.id = Some(unquote(s.value)),
            Some("tool") => node.tool = Some(unquote(s.value)),
            Some("server") => node.server = Some(unquote(s.value)),
            Some("for_each") => node.for_each = Some(unquote(s.value)),
            Some("transform") => node.transform = true,
            _ => {}
        }
    }
    node.id = node.id.filter(|s| !s.is_empty());
    node.tool = node.tool.filter(|s| !s.is_empty());
    node.server = node.server.filter(|s| !s.is_empty());
    node.end = u32::try_from(end + 1).unwrap_or(u32::MAX);
    node
}

/// The node block whose `id:` is `id`, as written (the first, when the
/// text names it twice).
pub fn node_by_id(text: &str, id: &str) -> Option<NodeAt> {
    lines(text).iter().enumerate().find_map(|(row, line)| {
        let s = shape(line);
        if s.key != Some("id") || unquote(s.value) != id {
            return None;
        }
        let n = node_at(text, u32::try_from(row + 1).ok()?)?;
        (n.id.as_deref() == Some(id)).then_some(n)
    })
}

/// Every node block of the text, as written, in order.
pub fn nodes(text: &str) -> Vec<NodeAt> {
    let all = lines(text);
    let mut out = Vec::new();
    let mut row = 0;
    while row < all.len() {
        let s = shape(all[row]);
        if s.item
            && let Some(n) = node_at(text, u32::try_from(row + 1).unwrap_or(u32::MAX))
            && n.line as usize == row + 1
        {
            row = (n.end as usize).max(row + 1);
            out.push(n);
            continue;
        }
        row += 1;
    }
    out
}

/// The server names under a top-level `servers:` block, as written.
pub fn servers_block(text: &str) -> Vec<String> {
    let all = lines(text);
    let mut out = Vec::new();
    let mut inside: Option<usize> = None;
    for line in all {
        let s = shape(line);
        if s.blank {
            continue;
        }
        if s.indent == 0 {
            inside = (s.key == Some("servers")).then_some(usize::MAX);
            continue;
        }
        if let Some(col) = inside.as_mut() {
            if *col == usize::MAX {
                *col = s.key_col;
            }
            if s.key_col == *col
                && let Some(k) = s.key
            {
                out.push(k.to_owned());
            }
        }
    }
    out
}

/// The names `${root.NAME}` references in the text use (`var`, `env`),
/// in order of first use.
pub fn used_names(text: &str, root: &str) -> Vec<String> {
    let needle = format!("${{{root}.");
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&needle) {
        rest = &rest[i + needle.len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-'))
            .collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The lines of top-level section `key:` (its key line and everything
/// under it), as written.
pub fn section(text: &str, key: &str) -> Option<String> {
    let mut out = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let s = shape(line.trim_end_matches(['\n', '\r']));
        if !s.blank && s.indent == 0 && !s.item {
            inside = s.key == Some(key);
        }
        if inside {
            out.push_str(line);
        }
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    (!out.is_empty()).then_some(out)
}
