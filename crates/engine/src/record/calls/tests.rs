use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::record::session::{Server, VERSION};
use crate::record::testing::{Script, result_of, text_result, tool};

fn header() -> Header {
    Header {
        version: VERSION,
        started: "2026-11-29T02:00:00Z".into(),
        recorder: "t".into(),
        server: Server::Http {
            name: "web".into(),
            url: "http://127.0.0.1:1/mcp".into(),
        },
        session_id: None,
    }
}

fn msg(at_ms: f64, from: Side, v: Value) -> Line {
    Line::Message {
        at_ms,
        from,
        message: Json::from_value(v),
        http: None,
    }
}

#[test]
fn calls_are_paired_and_everything_else_dropped() {
    let mut s = Script::new(
        "2025-11-25",
        vec![tool("echo", json!({"message": {"type": "string"}}))],
    );
    s.call("echo", json!({"message": "hi"}), json!({"message": "hi"}));
    s.call_raw("echo", json!({"message": "plain"}), text_result("plain"));
    let rec = s.recording();
    assert_eq!(rec.protocol.as_deref(), Some("2025-11-25"));
    assert_eq!(rec.server(), "demo");
    assert!(rec.tools.contains_key("echo"));
    assert_eq!(rec.calls.len(), 2);
    assert_eq!(rec.calls[0].tool, "echo");
    assert_eq!(rec.calls[0].args["message"], "hi");
    assert_eq!(rec.calls[0].output.tree(), &json!({"message": "hi"}));
    assert_eq!(rec.calls[1].output.tree(), &json!("plain"));
    assert_eq!(rec.dropped.discovery, 1);
    assert_eq!(rec.dropped.pings, 1);
    assert_eq!(rec.dropped.listings, 1);
    assert_eq!(rec.dropped.notifications, 1);
    assert!(rec.notes.is_empty(), "{:?}", rec.notes);
}

#[test]
fn an_input_required_call_folds_into_one_with_its_answers() {
    let mut s = Script::new("2026-07-28", Vec::new());
    let form = json!({"method": "elicitation/create", "params": {"mode": "form", "message": "Send?",
        "requestedSchema": {"type": "object", "properties": {"send": {"type": "boolean"}}}}});
    s.call_input_required(
        "confirm_send",
        json!({"to": "ada@example.com"}),
        json!({"answer": form}),
        json!({"answer": {"action": "accept", "content": {"send": true}}}),
        result_of(json!({"to": "ada@example.com", "action": "accept", "send": true})),
    );
    let rec = s.recording();
    assert_eq!(rec.calls.len(), 1, "{:?}", rec.notes);
    let c = &rec.calls[0];
    assert_eq!(c.rounds, 1);
    assert_eq!(
        c.args,
        json!({"to": "ada@example.com"})
            .as_object()
            .cloned()
            .unwrap()
    );
    assert_eq!(c.extras.interactions.len(), 1);
    let i = &c.extras.interactions[0];
    assert_eq!(i.kind, "elicitation");
    assert_eq!(i.request["message"], "Send?");
    assert_eq!(i.reply["content"]["send"], true);
    assert_eq!(rec.dropped.folded, 1);
}

#[test]
fn a_2025_question_during_a_call_is_kept_with_it() {
    let mut s = Script::new("2025-11-25", Vec::new());
    s.call_asking(
        "draft_reply",
        json!({"to": "ada", "topic": "lunch"}),
        &[(
            "sampling/createMessage",
            json!({"messages": [], "maxTokens": 200, "_meta": {"x": 1}}),
            json!({"role": "assistant", "content": {"type": "text", "text": "Sure!"}, "model": "m1"}),
        )],
        result_of(json!({"to": "ada", "action": "accept", "text": "Sure!"})),
    );
    let rec = s.recording();
    assert_eq!(rec.calls.len(), 1);
    let c = &rec.calls[0];
    assert_eq!(c.extras.interactions.len(), 1);
    assert_eq!(c.extras.interactions[0].kind, "sampling");
    assert!(c.extras.interactions[0].request.get("_meta").is_none());
    assert_eq!(c.extras.progress.len(), 1);
}

#[test]
fn a_task_and_its_polls_fold_into_one_call() {
    let mut s = Script::new("2025-11-25", Vec::new());
    s.call_task(
        "research",
        json!({"q": "rust"}),
        2,
        result_of(json!({"answer": 42})),
    );
    let rec = s.recording();
    assert_eq!(rec.calls.len(), 1, "{:?}", rec.notes);
    let c = &rec.calls[0];
    assert_eq!(c.output.tree(), &json!({"answer": 42}));
    let task = c.extras.task.as_ref().unwrap();
    assert_eq!(task.id, "task-7f3a");
    assert_eq!(task.status, "completed");
    assert!(task.history.iter().any(|h| h.status == "working"));
    assert_eq!(rec.dropped.folded, 4);
}

#[test]
fn a_2026_task_completes_with_its_result_inline() {
    let lines = vec![
        msg(
            1.0,
            Side::Client,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {}}}),
        ),
        msg(
            2.0,
            Side::Server,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "task", "taskId": "t1", "status": "working"}}),
        ),
        msg(
            3.0,
            Side::Client,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": "t1"}}),
        ),
        msg(
            9.0,
            Side::Server,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"taskId": "t1", "status": "completed", "result": {"content": [], "structuredContent": {"ok": true}}}}),
        ),
    ];
    let rec = pair(header(), "h.jsonl", lines.into_iter().zip(2..)).unwrap();
    assert_eq!(rec.calls.len(), 1);
    assert_eq!(rec.calls[0].output.tree(), &json!({"ok": true}));
    assert_eq!(rec.calls[0].duration_ms, 8.0);
    assert_eq!(rec.calls[0].server, "web");
}

#[test]
fn calls_come_in_the_order_they_were_sent_and_loose_ends_are_noted() {
    let lines = vec![
        msg(
            1.0,
            Side::Client,
            json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "one"}}),
        ),
        msg(
            2.0,
            Side::Client,
            json!({"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"name": "two"}}),
        ),
        msg(
            3.0,
            Side::Server,
            json!({"jsonrpc": "2.0", "id": "b", "result": {"content": []}}),
        ),
        msg(
            4.0,
            Side::Server,
            json!({"jsonrpc": "2.0", "id": "a", "result": {"content": [], "isError": true}}),
        ),
        msg(
            5.0,
            Side::Client,
            json!({"jsonrpc": "2.0", "id": "c", "method": "tools/call", "params": {"name": "three"}}),
        ),
        msg(
            6.0,
            Side::Server,
            json!({"jsonrpc": "2.0", "id": "zz", "result": {}}),
        ),
        Line::TooLarge {
            at_ms: 7.0,
            from: Side::Server,
            bytes: 99,
        },
    ];
    let rec = pair(header(), "h.jsonl", lines.into_iter().zip(2..)).unwrap();
    let tools: Vec<&str> = rec.calls.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(tools, ["one", "two"]);
    assert!(rec.calls[0].is_error);
    let notes = rec.notes.join("\n");
    assert!(
        notes.contains("h.jsonl:6: `three` got no result"),
        "{notes}"
    );
    assert!(
        notes.contains("h.jsonl:7: an answer to request \"zz\""),
        "{notes}"
    );
    assert!(
        notes.contains("h.jsonl:8: a message from the server of 99 bytes"),
        "{notes}"
    );
}

#[test]
fn a_client_that_never_discovers_names_its_revision_in_each_request() {
    // The Python SDK's 2026-07-28 client sends `tools/list` first, with
    // its revision in `_meta`, and no `server/discover`.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
    let lines = vec![
        msg(
            1.0,
            Side::Client,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}),
        ),
        msg(
            2.0,
            Side::Server,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": []}}),
        ),
        msg(
            3.0,
            Side::Client,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "hi"}, "_meta": meta}}),
        ),
        msg(
            4.0,
            Side::Server,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"resultType": "complete", "content": []}}),
        ),
    ];
    let rec = pair(header(), "h.jsonl", lines.into_iter().zip(2..)).unwrap();
    assert_eq!(rec.protocol.as_deref(), Some("2026-07-28"));
    assert_eq!(rec.calls.len(), 1);
    // A session that discovers keeps what discovery said.
    let mut s = Script::new(
        "2025-11-25",
        vec![tool("echo", json!({"message": {"type": "string"}}))],
    );
    s.call("echo", json!({"message": "hi"}), json!({"message": "hi"}));
    assert_eq!(s.recording().protocol.as_deref(), Some("2025-11-25"));
}

#[test]
fn a_bad_message_is_an_error_with_its_file_and_line() {
    let lines = vec![msg(
        1.0,
        Side::Client,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}),
    )];
    let e = pair(header(), "h.jsonl", lines.into_iter().zip(5..)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "h.jsonl:5: a `tools/call` without a tool `name`"
    );
    let lines = vec![msg(
        1.0,
        Side::Client,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": [1]}}),
    )];
    let e = pair(header(), "h.jsonl", lines.into_iter().zip(3..)).unwrap_err();
    assert!(
        e.to_string().starts_with("h.jsonl:3: the `arguments`"),
        "{e}"
    );
    let e = pair(
        header(),
        "h.jsonl",
        vec![(msg(1.0, Side::Client, json!(3)), 2)],
    )
    .unwrap_err();
    assert_eq!(e.line, 2);
}

#[test]
fn a_session_file_with_a_bad_line_names_it() {
    let mut bytes = Script::new("2025-11-25", Vec::new()).bytes();
    bytes.extend_from_slice(b"{not json\n");
    let reader = Reader::new(&bytes[..], 1 << 20).unwrap();
    let e = read(reader, "x.jsonl").unwrap_err();
    assert!(e.to_string().starts_with("x.jsonl:9: "), "{e}");
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..5).prop_map(Value::from),
        prop_oneof![
            Just("tools/call"),
            Just("tasks/get"),
            Just("tasks/result"),
            Just("x"),
            Just("t1"),
            Just("input_required"),
            Just("task"),
            Just("elicitation/create")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("id"),
                        Just("method"),
                        Just("params"),
                        Just("result"),
                        Just("name"),
                        Just("arguments"),
                        Just("taskId"),
                        Just("resultType"),
                        Just("inputRequests"),
                        Just("inputResponses"),
                        Just("requestState"),
                        Just("task"),
                        Just("content"),
                        Just("error"),
                        Just("_meta"),
                        Just("progressToken")
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

proptest! {
    /// No sequence of messages panics pairing.
    #[test]
    fn no_session_panics_pairing(msgs in prop::collection::vec((any::<bool>(), any_json()), 0..30)) {
        let lines = msgs.into_iter().enumerate().map(|(i, (client, v))| {
            let from = if client { Side::Client } else { Side::Server };
            (msg(i as f64, from, v), i + 2)
        });
        let _ = pair(header(), "p.jsonl", lines);
    }

    /// No bytes after a header panic the reader.
    #[test]
    fn no_bytes_panic_the_reader(tail in prop::collection::vec(any::<u8>(), 0..300)) {
        let mut bytes = Script::new("2025-11-25", Vec::new()).bytes();
        bytes.extend_from_slice(&tail);
        if let Ok(reader) = Reader::new(&bytes[..], 4096) {
            let _ = read(reader, "p.jsonl");
        }
    }
}
