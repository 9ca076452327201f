//! A finished run as a tool result: its output, or one sentence saying
//! why it failed and the envelope; the run id, totals and provenance in
//! `_meta`.

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use pipewright_engine::run::trace::{RunStatus, Trace};

/// A finished run as a tool result: the output (structured, and as JSON
/// text), the run id, totals and provenance (`from`) in `_meta`; a failed
/// run is `isError` with one sentence first and the envelope as
/// structured content.
pub(super) fn result(t: &Trace, from: Option<Value>) -> CallToolResult {
    let mut meta = json!({
        "pipewright/run_id": t.run_id,
        "pipewright/status": t.composition.status.as_str(),
        "pipewright/cost_usd": t.composition.cost_total,
        "pipewright/tokens": t.composition.tokens_total,
        "pipewright/duration_ms": t.composition.duration_ms,
    });
    if let Some(from) = from {
        meta[super::provenance::KEY] = from;
    }
    if t.composition.status == RunStatus::Completed && t.expect.iter().all(|e| e.pass) {
        let structured = match t.output.tree() {
            out @ Value::Object(_) => out.clone(),
            other => json!({ "result": other }),
        };
        // `resultType` is required in 2026-07-28; rmcp drops it for older
        // peers.
        let v = json!({
            "resultType": "complete",
            "content": [{ "type": "text", "text": structured.to_string() }],
            "structuredContent": structured,
            "isError": false,
            "_meta": meta,
        });
        return serde_json::from_value::<CallToolResult>(v)
            .unwrap_or_else(|e| error_result(format!("cannot encode the result: {e}"), json!({})));
    }
    let (sentence, error) = match (&t.failed_step, &t.composition.budget_tripped) {
        (_, Some(cap)) => (
            format!("The run stopped: budget cap `{cap}` was exceeded."),
            Value::Null,
        ),
        (Some(step), _) => {
            let rec = t.nodes.get(step);
            let msg = rec.and_then(|r| r.error.clone()).unwrap_or_default();
            (
                format!("Node `{step}` failed: {msg}"),
                json!({
                    "message": msg,
                    "code": rec.and_then(|r| r.error_code.clone()),
                    "status": rec.and_then(|r| r.error_status),
                }),
            )
        }
        _ => {
            let failed: Vec<String> = t
                .expect
                .iter()
                .filter(|e| !e.pass)
                .map(|e| format!("{} {}", e.target, e.matcher))
                .collect();
            if failed.is_empty() {
                (
                    format!("The run ended {}.", t.composition.status.as_str()),
                    Value::Null,
                )
            } else {
                (
                    format!("The run's expectations failed: {}.", failed.join("; ")),
                    Value::Null,
                )
            }
        }
    };
    let envelope = json!({
        "status": t.composition.status.as_str(),
        "failed_step": t.failed_step,
        "completed_step_ids": t.completed_step_ids,
        "compensated": t.compensations,
        "error": error,
        "run_id": t.run_id,
    });
    error_result_with(sentence, envelope, meta)
}

pub(super) fn error_result(sentence: String, envelope: Value) -> CallToolResult {
    error_result_with(sentence, envelope, json!({}))
}

fn error_result_with(sentence: String, envelope: Value, meta: Value) -> CallToolResult {
    let v = json!({
        "resultType": "complete",
        "_meta": meta,
        "content": [
            { "type": "text", "text": sentence },
            { "type": "text", "text": envelope.to_string() }
        ],
        "structuredContent": envelope,
        "isError": true,
    });
    serde_json::from_value::<CallToolResult>(v).unwrap_or_else(|_| CallToolResult::error(vec![]))
}
