//! `pipewright serve` for newer clients: log messages (`logging/setLevel`,
//! `notifications/message`) on the wire, the official Python SDK client in
//! 2026-07-28 mode (Streamable HTTP and stdio), and compositions run as
//! tasks (the 2026-07-28 Tasks extension) polled and cancelled by it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

mod common;
use common::{Hermetic, ServeHttp, python, root};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pipewright")
}

const LOOKUP: &str = "pipe:\n  - id: find\n    tool: search_users\n    args: { query: \"${var.who}\", limit: 1 }\n  - id: details\n    tool: get_user_details\n    args: { user_id: \"${find.users[0].id}\" }\noutput: details\n";

/// `serve` with its data and config directories in `dir`.
fn serve(dir: &Path) -> Command {
    let mut c = common::pipewright_in(dir);
    c.arg("serve")
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"));
    c
}

/// `serve ARGS FILES --http 127.0.0.1:0`.
fn serve_http(dir: &Path, args: &[&str], files: &[&Path]) -> ServeHttp {
    let mut command = serve(dir);
    command.args(args).args(files);
    ServeHttp::start(command)
}

fn client(args: &[&str]) -> String {
    let out = Command::new(python())
        .hermetic()
        .arg(root().join("tests/interop/serve_client.py"))
        .args(args)
        .output()
        .expect("the client starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

/// The Python SDK's modern mode lists and calls a composition over
/// Streamable HTTP and over stdio, on protocol revision 2026-07-28.
#[test]
fn the_python_sdk_client_in_2026_07_28_mode_lists_and_calls() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lookup.yml");
    std::fs::write(&file, LOOKUP).expect("write");
    let b = bin();
    let (b, f) = (b.to_str().unwrap(), file.to_str().unwrap());
    let http = serve_http(dir.path(), &["--no-save"], &[&file]);
    let text = client(&[b, f, "modern", &http.url]);
    assert!(text.contains("negotiated 2026-07-28"), "{text}");
    assert!(
        text.contains("modern lookup -> Carol Nguyen <carol@example.org>"),
        "{text}"
    );
    let text = client(&[b, f, "modern", "stdio"]);
    assert!(text.contains("negotiated 2026-07-28"), "{text}");
    assert!(text.contains("modern lookup -> Carol Nguyen"), "{text}");
}

/// A client that declares the tasks extension gets a task handle at once;
/// polling shows `working`, then `completed` with the composition's
/// output. `tasks/cancel` mid-run stops it as `cancelled`, and its
/// compensation deletes the entity the first node wrote to the reference
/// memory server (read from the server's own file).
#[test]
fn a_2026_07_28_client_runs_compositions_as_tasks_and_cancel_compensates() {
    let dir = tempfile::tempdir().expect("temp dir");
    let memory_bin = root().join("tests/interop/node_modules/.bin/mcp-server-memory");
    assert!(
        memory_bin.exists(),
        "run `npm ci --prefix tests/interop` first"
    );
    let memory_file = dir.path().join("memory.jsonl");
    let file = dir.path().join("tasks.yml");
    std::fs::write(
        &file,
        format!(
            r#"servers:
  memory: {{ command: "{memory}", env: {{ MEMORY_FILE_PATH: "{mfile}" }} }}
  demo: "{bin} demo-server"
compositions:
  - name: three_steps
    nodes:
      - {{ id: one, server: demo, tool: echo, args: {{ message: a }} }}
      - {{ id: nap1, needs: [one], server: demo, tool: slow, args: {{ ms: 300 }} }}
      - {{ id: two, needs: [one, nap1], server: demo, tool: echo, args: {{ message: "${{one}}b" }} }}
      - {{ id: three, needs: [two], server: demo, tool: echo, args: {{ message: "${{two}}c" }} }}
    output: three
  - name: remember_then_nap
    nodes:
      - id: create
        server: memory
        tool: create_entities
        args: {{ entities: [ {{ name: "${{var.name}}", entityType: person, observations: [ met ] }} ] }}
        compensate:
          server: memory
          tool: delete_entities
          args: {{ entityNames: [ "${{var.name}}" ] }}
      - {{ id: nap, needs: [create], server: demo, tool: slow, args: {{ ms: 20000 }} }}
"#,
            memory = memory_bin.display(),
            mfile = memory_file.display(),
            bin = bin().display(),
        ),
    )
    .expect("write");
    let http = serve_http(dir.path(), &["--yes"], &[&file]);
    let text = client(&[
        bin().to_str().unwrap(),
        file.to_str().unwrap(),
        "tasks",
        &http.url,
        memory_file.to_str().unwrap(),
    ]);
    assert!(text.contains("first poll: working"), "{text}");
    assert!(text.contains("call_tool resolved the task"), "{text}");
    assert!(
        text.contains("task completed -> {'result': 'abc'}"),
        "{text}"
    );
    assert!(
        text.contains("task cancelled; compensation deleted Ada"),
        "{text}"
    );
    // The cancelled run is saved with its compensation.
    let runs = dir.path().join("data");
    let mut found = false;
    for entry in walk(&runs) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        if text.contains("remember_then_nap") && text.contains("delete_entities") {
            found = text.contains("cancelled");
        }
    }
    assert!(found, "no saved trace of the cancelled run under {runs:?}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// One `serve` over stdio spoken to line by line.
struct Raw {
    child: Child,
    stdin: std::process::ChildStdin,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
}

impl Raw {
    fn start(dir: &Path, file: &Path) -> Raw {
        let mut child = serve(dir)
            .arg("--no-save")
            .arg(file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve starts");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Raw {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The messages up to and including the response to `id`.
    fn until(&mut self, id: i64) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let line = self.lines.next().expect("a line").expect("readable");
            let v: Value = serde_json::from_str(&line).expect("json");
            let done = v["id"] == id;
            out.push(v);
            if done {
                return out;
            }
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `logging/setLevel` answers `{}`; a run then sends one
/// `notifications/message` per node end (logger `pipewright`, the node in
/// `data`) before its response. At `error`, a run that succeeds sends none;
/// before any `setLevel`, none either. A 2026-07-28 request opts in with
/// `io.modelcontextprotocol/logLevel` in its `_meta`.
#[test]
fn log_messages_follow_the_level_the_client_set() {
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("steps.yml");
    std::fs::write(
        &f,
        "pipe:\n  - { id: one, tool: echo, args: { message: a } }\n  - { id: two, tool: echo, args: { message: \"${one}b\" } }\n",
    )
    .unwrap();
    let mut s = Raw::start(dir.path(), &f);
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}));
    let init = s.until(1);
    assert!(
        init[0]["result"]["capabilities"]["logging"].is_object(),
        "{init:?}"
    );
    s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: i64| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "steps", "arguments": {}}});
    let logs = |msgs: &[Value]| -> Vec<Value> {
        msgs.iter()
            .filter(|m| m["method"] == "notifications/message")
            .map(|m| m["params"].clone())
            .collect()
    };
    s.send(call(2));
    assert!(logs(&s.until(2)).is_empty(), "no level set: no messages");
    s.send(json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "info"}}));
    let set = s.until(3);
    assert_eq!(set.last().unwrap()["result"], json!({}), "{set:?}");
    s.send(call(4));
    let msgs = s.until(4);
    let got = logs(&msgs);
    let finished: Vec<&str> = got
        .iter()
        .filter(|p| p["data"]["event"] == "node_finished")
        .map(|p| p["data"]["node"].as_str().unwrap())
        .collect();
    assert_eq!(finished, ["one", "two"], "{got:?}");
    assert!(
        got.iter()
            .all(|p| p["logger"] == "pipewright" && p["level"] != "debug"),
        "{got:?}"
    );
    assert!(
        got.iter().any(|p| p["data"]["event"] == "run_finished"),
        "{got:?}"
    );
    s.send(json!({"jsonrpc": "2.0", "id": 5, "method": "logging/setLevel", "params": {"level": "error"}}));
    s.until(5);
    s.send(call(6));
    assert!(logs(&s.until(6)).is_empty(), "at error a good run is quiet");
    // The request's own opt-in wins over the session's level.
    s.send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "steps", "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": "debug"}}}),
    );
    let got = logs(&s.until(7));
    assert!(
        got.iter().any(|p| p["level"] == "debug"
            && p["data"]["event"] == "node_started"
            && p["data"]["node"] == "one"),
        "{got:?}"
    );
}
