//! A saved run read as a recording: each node that called a tool (each
//! fan-out iteration) is a call, in the order they started, with the
//! result the server gave, the questions it asked and their answers. What
//! the run masked stays masked.
//!
//! A fan-out's iterations keep their outputs, not the server's results
//! (a run saves each result once): the result of such a call is rebuilt
//! from its output, which is the same unless the node had a `transform:`.

use serde_json::{Value, json};

use crate::json::Json;
use crate::mcp::human::CallExtras;
use crate::mcp::output_of;
use crate::mcp::servers::DEMO;
use crate::record::calls::{Call, Recording};
use crate::record::session::{Header, Server, VERSION};
use crate::run::trace::{NodeStatus, Trace};

/// The calls of run `trace` (named `source`); `servers` are the servers
/// its file declared (none: the built-in demo server).
pub fn recording(trace: &Trace, servers: Vec<Server>, source: &str) -> Recording {
    let start = millis(trace.composition.started_at.as_deref()).unwrap_or(0.0);
    let default = servers
        .first()
        .map_or(DEMO.to_owned(), |s| s.name().to_owned());
    let mut rec = Recording {
        source: source.to_owned(),
        header: servers.first().map(|s| Header {
            version: VERSION,
            started: trace.composition.started_at.clone().unwrap_or_default(),
            recorder: format!("pipewright run {}", trace.run_id),
            server: s.clone(),
            session_id: None,
        }),
        servers: if servers.len() > 1 {
            servers
        } else {
            Vec::new()
        },
        ..Recording::default()
    };
    for (key, seen) in &trace.eval_tools {
        let name = key.rsplit('/').next().unwrap_or(key);
        let mut def = json!({"name": name});
        if let Some(d) = &seen.description {
            def["description"] = d.clone().into();
        }
        if let Some(s) = &seen.input_schema {
            def["inputSchema"] = s.clone();
        }
        rec.tools.insert(name.to_owned(), def);
    }
    for (n, (id, node)) in trace.nodes.iter().enumerate() {
        if node.mocked || node.tool.is_empty() {
            continue;
        }
        let server = node.server.clone().unwrap_or_else(|| default.clone());
        let at = millis(node.started_at.as_deref()).map_or(n as f64, |t| t - start);
        let line = n + 1;
        if !node.iterations.is_empty() {
            for it in &node.iterations {
                if it.status != NodeStatus::Ok {
                    continue;
                }
                let result = result_of(it.output.tree());
                rec.calls.push(Call {
                    server: server.clone(),
                    tool: node.tool.clone(),
                    args: it.args.tree().as_object().cloned().unwrap_or_default(),
                    output: output_of(&result),
                    result,
                    is_error: false,
                    at_ms: millis(it.started_at.as_deref()).map_or(at, |t| t - start),
                    duration_ms: it.duration_ms as f64,
                    extras: it.extras.clone(),
                    rounds: 0,
                    line,
                });
            }
            continue;
        }
        match node.status {
            NodeStatus::Ok | NodeStatus::Failed if !node.raw.is_null() => {}
            _ => {
                if node.status == NodeStatus::Failed {
                    rec.notes.push(format!(
                        "{source}: node `{id}` failed before any result ({}); left out",
                        node.error.as_deref().unwrap_or("no reason given")
                    ));
                }
                continue;
            }
        }
        let result = crate::mcp::grown(&node.raw);
        rec.calls.push(Call {
            server,
            tool: node.tool.clone(),
            args: node.args.tree().as_object().cloned().unwrap_or_default(),
            output: output_of(&result),
            is_error: crate::mcp::is_error(&result),
            result,
            at_ms: at,
            duration_ms: node.duration_ms as f64,
            extras: CallExtras {
                interactions: node.extras.interactions.clone(),
                logs: node.extras.logs.clone(),
                progress: node.extras.progress.clone(),
                task: node.extras.task.clone(),
            },
            rounds: 0,
            line,
        });
    }
    rec.calls
        .sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms).then(a.line.cmp(&b.line)));
    rec
}

/// A `CallToolResult` whose output is `output`.
fn result_of(output: &Value) -> Json {
    let v = match output {
        Value::Object(_) => json!({"content": [], "structuredContent": output}),
        Value::String(s) if serde_json::from_str::<Value>(s).is_err() => {
            json!({"content": [{"type": "text", "text": s}]})
        }
        other => json!({"content": [{"type": "text", "text": other.to_string()}]}),
    };
    Json::from_value(v)
}

fn millis(t: Option<&str>) -> Option<f64> {
    let t = time::OffsetDateTime::parse(t?, &time::format_description::well_known::Rfc3339).ok()?;
    Some((t.unix_timestamp_nanos() / 1_000_000) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::trace::{IterationRecord, NodeRecord};

    #[test]
    fn a_saved_runs_nodes_are_its_calls_in_the_order_they_started() {
        let mut t = Trace {
            run_id: "20261129-020000-abcd".into(),
            ..Trace::default()
        };
        t.composition.started_at = Some("2026-11-29T02:00:00Z".into());
        let node = |tool: &str, at: &str, raw: Value| NodeRecord {
            tool: tool.into(),
            status: NodeStatus::Ok,
            args: Json::from_value(json!({"q": tool})),
            raw: Json::from_value(raw),
            started_at: Some(at.into()),
            ..NodeRecord::default()
        };
        t.nodes.insert(
            "b".into(),
            node(
                "second",
                "2026-11-29T02:00:02Z",
                json!({"content": [{"type": "text", "text": "hi"}]}),
            ),
        );
        t.nodes.insert(
            "a".into(),
            node(
                "first",
                "2026-11-29T02:00:01Z",
                json!({"content": [], "structuredContent": {"id": "x1"}}),
            ),
        );
        let mut fan = node("each", "2026-11-29T02:00:03Z", Value::Null);
        fan.iterations = vec![IterationRecord {
            index: 0,
            status: NodeStatus::Ok,
            args: Json::from_value(json!({"id": "x1"})),
            output: Json::from_value(json!("plain words")),
            ..IterationRecord::default()
        }];
        t.nodes.insert("c".into(), fan);
        let mut mocked = node("mocked", "2026-11-29T02:00:00Z", Value::Null);
        mocked.mocked = true;
        t.nodes.insert("m".into(), mocked);
        let rec = recording(&t, Vec::new(), "run 20261129");
        let got: Vec<(&str, &str, Value)> = rec
            .calls
            .iter()
            .map(|c| (c.server.as_str(), c.tool.as_str(), c.output.tree().clone()))
            .collect();
        assert_eq!(
            got,
            [
                ("demo", "first", json!({"id": "x1"})),
                ("demo", "second", json!("hi")),
                ("demo", "each", json!("plain words")),
            ]
        );
        assert_eq!(rec.calls[0].at_ms, 1000.0);
        assert!(rec.header.is_none());
    }
}
