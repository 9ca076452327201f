//! `run --format fibe|discord`: a run's result in the envelope the Fibe
//! `fibe_pipeline` or Discord `mcp_pipeline` meta-tool would have returned,
//! so a pipeline debugged here can be compared with what the server says.
//!
//! Decisions the reference documents leave open: Fibe's `status` is
//! `partial` for any failed run (with `completed_step_ids` and `error`),
//! and a step failed under `on_error: continue` is bound as `{error}`;
//! Discord's envelope carries both the documented `results`/`summary` and
//! the `steps`/`variables`/`total_duration_ms`/`aborted` its executor
//! really returns; `summary.total` counts every step of the pipeline, a step
//! whose `if` was false is `{ok: true, skipped: true}`, an error's code is
//! the server's own when it gave one (else `TOOL_ERROR`), and steps that
//! never ran are left out.

use serde_json::{Map, Value, json};

use pipewright_engine::file::import::ImportedStep;
use pipewright_engine::file::model::Composition;
use pipewright_engine::run::trace::{NodeStatus, RunStatus, Trace};

/// What the envelope printers need to know of the file besides the trace.
#[derive(Debug, Clone, Default)]
pub struct Shape {
    /// Every node with the imported step it stands for, in order.
    pub steps: Vec<ImportedStep>,
    /// Discord `save_as` names → node ids.
    pub aliases: Vec<(String, String)>,
    /// Whether the pipeline says what it returns (Fibe `return`).
    pub has_return: bool,
    /// Fibe `cache`: the envelope carries `pipeline_id` only when true.
    pub cache: bool,
}

impl Shape {
    /// The shape of a saved run whose file is gone: each node is a step.
    pub fn of_trace(t: &Trace) -> Shape {
        Shape {
            steps: t
                .nodes
                .iter()
                .enumerate()
                .map(|(index, (id, rec))| ImportedStep {
                    native: id.clone(),
                    binding: Some(id.clone()),
                    index,
                    tool: rec.tool.clone(),
                })
                .collect(),
            aliases: Vec::new(),
            has_return: true,
            cache: true,
        }
    }

    /// The shape of a native composition: each node is a step of its own.
    pub fn native(comp: &Composition) -> Shape {
        Shape {
            steps: comp
                .nodes
                .iter()
                .enumerate()
                .map(|(index, n)| ImportedStep {
                    native: n.id.clone(),
                    binding: Some(n.id.clone()),
                    index,
                    tool: n.tool.clone(),
                })
                .collect(),
            aliases: Vec::new(),
            has_return: comp.output.is_some(),
            cache: true,
        }
    }
}

/// The Fibe result of one run.
pub fn fibe(trace: &Trace, shape: &Shape) -> Value {
    let mut steps = Map::new();
    let mut completed = Vec::new();
    for s in &shape.steps {
        let (Some(name), Some(rec)) = (&s.binding, trace.nodes.get(&s.native)) else {
            continue;
        };
        match rec.status {
            NodeStatus::Ok => {
                steps.insert(name.clone(), rec.output.tree().clone());
                completed.push(Value::from(name.clone()));
            }
            NodeStatus::Failed if trace.failed_step.as_deref() != Some(&s.native) => {
                steps.insert(name.clone(), json!({ "error": rec.error }));
            }
            _ => {}
        }
    }
    let ok = trace.composition.status == RunStatus::Completed;
    let result = match (ok, shape.has_return) {
        (false, _) => Value::Null,
        (true, true) => trace.output.tree().clone(),
        (true, false) => Value::Object(steps.clone()),
    };
    let mut out = json!({
        "steps": steps,
        "result": result,
        "status": if ok { "completed" } else { "partial" },
    });
    if shape.cache {
        out["pipeline_id"] = Value::from(trace.run_id.clone());
    }
    // Nothing is cut: the whole result is returned.
    out["truncated"] = Value::Bool(false);
    if !ok {
        let failed = trace
            .failed_step
            .as_ref()
            .and_then(|f| shape.steps.iter().find(|s| &s.native == f));
        if let Some(s) = failed {
            let rec = trace.nodes.get(&s.native);
            let message = rec.and_then(|r| r.error.clone()).unwrap_or_default();
            out["error"] = json!({
                "step_index": s.index,
                "step_id": s.binding.clone().unwrap_or_else(|| s.native.clone()),
                "tool": s.tool,
                "message": message,
            });
            if let Some(code) = rec.and_then(|r| r.error_code.clone()) {
                out["error"]["code"] = Value::from(code);
            }
            if let Some(status) = rec.and_then(|r| r.error_status) {
                out["error"]["status"] = Value::from(status);
            }
        } else {
            out["error"] =
                json!({ "message": format!("run {}", trace.composition.status.as_str()) });
        }
        out["completed_step_ids"] = Value::from(completed);
    }
    out
}

/// The Discord result of one run: `{results: [{step, tool, ok, data |
/// error}], summary: {total, succeeded, failed}}`, steps counted from 1.
pub fn discord(trace: &Trace, shape: &Shape) -> Value {
    let mut results = Vec::new();
    let (mut succeeded, mut failed) = (0u64, 0u64);
    for s in &shape.steps {
        let Some(rec) = trace.nodes.get(&s.native) else {
            continue;
        };
        let mut step = Map::new();
        step.insert("step".into(), Value::from(s.index + 1));
        step.insert("tool".into(), Value::from(s.tool.clone()));
        match rec.status {
            NodeStatus::Ok => {
                succeeded += 1;
                step.insert("ok".into(), Value::Bool(true));
                step.insert("data".into(), rec.output.tree().clone());
            }
            NodeStatus::Failed => {
                failed += 1;
                step.insert("ok".into(), Value::Bool(false));
                step.insert("error".into(), error_object(rec));
            }
            // A step whose `if` was false ran nothing and failed nothing.
            NodeStatus::Skipped
                if rec
                    .skip_reason
                    .as_deref()
                    .is_some_and(|r| !r.starts_with("not run")) =>
            {
                step.insert("ok".into(), Value::Bool(true));
                step.insert("skipped".into(), Value::Bool(true));
            }
            _ => continue,
        }
        results.push(Value::Object(step));
    }
    let mut out = json!({
        "results": results,
        "summary": {
            "total": shape.steps.len(),
            "succeeded": succeeded,
            "failed": failed,
        },
    });
    // Discord's executor also returns these (checked against its source),
    // so a client written against either shape reads its fields.
    if let Value::Object(map) = &mut out
        && let Value::Object(legacy) = discord_executor(trace, shape)
    {
        map.extend(legacy);
    }
    out
}

/// The fields Discord's executor returns: `steps[]` with `ok|error|skipped`,
/// `variables` from `save_as`, `total_duration_ms`, `aborted`.
fn discord_executor(trace: &Trace, shape: &Shape) -> Value {
    let mut steps = Vec::new();
    for s in &shape.steps {
        let Some(rec) = trace.nodes.get(&s.native) else {
            continue;
        };
        let status = match rec.status {
            NodeStatus::Ok => "ok",
            NodeStatus::Failed => "error",
            NodeStatus::Skipped
                if !rec
                    .skip_reason
                    .as_deref()
                    .is_some_and(|r| r.starts_with("not run")) =>
            {
                "skipped"
            }
            _ => continue,
        };
        let mut step = json!({
            "id": s.binding.clone().unwrap_or_else(|| s.native.clone()),
            "tool": s.tool,
            "status": status,
        });
        match rec.status {
            NodeStatus::Ok => step["result"] = rec.output.tree().clone(),
            NodeStatus::Failed => {
                step["error"] = json!({
                    "code": rec.error_code.clone().unwrap_or_else(|| "TOOL_ERROR".into()),
                    "message": rec.error,
                    "retriable": false,
                });
            }
            _ => {}
        }
        step["duration_ms"] = Value::from(rec.duration_ms);
        steps.push(step);
    }
    let variables: Map<String, Value> = shape
        .aliases
        .iter()
        .filter_map(|(alias, id)| {
            let rec = trace.nodes.get(id)?;
            (rec.status == NodeStatus::Ok).then(|| (alias.clone(), rec.output.tree().clone()))
        })
        .collect();
    json!({
        "steps": steps,
        "variables": variables,
        "total_duration_ms": trace.composition.duration_ms,
        "aborted": trace.composition.status != RunStatus::Completed,
    })
}

/// A failed step's `error`: its code (`INTERPOLATION_FAILED`, `TOOL_ERROR`
/// or the server's own), message, and status when the server gave one.
fn error_object(rec: &pipewright_engine::run::trace::NodeRecord) -> Value {
    let mut e = Map::new();
    e.insert(
        "code".into(),
        Value::from(
            rec.error_code
                .clone()
                .unwrap_or_else(|| "TOOL_ERROR".into()),
        ),
    );
    e.insert(
        "message".into(),
        Value::from(rec.error.clone().unwrap_or_default()),
    );
    if let Some(status) = rec.error_status {
        e.insert("status".into(), Value::from(status));
    }
    Value::Object(e)
}

/// Prints every trace in one of the envelopes (an array when several ran).
pub fn print(traces: &[Trace], shapes: &[Shape], envelope: fn(&Trace, &Shape) -> Value) {
    let values: Vec<Value> = traces
        .iter()
        .zip(shapes)
        .map(|(t, s)| envelope(t, s))
        .collect();
    let v = if values.len() == 1 {
        values.into_iter().next().unwrap_or_default()
    } else {
        Value::from(values)
    };
    println!("{}", crate::json::pretty(&v));
}

/// Prints `traces` of the pipeline loaded from `source` in the Fibe
/// (`fibe` true) or Discord envelope.
pub fn print_run(
    traces: &[Trace],
    pipeline: &pipewright_engine::file::model::Pipeline,
    (source, dialect, limits): (
        &str,
        pipewright_engine::file::import::Dialect,
        pipewright_engine::file::import::FibeLimits,
    ),
    fibe_envelope: bool,
) {
    use pipewright_engine::file::import::{self, Dialect};
    let conv = import::convert(source, dialect, limits)
        .ok()
        .filter(|c| c.dialect != Dialect::Native && !c.has_errors());
    let shapes: Vec<Shape> = traces
        .iter()
        .map(|t| {
            let comp = pipeline.composition(&t.composition.name);
            match (&conv, comp) {
                (Some(c), comp) => Shape {
                    steps: c.steps.clone(),
                    aliases: c.aliases.clone(),
                    has_return: comp.is_some_and(|k| k.output.is_some()),
                    cache: c.cache,
                },
                (None, Some(comp)) => Shape::native(comp),
                (None, None) => Shape::default(),
            }
        })
        .collect();
    print(traces, &shapes, if fibe_envelope { fibe } else { discord });
}
