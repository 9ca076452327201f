//! Preflight: before anything runs, check every node against what its
//! server's `tools/list` said: the tool exists (with the nearest name when
//! not), the arguments known now validate against its `inputSchema`, a
//! `task: true|false` agrees with the tool's `execution.taskSupport`, and
//! destructive tools are listed so a driver can ask (`--yes` in the CLI).
//! Mocked nodes call nothing and need no tool. What changed since the
//! lock (`pipewright.lock`) is checked by [`pinned`].

pub mod pinned;

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::diag::{Diagnostic, Span, suggest};
use crate::environment::Environment;
use crate::file::model::{Composition, Mock, Node};
use crate::json::Json;
use crate::lang::reference::{self, Partial};
use crate::lang::snapshot::{Seen, Snapshot};
use crate::mcp::{ToolInfo, task};

/// A destructive call a run would make.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Destructive {
    pub composition: String,
    pub node: String,
    pub server: String,
    pub tool: String,
}

/// What preflight found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Preflight {
    /// Problems that would make calls fail, each at its node.
    pub problems: Vec<Diagnostic>,
    /// Calls of tools annotated `destructiveHint: true`.
    pub destructive: Vec<Destructive>,
    /// What would not fail but should be seen first (a tool changed since
    /// the lock, when the lock is not strict), each at its node.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Diagnostic>,
}

impl Preflight {
    /// True when nothing would fail (destructive calls aside).
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The tools each server listed, by server name.
pub type ToolLists = IndexMap<String, Vec<ToolInfo>>;

/// What node `i`'s references can see before anything ran: mocked nodes'
/// fixtures (after `transform`); every other node has not run; `${env.X}`
/// reads `env`.
pub fn dry_scope(
    comp: &Composition,
    i: usize,
    vars: &Arc<IndexMap<String, Value>>,
    env: &Environment,
    ids: &HashMap<&str, usize>,
) -> Snapshot {
    let nodes: HashMap<String, Seen> = comp
        .visible(i, |id| ids.get(id).copied())
        .into_iter()
        .map(|p| {
            let node = &comp.nodes[p];
            let seen = match (&node.mock, &node.for_each) {
                (Some(Mock::Result(v)), None) => match &node.transform {
                    Some(t) => t
                        .run_one(v)
                        .map_or(Seen::Failed, |out| Seen::Output(Json::from_value(out))),
                    None => Seen::Output(Json::from_value(v.clone())),
                },
                (Some(Mock::Error(_)), None) => Seen::Failed,
                _ => Seen::NotRun,
            };
            (node.id.clone(), seen)
        })
        .collect();
    Snapshot {
        nodes,
        vars: vars.clone(),
        item: None,
        pass_vars: comp.passes_vars_through(),
        env: env.clone(),
    }
}

/// Node indices by id, for [`dry_scope`].
pub fn ids(comp: &Composition) -> HashMap<&str, usize> {
    comp.nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect()
}

/// Checks every node of each run (a composition with the `${var.X}` values
/// of one case row; `${env.X}` reads `env`); `default_server` is the server
/// of nodes that name none. A problem found in several case rows is
/// reported once.
pub fn check(
    runs: &[(&Composition, IndexMap<String, Value>)],
    tools: &ToolLists,
    default_server: Option<&str>,
    env: &Environment,
) -> Preflight {
    let mut out = Preflight::default();
    for (comp, vars) in runs {
        let mut one = Preflight::default();
        let ids = ids(comp);
        let vars = Arc::new(vars.clone());
        let mut validators = Validators::default();
        for (i, node) in comp.nodes.iter().enumerate() {
            if node.mock.is_some() {
                continue;
            }
            let scope = dry_scope(comp, i, &vars, env, &ids);
            let partial = reference::resolve_value_partial(&node.args, &scope);
            check_node(
                (comp, node),
                &partial,
                tools,
                default_server,
                &mut validators,
                &mut one,
            );
        }
        for p in one.problems {
            if !out.problems.contains(&p) {
                out.problems.push(p);
            }
        }
        for d in one.destructive {
            if !out.destructive.contains(&d) {
                out.destructive.push(d);
            }
        }
    }
    out
}

fn check_node(
    (comp, node): (&Composition, &Node),
    partial: &Partial,
    tools: &ToolLists,
    default_server: Option<&str>,
    validators: &mut Validators,
    out: &mut Preflight,
) {
    let Some(server) = node.server.as_deref().or(default_server) else {
        return;
    };
    let Some(list) = tools.get(server) else {
        out.problems.push(Diagnostic::error(
            node.server_span,
            format!(
                "node `{}` calls server `{server}`, which was not reached",
                node.id
            ),
        ));
        return;
    };
    let Some(tool) = list.iter().find(|t| t.name == node.tool) else {
        let mut d = Diagnostic::error(
            node.tool_span,
            format!(
                "node `{}`: server `{server}` has no tool `{}`",
                node.id, node.tool
            ),
        );
        if let Some(near) = suggest(&node.tool, list.iter().map(|t| t.name.as_str())) {
            d = d.with_hint(format!("did you mean `{near}`?"));
        } else if !list.is_empty() && list.len() <= 12 {
            let names: Vec<&str> = list.iter().map(|t| t.name.as_str()).collect();
            d = d.with_hint(format!("its tools: {}", names.join(", ")));
        }
        out.problems.push(d);
        return;
    };
    if tool.annotations.destructive == Some(true) {
        out.destructive.push(Destructive {
            composition: comp.name.clone(),
            node: node.id.clone(),
            server: server.to_owned(),
            tool: tool.name.clone(),
        });
    }
    if let Err(reason) = task::use_task(&tool.name, tool.task_support, node.task, None) {
        out.problems.push(Diagnostic::error(
            node.task_span,
            format!("node `{}`: {reason}", node.id),
        ));
    }
    for e in &partial.errors {
        out.problems.push(Diagnostic::error(
            node.span,
            format!("node `{}`: {e}", node.id),
        ));
    }
    let errors = validators
        .of(server, tool)
        .map(|v| errors_by(v, &partial.value))
        .unwrap_or_default();
    for (path, message) in errors {
        out.problems.push(Diagnostic::error(
            written_at(node, &path),
            format!(
                "node `{}`: arguments do not fit `{}`'s inputSchema: at {}: {message}",
                node.id,
                tool.name,
                if path.is_empty() { "/" } else { &path }
            ),
        ));
    }
}

/// Where the value at `path` (a JSON pointer into the arguments) is
/// written: the longest pointer the loader kept that holds it (a value a
/// reference filled in is marked at the reference's argument), else the
/// node.
fn written_at(node: &Node, path: &str) -> Span {
    node.arg_spans
        .iter()
        .filter(|(p, _)| {
            path.strip_prefix(p.as_str())
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
        .max_by_key(|(p, _)| p.len())
        .map_or(node.span, |(_, span)| *span)
}

/// Where `<from …>` / `<env.X>` stand-ins sit in a partially resolved value,
/// as JSON pointers: what is not known yet is not validated.
fn unknown_paths(v: &Value, at: &mut String, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.contains("<from ") || s.contains("<env.") => out.push(at.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                unknown_paths(item, at, out);
                at.truncate(len);
            }
        }
        Value::Object(map) => {
            for (k, item) in map {
                let len = at.len();
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                unknown_paths(item, at, out);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// Every way `args` (as far as known) breaks `schema`, each as
/// "at /path: message". A schema that does not compile is not checked.
pub fn schema_errors(schema: &Value, args: &Value) -> Vec<String> {
    match jsonschema::validator_for(schema) {
        Ok(validator) => errors_by(&validator, args)
            .into_iter()
            .map(|(path, message)| {
                format!(
                    "at {}: {message}",
                    if path.is_empty() { "/" } else { &path }
                )
            })
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Each tool's compiled `inputSchema`, compiled once per check however many
/// nodes call the tool.
#[derive(Default)]
struct Validators(HashMap<(String, String), Option<jsonschema::Validator>>);

impl Validators {
    fn of(&mut self, server: &str, tool: &ToolInfo) -> Option<&jsonschema::Validator> {
        self.0
            .entry((server.to_owned(), tool.name.clone()))
            .or_insert_with(|| jsonschema::validator_for(&tool.input_schema).ok())
            .as_ref()
    }
}

/// [`schema_errors`] with the schema already compiled: each error's
/// instance path (a JSON pointer, `""` for the arguments as a whole) and
/// message.
fn errors_by(validator: &jsonschema::Validator, args: &Value) -> Vec<(String, String)> {
    let args = match args {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other.clone(),
    };
    let mut unknown = Vec::new();
    unknown_paths(&args, &mut String::new(), &mut unknown);
    validator
        .iter_errors(&args)
        .filter_map(|e| {
            let path = e.instance_path().as_str().to_owned();
            let hidden = unknown
                .iter()
                .any(|u| path == *u || path.starts_with(&format!("{u}/")) || u.is_empty());
            if hidden {
                return None;
            }
            let message = e.to_string();
            Some((path, message))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_parts_are_not_validated() {
        let schema = json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}, "q": {"type": "string"}},
            "required": ["id", "q"],
            "additionalProperties": false
        });
        assert!(schema_errors(&schema, &json!({"id": "<from a.id>", "q": "x"})).is_empty());
        let e = schema_errors(&schema, &json!({"id": "<from a.id>", "q": 5}));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("at /q:"), "{e:?}");
        let e = schema_errors(&schema, &json!({"id": 1}));
        assert!(e.iter().any(|m| m.contains("\"q\"")), "{e:?}");
        let e = schema_errors(&schema, &json!({"id": 1, "q": "x", "extra": 1}));
        assert_eq!(e.len(), 1, "{e:?}");
    }

    /// A value that breaks the inputSchema is marked where it is written:
    /// a scalar at its value, a nested one at its own line, a value a
    /// reference filled in at the reference's argument, a missing
    /// argument at `args:`, and a node without `args:` at the node.
    #[test]
    fn a_schema_error_is_marked_at_the_arguments_own_line() {
        let file = "\
vars:
  who: {name: 5}
pipe:
  - id: total
    tool: add
    args:
      a: \"one\"
      b: 2
  - id: deep
    tool: send
    args:
      to:
        - ok@example.com
        - 7
      who: ${var.who}
  - id: bare
    tool: add
  - id: flow
    tool: add
    args: { b: 1 }
";
        let loaded = crate::file::open::load_str(file);
        let pipeline = loaded
            .pipeline
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let add = json!({"name": "add", "inputSchema": {"type": "object", "required": ["a", "b"],
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}});
        let send = json!({"name": "send", "inputSchema": {"type": "object", "properties": {
            "to": {"type": "array", "items": {"type": "string"}},
            "who": {"type": "object", "properties": {"name": {"type": "string"}}}}}});
        let mut tools = ToolLists::new();
        tools.insert(
            "s".into(),
            [add, send]
                .into_iter()
                .filter_map(ToolInfo::from_json)
                .collect(),
        );
        let report = check(
            &[(&pipeline.compositions[0], pipeline.vars.clone())],
            &tools,
            Some("s"),
            &Environment::default(),
        );
        let found: Vec<(u32, u32, &str)> = report
            .problems
            .iter()
            .map(|d| {
                let at = d.message.find(" at /").map_or("", |i| &d.message[i + 4..]);
                (d.span.start.line, d.span.start.col, at)
            })
            .collect();
        assert_eq!(
            found,
            [
                (7, 10, "/a: \"one\" is not of type \"number\""),
                (14, 11, "/to/1: 7 is not of type \"string\""),
                (15, 12, "/who/name: 5 is not of type \"string\""),
                (16, 5, "/: \"a\" is a required property"),
                (16, 5, "/: \"b\" is a required property"),
                (20, 5, "/: \"a\" is a required property"),
            ],
            "{:#?}",
            report.problems
        );
    }

    /// `task: true` on a tool that forbids tasks and `task: false` on one
    /// that requires them are errors at the `task:` line; `auto` and a tool
    /// that says nothing are not.
    #[test]
    fn a_task_setting_must_agree_with_the_tools_task_support() {
        let file = "servers:\n  s: {command: x}\npipe:\n  - id: plain\n    tool: echo\n    task: true\n  - id: long\n    tool: research\n    task: false\n  - id: auto\n    tool: research\n  - id: unsaid\n    tool: other\n    task: true\n";
        let loaded = crate::file::open::load_str(file);
        let pipeline = loaded
            .pipeline
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let tool = |name: &str, support: Option<&str>| {
            let mut raw = json!({"name": name});
            if let Some(s) = support {
                raw["execution"] = json!({"taskSupport": s});
            }
            ToolInfo::from_json(raw).unwrap_or_else(|| panic!("tool {name}"))
        };
        let mut tools = ToolLists::new();
        tools.insert(
            "s".into(),
            vec![
                tool("echo", Some("forbidden")),
                tool("research", Some("required")),
                tool("other", None),
            ],
        );
        let comp = &pipeline.compositions[0];
        let report = check(
            &[(comp, IndexMap::new())],
            &tools,
            Some("s"),
            &Environment::default(),
        );
        let found: Vec<(u32, &str)> = report
            .problems
            .iter()
            .map(|d| (d.span.start.line, d.message.as_str()))
            .collect();
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0].0, 6, "{found:?}");
        assert!(
            found[0].1.starts_with("node `plain`: `task: true`")
                && found[0].1.contains("`execution.taskSupport: forbidden`"),
            "{found:?}"
        );
        assert_eq!(found[1].0, 9, "{found:?}");
        assert!(
            found[1].1.starts_with("node `long`: `task: false`")
                && found[1].1.contains("`execution.taskSupport: required`"),
            "{found:?}"
        );
    }
}
