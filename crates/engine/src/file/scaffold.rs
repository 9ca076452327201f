//! A new pipeline file's first text, built from the servers' tool
//! definitions: the schema line, a `servers:` block, and one node per
//! chosen tool with its required arguments as placeholders, each node after
//! the one before. `pipewright new`, the workbench and a language server
//! all write it from here; none of them connects here.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::loader::id_from;
use super::write::{self, quoted};

/// Where this repository keeps the file format's JSON Schema, from its root.
const REPO_SCHEMA: &str = "schema/pipewright.schema.json";

/// The name `pipewright schema > …` is told to write beside a file.
const LOCAL_SCHEMA: &str = "pipewright.schema.json";

/// The first line of a new file written at `file` (absolute): the YAML
/// language server's `$schema` modeline when the schema is found from
/// there — `pipewright.schema.json` or the repository's
/// `schema/pipewright.schema.json`, in the file's folder or one above it
/// — by a path from the file's folder; else a comment saying how to get
/// one. A modeline that does not resolve where the file is helps no one.
pub fn schema_line(file: Option<&Path>) -> String {
    match file.and_then(schema_near) {
        Some(path) => format!("# yaml-language-server: $schema={path}"),
        None => format!(
            "# For completion and checks in an editor: `pipewright schema > {LOCAL_SCHEMA}`\n\
             # beside this file, then name it in a yaml-language-server modeline."
        ),
    }
}

/// The schema's path from `file`'s folder, when one is found there or
/// above it.
fn schema_near(file: &Path) -> Option<String> {
    if !file.is_absolute() {
        return None;
    }
    let mut at = lexical(file.parent()?);
    let mut up = 0;
    loop {
        for name in [LOCAL_SCHEMA, REPO_SCHEMA] {
            if at.join(name).is_file() {
                return Some(format!("{}{name}", "../".repeat(up)));
            }
        }
        if !at.pop() {
            return None;
        }
        up += 1;
    }
}

/// `path` with `.` and `..` taken out as written (`/a/b/../c` is `/a/c`).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// How a server of the new file is declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEntry {
    /// A Streamable HTTP server: `url:`.
    Url(String),
    /// A stdio server: `command:` and `args:`.
    Command { command: String, args: Vec<String> },
    /// An entry of another client's config file: `from:` and `name:`.
    From { path: String, name: String },
}

/// One tool a server listed, as the scaffold reads it.
#[derive(Debug, Clone, Copy)]
pub struct ToolDef<'a> {
    /// The name of the server that listed it.
    pub server: &'a str,
    pub name: &'a str,
    pub description: Option<&'a str>,
    /// The tool's `inputSchema`; only its `required` names and their
    /// `properties` are read.
    pub input_schema: &'a Value,
}

/// What to write.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The composition's name.
    pub name: &'a str,
    /// The servers to declare, by name; empty for the built-in demo server,
    /// which a file that declares none calls.
    pub servers: &'a [(String, ServerEntry)],
    /// Every tool the servers listed (named in a comment).
    pub tools: &'a [ToolDef<'a>],
    /// Indices into `tools`, one node each, in this order. None: one
    /// example node for the first tool, its arguments left empty.
    pub chosen: &'a [usize],
    /// Where the file will be (absolute), for its `$schema` modeline
    /// ([`schema_line`]); `None` when it is not known.
    pub file: Option<&'a Path>,
}

/// The longest description kept in a comment, in characters.
const MAX_NOTE: usize = 100;

/// The scaffold's text; it loads and checks as it is. With no tool
/// chosen, its one node is an example for the first tool with empty
/// arguments; for servers that list no tools, a node that returns a
/// fixture (`mock:`) until it is given a tool.
pub fn scaffold(req: &Request<'_>) -> String {
    let mut out = String::new();
    out.push_str(&schema_line(req.file));
    out.push('\n');
    out.push_str("# A new pipeline: one node per tool, each after the one before.\n");
    out.push_str("# Fill in the placeholders; `pipewright check FILE` says what is left.\n");
    out.push_str("# To pass a value on, write `${PARENT.field}` where a placeholder is.\n");
    tool_list(&mut out, req.tools);
    if !req.servers.is_empty() {
        out.push_str("servers:\n");
        for (name, entry) in req.servers {
            server(&mut out, name, entry);
        }
    }
    let several = {
        let mut names: Vec<&str> = req.tools.iter().map(|t| t.server).collect();
        names.dedup();
        names.len() > 1 || req.servers.len() > 1
    };
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut nodes = String::new();
    let mut ids: Vec<String> = Vec::new();
    for &i in req.chosen {
        let Some(tool) = req.tools.get(i) else {
            continue;
        };
        let id = unique(id_from(tool.name), &ids);
        node(&mut nodes, tool, &id, ids.last(), several, Some(&mut vars));
        ids.push(id);
    }
    if ids.is_empty() {
        match req.tools.first() {
            Some(tool) => {
                nodes.push_str(
                    "      # One node per tool call; an example to fill in, and more below it:\n",
                );
                node(&mut nodes, tool, &id_from(tool.name), None, several, None);
            }
            None => {
                for line in [
                    "# The servers listed no tools: this node returns its fixture until",
                    "# it is given `tool:` and `args:` in place of `mock:`.",
                    "- id: first",
                    "  mock:",
                    "    result: {}",
                ] {
                    nodes.push_str(&format!("      {line}\n"));
                }
            }
        }
    }
    if !vars.is_empty() {
        out.push_str("vars:\n");
        for (name, note) in &vars {
            out.push_str(&format!("  {name}: \"\"{note}\n"));
        }
    }
    out.push_str("compositions:\n");
    out.push_str(&format!("  - name: {}\n", write::name(req.name)));
    out.push_str("    nodes:\n");
    out.push_str(&nodes);
    out
}

/// `# server: a, b, c` lines, wrapped.
fn tool_list(out: &mut String, tools: &[ToolDef<'_>]) {
    let mut servers: Vec<&str> = tools.iter().map(|t| t.server).collect();
    servers.dedup();
    for s in servers {
        let names: Vec<String> = tools
            .iter()
            .filter(|t| t.server == s)
            .map(|t| one_line(t.name, 60))
            .collect();
        let mut line = format!("# {}'s tools:", one_line(s, 40));
        for n in names {
            if line.len() + n.len() + 2 > 78 {
                out.push_str(&line);
                out.push('\n');
                line = "#  ".to_owned();
            }
            line.push(' ');
            line.push_str(&n);
        }
        out.push_str(&line);
        out.push('\n');
    }
}

fn server(out: &mut String, name: &str, entry: &ServerEntry) {
    out.push_str(&format!("  {}:\n", write::name(name)));
    match entry {
        ServerEntry::Url(url) => out.push_str(&format!("    url: {}\n", quoted(url))),
        ServerEntry::Command { command, args } => {
            out.push_str(&format!("    command: {}\n", quoted(command)));
            if !args.is_empty() {
                let args: Vec<String> = args.iter().map(|a| quoted(a)).collect();
                out.push_str(&format!("    args: [{}]\n", args.join(", ")));
            }
        }
        ServerEntry::From { path, name } => {
            out.push_str(&format!("    from: {}\n", quoted(path)));
            out.push_str(&format!("    name: {}\n", quoted(name)));
        }
    }
}

/// Writes one node. With `vars`, a required string becomes `${var.X}` and
/// an entry of `vars`; without, an empty string in place.
fn node(
    out: &mut String,
    tool: &ToolDef<'_>,
    id: &str,
    after: Option<&String>,
    several: bool,
    mut vars: Option<&mut Vec<(String, String)>>,
) {
    out.push_str(&format!("      - id: {id}\n"));
    if let Some(parent) = after {
        out.push_str(&format!("        needs: [{parent}]\n"));
    }
    if several {
        out.push_str(&format!("        server: {}\n", write::name(tool.server)));
    }
    out.push_str(&format!("        tool: {}", write::name(tool.name)));
    match tool.description.map(|d| one_line(d, MAX_NOTE)) {
        Some(d) if !d.is_empty() => out.push_str(&format!("  # {d}\n")),
        _ => out.push('\n'),
    }
    let required = required(tool.input_schema);
    if required.is_empty() {
        return;
    }
    out.push_str("        args:\n");
    let props = tool.input_schema.get("properties");
    for name in required {
        let prop = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
        let (value, note) = placeholder(prop);
        let value = match (&mut vars, value) {
            (Some(vars), None) => {
                let var = unique_var(id, name, vars);
                let text = format!("${{var.{var}}}");
                vars.push((var, note.clone()));
                text
            }
            (None, None) => "\"\"".to_owned(),
            (_, Some(v)) => v,
        };
        out.push_str(&format!("          {}: {value}{note}\n", write::name(name)));
    }
}

/// The names `schema` requires: `required`, else the first `oneOf` or
/// `anyOf` alternative's.
fn required(schema: &Value) -> Vec<&str> {
    fn names(v: &Value) -> Vec<&str> {
        v.get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
    let own = names(schema);
    if !own.is_empty() {
        return own;
    }
    ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| schema.get(k).and_then(Value::as_array))
        .flat_map(|alts| alts.first())
        .map(names)
        .find(|n| !n.is_empty())
        .unwrap_or_default()
}

/// A property's placeholder value (`None`: a plain string, to take from a
/// var) and the comment that goes after it.
fn placeholder(prop: &Value) -> (Option<String>, String) {
    let ty = match prop.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("any"),
        _ => "any",
    };
    let about = prop
        .get("description")
        .and_then(Value::as_str)
        .map(|d| one_line(d, MAX_NOTE))
        .filter(|d| !d.is_empty());
    let note = |extra: Option<String>| {
        let mut n = format!("  # {ty}");
        if let Some(e) = extra {
            n.push_str(&format!(" ({e})"));
        }
        if let Some(d) = &about {
            n.push_str(&format!(": {d}"));
        }
        n
    };
    if let Some(first) = prop
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        let all: Vec<String> = prop["enum"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| one_line(&v.to_string(), 30))
            .collect();
        let choices = one_line(&format!("one of {}", all.join(", ")), 60);
        return (Some(first.to_string()), note(Some(choices)));
    }
    let value = match ty {
        "string" => None,
        "integer" | "number" => Some("0"),
        "boolean" => Some("false"),
        "array" => Some("[]"),
        "object" => Some("{}"),
        _ => Some("null"),
    };
    (value.map(str::to_owned), note(None))
}

/// `base`, or `base_2`, `base_3` … when `taken` has it.
fn unique(base: String, taken: &[String]) -> String {
    if !taken.contains(&base) {
        return base;
    }
    (2..)
        .map(|n| format!("{base}_{n}"))
        .find(|c| !taken.contains(c))
        .unwrap_or(base)
}

/// A var name for argument `arg` of node `id`: the argument upper-cased,
/// or prefixed with the node when another node took it.
fn unique_var(id: &str, arg: &str, vars: &[(String, String)]) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect()
    };
    let taken: Vec<String> = vars.iter().map(|(n, _)| n.clone()).collect();
    let mut name = clean(arg);
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    if taken.contains(&name) {
        name = format!("{}_{name}", clean(id));
    }
    unique(name, &taken)
}

/// `s` on one line for a comment: control characters and runs of blanks
/// become one space, cut at `max` characters with `…`.
fn one_line(s: &str, max: usize) -> String {
    let words: Vec<&str> = s
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect();
    let joined = words.join(" ");
    match joined.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &joined[..at]),
        None => joined,
    }
}

#[cfg(test)]
mod tests;
