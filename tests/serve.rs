//! `pipewright serve` driven by real MCP clients: the official TypeScript
//! SDK (over stdio and Streamable HTTP, upstreams the demo server and the
//! reference memory server) and the official Python SDK (over stdio).

use std::path::PathBuf;
use std::process::Command;

mod common;
use common::{Hermetic, python, root, succeeds};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pipewright")
}

fn ts_client(mode: &str) {
    let sdk = root().join("tests/interop/node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(
        sdk.exists(),
        "{} is missing: run `npm ci --prefix tests/interop`",
        sdk.display()
    );
    let text = succeeds(
        Command::new("node")
            .hermetic()
            .arg(root().join("tests/interop/serve-client.mjs"))
            .arg(bin())
            .arg(mode),
    );
    assert!(text.contains("all passed"), "{text}");
    assert!(!text.contains("FAIL"), "{text}");
}

#[test]
fn the_typescript_sdk_client_over_stdio() {
    ts_client("stdio");
}

#[test]
fn the_typescript_sdk_client_over_streamable_http() {
    ts_client("http");
}

/// 200 agents that connect, call once and close without an HTTP DELETE
/// (the TypeScript SDK's `close()`), against the default limits (64
/// sessions): each takes the slot of a session its agent left.
#[test]
fn two_hundred_typescript_agents_that_never_close_their_session_are_all_served() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("say.yml");
    std::fs::write(
        &file,
        "pipe:\n  - id: say\n    tool: echo\n    args: { message: \"${var.message}\" }\noutput: say\n",
    )
    .expect("write");
    let text = succeeds(
        Command::new("node")
            .hermetic()
            .arg(root().join("tests/interop/serve-many-agents.mjs"))
            .arg(bin())
            .arg(&file)
            .arg("200"),
    );
    assert!(text.contains("served 200 of 200"), "{text}");
    assert!(text.contains("limit 64"), "{text}");
}

#[test]
fn the_python_sdk_client_calls_a_served_tool_over_stdio() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lookup.yml");
    std::fs::write(
        &file,
        "pipe:\n  - id: find\n    tool: search_users\n    args: { query: \"${var.who}\", limit: 1 }\n  - id: details\n    tool: get_user_details\n    args: { user_id: \"${find.users[0].id}\" }\noutput: details\n",
    )
    .expect("write");
    let text = succeeds(
        Command::new(python())
            .hermetic()
            .arg(root().join("tests/interop/serve_client.py"))
            .arg(bin())
            .arg(&file),
    );
    assert!(
        text.contains("lookup -> Carol Nguyen <carol@example.org>"),
        "{text}"
    );
}

fn pw() -> assert_cmd::Command {
    assert_cmd::Command::from_std(common::pipewright())
}

/// Preflight at start: a node calling a tool the server lacks stops
/// `serve` with the usual diagnostic, and nothing is served.
#[test]
fn serve_refuses_to_start_when_preflight_finds_a_problem() {
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("bad.yml");
    std::fs::write(
        &f,
        "pipe:\n  - id: a\n    tool: serch_users\n    args: { query: x }\n",
    )
    .unwrap();
    let out = pw().arg("serve").arg(&f).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.yml:3:"), "{err}");
    assert!(err.contains("did you mean `search_users`?"), "{err}");
    assert!(err.contains("nothing is served"), "{err}");
}

/// A run a caller makes is saved like any other, so it can be opened
/// afterwards; `--meta-tool` runs an inline pipeline against the same
/// servers. The client here is pipewright's own (`tools call`).
#[test]
fn served_runs_are_saved_and_the_meta_tool_runs_inline_pipelines() {
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("lookup.yml");
    std::fs::write(
        &f,
        "pipe:\n  - id: find\n    tool: search_users\n    args: { query: \"${var.who}\", limit: 1 }\noutput: find\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let server = format!("s={} serve --meta-tool {}", bin().display(), f.display());
    // `tools call TOOL --args ARGS` on the served tools, in this data dir.
    let call = |tool: &str, args: &str| {
        pw().env("PIPEWRIGHT_DATA_DIR", &data)
            .args(["tools", "call", tool, "--server", &server, "--args", args])
            .output()
            .expect("runs")
    };
    let out = call("lookup", r#"{"who":"bob"}"#);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list = pw()
        .env("PIPEWRIGHT_DATA_DIR", &data)
        .args(["runs", "list", "--format", "json"])
        .output()
        .expect("runs");
    let rows: serde_json::Value = serde_json::from_slice(&list.stdout).expect("json");
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows:#}");
    assert_eq!(rows[0]["status"], "completed");
    let inline = serde_json::json!({
        "pipeline": "pipe:\n  - id: a\n    tool: add\n    args: { a: \"${var.x}\", b: 2 }\n",
        "vars": { "x": 40 }
    });
    let out = call("run_pipeline", &inline.to_string());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("\"sum\": 42"), "{text}");
    let destructive = serde_json::json!({
        "pipeline": "pipe:\n  - id: a\n    tool: delete_user\n    args: { user_id: u1 }\n"
    });
    let out = call("run_pipeline", &destructive.to_string());
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
}

/// On the wire: with a `progressToken`, one `notifications/progress` per
/// node (progress = nodes done, total = nodes, message = the node), all
/// before the response.
#[test]
fn progress_notifications_precede_the_response_on_the_wire() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("steps.yml");
    std::fs::write(
        &f,
        "pipe:\n  - { id: one, tool: echo, args: { message: a } }\n  - { id: two, tool: echo, args: { message: \"${one}b\" } }\n  - { id: three, tool: echo, args: { message: \"${two}c\" } }\n",
    )
    .unwrap();
    let mut child = common::pipewright()
        .args(["serve", "--no-save"])
        .arg(&f)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut send = |v: serde_json::Value| {
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    let init = lines.next().unwrap().unwrap();
    assert!(init.contains("\"id\":1"), "{init}");
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    for round in 0..20 {
        let id = 10 + round;
        send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "steps", "arguments": {}, "_meta": {"progressToken": format!("p{round}")}}}),
        );
        let mut progress = Vec::new();
        loop {
            let line = lines.next().expect("a line").expect("readable");
            let v: serde_json::Value = serde_json::from_str(&line).expect("json");
            if v["id"] == id {
                assert_eq!(v["result"]["structuredContent"]["result"], "abc", "{v}");
                break;
            }
            assert_eq!(v["method"], "notifications/progress", "{v}");
            assert_eq!(v["params"]["progressToken"], format!("p{round}"));
            progress.push((
                v["params"]["progress"].as_f64().unwrap(),
                v["params"]["total"].as_f64().unwrap(),
                v["params"]["message"].as_str().unwrap().to_owned(),
            ));
        }
        assert_eq!(
            progress,
            [
                (1.0, 3.0, "one".to_owned()),
                (2.0, 3.0, "two".to_owned()),
                (3.0, 3.0, "three".to_owned())
            ],
            "round {round}"
        );
    }
    drop(stdin);
    let _ = child.wait();
}

/// Two files whose compositions would be served under one name stop
/// `serve` at start, naming both files.
#[test]
fn a_tool_name_clash_between_files_is_a_start_up_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let text = "compositions:\n  - name: \"look up\"\n    nodes:\n      - { id: a, tool: echo, args: { message: hi } }\n";
    let a = dir.path().join("a.yml");
    let b = dir.path().join("b.yml");
    std::fs::write(&a, text).unwrap();
    std::fs::write(&b, text).unwrap();
    let out = pw().arg("serve").arg(&a).arg(&b).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("two tools would be named `look_up`"), "{err}");
    assert!(err.contains("a.yml") && err.contains("b.yml"), "{err}");
}
