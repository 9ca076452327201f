//! Completion at a place in a pipeline file's text, read as typed: the
//! place is found from the text around it (which need not parse), and the
//! names it may hold from the last version that loaded, the servers' tool
//! lists and the outputs recorded for nodes.

use serde_json::Value;

use crate::diag::Pos;
use crate::file::keys;
use crate::file::model::Composition;
use crate::lang::jq;
use crate::mcp::{TaskSupport, ToolInfo};

use super::Knowledge;
use super::place::{self, Block, NodeAt, Place};
use output::Known;

mod output;

/// What a completion item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A tool a server listed (`tool:`).
    Tool,
    /// An argument key from the tool's `inputSchema`.
    Argument,
    /// An `enum` or `const` value of an argument.
    Value,
    /// A node id in a `${…}` reference or `needs:`.
    Node,
    /// A path into a node's output (`${find.users`).
    Path,
    /// `${var.X}`.
    Variable,
    /// `${env.X}`.
    Env,
    /// `${item…}` inside `for_each`.
    Item,
    /// A jq builtin in `transform:` or `when:`.
    Builtin,
    /// A key of the file format.
    Key,
    /// A server the file declares.
    Server,
}

/// One thing that may be written at the place.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// What the list shows and filters on.
    pub label: String,
    pub kind: Kind,
    /// One line beside the label: a type, `required`, a server.
    pub detail: Option<String>,
    /// A longer description (a tool's or an argument's).
    pub doc: Option<String>,
    /// The text that replaces the range.
    pub insert: String,
}

impl Item {
    fn new(label: impl Into<String>, kind: Kind) -> Self {
        let label = label.into();
        Self {
            insert: label.clone(),
            label,
            kind,
            detail: None,
            doc: None,
        }
    }

    fn detail(mut self, d: impl Into<String>) -> Self {
        self.detail = Some(d.into());
        self
    }

    fn doc(mut self, d: Option<&str>) -> Self {
        self.doc = d.map(str::to_owned).filter(|d| !d.is_empty());
        self
    }

    fn insert(mut self, i: impl Into<String>) -> Self {
        self.insert = i.into();
        self
    }
}

/// The items for a place and the range of its line they replace (the word
/// typed so far).
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// 1-based line of the place.
    pub line: u32,
    /// 1-based columns (in characters) of the range replaced: `from` is
    /// where the typed word starts, `to` the place itself.
    pub from: u32,
    pub to: u32,
    pub items: Vec<Item>,
}

/// How many items a list holds at most (a 2,000-tool server still answers
/// at once; typing narrows it).
pub const MAX_ITEMS: usize = 200;

/// What may be written at `at` in `text`, filtered by the word typed
/// before it. `None` when nothing is known for the place.
pub fn complete(text: &str, at: Pos, k: &Knowledge<'_>) -> Option<Completion> {
    let place = place::at(text, at)?;
    let node = place::node_at(text, at.line);
    let comp = node
        .as_ref()
        .and_then(|n| composition_of(k, n.id.as_deref()?));
    let (word, mut items) = match &place {
        Place::Reference { typed } => reference(typed, node.as_ref(), comp, k, text),
        Place::Value { key, parents, word } => (
            word.clone(),
            value(key, parents, word, node.as_ref(), k, text),
        ),
        Place::Key {
            parents,
            word,
            present,
        } => (word.clone(), key_items(parents, present, node.as_ref(), k)),
    };
    let wanted = word.to_lowercase();
    items.retain(|i| i.label.to_lowercase().starts_with(&wanted) && i.label != word);
    if items.is_empty() {
        // A word typed in the middle of a name still finds it.
        return None;
    }
    items.truncate(MAX_ITEMS);
    let typed = u32::try_from(word.chars().count()).unwrap_or(0);
    Some(Completion {
        line: at.line,
        from: at.col.saturating_sub(typed),
        to: at.col,
        items,
    })
}

/// The composition that holds node `id` in the last version that loaded.
fn composition_of<'a>(k: &Knowledge<'a>, id: &str) -> Option<&'a Composition> {
    k.pipeline?
        .compositions
        .iter()
        .find(|c| c.index_of(id).is_some())
}

/// The tool a node calls, from the lists of its server (or of any server
/// when it names none and there is no default).
pub fn tool_of<'a>(k: &Knowledge<'a>, server: Option<&str>, tool: &str) -> Option<&'a ToolInfo> {
    let server = server.or(k.default_server);
    k.tools
        .iter()
        .filter(|(s, _)| server.is_none_or(|want| want == s.as_str()))
        .flat_map(|(_, list)| list.iter())
        .find(|t| t.name == tool)
}

/// The tool the node block as written calls.
fn node_tool<'a>(node: Option<&NodeAt>, k: &Knowledge<'a>) -> Option<&'a ToolInfo> {
    let n = node?;
    tool_of(k, n.server.as_deref(), n.tool.as_deref()?)
}

fn tool_items(node: Option<&NodeAt>, k: &Knowledge<'_>) -> Vec<Item> {
    let server = node.and_then(|n| n.server.as_deref()).or(k.default_server);
    let several = k.tools.len() > 1;
    k.tools
        .iter()
        .filter(|(s, _)| server.is_none_or(|want| want == s.as_str()))
        .flat_map(|(s, list)| list.iter().map(move |t| (s, t)))
        .map(|(s, t)| {
            let mut detail = required_args(&t.input_schema);
            if t.annotations.destructive == Some(true) {
                detail.push_str(" · destructive");
            }
            if several {
                detail = format!("{s} · {detail}");
            }
            Item::new(&t.name, Kind::Tool)
                .detail(detail)
                .doc(Some(&tool_doc(t)))
        })
        .collect()
}

/// A tool's description and its arguments, one per line with type,
/// `required` and description (what the popup and hover show).
pub fn tool_doc(t: &ToolInfo) -> String {
    let mut out = t.description.clone().unwrap_or_default();
    let required = required_of(&t.input_schema);
    if let Some(props) = t.input_schema.get("properties").and_then(Value::as_object) {
        if !out.is_empty() {
            out.push_str("\n\n");
        }
        out.push_str("arguments:");
        for (name, schema) in props {
            out.push_str(&format!("\n  {name}: {}", super::type_word(schema)));
            if required.contains(&name.as_str()) {
                out.push_str(" · required");
            }
            if let Some(d) = schema.get("description").and_then(Value::as_str) {
                out.push_str(&format!(" — {d}"));
            }
        }
    }
    let task = match t.task_support {
        TaskSupport::Required => "runs only as a task (`execution.taskSupport: required`)",
        TaskSupport::Optional => "may run as a task (`execution.taskSupport: optional`)",
        TaskSupport::Forbidden | TaskSupport::Unstated => return out,
    };
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str(task);
    out
}

/// `(query, limit?)`: the arguments, required ones bare.
fn required_args(schema: &Value) -> String {
    let required = required_of(schema);
    let names: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.keys()
                .map(|n| {
                    if required.contains(&n.as_str()) {
                        n.clone()
                    } else {
                        format!("{n}?")
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    format!("({})", names.join(", "))
}

fn required_of(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn value(
    key: &str,
    parents: &[String],
    word: &str,
    node: Option<&NodeAt>,
    k: &Knowledge<'_>,
    text: &str,
) -> Vec<Item> {
    let in_node = node.is_some() && parents.last().map(String::as_str) != Some("args");
    match (key, parents.last().map(String::as_str)) {
        ("tool", _) if in_node || node.is_some() => tool_items(node, k),
        ("server", _) if node.is_some() => server_items(k, text),
        ("needs", _) if node.is_some() => node_items(node, k, text, None),
        ("on_error", _) if node.is_some() => ["stop", "continue", "retry:3"]
            .iter()
            .map(|v| Item::new(*v, Kind::Value))
            .collect(),
        ("transform" | "when", _) if node.is_some() => builtin_items(word),
        (arg, Some("args")) => {
            let Some(t) = node_tool(node, k) else {
                return Vec::new();
            };
            let Some(schema) = t.input_schema.get("properties").and_then(|p| p.get(arg)) else {
                return Vec::new();
            };
            enum_items(schema)
        }
        _ => Vec::new(),
    }
}

fn enum_items(schema: &Value) -> Vec<Item> {
    let mut values: Vec<&Value> = Vec::new();
    if let Some(Value::Array(e)) = schema.get("enum") {
        values.extend(e);
    }
    if let Some(c) = schema.get("const") {
        values.push(c);
    }
    if values.is_empty() && schema.get("type").and_then(Value::as_str) == Some("boolean") {
        return ["true", "false"]
            .iter()
            .map(|v| Item::new(*v, Kind::Value))
            .collect();
    }
    values
        .into_iter()
        .map(|v| {
            let label = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            Item::new(label, Kind::Value).detail(super::type_word(schema))
        })
        .collect()
}

fn builtin_items(word: &str) -> Vec<Item> {
    if word.is_empty() {
        // Before a word is typed, a jq builtin list is noise.
        return Vec::new();
    }
    jq::builtins()
        .iter()
        .map(|(name, arity)| {
            let detail = match arity {
                0 => "jq builtin".to_owned(),
                n => format!("jq builtin/{n}"),
            };
            Item::new(name, Kind::Builtin).detail(detail)
        })
        .collect()
}

fn server_items(k: &Knowledge<'_>, text: &str) -> Vec<Item> {
    let mut names: Vec<String> = k
        .pipeline
        .map(|p| p.servers.keys().cloned().collect())
        .unwrap_or_default();
    for s in k.tools.keys() {
        if !names.contains(s) {
            names.push(s.clone());
        }
    }
    for s in place::servers_block(text) {
        if !names.contains(&s) {
            names.push(s);
        }
    }
    names
        .into_iter()
        .map(|n| Item::new(n, Kind::Server))
        .collect()
}

/// The ids a node may name: every other node of its composition that does
/// not wait for it (naming one of those would make a circle). `suffix` is
/// added to the inserted text.
fn node_items(
    node: Option<&NodeAt>,
    k: &Knowledge<'_>,
    text: &str,
    suffix: Option<&str>,
) -> Vec<Item> {
    let own = node.and_then(|n| n.id.as_deref());
    let comp = own.and_then(|id| composition_of(k, id));
    let mut out = Vec::new();
    let mut push = |id: &str, tool: Option<&str>| {
        if Some(id) == own || out.iter().any(|i: &Item| i.label == id) {
            return;
        }
        let mut item = Item::new(id, Kind::Node).insert(format!("{id}{}", suffix.unwrap_or("")));
        if let Some(t) = tool {
            item = item.detail(format!("node · {t}"));
        }
        out.push(item);
    };
    match (comp, own) {
        (Some(c), Some(own)) => {
            let later = c
                .index_of(own)
                .map(|i| descendants(c, i))
                .unwrap_or_default();
            for (i, n) in c.nodes.iter().enumerate() {
                if !later.contains(&i) {
                    push(&n.id, Some(&n.tool));
                }
            }
        }
        _ => {
            // Not loaded yet: the ids written above the place.
            let before = node.map_or(u32::MAX, |n| n.line);
            for n in place::nodes(text).iter().filter(|n| n.line < before) {
                if let Some(id) = &n.id {
                    push(id, n.tool.as_deref());
                }
            }
        }
    }
    out
}

/// Node `i` and every node that waits for it, directly or not.
fn descendants(c: &Composition, i: usize) -> Vec<usize> {
    let mut seen = vec![i];
    let mut stack = vec![i];
    while let Some(n) = stack.pop() {
        for &ch in &c.children[n] {
            if !seen.contains(&ch) {
                seen.push(ch);
                stack.push(ch);
            }
        }
    }
    seen
}

/// After `${`: roots, then a node's output paths, `var.`, `env.`, `item`.
fn reference(
    typed: &str,
    node: Option<&NodeAt>,
    comp: Option<&Composition>,
    k: &Knowledge<'_>,
    text: &str,
) -> (String, Vec<Item>) {
    let (head, word) = split_last(typed);
    if head.is_empty() {
        let mut items = node_items(node, k, text, None);
        items.push(
            Item::new("var", Kind::Variable)
                .insert("var.")
                .detail("a variable"),
        );
        items.push(
            Item::new("env", Kind::Env)
                .insert("env.")
                .detail("an environment variable"),
        );
        if node.is_some_and(|n| n.for_each.is_some()) {
            items.push(Item::new("item", Kind::Item).detail("this iteration's element"));
        }
        return (word.to_owned(), items);
    }
    let items = match head {
        "var." => var_items(k, comp, text),
        "env." => env_items(text),
        _ => {
            let (root, path) = split_root(head);
            let value = if root == "item" {
                node.and_then(|n| item_value(n, k, text))
            } else {
                root_value(root, k, text)
            };
            value.map_or_else(Vec::new, |v| {
                v.steps(path)
                    .into_iter()
                    .map(|s| {
                        Item::new(s.label, Kind::Path)
                            .detail(s.detail)
                            .doc(s.doc.as_deref())
                    })
                    .collect()
            })
        }
    };
    (word.to_owned(), items)
}

/// `find.users[0].na` → (`find.users[0].`, `na`).
fn split_last(typed: &str) -> (&str, &str) {
    let cut = typed
        .char_indices()
        .rev()
        .find(|(_, c)| matches!(c, '.' | '[' | ']'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    typed.split_at(cut)
}

/// `find.users[0].` → (`find`, `.users[0].`).
fn split_root(head: &str) -> (&str, &str) {
    let end = head.find(['.', '[']).unwrap_or(head.len());
    head.split_at(end)
}

/// What `${root}` holds: the recorded output, else what the tool's
/// `outputSchema` says of it (when the node transforms nothing), the node
/// read from the text as typed.
fn root_value(root: &str, k: &Knowledge<'_>, text: &str) -> Option<Known> {
    if let Some(out) = (k.output)(root) {
        return Some(Known::Value(out.tree().clone()));
    }
    let n = place::node_by_id(text, root)?;
    if n.transform {
        return None;
    }
    let schema = tool_of(k, n.server.as_deref(), n.tool.as_deref()?)?
        .output_schema
        .as_ref()?;
    Some(Known::schema(schema, n.for_each.is_some()))
}

/// One element of the node's `for_each` source.
fn item_value(n: &NodeAt, k: &Knowledge<'_>, text: &str) -> Option<Known> {
    let source = n.for_each.as_deref()?.trim();
    let inner = source.strip_prefix("${")?.strip_suffix('}')?.trim();
    let (root, path) = split_root(inner);
    root_value(root, k, text)?.element(path.trim_end_matches("[*]"))
}

fn var_items(k: &Knowledge<'_>, comp: Option<&Composition>, text: &str) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    let mut push = |name: &str, detail: String| {
        if !out.iter().any(|i| i.label == name) {
            out.push(Item::new(name, Kind::Variable).detail(detail));
        }
    };
    if let Some(p) = k.pipeline {
        for (name, v) in &p.vars {
            push(name, format!("vars: {}", short(v)));
        }
    }
    if let Some(c) = comp {
        for case in &c.cases {
            for name in case.vars.keys() {
                push(name, format!("case {}", case.name));
            }
        }
    }
    for name in place::used_names(text, "var") {
        push(&name, "used in this file".into());
    }
    out
}

/// `${env.X}` names the file already uses; the process's environment is
/// never listed.
fn env_items(text: &str) -> Vec<Item> {
    place::used_names(text, "env")
        .into_iter()
        .map(|n| Item::new(n, Kind::Env).detail("used in this file"))
        .collect()
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

fn key_items(
    parents: &[String],
    present: &[String],
    node: Option<&NodeAt>,
    k: &Knowledge<'_>,
) -> Vec<Item> {
    let fresh = |name: &str| !present.iter().any(|p| p == name);
    match parents.last().map(String::as_str) {
        Some("args") if node.is_some() => {
            let Some(t) = node_tool(node, k) else {
                return Vec::new();
            };
            let required = required_of(&t.input_schema);
            let Some(props) = t.input_schema.get("properties").and_then(Value::as_object) else {
                return Vec::new();
            };
            let mut items: Vec<Item> = props
                .iter()
                .filter(|(name, _)| fresh(name))
                .map(|(name, schema)| {
                    let req = required.contains(&name.as_str());
                    let mut detail = super::type_word(schema);
                    if req {
                        detail.push_str(" · required");
                    }
                    Item::new(name, Kind::Argument)
                        .detail(detail)
                        .doc(schema.get("description").and_then(Value::as_str))
                        .insert(format!("{name}: "))
                })
                .collect();
            // Required arguments first, each group in the schema's order.
            items.sort_by_key(|i| !i.detail.as_deref().unwrap_or("").ends_with("required"));
            items
        }
        _ => {
            let table: &[&str] = match place::block_of(parents, node.is_some()) {
                Block::Top => keys::TOP_KEYS,
                Block::Composition => keys::COMPOSITION_KEYS,
                Block::Node => keys::NODE_KEYS,
                Block::Other => return Vec::new(),
            };
            table
                .iter()
                .filter(|name| fresh(name))
                .map(|name| Item::new(*name, Kind::Key).insert(format!("{name}: ")))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests;
