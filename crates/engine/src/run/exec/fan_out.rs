//! A node's `for_each`: its iterations run with real concurrency (at most
//! `max_concurrency` at once, none started while the run is paused), each
//! with its own `${item}`, and the preview of each iteration's arguments.

use std::time::Instant;

use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{Value, json};

use super::attempt::{CallFailure, CallResult, Which, call_with_policy};
use super::job::{INTERPOLATION_FAILED, NodeJob, now_rfc3339, redacted};
use crate::file::model::Node;
use crate::json::Json;
use crate::lang::reference;
use crate::lang::snapshot::{ItemScope, Snapshot, resolve_args};
use crate::mcp::human::CallExtras;
use crate::run::cassette::redacted_extras;
use crate::run::events::Event;
use crate::run::trace::{IterationRecord, NodeRecord, NodeStatus};

pub(super) async fn fan_out(job: &NodeJob, node: &Node, items: &[Value], rec: &mut NodeRecord) {
    let total = items.len();
    let limit = node.max_concurrency.max(1);
    let mut outputs: Vec<Json> = vec![Json::null(); total];
    let mut iterations: Vec<Option<IterationRecord>> = vec![None; total];
    let mut running = FuturesUnordered::new();
    let mut next = 0usize;
    let mut done = 0usize;
    let mut paused = job.paused.clone();
    while done < total {
        // Start iterations while there is room, the run is not paused and
        // nothing was cancelled.
        while next < total
            && running.len() < limit
            && !*paused.borrow()
            && !job.cancel.is_cancelled()
        {
            let index = next;
            next += 1;
            let item = &items[index];
            running.push(async move {
                let started = (Instant::now(), now_rfc3339());
                let scope = item_scope(&job.scope, node, item, index);
                let args = match resolve_args(&node.args, &scope) {
                    Ok(a) => a,
                    Err(e) => {
                        return (
                            index,
                            Value::Null,
                            CallResult {
                                result: Err(CallFailure::Failed(e.to_string())),
                                code: Some(INTERPOLATION_FAILED.to_owned()),
                                ..CallResult::default()
                            },
                            started,
                        );
                    }
                };
                let args_value = Value::Object(args.clone());
                let _ = job
                    .events
                    .send(Event::IterationStarted {
                        id: node.id.clone(),
                        index,
                        total,
                    })
                    .await;
                let call = call_with_policy(job, node, args, Which::Iteration(index)).await;
                (index, args_value, call, started)
            });
        }
        if running.is_empty() {
            if job.cancel.is_cancelled() || next >= total {
                break;
            }
            // Paused with nothing in flight: wait for resume or cancel.
            tokio::select! {
                _ = paused.changed() => {}
                () = job.cancel.cancelled() => {}
            }
            continue;
        }
        tokio::select! {
            Some((index, args, call, (started, started_at))) = running.next() => {
                done += 1;
                rec.attempts = rec.attempts.max(call.attempts);
                rec.cost_usd += call.cost_usd;
                rec.tokens += call.tokens;
                if rec.model.is_none() {
                    rec.model = call.model.clone();
                }
                rec.replayed |= call.replayed;
                rec.calls.extend(call.calls.iter().cloned());
                let (code, error_status) = (call.code.clone(), call.status);
                let (status, output, error) = match call.result {
                    Ok(v) => (NodeStatus::Ok, v, None),
                    Err(CallFailure::Cancelled) => (NodeStatus::Cancelled, Json::null(), Some("cancelled".to_owned())),
                    Err(CallFailure::Failed(m)) => (NodeStatus::Failed, Json::null(), Some(job.redactor.text(&m))),
                };
                // One value, in the node's output and the iteration's record.
                outputs[index] = output.clone();
                rec.raw = job.redactor.json(&call.raw);
                rec.rpc = job.redactor.json(&call.rpc);
                let _ = job.events.send(Event::Iteration {
                    id: node.id.clone(),
                    index,
                    status,
                    done,
                    total,
                }).await;
                iterations[index] = Some(IterationRecord {
                    index,
                    status,
                    args: redacted(&job.redactor, args),
                    output,
                    error_code: error.as_ref().and(code),
                    error_status: error.as_ref().and(error_status),
                    error,
                    attempts: call.attempts,
                    extras: redacted_extras(&job.redactor, &call.extras),
                    started_at: Some(started_at),
                    duration_ms: if node.mock.is_some() { 0 } else { started.elapsed().as_millis() as u64 },
                });
            }
            _ = paused.changed() => {}
        }
    }
    let started = iterations.iter().filter(|r| r.is_some()).count();
    // Items never started (the run was cancelled or stopped) are kept as
    // cancelled iterations, so the record accounts for every item.
    let records: Vec<IterationRecord> = iterations
        .into_iter()
        .enumerate()
        .map(|(index, r)| r.unwrap_or_else(|| never_started(index)))
        .collect();
    let failed = records.iter().find(|r| r.status == NodeStatus::Failed);
    let cancelled = started < total || records.iter().any(|r| r.status == NodeStatus::Cancelled);
    rec.args = Json::from_value(
        json!({ "for_each": node.for_each.as_ref().map(|f| f.source.clone()), "items": total }),
    );
    if let Some(f) = failed {
        rec.status = NodeStatus::Failed;
        rec.error_code = f.error_code.clone();
        rec.error_status = f.error_status;
        // Counted from 1, as the Raw tab's `iteration 2/4` counts.
        rec.error = Some(format!(
            "iteration {} of {total} failed: {}",
            f.index + 1,
            f.error.clone().unwrap_or_default()
        ));
    } else if cancelled {
        rec.status = NodeStatus::Cancelled;
        rec.error = Some(format!(
            "cancelled after {started} of {total} iterations started"
        ));
    } else {
        rec.status = NodeStatus::Ok;
        rec.output = Json::list(outputs);
    }
    rec.iterations = records;
    rec.calls
        .sort_by_key(|c| (c.iteration.unwrap_or(0), c.attempt));
}

/// What iteration `index` of fan-out `node`, over `item`, sees: the
/// node's snapshot with `${item}` set. The run's calls and the
/// workbench's preview both resolve an iteration's args in it.
fn item_scope<'a>(
    base: &'a Snapshot,
    node: &'a Node,
    item: &'a Value,
    index: usize,
) -> ItemScope<'a> {
    ItemScope {
        base,
        item,
        index,
        aligned: &node.aligned,
    }
}

/// A node's args as far as `scope` resolves them now (the rest reads
/// `<from node.path>`), for a preview: a fan-out whose items are known
/// gives the list of each iteration's args, resolved in that iteration's
/// scope as the run will resolve them.
pub fn preview_args(node: &Node, scope: &Snapshot) -> Value {
    let items = node
        .for_each
        .as_ref()
        .and_then(|fe| reference::resolve_reference_shared(&fe.site.reference, scope).ok());
    match items.as_deref() {
        Some(Value::Array(items)) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    let scope = item_scope(scope, node, item, index);
                    reference::resolve_value_partial(&node.args, &scope).value
                })
                .collect(),
        ),
        _ => reference::resolve_value_partial(&node.args, scope).value,
    }
}

/// An iteration the run stopped before it started.
fn never_started(index: usize) -> IterationRecord {
    IterationRecord {
        index,
        status: NodeStatus::Cancelled,
        args: Json::null(),
        output: Json::null(),
        error: Some("not started: the run stopped first".into()),
        error_code: None,
        error_status: None,
        attempts: 0,
        extras: CallExtras::default(),
        started_at: None,
        duration_ms: 0,
    }
}
