//! The follower against session files written as `pipewright record`
//! writes them (`engine::record::session::Writer`, a line flushed at a
//! time): calls become nodes as their answers land, the inference's edges
//! follow, a folder is followed to each new session, and `W`'s writer
//! makes the pipeline `new --from` makes.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, unbounded_channel};

use pipewright_engine::record::session::{End, Header, Server, Side, VERSION, Writer};
use pipewright_engine::redact::Redactor;

use super::*;

/// A session file being written, one exchange at a time.
pub(crate) struct Tape {
    w: Writer<File>,
    id: i64,
}

impl Tape {
    pub(crate) fn create(path: &Path) -> Tape {
        let header = Header {
            version: VERSION,
            started: "2026-11-29T02:00:00Z".into(),
            recorder: "a test".into(),
            server: Server::Stdio {
                name: "demo".into(),
                command: "pipewright".into(),
                args: vec!["demo-server".into()],
            },
            session_id: None,
        };
        let w = Writer::create(path, &header, Redactor::default(), 1 << 20).unwrap();
        Tape { w, id: 0 }
    }

    fn send(&mut self, from: Side, m: Value) {
        self.w
            .message(from, m.to_string().as_bytes(), None)
            .unwrap();
    }

    /// A `tools/call` and its structured result.
    pub(crate) fn call(&mut self, tool: &str, args: Value, out: Value) {
        self.id += 1;
        let id = self.id;
        self.send(
            Side::Client,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}),
        );
        self.send(
            Side::Server,
            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": out.to_string()}], "structuredContent": out}}),
        );
    }

    /// A call that failed.
    pub(crate) fn failed(&mut self, tool: &str) {
        self.id += 1;
        let id = self.id;
        self.send(
            Side::Client,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}}),
        );
        self.send(
            Side::Server,
            json!({"jsonrpc": "2.0", "id": id, "result": {"isError": true, "content": [{"type": "text", "text": "no such user"}]}}),
        );
    }

    pub(crate) fn stderr(&mut self, text: &str) {
        self.w.stderr(text).unwrap();
    }

    pub(crate) fn end(mut self) {
        self.w
            .end(End {
                reason: "client closed stdin".into(),
                exit_code: Some(0),
                signal: None,
            })
            .unwrap();
    }
}

/// A following of `path` with its threads started.
fn started(path: &Path) -> (Following, UnboundedReceiver<Message>) {
    let (f, job) = follow(path, 1, 1 << 20);
    let (tx, rx) = unbounded_channel();
    spawn(job, tx);
    (f, rx)
}

/// Waits for views until one satisfies `want` (notes collected); fails
/// after 30 s naming what it waited for.
fn until(
    f: &Following,
    rx: &mut UnboundedReceiver<Message>,
    what: &str,
    want: impl Fn(&Snapshot) -> bool,
) -> (Snapshot, Vec<String>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut notes = Vec::new();
    loop {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; said: {notes:?}"
        );
        match rx.try_recv() {
            Ok(Message::Recording { generation }) => {
                assert_eq!(generation, 1);
                if let Some(snap) = f.take() {
                    notes.extend(snap.notes.iter().map(|(t, _)| t.clone()));
                    if want(&snap) {
                        return (snap, notes);
                    }
                }
            }
            Ok(_) => {}
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

fn nodes(s: &Snapshot) -> Vec<String> {
    s.view
        .as_ref()
        .map(|v| v.comp.nodes.iter().map(|n| n.id.clone()).collect())
        .unwrap_or_default()
}

fn parents(s: &Snapshot) -> Vec<Vec<usize>> {
    s.view
        .as_ref()
        .map(|v| v.comp.parents.clone())
        .unwrap_or_default()
}

#[test]
fn calls_become_nodes_as_they_are_answered_and_the_inferred_edges_follow() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261129-020000-demo-1.jsonl");
    let mut tape = Tape::create(&path);
    let (f, mut rx) = started(&path);

    tape.call(
        "search_users",
        json!({"query": "ali"}),
        json!({"users": [{"id": "u1", "name": "Alice"}, {"id": "u5", "name": "Alicia"}]}),
    );
    let (first, _) = until(&f, &mut rx, "the first node", |s| nodes(s).len() == 1);
    assert_eq!(nodes(&first), ["search_users"]);

    tape.call(
        "get_user_details",
        json!({"user_id": "u1"}),
        json!({"id": "u1", "email": "alice@example.com"}),
    );
    tape.failed("delete_user");
    tape.stderr("served a call");
    let (edged, _) = until(
        &f,
        &mut rx,
        "the edge search_users → get_user_details",
        |s| parents(s) == [vec![], vec![0]],
    );
    let view = edged.view.as_ref().unwrap();
    assert_eq!(nodes(&edged), ["search_users", "get_user_details"]);
    assert_eq!(view.counts.calls, 3);
    assert_eq!(
        view.counts.failed, 1,
        "the failed call is counted, not drawn"
    );
    assert_eq!(view.counts.references, 1);
    assert_eq!(view.counts.inputs, 1, "the query is an input");
    assert_eq!(view.counts.waiting, 0);
    assert!(
        view.text
            .contains("\"user_id\": \"${search_users.users[0].id}\""),
        "{}",
        view.text
    );
    // The record shows the exchange as a run's would.
    let rec = &view.trace.nodes["get_user_details"];
    assert_eq!(rec.args.tree(), &json!({"user_id": "u1"}));
    assert_eq!(rec.output.tree()["email"], "alice@example.com");
    assert_eq!(rec.calls.len(), 1);
    assert_eq!(
        rec.rpc.tree()["request"]["params"]["name"],
        "get_user_details"
    );
    assert!(
        rec.started_at
            .as_deref()
            .is_some_and(|t| t.starts_with("2026-11-29T02:00:00"))
    );
    assert_eq!(view.trace.server_logs["demo"], "served a call");

    tape.end();
    let (ended, _) = until(&f, &mut rx, "the end", |s| s.ended.is_some());
    assert_eq!(ended.ended.as_deref(), Some("client closed stdin"));
}

#[test]
fn calls_over_a_list_are_one_fan_out_node_with_an_iteration_each() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut tape = Tape::create(&path);
    tape.call(
        "list_items",
        json!({"count": 3}),
        json!([{"id": "item-1"}, {"id": "item-2"}, {"id": "item-3"}]),
    );
    for i in 1..=3 {
        tape.call(
            "echo",
            json!({"message": format!("item-{i}")}),
            json!({"echoed": format!("item-{i}")}),
        );
    }
    let (f, mut rx) = started(&path);
    let (snap, _) = until(&f, &mut rx, "the fan-out", |s| {
        s.view.as_ref().is_some_and(|v| v.counts.fan_outs == 1)
    });
    let view = snap.view.as_ref().unwrap();
    assert_eq!(nodes(&snap), ["list_items", "echo"]);
    assert_eq!(parents(&snap), [vec![], vec![0]]);
    let v = &view.visuals[1];
    assert_eq!(v.progress, Some((3, 3)));
    let rec = v.record.as_ref().unwrap();
    assert_eq!(rec.iterations.len(), 3);
    assert_eq!(rec.iterations[2].args.tree(), &json!({"message": "item-3"}));
    assert_eq!(rec.output.tree().as_array().map(Vec::len), Some(3));
}

#[test]
fn a_folder_is_followed_to_its_newest_session_then_each_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("recordings");
    let (f, mut rx) = started(&rec);
    let (_, said) = until(&f, &mut rx, "the folder's note", |_| true);
    assert!(said[0].starts_with("following "), "{said:?}");
    std::fs::create_dir(&rec).unwrap();
    let mut one = Tape::create(&rec.join("20261129-020000-demo-1.jsonl"));
    one.call("echo", json!({"message": "one"}), json!({"echoed": "one"}));
    let (snap, _) = until(&f, &mut rx, "the first session", |s| nodes(s) == ["echo"]);
    assert!(snap.file.ends_with("20261129-020000-demo-1.jsonl"));
    let mut two = Tape::create(&rec.join("20261129-020100-demo-1.jsonl"));
    two.call("add", json!({"a": 1, "b": 2}), json!({"sum": 3}));
    let (snap, said) = until(&f, &mut rx, "the new session", |s| nodes(s) == ["add"]);
    assert!(snap.file.ends_with("20261129-020100-demo-1.jsonl"));
    assert!(
        said.iter()
            .any(|n| n.contains("20261129-020100-demo-1.jsonl")),
        "{said:?}"
    );
}

#[test]
fn a_file_that_is_not_a_session_is_said_and_left() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.jsonl");
    std::fs::write(&path, "{\"hello\": 1}\n").unwrap();
    let (f, mut rx) = started(&path);
    let (_, said) = until(&f, &mut rx, "the error", |s| !s.notes.is_empty());
    assert!(
        said.iter()
            .any(|n| n.contains(":1: this is not a pipewright session file")),
        "{said:?}"
    );
}

#[test]
fn w_writes_the_pipeline_new_from_writes_from_the_whole_lines_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("20261129-020000-demo-1.jsonl");
    let mut tape = Tape::create(&path);
    tape.call(
        "search_users",
        json!({"query": "ali"}),
        json!({"users": [{"id": "u1"}]}),
    );
    tape.call(
        "get_user_details",
        json!({"user_id": "u1"}),
        json!({"id": "u1", "name": "Alice"}),
    );
    drop(tape);
    // Half a line more, as a recorder writing a long message leaves it.
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(b"{\"at_ms\":9,\"from\":\"client\",\"mess")
        .unwrap();
    let file = free_file(dir.path(), &path);
    assert_eq!(file, dir.path().join("demo.yml"));
    let (tx, mut rx) = unbounded_channel();
    write(
        WriteJob {
            session: path.clone(),
            at: Some(file.clone()),
            file: file.clone(),
            limit: 1 << 20,
        },
        tx,
    );
    let result = loop {
        match rx.try_recv() {
            Ok(Message::RecordingWritten { result }) => break result,
            _ => std::thread::sleep(Duration::from_millis(10)),
        }
    };
    let (written, summary) = result.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(written, file);
    assert!(
        summary[0].starts_with("2 call(s) → 2 node(s)"),
        "{summary:?}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("${search_users.users[0].id}"), "{text}");
    assert!(dir.path().join("demo.yml.cassette.json").exists());
    assert!(!pipewright_engine::file::open::load_str(&text).has_errors());
    // The next one does not overwrite it.
    assert_eq!(free_file(dir.path(), &path), dir.path().join("demo-2.yml"));
}

#[test]
fn pipelines_are_named_after_the_sessions_server() {
    assert_eq!(
        pipeline_name(Path::new("r/20261129-120304-demo-server-1.jsonl")),
        "demo-server"
    );
    assert_eq!(pipeline_name(Path::new("mine.jsonl")), "mine");
    assert!(is_folder(Path::new("/nowhere/recordings")));
    assert!(!is_folder(Path::new("/nowhere/one.jsonl")));
}
