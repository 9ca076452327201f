//! A saved run turned into a cassette (`runs export ID --cassette`, History
//! `E` `c`): every call the run made, so `run --replay` answers the same
//! calls with no server.
//!
//! ([`from_trace`]; reached as `cassette::export`, so `cassette` does not
//! import this file back.)
//!
//! - One entry per attempt that got an answer, in the run's order (the
//!   cassette file is then written in its stable order; a replay answers
//!   the n-th same call with the n-th entry, so a retried call replays its
//!   failures and then its success).
//! - Arguments are the request's (else the node's or the iteration's),
//!   canonical as the recorder writes them.
//! - Results are the server's, as kept in the trace; a fan-out iteration
//!   that succeeded keeps only its output, so its result is rebuilt as
//!   `structuredContent` (the output) plus one text block of the same JSON,
//!   which replays to the same output.
//! - Mocked nodes made no call: no entry. Calls that got no answer
//!   (transport errors, timeouts) have none either, as when recording.
//!   `compensate:` calls are not exported.
//! - The trace is masked already, so the cassette carries `***` where the
//!   run had a secret.
//! - `tools`: a run keeps no `tools/list`, and a replay's preflight needs
//!   each called tool to exist, so each server gets one minimal entry per
//!   tool it was called with (`inputSchema` an empty object schema; the
//!   description and schema the judge was shown, when the run kept them).

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::{Cassette, Entry, VERSION, canonical};
use crate::json::Json;
use crate::mcp::grown;
use crate::mcp::human::CallExtras;
use crate::run::trace::{NodeRecord, Trace};

/// The cassette that replays `trace`'s calls.
pub fn from_trace(trace: &Trace) -> Cassette {
    let default = default_server(trace);
    let mut calls = Vec::new();
    for rec in trace.nodes.values() {
        if rec.mocked {
            continue;
        }
        let server = rec.server.clone().unwrap_or_else(|| default.clone());
        let first = calls.len();
        for (args, result, duration_ms, extras) in answers(rec) {
            let is_error = result.tree().get("isError").and_then(Value::as_bool) == Some(true);
            calls.push(Entry {
                server: server.clone(),
                tool: rec.tool.clone(),
                args: canonical(&args),
                result,
                is_error,
                duration_ms,
                cost_usd: 0.0,
                tokens: 0,
                model: rec.model.clone(),
                interactions: extras.interactions,
                logs: extras.logs,
                progress: extras.progress,
                task: extras.task,
            });
        }
        // The node's cost and tokens, spread over its entries.
        let n = calls.len() - first;
        if n > 0 {
            let mut tokens = rec.tokens;
            for (i, e) in calls[first..].iter_mut().enumerate() {
                e.cost_usd = rec.cost_usd / n as f64;
                e.tokens = if i + 1 == n {
                    tokens
                } else {
                    rec.tokens / n as u64
                };
                tokens -= e.tokens;
            }
        }
    }
    let mut tools: IndexMap<String, Vec<Value>> = IndexMap::new();
    for e in &calls {
        let list = tools.entry(e.server.clone()).or_default();
        if list.iter().any(|t| t["name"] == e.tool.as_str()) {
            continue;
        }
        let seen = trace
            .eval_tools
            .get(&format!("{}/{}", e.server, e.tool))
            .or_else(|| trace.eval_tools.get(&e.tool));
        let mut t = json!({ "name": e.tool, "inputSchema": { "type": "object" } });
        if let Some(seen) = seen {
            if let Some(d) = &seen.description {
                t["description"] = Value::from(d.as_str());
            }
            if let Some(s) = &seen.input_schema {
                t["inputSchema"] = s.clone();
            }
        }
        list.push(t);
    }
    Cassette {
        version: VERSION,
        tools,
        calls,
        judge: Vec::new(),
    }
}

/// The server a node that names none called: the only server the run
/// spoke to, else the built-in demo server.
fn default_server(trace: &Trace) -> String {
    match trace.server_protocols.keys().collect::<Vec<_>>().as_slice() {
        [only] => (*only).clone(),
        _ => crate::mcp::servers::DEMO.to_owned(),
    }
}

/// Each answered call of `rec`: its arguments, result, duration and what
/// the server sent during it.
fn answers(rec: &NodeRecord) -> Vec<(Value, Json, u64, CallExtras)> {
    let mut out = Vec::new();
    if rec.calls.is_empty() {
        // A run saved before attempts were kept: one call per node or
        // per iteration.
        if rec.iterations.is_empty() {
            if !rec.raw.is_null() {
                out.push((
                    rec.args.tree().clone(),
                    grown(&rec.raw),
                    rec.duration_ms,
                    rec.extras.clone(),
                ));
            }
        } else {
            for it in &rec.iterations {
                if it.error.is_none() {
                    out.push((
                        it.args.tree().clone(),
                        rebuilt(&it.output),
                        it.duration_ms,
                        it.extras.clone(),
                    ));
                }
            }
        }
        return out;
    }
    for call in &rec.calls {
        let last = call.attempt == call.of;
        let it = call.iteration.and_then(|i| rec.iterations.get(i));
        let result = if !call.raw.is_null() {
            grown(&call.raw)
        } else if !last {
            continue;
        } else if let Some(it) = it {
            if it.error.is_some() {
                continue;
            }
            rebuilt(&it.output)
        } else if !rec.raw.is_null() && call.iteration.is_none() {
            grown(&rec.raw)
        } else {
            continue;
        };
        let args = call
            .rpc
            .tree()
            .pointer("/request/params/arguments")
            .cloned()
            .or_else(|| it.map(|it| it.args.tree().clone()))
            .unwrap_or_else(|| rec.args.tree().clone());
        let extras = match (last, it) {
            (false, _) => CallExtras::default(),
            (true, Some(it)) => it.extras.clone(),
            (true, None) => rec.extras.clone(),
        };
        out.push((args, result, call.duration_ms, extras));
    }
    out
}

/// A result that replays to `output`: it as `structuredContent`, and one
/// text block of the same JSON for clients that read text.
fn rebuilt(output: &Json) -> Json {
    let value = output.tree().clone();
    let mut m = Map::new();
    m.insert(
        "content".into(),
        json!([{ "type": "text", "text": value.to_string() }]),
    );
    m.insert("structuredContent".into(), value);
    Json::from_value(Value::Object(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::output_of;
    use crate::run::trace::{AttemptRecord, IterationRecord, NodeStatus};

    fn attempt(iteration: Option<usize>, attempt: u32, of: u32, raw: Value) -> AttemptRecord {
        AttemptRecord {
            iteration,
            attempt,
            of,
            status: if raw.is_null() {
                NodeStatus::Ok
            } else {
                NodeStatus::Failed
            },
            raw: raw.into(),
            duration_ms: 2,
            ..AttemptRecord::default()
        }
    }

    fn node(id: &str, tool: &str, args: Value) -> NodeRecord {
        NodeRecord {
            id: id.into(),
            tool: tool.into(),
            args: args.into(),
            status: NodeStatus::Ok,
            ..NodeRecord::default()
        }
    }

    #[test]
    fn a_plain_a_retried_and_a_fanned_out_call_become_entries() {
        let ok = json!({"content": [{"type": "text", "text": "{\"echo\":\"hi\"}"}], "structuredContent": {"echo": "hi"}});
        let failed = json!({"isError": true, "content": [{"type": "text", "text": "busy"}]});
        let mut plain = node("plain", "echo", json!({"message": "hi"}));
        plain.raw = ok.clone().into();
        plain.calls = vec![attempt(None, 1, 1, Value::Null)];
        let mut retried = node("retried", "flaky", json!({"b": 1, "a": 2}));
        retried.server = Some("other".into());
        retried.raw = ok.clone().into();
        retried.cost_usd = 0.5;
        retried.tokens = 3;
        retried.calls = vec![
            attempt(None, 1, 2, failed.clone()),
            attempt(None, 2, 2, Value::Null),
        ];
        let mut fan = node("fan", "get_user_details", json!({"user_id": "${item.id}"}));
        fan.iterations = (0..2)
            .map(|i| IterationRecord {
                index: i,
                status: NodeStatus::Ok,
                args: json!({"user_id": i}).into(),
                output: json!({"id": i, "tags": ["x"]}).into(),
                ..IterationRecord::default()
            })
            .collect();
        fan.calls = vec![
            attempt(Some(0), 1, 1, Value::Null),
            attempt(Some(1), 1, 1, Value::Null),
        ];
        let mut mocked = node("mocked", "echo", json!({}));
        mocked.mocked = true;
        mocked.output = json!("canned").into();
        let mut trace = Trace::default();
        trace
            .server_protocols
            .insert("demo".into(), "2025-11-25".into());
        for rec in [plain, retried, fan, mocked] {
            trace.nodes.insert(rec.id.clone(), rec);
        }

        let c = from_trace(&trace);
        let got: Vec<(String, String, Value, bool)> = c
            .calls
            .iter()
            .map(|e| (e.server.clone(), e.tool.clone(), e.args.clone(), e.is_error))
            .collect();
        let row = |s: &str, t: &str, a: Value, err: bool| (s.to_owned(), t.to_owned(), a, err);
        assert_eq!(
            got,
            [
                row("demo", "echo", json!({"message": "hi"}), false),
                row("other", "flaky", json!({"a": 2, "b": 1}), true),
                row("other", "flaky", json!({"a": 2, "b": 1}), false),
                row("demo", "get_user_details", json!({"user_id": 0}), false),
                row("demo", "get_user_details", json!({"user_id": 1}), false),
            ]
        );
        // Canonical: keys sorted, as the recorder writes them.
        assert_eq!(c.calls[1].args.to_string(), r#"{"a":2,"b":1}"#);
        assert_eq!(c.calls[0].result.tree(), &ok);
        assert_eq!(c.calls[1].result.tree(), &failed);
        assert_eq!(c.calls[2].result.tree(), &ok);
        for (e, i) in c.calls[3..].iter().zip(0..) {
            assert_eq!(
                output_of(&e.result).tree(),
                &json!({"id": i, "tags": ["x"]})
            );
        }
        assert!((c.calls[1].cost_usd + c.calls[2].cost_usd - 0.5).abs() < 1e-9);
        assert_eq!(c.calls[1].tokens + c.calls[2].tokens, 3);
        // Each called tool exists for a replay's preflight.
        let names =
            |s: &str| -> Vec<Value> { c.tools[s].iter().map(|t| t["name"].clone()).collect() };
        assert_eq!(names("demo"), [json!("echo"), json!("get_user_details")]);
        assert_eq!(names("other"), [json!("flaky")]);
    }
}
