//! Provenance on what `serve` answers: the official Python SDK client reads
//! `_meta["io.pipewright/provenance"]` of a served 2-node composition over
//! stdio (handshake era) and Streamable HTTP (2026-07-28), and finds each
//! node's server name and version and the digest of its tool's definition,
//! as `pipewright lock` pinned them; a fan-out stays one entry, secrets stay
//! out, and `run_pipeline` answers with it too.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

mod common;
use common::{Hermetic, ServeHttp, ServeStdio, python, root};

use pipewright_engine::lock;
use pipewright_engine::mcp::ToolInfo;

const KEY: &str = "io.pipewright/provenance";

const LOOKUP: &str = "pipe:\n  - id: find\n    tool: search_users\n    args: { query: \"${var.who}\", limit: 1 }\n  - id: details\n    tool: get_user_details\n    args: { user_id: \"${find.users[0].id}\" }\noutput: details\n";

/// The server each tool of `file` is on, and the digest of its definition
/// as the lock computes it, from what `tools list --json` reads live.
fn tool_digests(file: &Path) -> Vec<(String, String, String)> {
    let out = common::pipewright()
        .args(["tools", "list", "--json", "--file"])
        .arg(file)
        .output()
        .expect("tools list runs");
    assert!(out.status.success(), "{out:?}");
    let listed: Value = serde_json::from_slice(&out.stdout).expect("json");
    let mut digests = Vec::new();
    for (server, v) in listed.as_object().expect("servers") {
        for raw in v["tools"].as_array().expect("tools") {
            let tool = ToolInfo::from_json(raw.clone()).expect("a tool");
            let digest = lock::digest(&lock::definition(&tool));
            digests.push((server.clone(), tool.name.clone(), digest));
        }
    }
    digests
}

/// What the client is to find: the file's and lock's digests, and for
/// each node its server, the demo server's name and version, its tool and
/// the tool's digest.
fn expectation(file: &Path, lock_file: &Path) -> Value {
    let digests = tool_digests(file);
    let node = |id: &str, tool: &str| {
        let (server, _, digest) = digests
            .iter()
            .find(|(_, t, _)| t == tool)
            .unwrap_or_else(|| panic!("the demo server lists {tool}"));
        json!({
            "id": id,
            "server": server,
            "serverInfo": {
                "name": pipewright_demo::SERVER_NAME,
                "version": env!("CARGO_PKG_VERSION"),
            },
            "tool": tool,
            "toolDigest": digest,
        })
    };
    json!({
        "fileDigest": lock::digest_bytes(&std::fs::read(file).expect("file")),
        "lockDigest": lock::digest_bytes(&std::fs::read(lock_file).expect("lock")),
        "nodes": [node("find", "search_users"), node("details", "get_user_details")],
    })
}

/// Runs the Python client; the provenance it printed.
fn client(file: &Path, expect: &Value, where_: &str) -> Value {
    let out = Command::new(python())
        .hermetic()
        .arg(root().join("tests/interop/serve_provenance.py"))
        .arg(assert_cmd::cargo::cargo_bin("pipewright"))
        .arg(file)
        .arg(expect.to_string())
        .arg(where_)
        .output()
        .expect("the client starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("PROVENANCE "))
        .unwrap_or_else(|| panic!("no provenance printed: {text}"));
    serde_json::from_str(line).expect("json")
}

/// `pipewright lock FILE`: the lock beside the file, and its text read.
fn write_lock(file: &Path) -> (std::path::PathBuf, Value) {
    let out = common::pipewright()
        .arg("lock")
        .arg(file)
        .output()
        .expect("lock runs");
    assert!(out.status.success(), "{out:?}");
    let lock_file = file.with_file_name("pipewright.lock");
    let text = std::fs::read(&lock_file).expect("the lock is written");
    (lock_file, serde_json::from_slice(&text).expect("json"))
}

/// Each node of the provenance names what the lock pinned: its server's
/// name and version, and its tool's digest.
fn matches_the_lock(prov: &Value, lock: &Value) {
    for node in prov["nodes"].as_array().expect("nodes") {
        let server = node["server"].as_str().expect("server");
        let pinned = &lock["servers"][server];
        assert_eq!(node["serverInfo"], pinned["serverInfo"], "{node}");
        let tool = node["tool"].as_str().expect("tool");
        assert_eq!(
            node["toolDigest"], pinned["tools"][tool]["digest"],
            "{node}"
        );
    }
}

#[test]
fn the_python_sdk_client_reads_each_nodes_server_version_and_tool_digest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lookup.yml");
    std::fs::write(&file, LOOKUP).expect("write");
    let (lock_file, lock) = write_lock(&file);
    let expect = expectation(&file, &lock_file);

    // Handshake era, stdio (`--no-save`: nothing to open).
    let prov = client(&file, &expect, "stdio");
    matches_the_lock(&prov, &lock);
    assert_eq!(prov["file"], "lookup.yml", "{prov}");
    assert!(prov.get("open").is_none(), "{prov}");
    let find = &prov["nodes"][0];
    assert_eq!(
        find["argsDigest"],
        lock::digest(&json!({"query": "carol", "limit": 1})),
        "{prov}"
    );

    // 2026-07-28, Streamable HTTP, runs saved: the run id opens the run,
    // and its recorded arguments give the digests provenance named.
    let http = ServeHttp::start({
        let mut c = common::pipewright_in(dir.path());
        c.arg("serve").arg(&file);
        c
    });
    let prov = client(&file, &expect, &http.url);
    matches_the_lock(&prov, &lock);
    let id = prov["runId"].as_str().expect("run id");
    assert_eq!(prov["open"], format!("pipewright runs show {id}"), "{prov}");
    let out = common::pipewright_in(dir.path())
        .args(["runs", "show", id, "--format", "json"])
        .output()
        .expect("runs show");
    assert!(out.status.success(), "{out:?}");
    let trace: Value = serde_json::from_slice(&out.stdout).expect("json");
    for node in prov["nodes"].as_array().expect("nodes") {
        let id = node["id"].as_str().expect("id");
        let args = &trace["nodes"][id]["args"];
        assert!(args.is_object(), "{id}: {trace}");
        assert_eq!(node["argsDigest"], lock::digest(args), "{id}");
    }
}

/// Spoken to as a raw client: `serve FILE` with `env`, initialised.
fn raw_serve(dir: &Path, file: &Path, args: &[&str], env: &[(&str, &str)]) -> ServeStdio {
    let mut c = common::pipewright_in(dir);
    c.arg("serve").arg("--no-save").args(args).arg(file);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut s = ServeStdio::start(c);
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    s.send(init, |_| Value::Null);
    s.send(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        |_| Value::Null,
    );
    s
}

fn call(s: &mut ServeStdio, tool: &str, args: Value) -> Value {
    let r = s.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": tool, "arguments": args}}),
        |_| Value::Null,
    );
    assert_eq!(r["result"]["isError"], false, "{r}");
    r["result"]["_meta"][KEY].clone()
}

/// A fan-out is one entry with its count and one digest over its
/// iterations' argument digests; an `${env.X}` secret is masked before the
/// digest, and one too short to mask withholds the digest; no lock beside
/// the file is `lockDigest: null`.
#[test]
fn a_fan_out_is_one_entry_and_secrets_stay_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("fan.yml");
    std::fs::write(
        &file,
        "compositions:\n  - name: fan\n    nodes:\n      - id: items\n        tool: list_items\n        args: { count: 40 }\n      - id: each\n        needs: [items]\n        for_each: \"${items[*]}\"\n        tool: echo\n        args: { message: \"${item.id}\" }\n      - id: secret\n        needs: [each]\n        tool: echo\n        args: { message: \"${env.PW_LONG_SECRET}\" }\n      - id: short\n        needs: [secret]\n        tool: echo\n        args: { message: \"${env.PW_SHORT}\" }\n    output: short\n",
    )
    .expect("write");
    let long = "hunter2-correct-horse";
    let mut s = raw_serve(
        dir.path(),
        &file,
        &[],
        &[("PW_LONG_SECRET", long), ("PW_SHORT", "ab")],
    );
    let prov = call(&mut s, "fan", json!({}));
    let text = prov.to_string();
    assert!(!text.contains(long) && !text.contains("\"ab\""), "{text}");
    assert_eq!(prov["lockDigest"], Value::Null, "{prov}");
    let nodes = prov["nodes"].as_array().expect("nodes");
    let ids: Vec<&str> = nodes.iter().filter_map(|n| n["id"].as_str()).collect();
    assert_eq!(ids, ["items", "each", "secret", "short"], "{prov}");
    let each = &nodes[1];
    assert_eq!(each["calls"], 40, "{each}");
    let folded: Vec<Value> = (0..40)
        .map(|i| Value::String(lock::digest(&json!({ "message": format!("item-{i}") }))))
        .collect();
    assert_eq!(each["argsDigest"], lock::digest(&Value::Array(folded)));
    assert_eq!(
        nodes[2]["argsDigest"],
        lock::digest(&json!({"message": "***"})),
        "the secret is masked before the digest: {prov}"
    );
    assert_ne!(
        nodes[2]["argsDigest"],
        lock::digest(&json!({ "message": long }))
    );
    assert_eq!(nodes[3]["argsDigest"], Value::Null, "{prov}");
    assert!(
        nodes[3]["argsWithheld"]
            .as_str()
            .is_some_and(|w| w.contains("PW_SHORT")),
        "{prov}"
    );
}

/// `run_pipeline` answers with provenance too: the digest of the text
/// sent, no file name and no lock.
#[test]
fn run_pipeline_answers_with_provenance_minus_the_lock() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lookup.yml");
    std::fs::write(&file, LOOKUP).expect("write");
    write_lock(&file);
    let mut s = raw_serve(dir.path(), &file, &["--meta-tool"], &[]);
    let text = "pipe:\n  - id: one\n    tool: echo\n    args: { message: hi }\n";
    let prov = call(&mut s, "run_pipeline", json!({ "pipeline": text }));
    assert_eq!(
        prov["fileDigest"],
        lock::digest_bytes(text.as_bytes()),
        "{prov}"
    );
    assert_eq!(prov["served"], "run_pipeline", "{prov}");
    assert!(prov.get("lockDigest").is_none(), "{prov}");
    assert!(prov.get("file").is_none(), "{prov}");
    let node = &prov["nodes"][0];
    assert_eq!(node["tool"], "echo", "{prov}");
    assert_eq!(node["serverInfo"]["name"], pipewright_demo::SERVER_NAME);
    let echo = tool_digests(&file)
        .into_iter()
        .find(|(_, t, _)| t == "echo")
        .expect("echo");
    assert_eq!(node["toolDigest"], echo.2, "{prov}");
}
