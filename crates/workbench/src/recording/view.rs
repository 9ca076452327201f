//! What the recording view draws, built off the loop from a session's calls
//! and the latest inference over them: the pipeline `new --from` would
//! write from what is recorded so far (its text shown in the editor's
//! place), its nodes with the inferred edges, each node's exchange as a
//! run's record (arguments, result, questions and answers, logs, timing),
//! and what it counts (calls, references, inputs, flags). Calls that came
//! after the inference are nodes already, with their arguments as
//! recorded and no edges until the next inference reaches them.

use std::collections::HashSet;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::json::Json;
use pipewright_engine::record::calls::{Call, Recording};
use pipewright_engine::record::draft::{Choice, Draft, Leaf, ServerOut, Step, leaves_of};
use pipewright_engine::record::session::Server;
use pipewright_engine::run::trace::{
    AttemptRecord, IterationRecord, NodeRecord, NodeStatus, RunStatus, RunSummary, Trace,
};

use crate::dag::DagLayout;
use crate::state::NodeVisual;

/// A draft inferred from a session, and the session as it was then.
pub(crate) struct Inference {
    pub(crate) draft: Draft,
    pub(crate) rec: Recording,
}

/// What the recording view counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    /// Calls answered so far (failed ones included).
    pub(crate) calls: usize,
    /// Of them, the ones that failed (left out of the pipeline).
    pub(crate) failed: usize,
    pub(crate) nodes: usize,
    /// Inferred references (`${node.path}` and the like).
    pub(crate) references: usize,
    /// `for_each` nodes over an earlier list.
    pub(crate) fan_outs: usize,
    /// `vars:` entries.
    pub(crate) inputs: usize,
    /// Values that look made by a server and have no source.
    pub(crate) flagged: usize,
    /// Calls the inference has not reached yet.
    pub(crate) waiting: usize,
}

/// Everything the view shows, ready to be put on screen.
pub(crate) struct View {
    pub(crate) pipeline: Arc<Pipeline>,
    pub(crate) comp: Arc<Composition>,
    pub(crate) layout: DagLayout,
    pub(crate) visuals: Vec<NodeVisual>,
    pub(crate) trace: Trace,
    /// The pipeline's text, as `new --from` would write it now.
    pub(crate) text: String,
    pub(crate) counts: Counts,
}

/// The view of `rec` (the whole session so far, named `name`, its
/// pipeline's cassette `cassette`), with the edges of `inferred` where it
/// reaches and `stderr`, the server's last lines.
pub(crate) fn build(
    name: &str,
    cassette: &str,
    rec: &Recording,
    inferred: Option<&Inference>,
    stderr: &[String],
) -> Option<View> {
    let mut d = match inferred {
        Some(i) => i.draft.clone(),
        None => Draft {
            name: name.to_owned(),
            servers: header_servers(rec),
            ..Draft::default()
        },
    };
    // Each step's calls, in the session they were inferred from.
    let mut calls: Vec<Vec<&Call>> = match inferred {
        Some(i) => d
            .steps
            .iter()
            .map(|s| {
                s.calls_of(0)
                    .filter_map(|c| i.rec.calls.get(c.call))
                    .collect()
            })
            .collect(),
        None => Vec::new(),
    };
    let seen: HashSet<usize> = inferred
        .map(|i| i.rec.calls.iter().map(|c| c.line).collect())
        .unwrap_or_default();
    let mut waiting = 0;
    for c in rec.calls.iter().filter(|c| !seen.contains(&c.line)) {
        waiting += 1;
        if c.is_error {
            continue;
        }
        d.steps.push(literal_step(&d.steps, c));
        calls.push(vec![c]);
    }
    if waiting > 0 {
        // The end the inference saw is not the end any more: shown without
        // an `expect:` until it catches up.
        d.output = d.steps.len().checked_sub(1);
        d.expect.clear();
        for c in &mut d.cases {
            c.expect.clear();
        }
    }
    let text = pipewright_engine::record::write::text(&d, cassette, None);
    let (pipeline, comp) = plan_of(&text, &d)?;
    let parents = parents_of(&d);
    let comp = with_edges(comp, &parents);
    let started = rec.header.as_ref().and_then(|h| {
        time::OffsetDateTime::parse(&h.started, &time::format_description::well_known::Rfc3339).ok()
    });
    let mut trace = Trace {
        run_id: name.to_owned(),
        file: rec.source.clone(),
        composition: RunSummary {
            name: comp.name.clone(),
            started_at: rec.header.as_ref().map(|h| h.started.clone()),
            ran: true,
            status: RunStatus::Completed,
            ..RunSummary::default()
        },
        ..Trace::default()
    };
    let mut visuals = Vec::with_capacity(comp.nodes.len());
    let mut end_ms: f64 = 0.0;
    for (node, (step, calls)) in comp.nodes.iter().zip(d.steps.iter().zip(&calls)) {
        let record = record_of(&node.id, step, calls, started);
        for c in calls {
            end_ms = end_ms.max(c.at_ms + c.duration_ms);
        }
        trace.completed_step_ids.push(node.id.clone());
        trace.output = record.output.clone();
        visuals.push(NodeVisual {
            status: record.status,
            progress: crate::state::fan_out_progress(&record),
            failed_iterations: crate::state::failed_iterations(&record),
            record: Some(Arc::new(record.clone())),
            ..NodeVisual::default()
        });
        trace.nodes.insert(node.id.clone(), record);
    }
    trace.composition.duration_ms = end_ms as u64;
    let server = rec.server().to_owned();
    if !stderr.is_empty() {
        trace.server_logs.insert(server.clone(), stderr.join("\n"));
    }
    if let Some(p) = &rec.protocol {
        trace.server_protocols.insert(server, p.clone());
    }
    let counts = Counts {
        calls: rec.calls.len(),
        failed: rec.calls.iter().filter(|c| c.is_error).count(),
        nodes: comp.nodes.len(),
        references: d.by_rule().iter().map(|(_, n)| n).sum(),
        fan_outs: d.steps.iter().filter(|s| s.for_each.is_some()).count(),
        inputs: d.vars.len(),
        flagged: d.flagged(),
        waiting,
    };
    Some(View {
        layout: DagLayout::new(&comp),
        pipeline,
        comp,
        visuals,
        trace,
        text,
        counts,
    })
}

/// The servers a session's header names, for a view with no inference yet.
fn header_servers(rec: &Recording) -> IndexMap<String, ServerOut> {
    let mut out = IndexMap::new();
    if let Some(h) = &rec.header {
        let decl = match &h.server {
            Server::Stdio { command, args, .. } => ServerOut::Stdio {
                command: command.clone(),
                args: args.clone(),
                env: Vec::new(),
            },
            Server::Http { url, .. } => ServerOut::Http {
                url: url.clone(),
                headers: Vec::new(),
            },
        };
        out.insert(h.server.name().to_owned(), decl);
    }
    out
}

/// A call the inference has not reached, as a step with its arguments as
/// recorded.
fn literal_step(steps: &[Step], c: &Call) -> Step {
    let base = pipewright_engine::file::loader::id_from(&c.tool);
    let mut id = base.clone();
    let mut n = 2;
    while steps.iter().any(|s| s.id == id) {
        id = format!("{base}_{n}");
        n += 1;
    }
    let args = Value::Object(c.args.clone());
    Step {
        id,
        server: c.server.clone(),
        tool: c.tool.clone(),
        calls: Vec::new(),
        leaves: leaves_of(&args)
            .into_iter()
            .map(|(path, literal)| Leaf {
                path,
                literal,
                choice: Choice::Literal,
            })
            .collect(),
        args,
        for_each: None,
        derived: Vec::new(),
        wrapped: false,
        answers: pipewright_engine::record::write::answers(c),
        task: c.extras.task.is_some(),
        notes: Vec::new(),
    }
}

/// The pipeline of `text`, and its composition; when the text does not
/// load (which would be a bug of the writer), a pipe of the steps' ids and
/// tools, so the calls are still drawn.
fn plan_of(text: &str, d: &Draft) -> Option<(Arc<Pipeline>, Composition)> {
    let loaded = pipewright_engine::file::open::load_str(text);
    if let Some(p) = loaded.pipeline
        && let Some(c) = p
            .composition(&d.name)
            .or(p.compositions.first())
            .filter(|c| c.nodes.len() == d.steps.len())
            .cloned()
    {
        return Some((Arc::new(p), c));
    }
    tracing::warn!(
        "the recording view's pipeline did not load: {:?}",
        loaded.diagnostics
    );
    let mut plain = String::from("pipe:\n");
    for s in &d.steps {
        plain.push_str(&format!(
            "  - id: {}\n    tool: {}\n",
            serde_json::to_string(&s.id).ok()?,
            serde_json::to_string(&s.tool).ok()?
        ));
    }
    let p = pipewright_engine::file::open::load_str(&plain).pipeline?;
    let c = p.compositions.first().cloned()?;
    Some((Arc::new(p), c))
}

/// For each step, the earlier steps its references read.
fn parents_of(d: &Draft) -> Vec<Vec<usize>> {
    d.steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut from: Vec<usize> = Vec::new();
            let fan = s.for_each.iter().flat_map(|t| t.steps());
            let leaves = s.leaves.iter().flat_map(|l| match &l.choice {
                Choice::Inferred { template, .. } => template.steps().collect::<Vec<_>>(),
                _ => Vec::new(),
            });
            for p in fan.chain(leaves) {
                if p < i && !from.contains(&p) {
                    from.push(p);
                }
            }
            from.sort_unstable();
            from
        })
        .collect()
}

/// `comp` drawn with the inferred edges instead of a pipe's chain: each
/// node's parents are the steps it reads, its wave its longest path.
fn with_edges(mut comp: Composition, parents: &[Vec<usize>]) -> Arc<Composition> {
    let n = comp.nodes.len();
    comp.parents = (0..n)
        .map(|i| parents.get(i).cloned().unwrap_or_default())
        .collect();
    comp.children = vec![Vec::new(); n];
    let mut depth = vec![0usize; n];
    for i in 0..n {
        for &p in &comp.parents[i] {
            comp.children[p].push(i);
            depth[i] = depth[i].max(depth[p] + 1);
        }
    }
    comp.order = (0..n).collect();
    let waves = depth.iter().max().map_or(0, |d| d + 1);
    comp.waves = vec![Vec::new(); waves];
    for (i, d) in depth.iter().enumerate() {
        comp.waves[*d].push(i);
    }
    Arc::new(comp)
}

/// `at_ms` after the session's start, as a trace writes times.
fn stamp(started: Option<time::OffsetDateTime>, at_ms: f64) -> Option<String> {
    let t = started? + time::Duration::microseconds((at_ms * 1000.0) as i64);
    t.format(&time::format_description::well_known::Rfc3339)
        .ok()
}

/// A call's JSON-RPC exchange as a run keeps it, the result kept once in
/// the record's `raw`.
fn exchange(c: &Call) -> Json {
    let request = serde_json::json!({
        "jsonrpc": "2.0",
        "method": "tools/call",
        "params": {"name": c.tool, "arguments": c.args},
    });
    let response = serde_json::json!({
        "jsonrpc": "2.0",
        "result": pipewright_engine::run::trace::raw_ref(),
    });
    Json::object(vec![
        ("request".into(), Json::from_value(request)),
        ("response".into(), Json::from_value(response)),
    ])
}

/// Step `step`'s calls as the record of node `id`: one call, or a
/// fan-out's, each an iteration.
fn record_of(
    id: &str,
    step: &Step,
    calls: &[&Call],
    started: Option<time::OffsetDateTime>,
) -> NodeRecord {
    let status = |c: &Call| {
        if c.is_error {
            NodeStatus::Failed
        } else {
            NodeStatus::Ok
        }
    };
    let attempt = |c: &Call, iteration: Option<usize>| AttemptRecord {
        iteration,
        attempt: 1,
        of: 1,
        started_at: stamp(started, c.at_ms),
        duration_ms: c.duration_ms as u64,
        status: status(c),
        rpc: exchange(c),
        ..AttemptRecord::default()
    };
    let mut r = NodeRecord {
        id: id.to_owned(),
        tool: step.tool.clone(),
        server: Some(step.server.clone()),
        status: NodeStatus::Ok,
        attempts: 1,
        ..NodeRecord::default()
    };
    let Some(first) = calls.first() else {
        return r;
    };
    let last = calls[calls.len() - 1];
    r.started_at = stamp(started, first.at_ms);
    r.duration_ms = ((last.at_ms + last.duration_ms) - first.at_ms).max(0.0) as u64;
    r.args = Json::from_value(Value::Object(first.args.clone()));
    r.raw = last.result.clone();
    r.rpc = exchange(last);
    if step.for_each.is_some() {
        r.output = Json::from_value(Value::Array(
            calls.iter().map(|c| c.output.tree().clone()).collect(),
        ));
        for (k, c) in calls.iter().enumerate() {
            r.iterations.push(IterationRecord {
                index: k,
                status: status(c),
                args: Json::from_value(Value::Object(c.args.clone())),
                output: c.output.clone(),
                attempts: 1,
                started_at: stamp(started, c.at_ms),
                duration_ms: c.duration_ms as u64,
                extras: c.extras.clone(),
                ..IterationRecord::default()
            });
            r.calls.push(attempt(c, Some(k)));
        }
    } else {
        r.output = first.output.clone();
        r.extras = first.extras.clone();
        r.calls.push(attempt(first, None));
    }
    r.output_tokens = pipewright_engine::cost::tokens::count_json(&r.output);
    r
}
