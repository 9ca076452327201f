//! What the judge is shown of a run, cut to size: the pipeline's name,
//! description and inputs, its output, the calls it made (tool, status,
//! error, arguments), the tools its servers offer, the DAG as written.
//! Every value is bounded (a long one is cut with a note of how much was
//! left out), so a prompt stays within its limit whatever the servers
//! answered; the trace it is built from is already masked, so no secret
//! reaches the judge.

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use crate::file::model::{Composition, OnError, OutputSpec};
use crate::mcp::ToolInfo;
use crate::run::trace::eval::ToolSeen;
use crate::run::trace::{NodeStatus, Trace};

/// The composition's output is shown up to this many bytes of JSON.
pub const OUTPUT_BYTES: usize = 32 * 1024;
/// A call's arguments are shown up to this many bytes.
pub const ARGS_BYTES: usize = 2048;
/// A parent's output, as a call's source, up to this many bytes.
pub const SOURCE_BYTES: usize = 2048;
/// A tool's description up to this many characters.
const DESCRIPTION_CHARS: usize = 500;
/// A tool's inputSchema up to this many bytes.
const SCHEMA_BYTES: usize = 4096;
/// The tools offered that are shown (the called ones first).
const MAX_TOOLS: usize = 64;
/// The nodes listed (calls, the DAG); the rest are counted.
pub const MAX_NODES_SHOWN: usize = 100;
/// The inputs (`${var.X}` values) shown; the rest are counted.
const MAX_INPUTS_SHOWN: usize = 50;
/// The iterations of one fan-out shown to the judge.
pub const ITERATIONS_SHOWN: usize = 10;
/// The calls one argument_correctness prompt asks about.
pub const MAX_JUDGED_CALLS: usize = 50;

/// A run and what it is judged against.
pub struct Subject<'a> {
    pub trace: &'a Trace,
    pub comp: &'a Composition,
    /// `server/tool` → what the judge sees of it.
    pub tools: &'a IndexMap<String, ToolSeen>,
}

/// `v` as it is shown: itself when its JSON fits in `max` bytes, else the
/// start of its JSON text and how much more there was.
pub fn clip(v: &Value, max: usize) -> Value {
    let text = v.to_string();
    if text.len() <= max {
        return v.clone();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    Value::String(format!(
        "{}… [cut: {} more bytes of JSON]",
        &text[..at],
        text.len() - at
    ))
}

fn cut_chars(s: &str, max: usize) -> String {
    crate::eval::client::cut(s, max)
}

/// The part every prompt starts with: the pipeline and the inputs.
pub fn header(s: &Subject<'_>) -> Map<String, Value> {
    let mut m = Map::new();
    let mut pipeline = Map::new();
    pipeline.insert("name".into(), Value::from(s.comp.name.as_str()));
    if let Some(d) = &s.comp.description {
        pipeline.insert("description".into(), Value::from(d.as_str()));
    }
    if let Some(c) = &s.trace.composition.case {
        pipeline.insert("case".into(), Value::from(c.as_str()));
    }
    m.insert("pipeline".into(), Value::Object(pipeline));
    let mut inputs: Map<String, Value> = s
        .trace
        .vars
        .iter()
        .take(MAX_INPUTS_SHOWN)
        .map(|(k, v)| (k.clone(), clip(v, ARGS_BYTES)))
        .collect();
    let more = s.trace.vars.len().saturating_sub(MAX_INPUTS_SHOWN);
    if more > 0 {
        inputs.insert(
            "…".into(),
            Value::from(format!("{more} more input(s) not shown")),
        );
    }
    m.insert("inputs".into(), Value::Object(inputs));
    m
}

/// `items` cut to [`MAX_NODES_SHOWN`], with a last entry counting the rest.
fn capped(mut items: Vec<Value>) -> Vec<Value> {
    let more = items.len().saturating_sub(MAX_NODES_SHOWN);
    if more > 0 {
        items.truncate(MAX_NODES_SHOWN);
        items.push(json!({ "not_shown": format!("{more} more node(s)") }));
    }
    items
}

/// The task: as stated for the metric, else the description.
pub fn task(s: &Subject<'_>, stated: Option<&str>) -> Value {
    match stated.or(s.comp.description.as_deref()) {
        Some(t) => Value::from(t),
        None => {
            Value::from("(not stated: infer it from the pipeline's name, its nodes and its inputs)")
        }
    }
}

/// The composition's output.
pub fn output(s: &Subject<'_>) -> Value {
    clip(s.trace.output.tree(), OUTPUT_BYTES)
}

/// How the run ended.
pub fn run(s: &Subject<'_>) -> Value {
    json!({
        "status": s.trace.composition.status.as_str(),
        "failed_step": s.trace.failed_step,
    })
}

/// `server/tool` for a node's tool.
pub fn tool_key(server: Option<&str>, tool: &str) -> String {
    match server {
        Some(s) => format!("{s}/{tool}"),
        None => tool.to_owned(),
    }
}

/// Every node that ran (or was skipped), in order: tool, status, error,
/// and with `args` its arguments.
pub fn calls(s: &Subject<'_>, args: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for (id, rec) in &s.trace.nodes {
        if matches!(rec.status, NodeStatus::Pending | NodeStatus::Stale) {
            continue;
        }
        let mut m = Map::new();
        m.insert("node".into(), Value::from(id.as_str()));
        m.insert(
            "tool".into(),
            Value::from(tool_key(rec.server.as_deref(), &rec.tool)),
        );
        m.insert("status".into(), Value::from(rec.status.as_str()));
        if let Some(e) = &rec.error {
            m.insert("error".into(), Value::from(cut_chars(e, 500)));
        }
        if let Some(r) = &rec.skip_reason {
            m.insert("skipped_because".into(), Value::from(cut_chars(r, 300)));
        }
        if rec.mocked {
            m.insert("mocked".into(), Value::Bool(true));
        }
        if !rec.iterations.is_empty() {
            m.insert("iterations".into(), Value::from(rec.iterations.len()));
        }
        if args && rec.status != NodeStatus::Skipped {
            m.insert("arguments".into(), clip(rec.args.tree(), ARGS_BYTES));
        }
        out.push(Value::Object(m));
    }
    capped(out)
}

/// The tools the run's servers offer, called ones first.
pub fn offered(s: &Subject<'_>) -> Vec<Value> {
    s.tools
        .iter()
        .map(|(k, t)| json!({ "tool": k, "description": t.description }))
        .collect()
}

/// One tool call the run made: a node's call, or one iteration of a
/// fan-out.
#[derive(Debug, Clone)]
pub struct Call {
    /// `find`, or `enrich[3]` for an iteration.
    pub name: String,
    pub node: String,
    pub tool_key: String,
    pub args: Value,
}

/// Every call the run sent to a server (mocks, skipped nodes and
/// iterations that never started are not calls).
pub fn sent_calls(trace: &Trace) -> Vec<Call> {
    let mut out = Vec::new();
    for (id, rec) in &trace.nodes {
        if rec.mocked || rec.attempts == 0 && rec.iterations.is_empty() {
            continue;
        }
        let key = tool_key(rec.server.as_deref(), &rec.tool);
        if rec.iterations.is_empty() {
            out.push(Call {
                name: id.clone(),
                node: id.clone(),
                tool_key: key,
                args: rec.args.tree().clone(),
            });
            continue;
        }
        for it in rec.iterations.iter().filter(|it| it.attempts > 0) {
            out.push(Call {
                name: format!("{id}[{}]", it.index),
                node: id.clone(),
                tool_key: key.clone(),
                args: it.args.tree().clone(),
            });
        }
    }
    out
}

/// The outputs a node's arguments may come from: its parents', cut.
pub fn sources(s: &Subject<'_>, node: &str) -> Value {
    let Some(i) = s.comp.index_of(node) else {
        return json!({});
    };
    let mut m = Map::new();
    for &p in &s.comp.parents[i] {
        let pid = &s.comp.nodes[p].id;
        if let Some(rec) = s.trace.nodes.get(pid) {
            m.insert(pid.clone(), clip(rec.output.tree(), SOURCE_BYTES));
        }
    }
    Value::Object(m)
}

/// The DAG as written.
pub fn dag(comp: &Composition) -> Value {
    let nodes: Vec<Value> = comp
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let mut m = Map::new();
            m.insert("id".into(), Value::from(n.id.as_str()));
            m.insert(
                "tool".into(),
                Value::from(tool_key(n.server.as_deref(), &n.tool)),
            );
            let needs: Vec<&str> = comp.parents[i]
                .iter()
                .map(|&p| comp.nodes[p].id.as_str())
                .collect();
            if !needs.is_empty() {
                m.insert("needs".into(), json!(needs));
            }
            m.insert("args".into(), clip(&n.args, ARGS_BYTES));
            if let Some(w) = &n.when {
                m.insert("when".into(), Value::from(cut_chars(&w.source, 300)));
            }
            if let Some(f) = &n.for_each {
                m.insert("for_each".into(), Value::from(f.source.as_str()));
            }
            if let Some(t) = &n.transform {
                m.insert("transform".into(), Value::from(cut_chars(t.source(), 300)));
            }
            let policy = match n.on_error {
                OnError::Stop => None,
                OnError::Continue => Some("continue".to_owned()),
                OnError::Retry { max, .. } => Some(format!("retry:{max}")),
            };
            if let Some(p) = policy {
                m.insert("on_error".into(), Value::from(p));
            }
            if n.mock.is_some() {
                m.insert("mocked".into(), Value::Bool(true));
            }
            Value::Object(m)
        })
        .collect();
    let nodes = capped(nodes);
    let output = match &comp.output {
        Some(OutputSpec::Node { id, .. }) => json!({ "node": id }),
        Some(OutputSpec::Assemble(p)) => json!({ "assemble": cut_chars(p.source(), 300) }),
        None => json!("the last node"),
    };
    json!({ "nodes": nodes, "output": output })
}

/// What the judge sees of the tools of the servers `trace` used: each
/// tool's description, and the inputSchema of each tool the run called
/// (called tools first, at most 64 in all).
pub fn tools_seen(
    trace: &Trace,
    lists: &IndexMap<String, Vec<ToolInfo>>,
) -> IndexMap<String, ToolSeen> {
    let called = |server: &str, tool: &str| {
        trace
            .nodes
            .values()
            .any(|r| !r.mocked && r.tool == tool && r.server.as_deref().is_none_or(|s| s == server))
    };
    let used = |server: &str| {
        trace
            .nodes
            .values()
            .any(|r| r.server.as_deref().is_none_or(|s| s == server))
    };
    let mut all: Vec<(String, bool, &ToolInfo)> = Vec::new();
    for (server, list) in lists.iter().filter(|(s, _)| used(s)) {
        for t in list {
            all.push((tool_key(Some(server), &t.name), called(server, &t.name), t));
        }
    }
    all.sort_by_key(|(_, called, _)| !called);
    all.into_iter()
        .take(MAX_TOOLS)
        .map(|(k, called, t)| {
            let seen = ToolSeen {
                description: t
                    .description
                    .as_deref()
                    .map(|d| cut_chars(d, DESCRIPTION_CHARS)),
                input_schema: called.then(|| clip(&t.input_schema, SCHEMA_BYTES)),
            };
            (k, seen)
        })
        .collect()
}

/// The tool `key` (`server/tool`, or a bare name when the node named no
/// server) among `tools`.
pub fn find_tool<'t>(tools: &'t IndexMap<String, ToolSeen>, key: &str) -> Option<&'t ToolSeen> {
    tools.get(key).or_else(|| {
        if key.contains('/') {
            return None;
        }
        tools
            .iter()
            .find(|(k, _)| k.rsplit_once('/').is_some_and(|(_, name)| name == key))
            .map(|(_, t)| t)
    })
}
