//! Running one node: resolve its arguments, call (or mock) with retries and
//! timeouts, fan out over `for_each` with real concurrency, reshape with
//! `transform`, and record everything.

mod attempt;
mod fan_out;
mod job;

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::Value;

use crate::lang::reference;
use crate::lang::snapshot::resolve_args;
use crate::run::cassette::redacted_extras;
use crate::run::trace::{NodeRecord, NodeStatus};
use attempt::{CallFailure, Which, call_with_policy};
use fan_out::fan_out;
pub use fan_out::preview_args;
use job::redacted;
pub use job::{INTERPOLATION_FAILED, NodeJob, now_rfc3339};

/// How many items one `for_each` may fan out over when the file sets no
/// `budget.max_iterations` (which replaces this cap).
pub const DEFAULT_MAX_FOR_EACH: usize = 10_000;

/// Runs the node to its end and returns its record.
pub async fn run_node(job: NodeJob) -> NodeRecord {
    let node = &job.comp.nodes[job.idx];
    let started = Instant::now();
    let mut rec = NodeRecord {
        status: NodeStatus::Running,
        started_at: Some(now_rfc3339()),
        mocked: node.mock.is_some(),
        ..NodeRecord::default()
    };
    match &node.for_each {
        Some(fe) => {
            let resolved = reference::resolve_reference_shared(&fe.site.reference, &job.scope);
            let items: &[Value] = match resolved.as_deref() {
                Ok(Value::Array(items)) => items,
                Ok(other) => {
                    return fail(
                        rec,
                        started,
                        format!(
                            "`for_each: {}` must resolve to an array, but it is {}",
                            fe.source,
                            crate::run::trace::type_name(other)
                        ),
                        INTERPOLATION_FAILED,
                    );
                }
                Err(e) => return fail(rec, started, e.to_string(), INTERPOLATION_FAILED),
            };
            // Without a budget of iterations, one node fans out over at
            // most DEFAULT_MAX_FOR_EACH items: a reply of a million items
            // is refused before any call, not dispatched.
            if job.iterations.is_none() && items.len() > DEFAULT_MAX_FOR_EACH {
                return fail(
                    rec,
                    started,
                    format!(
                        "`for_each: {}` has {} items; a node fans out over at most {DEFAULT_MAX_FOR_EACH} unless the file sets `budget: {{max_iterations: N}}`",
                        fe.source,
                        items.len()
                    ),
                    "ITERATION_LIMIT",
                );
            }
            if let Some((used, max)) = &job.iterations {
                let n = items.len() as u64;
                let before = used.fetch_add(n, Ordering::Relaxed);
                if before + n > *max {
                    used.fetch_sub(n, Ordering::Relaxed);
                    return fail(
                        rec,
                        started,
                        format!(
                            "`for_each` would make {n} iterations, and {before} were made before it; the run may make at most {max} (`budget.max_iterations`)"
                        ),
                        "ITERATION_LIMIT",
                    );
                }
            }
            fan_out(&job, node, items, &mut rec).await;
        }
        None => {
            let args = match resolve_args(&node.args, &job.scope) {
                Ok(a) => a,
                Err(e) => return fail(rec, started, e.to_string(), INTERPOLATION_FAILED),
            };
            // One value, in the record and in every attempt's event.
            let shown = redacted(&job.redactor, Value::Object(args.clone()));
            rec.args = shown.clone();
            let call = call_with_policy(&job, node, args, Which::Node(shown)).await;
            rec.attempts = call.attempts;
            rec.raw = job.redactor.json(&call.raw);
            rec.rpc = job.redactor.json(&call.rpc);
            rec.cost_usd = call.cost_usd;
            rec.tokens = call.tokens;
            rec.model = call.model;
            rec.replayed = call.replayed;
            rec.extras = redacted_extras(&job.redactor, &call.extras);
            rec.calls = call.calls;
            match call.result {
                Ok(output) => {
                    rec.status = NodeStatus::Ok;
                    // Kept as the server sent it: later nodes and `expect:`
                    // read real values; the session masks what it shows.
                    rec.output = output;
                }
                Err(CallFailure::Cancelled) => {
                    rec.status = NodeStatus::Cancelled;
                    rec.error = Some("cancelled".into());
                }
                Err(CallFailure::Failed(msg)) => {
                    rec.status = NodeStatus::Failed;
                    rec.error = Some(job.redactor.text(&msg));
                    rec.error_code = call.code;
                    rec.error_status = call.status;
                }
            }
        }
    }
    rec.output_tokens = crate::cost::tokens::count_json(&rec.output);
    if rec.mocked {
        rec.duration_ms = 0;
    } else {
        rec.duration_ms = started.elapsed().as_millis() as u64;
    }
    rec
}

fn fail(mut rec: NodeRecord, started: Instant, error: String, code: &str) -> NodeRecord {
    rec.status = NodeStatus::Failed;
    rec.error = Some(error);
    rec.error_code = Some(code.to_owned());
    rec.duration_ms = started.elapsed().as_millis() as u64;
    rec
}
