//! `serve --locked` and `worker --locked` (and `lock: strict`) against a
//! server built with the official Python SDK whose tool `greet` changes
//! between two starts, or mid-serve: a changed locked tool stops the start
//! naming the composition, the tool and the change; one changed between
//! calls is refused before it is called; an unchanged server serves, with
//! its provenance matching the lock.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

mod common;
use common::{ServeStdio, python, root};

use pipewright_engine::lock;

/// A file serving `hello` (greet) and `mutate` from the drifting server,
/// `extra` put before `compositions:`; its folder is `dir`.
fn drifting_file(dir: &Path, extra: &str) -> PathBuf {
    let file = dir.join("greet.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  drift:\n    command: {}\n    args: [{}]\n{extra}compositions:\n  - name: hello\n    nodes:\n      - id: hi\n        tool: greet\n        args: {{ name: \"${{var.who}}\" }}\n  - name: mutate\n    nodes:\n      - id: change\n        tool: mutate\n",
            python().display(),
            root().join("tests/interop/serve_drift_server.py").display()
        ),
    )
    .expect("write");
    file
}

/// `pipewright ARGS` with the server's `PW_DRIFT`, stdin closed (so a
/// `serve` that does start ends at once, its handshake never made: exit
/// 1); killed after 60 s.
fn pipewright(dir: &Path, drift: &str, args: &[&str]) -> Output {
    let mut child = common::pipewright_in(dir)
        .args(args)
        .env("PW_DRIFT", drift)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pipewright starts");
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

fn lock_file(dir: &Path, file: &Path) {
    let out = pipewright(dir, "", &["lock", file.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{out:?}");
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn serve_locked_refuses_to_start_when_a_locked_tool_changed_and_names_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = drifting_file(dir.path(), "");
    lock_file(dir.path(), &file);
    let f = file.to_str().expect("utf-8");

    // Unchanged: served, nothing said about the lock.
    let out = pipewright(dir.path(), "", &["serve", "--locked", "--no-save", f]);
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("2 tool(s): hello, mutate"), "{err}");
    assert!(!err.contains("lock"), "{err}");

    // The description rewritten: preflight has nothing against it; the
    // lock does.
    let out = pipewright(
        dir.path(),
        "described",
        &["serve", "--locked", "--no-save", f],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`hello` is refused"), "{err}");
    assert!(err.contains("tool `greet` on server `drift`"), "{err}");
    assert!(err.contains("description"), "{err}");
    assert!(!err.contains("pipewright serve: "), "nothing served: {err}");

    // An argument renamed.
    let out = pipewright(
        dir.path(),
        "renamed",
        &["serve", "--locked", "--no-save", f],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`hello` is refused"), "{err}");
    assert!(err.contains("tool `greet` on server `drift`"), "{err}");
    assert!(err.contains("`name`") && err.contains("`who`"), "{err}");
    assert!(!err.contains("pipewright serve: "), "nothing served: {err}");

    // Turned destructive (served with --yes, so only the lock refuses it).
    let out = pipewright(
        dir.path(),
        "destructive",
        &["serve", "--locked", "--yes", "--no-save", f],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`hello` is refused"), "{err}");
    assert!(err.contains("destructiveHint"), "{err}");

    // Without --locked the change is a warning at the node, and served.
    let out = pipewright(dir.path(), "described", &["serve", "--no-save", f]);
    let err = stderr(&out);
    assert_ne!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("warning: node `hi`: tool `greet`"), "{err}");
    assert!(err.contains("tool `greet` on server `drift`"), "{err}");
    assert!(err.contains("2 tool(s): hello, mutate"), "{err}");
}

#[test]
fn lock_strict_in_the_file_refuses_as_locked_does_and_locked_needs_a_lock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = drifting_file(dir.path(), "lock: strict\n");
    let f = file.to_str().expect("utf-8");
    let out = pipewright(dir.path(), "", &["serve", "--locked", "--no-save", f]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--locked: there is no pipewright.lock beside"),
        "{err}"
    );
    lock_file(dir.path(), &file);
    let out = pipewright(dir.path(), "described", &["serve", "--no-save", f]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`hello` is refused"), "{err}");
}

#[test]
fn worker_locked_refuses_to_start_when_a_locked_tool_changed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = drifting_file(dir.path(), "");
    lock_file(dir.path(), &file);
    let out = pipewright(
        dir.path(),
        "described",
        &[
            "worker",
            "--locked",
            "--no-register",
            "--listen",
            "127.0.0.1:0",
            file.to_str().expect("utf-8"),
        ],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`hello` is refused"), "{err}");
    assert!(err.contains("tool `greet` on server `drift`"), "{err}");
}

/// `tools/call` with `id`.
fn call(s: &mut ServeStdio, id: i64, tool: &str, args: Value) -> Value {
    s.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": args}}),
        |_| Value::Null,
    )
}

/// A tool changed between calls (`mutate` rewrites `greet` and says so)
/// is refused before it is called: the next call's run fails its node
/// before the call, and a call after that is refused outright, naming
/// the tool and the change.
#[test]
fn a_locked_tool_changed_while_serving_is_refused_before_the_next_call() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = drifting_file(dir.path(), "");
    lock_file(dir.path(), &file);
    let lock_text = std::fs::read(dir.path().join("pipewright.lock")).expect("lock");
    let lock_json: Value = serde_json::from_slice(&lock_text).expect("json");
    let mut cmd = common::pipewright_in(dir.path());
    cmd.args(["serve", "--locked", "--no-save"]).arg(&file);
    let mut s = ServeStdio::start(cmd);
    s.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        |_| Value::Null,
    );
    s.send(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        |_| Value::Null,
    );

    let r = call(&mut s, 1, "hello", json!({"who": "ann"}));
    assert_eq!(r["result"]["isError"], false, "{r}");
    let prov = &r["result"]["_meta"]["io.pipewright/provenance"];
    assert_eq!(prov["lockDigest"], lock::digest_bytes(&lock_text), "{prov}");
    assert_eq!(
        prov["nodes"][0]["toolDigest"], lock_json["servers"]["drift"]["tools"]["greet"]["digest"],
        "{prov}"
    );
    assert_eq!(prov["nodes"][0]["serverInfo"]["name"], "drifting", "{prov}");
    assert_eq!(prov["nodes"][0]["serverInfo"]["version"], "1.0.0", "{prov}");

    let r = call(&mut s, 2, "mutate", json!({}));
    assert_eq!(r["result"]["isError"], false, "{r}");

    // The run that first reads the changed list fails its node before the
    // call; any call after is refused before its run starts.
    let r = call(&mut s, 3, "hello", json!({"who": "bob"}));
    let text = r.to_string();
    assert!(
        r["result"]["isError"] == true || r.get("error").is_some(),
        "{r}"
    );
    assert!(
        text.contains("greet") && text.contains("description"),
        "{r}"
    );
    assert!(!text.contains("hello bob"), "greet was not called: {r}");
    let r = call(&mut s, 4, "hello", json!({"who": "cy"}));
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("`hello` is refused"), "{r}");
    assert!(message.contains("tool `greet` on server `drift`"), "{r}");
    assert!(message.contains("description"), "{r}");
}
