//! A run as OpenTelemetry traces, in OTLP/JSON: the body of an
//! `ExportTraceServiceRequest` that any collector accepts
//! (`POST /v1/traces`, `Content-Type: application/json`).
//!
//! One root span per run, one child span per node that ran (a client span:
//! the call), and one child span per fan-out iteration under its node. Times
//! are the recorded start times plus durations; a child never reaches past
//! its parent (durations are whole milliseconds, so ends are widened where
//! rounding would make a child outlast it). Failed nodes and runs that did
//! not complete have status ERROR. Skipped nodes are events on the root.
//! Ids are derived from the run id, so exporting a run twice gives the same
//! trace and span ids.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::mcp::human::TaskRecord;
use crate::run::trace::{NodeStatus, RunStatus, Trace};

const SPAN_KIND_INTERNAL: u8 = 1;
const SPAN_KIND_CLIENT: u8 = 3;
const STATUS_OK: u8 = 1;
const STATUS_ERROR: u8 = 2;

/// The export request for `traces` (one root span each).
pub fn export(traces: &[Trace]) -> Value {
    let spans: Vec<Value> = traces.iter().flat_map(spans_of).collect();
    json!({
        "resourceSpans": [{
            "resource": { "attributes": [
                attr("service.name", s("pipewright")),
                attr("service.version", s(env!("CARGO_PKG_VERSION"))),
            ]},
            "scopeSpans": [{
                "scope": { "name": "pipewright", "version": env!("CARGO_PKG_VERSION") },
                "spans": spans,
            }],
        }]
    })
}

fn hex_id(seed: &str, bytes: usize) -> String {
    hex::encode(&Sha256::digest(seed.as_bytes())[..bytes])
}

fn s(v: &str) -> Value {
    json!({ "stringValue": v })
}

fn int(v: u64) -> Value {
    json!({ "intValue": v.to_string() })
}

fn double(v: f64) -> Value {
    json!({ "doubleValue": v })
}

fn attr(key: &str, value: Value) -> Value {
    json!({ "key": key, "value": value })
}

/// RFC 3339 → Unix nanoseconds.
fn nanos(t: Option<&str>) -> Option<u128> {
    let t = time::OffsetDateTime::parse(t?, &time::format_description::well_known::Rfc3339).ok()?;
    u128::try_from(t.unix_timestamp_nanos()).ok()
}

fn ms(d: u64) -> u128 {
    u128::from(d) * 1_000_000
}

/// `mcp.task.id`, `mcp.task.status` and (when sent) `mcp.task.cancel_sent`
/// for a call made as an MCP task.
fn task_attrs(attrs: &mut Vec<Value>, task: Option<&TaskRecord>) {
    let Some(task) = task else { return };
    attrs.push(attr("mcp.task.id", s(&task.id)));
    attrs.push(attr("mcp.task.status", s(&task.status)));
    if task.cancel_sent {
        attrs.push(attr("mcp.task.cancel_sent", json!({ "boolValue": true })));
    }
}

struct Span {
    id: String,
    parent: String,
    name: String,
    kind: u8,
    start: u128,
    end: u128,
    attrs: Vec<Value>,
    error: Option<String>,
    ok: bool,
    events: Vec<Value>,
}

impl Span {
    fn json(&self, trace_id: &str) -> Value {
        let status = match (&self.error, self.ok) {
            (Some(m), _) => json!({ "code": STATUS_ERROR, "message": m }),
            (None, true) => json!({ "code": STATUS_OK }),
            (None, false) => json!({}),
        };
        json!({
            "traceId": trace_id,
            "spanId": self.id,
            "parentSpanId": self.parent,
            "name": self.name,
            "kind": self.kind,
            "startTimeUnixNano": self.start.to_string(),
            "endTimeUnixNano": self.end.to_string(),
            "attributes": self.attrs,
            "events": self.events,
            "status": status,
        })
    }
}

fn spans_of(t: &Trace) -> Vec<Value> {
    let trace_id = hex_id(&t.run_id, 16);
    let root_id = hex_id(&format!("{}/run", t.run_id), 8);
    let start = nanos(t.composition.started_at.as_deref()).unwrap_or(0);
    let completed = t.composition.status == RunStatus::Completed;
    let mut root = Span {
        id: root_id.clone(),
        parent: String::new(),
        name: format!("pipewright {}", crate::run::store::label(t)),
        kind: SPAN_KIND_INTERNAL,
        start,
        end: start + ms(t.composition.duration_ms),
        attrs: vec![
            attr("pipewright.run_id", s(&t.run_id)),
            attr("pipewright.file", s(&t.file)),
            attr("pipewright.composition", s(&t.composition.name)),
            attr("pipewright.status", s(t.composition.status.as_str())),
            attr("pipewright.cost_usd", double(t.composition.cost_total)),
            attr("pipewright.tokens", int(t.composition.tokens_total)),
        ],
        error: (!completed).then(|| match (&t.failed_step, &t.composition.budget_tripped) {
            (_, Some(cap)) => format!("budget `{cap}` exceeded"),
            (Some(step), _) => format!("`{step}` failed"),
            _ => format!("run {}", t.composition.status.as_str()),
        }),
        ok: completed,
        events: Vec::new(),
    };
    if let Some(case) = &t.composition.case {
        root.attrs.push(attr("pipewright.case", s(case)));
    }
    let mut children: Vec<Span> = Vec::new();
    for (id, rec) in &t.nodes {
        let Some(node_start) = nanos(rec.started_at.as_deref()) else {
            if rec.status == NodeStatus::Skipped {
                root.events.push(json!({
                    "timeUnixNano": root.start.to_string(),
                    "name": "node skipped",
                    "attributes": [
                        attr("pipewright.node", s(id)),
                        attr("pipewright.reason", s(rec.skip_reason.as_deref().unwrap_or(""))),
                    ],
                }));
            }
            continue;
        };
        let node_start = node_start.max(root.start);
        let span_id = hex_id(&format!("{}/{id}", t.run_id), 8);
        let mut attrs = vec![
            attr("pipewright.node", s(id)),
            attr("mcp.tool", s(&rec.tool)),
            attr("pipewright.status", s(rec.status.as_str())),
            attr("pipewright.attempts", int(u64::from(rec.attempts))),
            attr("pipewright.cost_usd", double(rec.cost_usd)),
            attr("pipewright.tokens", int(rec.tokens)),
        ];
        if let Some(server) = &rec.server {
            attrs.push(attr("mcp.server", s(server)));
            if let Some(rev) = t.server_protocols.get(server) {
                attrs.push(attr("mcp.protocol.version", s(rev)));
            }
        }
        task_attrs(&mut attrs, rec.extras.task.as_ref());
        if let Some(model) = &rec.model {
            attrs.push(attr("gen_ai.request.model", s(model)));
        }
        if let Some(code) = &rec.error_code {
            attrs.push(attr("error.type", s(code)));
        }
        let mut node = Span {
            id: span_id.clone(),
            parent: root_id.clone(),
            name: format!("{id} {}", rec.tool).trim().to_owned(),
            kind: SPAN_KIND_CLIENT,
            start: node_start,
            end: node_start + ms(rec.duration_ms),
            attrs,
            error: (rec.status == NodeStatus::Failed)
                .then(|| rec.error.clone().unwrap_or_else(|| "failed".into())),
            ok: rec.status == NodeStatus::Ok,
            events: Vec::new(),
        };
        let mut iterations = Vec::new();
        for it in &rec.iterations {
            let it_start = nanos(it.started_at.as_deref())
                .unwrap_or(node.start)
                .max(node.start);
            let mut attrs = vec![
                attr("pipewright.node", s(id)),
                attr("pipewright.iteration", int(it.index as u64)),
                attr("pipewright.attempts", int(u64::from(it.attempts))),
            ];
            if let Some(code) = &it.error_code {
                attrs.push(attr("error.type", s(code)));
            }
            task_attrs(&mut attrs, it.extras.task.as_ref());
            iterations.push(Span {
                id: hex_id(&format!("{}/{id}/{}", t.run_id, it.index), 8),
                parent: span_id.clone(),
                name: format!("{id}[{}]", it.index),
                kind: SPAN_KIND_CLIENT,
                start: it_start,
                end: it_start + ms(it.duration_ms),
                attrs,
                error: (it.status == NodeStatus::Failed)
                    .then(|| it.error.clone().unwrap_or_else(|| "failed".into())),
                ok: it.status == NodeStatus::Ok,
                events: Vec::new(),
            });
        }
        node.end = iterations.iter().map(|c| c.end).fold(node.end, u128::max);
        root.end = root.end.max(node.end);
        children.push(node);
        children.extend(iterations);
    }
    let mut out = vec![root.json(&trace_id)];
    out.extend(children.iter().map(|c| c.json(&trace_id)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::trace::{IterationRecord, NodeRecord};

    fn attrs_of(span: &Value) -> Vec<(String, Value)> {
        span["attributes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                (
                    a["key"].as_str().unwrap_or("").to_owned(),
                    a["value"].clone(),
                )
            })
            .collect()
    }

    fn get(span: &Value, key: &str) -> Option<Value> {
        attrs_of(span)
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    #[test]
    fn a_task_call_carries_its_task_and_its_servers_revision() {
        let task = TaskRecord {
            id: "t-42".into(),
            status: "cancelled".into(),
            message: None,
            cancel_sent: true,
            history: Vec::new(),
        };
        let mut t = Trace {
            run_id: "r1".into(),
            ..Trace::default()
        };
        t.composition.started_at = Some("2026-11-25T10:00:00Z".into());
        t.server_protocols
            .insert("slow".into(), "2026-07-28".into());
        let mut long = NodeRecord {
            tool: "research".into(),
            server: Some("slow".into()),
            status: NodeStatus::Cancelled,
            started_at: Some("2026-11-25T10:00:00Z".into()),
            ..NodeRecord::default()
        };
        long.extras.task = Some(task.clone());
        let mut fan = NodeRecord {
            tool: "research".into(),
            server: Some("other".into()),
            status: NodeStatus::Ok,
            started_at: Some("2026-11-25T10:00:00Z".into()),
            ..NodeRecord::default()
        };
        let mut it = IterationRecord::default();
        it.extras.task = Some(TaskRecord {
            id: "t-7".into(),
            status: "completed".into(),
            ..TaskRecord::default()
        });
        fan.iterations.push(it);
        let plain = NodeRecord {
            tool: "echo".into(),
            server: Some("slow".into()),
            status: NodeStatus::Ok,
            started_at: Some("2026-11-25T10:00:00Z".into()),
            ..NodeRecord::default()
        };
        t.nodes.insert("long".into(), long);
        t.nodes.insert("fan".into(), fan);
        t.nodes.insert("plain".into(), plain);
        let out = export(&[t]);
        let spans = out["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let by_name = |n: &str| {
            spans
                .iter()
                .find(|s| s["name"] == n)
                .cloned()
                .unwrap_or_else(|| panic!("no span {n}"))
        };
        let long = by_name("long research");
        assert_eq!(
            get(&long, "mcp.task.id"),
            Some(json!({"stringValue": "t-42"}))
        );
        assert_eq!(
            get(&long, "mcp.task.status"),
            Some(json!({"stringValue": "cancelled"}))
        );
        assert_eq!(
            get(&long, "mcp.task.cancel_sent"),
            Some(json!({"boolValue": true}))
        );
        assert_eq!(
            get(&long, "mcp.protocol.version"),
            Some(json!({"stringValue": "2026-07-28"}))
        );
        // A server whose revision is not known gets none; a task that was
        // not cancelled has no cancel attribute.
        let fan_span = by_name("fan research");
        assert_eq!(get(&fan_span, "mcp.protocol.version"), None);
        assert_eq!(get(&fan_span, "mcp.task.id"), None);
        let it = by_name("fan[0]");
        assert_eq!(get(&it, "mcp.task.id"), Some(json!({"stringValue": "t-7"})));
        assert_eq!(
            get(&it, "mcp.task.status"),
            Some(json!({"stringValue": "completed"}))
        );
        assert_eq!(get(&it, "mcp.task.cancel_sent"), None);
        // A call that was not a task has no task attributes.
        let plain = by_name("plain echo");
        assert_eq!(get(&plain, "mcp.task.id"), None);
        assert_eq!(
            get(&plain, "mcp.protocol.version"),
            Some(json!({"stringValue": "2026-07-28"}))
        );
    }
}
