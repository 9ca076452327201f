//! Where a node is defined and used, its renaming, the file's outline and
//! what a place is about (hover). In: the text as it is and the pipeline
//! loaded from it; out: places in the text (1-based lines, columns in
//! characters). A place the model names is only used when the text there
//! still says the id, so an edit never lands on the wrong characters.

use serde_json::Value;

use crate::diag::{Pos, Span};
use crate::file::loader::valid_id;
use crate::file::model::{Composition, Node, OutputSpec, Pipeline, RefSite};
use crate::lang::reference::{self, RESERVED_ROOTS, Root};
use crate::mcp::{TaskSupport, ToolInfo};

use super::{Knowledge, type_word};

/// How a node id is written at a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `id: find`.
    Definition,
    /// An entry of `needs:`.
    Need,
    /// `${find…}` in args, `when:`, `for_each:` or `compensate:`.
    Reference,
    /// A composition's `output: find`.
    Output,
}

/// One place a node id is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Occurrence {
    pub id: String,
    /// The id's own characters.
    pub span: Span,
    pub role: Role,
    /// What a place inside counts for: the whole `${…}` of a reference,
    /// else the id.
    pub around: Span,
}

/// One entry of the file's outline.
#[derive(Debug, Clone, PartialEq)]
pub struct Symbol {
    pub name: String,
    /// A composition's kind, a node's tool (and server).
    pub detail: Option<String>,
    /// Everything the entry covers.
    pub span: Span,
    /// The name's place (inside `span`).
    pub name_span: Span,
    /// A composition's nodes.
    pub children: Vec<Symbol>,
}

/// Line `n` (1-based) of `text`, without its line end.
fn line_of(text: &str, n: u32) -> Option<&str> {
    let line = text.split('\n').nth((n as usize).checked_sub(1)?)?;
    Some(line.strip_suffix('\r').unwrap_or(line))
}

fn within(span: Span, pos: Pos) -> bool {
    span.start <= pos && pos <= span.end
}

/// Where `name` is written at `start` (one opening quote skipped), when the
/// text there says it.
fn written(text: &str, start: Pos, name: &str) -> Option<Span> {
    let line = line_of(text, start.line)?;
    let mut chars = line.chars().skip((start.col as usize).checked_sub(1)?);
    let mut col = start.col;
    let mut rest: String = chars.by_ref().take(name.chars().count() + 1).collect();
    if rest.starts_with(['"', '\'']) {
        rest.remove(0);
        col += 1;
    }
    rest.starts_with(name).then(|| {
        let from = Pos::new(start.line, col);
        Span::new(from, from.shifted(name.chars().count()))
    })
}

/// The id's characters and the whole `${…}` of a reference to node `id`.
fn reference_place(text: &str, site: &RefSite, id: &str) -> Option<(Span, Span)> {
    let line = line_of(text, site.pos.line)?;
    let chars: Vec<char> = line.chars().collect();
    let open = (site.pos.col as usize).checked_sub(1)?;
    if chars.get(open..open + 2)? != ['$', '{'] {
        return None;
    }
    let mut i = open + 2;
    while chars.get(i) == Some(&' ') {
        i += 1;
    }
    let id_chars: Vec<char> = id.chars().collect();
    if chars.get(i..i + id_chars.len())? != id_chars.as_slice() {
        return None;
    }
    let end = chars[i..]
        .iter()
        .position(|&c| c == '}')
        .map_or(i + id_chars.len(), |o| i + o + 1);
    let col = |c: usize| u32::try_from(c + 1).unwrap_or(u32::MAX);
    let id_span = Span::new(
        Pos::new(site.pos.line, col(i)),
        Pos::new(site.pos.line, col(i + id_chars.len())),
    );
    Some((
        id_span,
        Span::new(site.pos, Pos::new(site.pos.line, col(end))),
    ))
}

/// Every place a node id of `comp` is written, in model order: each
/// node's id, `needs:` entries and references, then `output:`.
pub fn occurrences(text: &str, comp: &Composition) -> Vec<Occurrence> {
    let mut out = Vec::new();
    let mut plain = |id: &str, start: Pos, role| {
        if let Some(span) = written(text, start, id) {
            out.push(Occurrence {
                id: id.to_owned(),
                span,
                role,
                around: span,
            });
        }
    };
    for node in &comp.nodes {
        plain(&node.id, node.id_span.start, Role::Definition);
        for need in &node.needs {
            plain(&need.id, need.span.start, Role::Need);
        }
    }
    if let Some(OutputSpec::Node { id, span }) = &comp.output {
        plain(id, span.start, Role::Output);
    }
    for node in &comp.nodes {
        for site in node.refs() {
            let Root::Node(id) = &site.reference.root else {
                continue;
            };
            if let Some((span, around)) = reference_place(text, site, id) {
                out.push(Occurrence {
                    id: id.clone(),
                    span,
                    role: Role::Reference,
                    around,
                });
            }
        }
    }
    out
}

/// The node id written at `pos`, with its composition.
pub fn id_at<'p>(text: &str, pos: Pos, p: &'p Pipeline) -> Option<(&'p Composition, Occurrence)> {
    p.compositions.iter().find_map(|c| {
        occurrences(text, c)
            .into_iter()
            .find(|o| within(o.around, pos))
            .map(|o| (c, o))
    })
}

/// Where the node named at `pos` (by `${find…}`, a `needs:` entry,
/// `output:` or its own id) is defined: its id.
pub fn definition(text: &str, pos: Pos, p: &Pipeline) -> Option<Span> {
    let (comp, at) = id_at(text, pos, p)?;
    let node = comp.node(&at.id)?;
    written(text, node.id_span.start, &node.id).or(Some(node.id_span))
}

/// Every place the node named at `pos` is written in its composition; its
/// definition only when `with_definition`.
pub fn references(text: &str, pos: Pos, p: &Pipeline, with_definition: bool) -> Vec<Span> {
    let Some((comp, at)) = id_at(text, pos, p) else {
        return Vec::new();
    };
    occurrences(text, comp)
        .into_iter()
        .filter(|o| o.id == at.id && (with_definition || o.role != Role::Definition))
        .map(|o| o.span)
        .collect()
}

/// The id at `pos` that a rename would change, and where it is written.
pub fn prepare_rename(text: &str, pos: Pos, p: &Pipeline) -> Option<(Span, String)> {
    let (comp, at) = id_at(text, pos, p)?;
    comp.node(&at.id).map(|_| (at.span, at.id))
}

/// The edits that rename the node named at `pos` to `new_name`: its id
/// and every place that names it. Refused, in words, for an invalid or
/// reserved id and one another node of the composition has.
pub fn rename(
    text: &str,
    pos: Pos,
    p: &Pipeline,
    new_name: &str,
) -> Result<Vec<(Span, String)>, String> {
    let Some((comp, at)) = id_at(text, pos, p) else {
        return Err("there is no node id here to rename".into());
    };
    if comp.node(&at.id).is_none() {
        return Err(format!(
            "composition `{}` has no node `{}` to rename",
            comp.name, at.id
        ));
    }
    if new_name == at.id {
        return Ok(Vec::new());
    }
    if !valid_id(new_name) {
        return Err(format!(
            "`{new_name}` is not a valid id: ids start with a letter or `_` and hold letters, digits, `_` and `-`"
        ));
    }
    if RESERVED_ROOTS.contains(&new_name) {
        return Err(format!(
            "`{new_name}` is reserved for `${{{new_name}.…}}` references; choose another id"
        ));
    }
    if comp.node(new_name).is_some() {
        return Err(format!(
            "composition `{}` already has a node `{new_name}`",
            comp.name
        ));
    }
    Ok(occurrences(text, comp)
        .into_iter()
        .filter(|o| o.id == at.id)
        .map(|o| (o.span, new_name.to_owned()))
        .collect())
}

/// The file's outline: each composition with its nodes.
pub fn symbols(p: &Pipeline) -> Vec<Symbol> {
    p.compositions
        .iter()
        .map(|c| {
            let children: Vec<Symbol> = c.nodes.iter().map(node_symbol).collect();
            let end = children
                .iter()
                .map(|s| s.span.end)
                .fold(c.span.end, Pos::max);
            Symbol {
                name: c.name.clone(),
                detail: Some(match c.kind {
                    crate::file::model::Kind::Pipe => "pipe".into(),
                    crate::file::model::Kind::Dag => "composition".into(),
                }),
                span: Span::new(c.span.start, end),
                name_span: c.span,
                children,
            }
        })
        .collect()
}

fn node_symbol(n: &Node) -> Symbol {
    let name_span = if within(n.span, n.id_span.start) && within(n.span, n.id_span.end) {
        n.id_span
    } else {
        Span::at(n.span.start)
    };
    Symbol {
        name: n.id.clone(),
        detail: (!n.tool.is_empty()).then(|| match &n.server {
            Some(s) => format!("{s}.{}", n.tool),
            None => n.tool.clone(),
        }),
        span: n.span,
        name_span,
        children: Vec::new(),
    }
}

/// The most of a value a hover shows, in characters.
const HOVER_VALUE_CHARS: usize = 1200;

/// What the place is about, as Markdown: on `tool: X`, the tool (title,
/// description, server, its arguments); on a `${…}` reference, the node,
/// variable or item it reads and, when an output was recorded, the value
/// at its path.
pub fn hover(text: &str, pos: Pos, k: &Knowledge<'_>) -> Option<String> {
    let line = line_of(text, pos.line)?;
    if let Some((name, from, to)) = tool_on(line)
        && (from..=to).contains(&pos.col)
    {
        return Some(tool_hover(&name, pos.line, k));
    }
    reference_hover(line, pos, k)
}

/// The tool named on a `tool:` line and its 1-based columns (end
/// exclusive).
fn tool_on(line: &str) -> Option<(String, u32, u32)> {
    let mut rest = line.trim_start();
    if let Some(r) = rest.strip_prefix('-') {
        rest = r.trim_start();
    }
    let raw = rest.strip_prefix("tool:")?.trim_start();
    let quoted = raw.starts_with(['"', '\'']);
    let inner = if quoted { &raw[1..] } else { raw };
    let name: String = inner
        .chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, '"' | '\'' | '#' | ',' | '}'))
        .collect();
    if name.is_empty() {
        return None;
    }
    let col = line[..line.len() - inner.len()].chars().count() as u32 + 1;
    Some((name.clone(), col, col + name.chars().count() as u32))
}

fn tool_hover(name: &str, line: u32, k: &Knowledge<'_>) -> String {
    let server = k
        .pipeline
        .and_then(|p| {
            p.compositions
                .iter()
                .flat_map(|c| &c.nodes)
                .find(|n| n.tool_span.start.line == line)
                .and_then(|n| n.server.clone())
        })
        .or_else(|| k.default_server.map(str::to_owned));
    let found = match &server {
        Some(s) => k
            .tools
            .get(s)
            .and_then(|list| list.iter().find(|t| t.name == name))
            .map(|t| (s.clone(), t)),
        None => k
            .tools
            .iter()
            .find_map(|(s, list)| list.iter().find(|t| t.name == name).map(|t| (s.clone(), t))),
    };
    match found {
        Some((server, tool)) => describe_tool(&server, tool),
        None => match server.as_deref().and_then(|s| k.tools.get(s).map(|_| s)) {
            Some(s) => format!("server `{s}` lists no tool `{name}`"),
            None => format!("`{name}`: the server's tool list has not been fetched"),
        },
    }
}

/// A tool as Markdown: name and title, server, description, and its
/// arguments one a line with their types, `required` and descriptions.
pub fn describe_tool(server: &str, tool: &ToolInfo) -> String {
    let mut out = format!("**{}**", tool.name);
    if let Some(title) = tool.title.as_deref().filter(|t| *t != tool.name) {
        out.push_str(&format!(" — {title}"));
    }
    out.push_str(&format!("  \nserver `{server}`"));
    if tool.annotations.destructive == Some(true) {
        out.push_str(" · destructive");
    } else if tool.annotations.read_only == Some(true) {
        out.push_str(" · read-only");
    }
    match tool.task_support {
        TaskSupport::Required => out.push_str(" · runs only as a task"),
        TaskSupport::Optional => out.push_str(" · may run as a task"),
        TaskSupport::Forbidden | TaskSupport::Unstated => {}
    }
    if let Some(d) = tool.description.as_deref().filter(|d| !d.trim().is_empty()) {
        out.push_str(&format!("\n\n{}", d.trim()));
    }
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .filter(|p| !p.is_empty())
    {
        out.push_str("\n\nArguments:");
        for (key, schema) in props {
            out.push_str(&format!("\n- `{key}` {}", type_word(schema)));
            if required.contains(&key.as_str()) {
                out.push_str(" (required)");
            }
            if let Some(d) = schema.get("description").and_then(Value::as_str) {
                out.push_str(&format!(" — {}", d.trim()));
            }
        }
    }
    out
}

/// The `${…}` around column `pos.col` of `line`, parsed.
fn reference_around(line: &str, col: u32) -> Option<reference::Reference> {
    let chars: Vec<char> = line.chars().collect();
    let at = (col as usize).checked_sub(1)?.min(chars.len());
    let open = (0..=at.min(chars.len().saturating_sub(1)))
        .rev()
        .find(|&i| chars.get(i) == Some(&'$') && chars.get(i + 1) == Some(&'{'))?;
    let close = (open..chars.len()).find(|&i| chars[i] == '}')?;
    if at > close + 1 {
        return None;
    }
    let source: String = chars[open..=close].iter().collect();
    let template = reference::parse_template(&source).ok()?;
    template.refs().next().cloned()
}

fn reference_hover(line: &str, pos: Pos, k: &Knowledge<'_>) -> Option<String> {
    let r = reference_around(line, pos.col)?;
    match &r.root {
        Root::Node(id) => {
            let node = k.pipeline.and_then(|p| {
                p.compositions
                    .iter()
                    .flat_map(|c| &c.nodes)
                    .find(|n| &n.id == id)
            });
            let mut out = format!("`${{{}}}`: ", r.bare());
            match node {
                Some(n) if !n.tool.is_empty() => out.push_str(&format!(
                    "the output of node `{id}`, which calls `{}`{}",
                    n.tool,
                    n.server
                        .as_deref()
                        .map(|s| format!(" on `{s}`"))
                        .unwrap_or_default()
                )),
                Some(_) => out.push_str(&format!("the output of node `{id}` (mocked)")),
                None => out.push_str(&format!("node `{id}` is not defined")),
            }
            if let Some(output) = (k.output)(id) {
                match reference::resolve_path(output.tree(), &r.path) {
                    Ok(v) => {
                        out.push_str("\n\nLast recorded value:\n```json\n");
                        out.push_str(&truncated(&v));
                        out.push_str("\n```");
                    }
                    Err(e) => out.push_str(&format!("\n\nIn the last recorded output: {e}")),
                }
            }
            Some(out)
        }
        Root::Var(name) => {
            let value = k.pipeline.and_then(|p| p.vars.get(name));
            Some(match value {
                Some(v) => format!(
                    "`${{var.{name}}}`: a variable; the file's default:\n```json\n{}\n```",
                    truncated(v)
                ),
                None => format!(
                    "`${{var.{name}}}`: a variable with no default in the file (`--var {name}=…`, a case row)"
                ),
            })
        }
        Root::Env(name) => Some(format!(
            "`${{env.{name}}}`: the environment variable `{name}`, read when the file runs (its value is never shown)"
        )),
        Root::Item => Some(format!(
            "`${{{}}}`: the current element of the node's `for_each`",
            r.bare()
        )),
    }
}

/// A value as pretty JSON, cut at [`HOVER_VALUE_CHARS`].
fn truncated(v: &Value) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    if text.chars().count() <= HOVER_VALUE_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(HOVER_VALUE_CHARS).collect();
    cut.push_str("\n… (cut)");
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::loader::load_native_str;
    use crate::json::Json;
    use crate::plan::preflight::ToolLists;

    const FILE: &str = "\
compositions:
  - name: lookup
    nodes:
      - id: find
        tool: search_users
        args: { query: \"ü ${var.Q}\" }
      - id: mail
        needs: [find]
        tool: send_email
        args:
          to: \"é ${find.users[0].email}\"
          body: \"${ find.users } and ${find}\"
        when: ${find.users} | length > 0
    output: find
";

    fn pipeline(text: &str) -> Pipeline {
        let loaded = load_native_str(text);
        loaded.pipeline.expect("loads")
    }

    fn span(line: u32, from: u32, to: u32) -> Span {
        Span::new(Pos::new(line, from), Pos::new(line, to))
    }

    #[test]
    fn definition_from_a_reference_a_need_and_output() {
        let p = pipeline(FILE);
        let def = Some(span(4, 13, 17));
        // `${find.users[0].email}` after a non-ASCII character.
        assert_eq!(definition(FILE, Pos::new(11, 20), &p), def);
        assert_eq!(definition(FILE, Pos::new(11, 28), &p), def);
        assert_eq!(definition(FILE, Pos::new(8, 17), &p), def);
        assert_eq!(definition(FILE, Pos::new(14, 13), &p), def);
        assert_eq!(definition(FILE, Pos::new(13, 17), &p), def);
        assert_eq!(definition(FILE, Pos::new(9, 15), &p), None);
        assert_eq!(definition(FILE, Pos::new(99, 1), &p), None);
    }

    #[test]
    fn references_name_every_place() {
        let p = pipeline(FILE);
        let all = references(FILE, Pos::new(4, 14), &p, true);
        assert_eq!(
            all,
            vec![
                span(4, 13, 17),
                span(8, 17, 21),
                span(14, 13, 17),
                span(11, 20, 24),
                span(12, 21, 25),
                span(12, 40, 44),
                span(13, 17, 21),
            ]
        );
        assert_eq!(references(FILE, Pos::new(4, 14), &p, false).len(), 6);
    }

    #[test]
    fn rename_changes_every_place_and_refuses_bad_names() {
        let p = pipeline(FILE);
        let edits = rename(FILE, Pos::new(11, 19), &p, "lookup_users").unwrap();
        assert_eq!(edits.len(), 7);
        let mut text: Vec<String> = FILE.lines().map(str::to_owned).collect();
        let mut sorted = edits.clone();
        sorted.sort_by_key(|(s, _)| std::cmp::Reverse(s.start));
        for (s, new) in sorted {
            let line = &mut text[s.start.line as usize - 1];
            let chars: Vec<char> = line.chars().collect();
            let from = s.start.col as usize - 1;
            let to = s.end.col as usize - 1;
            *line = chars[..from].iter().collect::<String>()
                + &new
                + &chars[to..].iter().collect::<String>();
        }
        let renamed = text.join("\n") + "\n";
        assert!(!renamed.contains("find"), "{renamed}");
        let again = load_native_str(&renamed);
        assert!(!again.has_errors(), "{:?}", again.diagnostics);
        assert!(
            rename(FILE, Pos::new(4, 14), &p, "mail")
                .unwrap_err()
                .contains("already has")
        );
        assert!(
            rename(FILE, Pos::new(4, 14), &p, "9x")
                .unwrap_err()
                .contains("not a valid id")
        );
        assert!(
            rename(FILE, Pos::new(4, 14), &p, "env")
                .unwrap_err()
                .contains("reserved")
        );
        assert!(rename(FILE, Pos::new(2, 3), &p, "x").is_err());
        assert_eq!(
            prepare_rename(FILE, Pos::new(12, 21), &p),
            Some((span(12, 21, 25), "find".into()))
        );
    }

    #[test]
    fn symbols_nest_nodes_in_compositions() {
        let p = pipeline(FILE);
        let s = symbols(&p);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name, "lookup");
        let names: Vec<&str> = s[0].children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["find", "mail"]);
        assert_eq!(s[0].children[0].name_span, span(4, 13, 17));
        assert_eq!(s[0].children[1].detail.as_deref(), Some("send_email"));
        for c in &s[0].children {
            assert!(within(s[0].span, c.span.start) && within(s[0].span, c.span.end));
        }
    }

    fn demo_tools() -> ToolLists {
        let tool = ToolInfo::from_json(serde_json::json!({
            "name": "search_users",
            "title": "Search users",
            "description": "Find users by name.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Part of a name"},
                    "limit": {"type": "integer"}
                },
                "required": ["query"]
            }
        }))
        .expect("a tool");
        [("demo".to_owned(), vec![tool])].into_iter().collect()
    }

    #[test]
    fn hover_on_a_tool_shows_it_and_its_arguments() {
        let p = pipeline(FILE);
        let tools = demo_tools();
        let k = Knowledge {
            pipeline: Some(&p),
            tools: &tools,
            default_server: Some("demo"),
            output: &|_| None,
        };
        let text = hover(FILE, Pos::new(5, 16), &k).expect("a hover");
        assert!(text.contains("**search_users** — Search users"), "{text}");
        assert!(text.contains("Find users by name."), "{text}");
        assert!(
            text.contains("- `query` string (required) — Part of a name"),
            "{text}"
        );
        assert!(text.contains("- `limit` integer"), "{text}");
        assert!(text.contains("server `demo`"), "{text}");
        assert!(hover(FILE, Pos::new(5, 3), &k).is_none());
        let unknown = hover(FILE, Pos::new(9, 16), &k).expect("a hover");
        assert!(unknown.contains("lists no tool `send_email`"), "{unknown}");
        assert!(!text.contains("task"), "{text}");
        let task = ToolInfo::from_json(
            serde_json::json!({"name": "research", "execution": {"taskSupport": "required"}}),
        )
        .expect("a tool");
        let text = describe_tool("demo", &task);
        assert!(
            text.contains("server `demo` · runs only as a task"),
            "{text}"
        );
    }

    #[test]
    fn hover_on_a_reference_shows_the_node_and_its_recorded_value() {
        let p = pipeline(FILE);
        let tools = demo_tools();
        let output = |id: &str| {
            (id == "find")
                .then(|| Json::from_value(serde_json::json!({"users": [{"email": "c@x.org"}]})))
        };
        let k = Knowledge {
            pipeline: Some(&p),
            tools: &tools,
            default_server: Some("demo"),
            output: &output,
        };
        let text = hover(FILE, Pos::new(11, 25), &k).expect("a hover");
        assert!(
            text.contains("node `find`, which calls `search_users`"),
            "{text}"
        );
        assert!(text.contains("\"c@x.org\""), "{text}");
        let var = hover(FILE, Pos::new(6, 31), &k).expect("a hover");
        assert!(var.contains("`${var.Q}`"), "{var}");
        assert!(hover(FILE, Pos::new(1, 1), &k).is_none());
    }

    #[test]
    fn odd_places_find_nothing_and_never_panic() {
        let p = pipeline(FILE);
        let tools = ToolLists::new();
        let k = Knowledge::none(&tools);
        for line in 0..20 {
            for col in 0..60 {
                let pos = Pos::new(line, col);
                let _ = (definition(FILE, pos, &p), hover(FILE, pos, &k));
                let _ = rename(FILE, pos, &p, "x_1");
            }
        }
        assert_eq!(tool_on("  - tool: \"a b\""), Some(("a".into(), 12, 13)));
        assert_eq!(reference_around("${", 2), None);
    }
}
