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

use crate::engine::run::trace::{NodeStatus, RunStatus, Trace};

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
        name: format!("pipewright {}", crate::engine::run::store::label(t)),
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
        }
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
