//! Questions crossing `pipewright serve`: a served composition's node is
//! asked for a name by its upstream server — `hitl_server.py`'s `ask_name`
//! asks mid-call the 2025 way (`ctx.elicit`; the server runs the SDK's
//! default way, both eras, and `auto` speaks 2025 to it), `modern_server.py`'s `greet`
//! answers with an input-required result (2026-07-28) — and the agent that
//! called the served tool answers: the official Python SDK client in
//! 2026-07-28 mode through serve's own input-required results, the official
//! TypeScript SDK client (2025-11-25) through serve's `elicitation/create`
//! requests. The upstream tool echoes the answer, and the saved run records
//! that the agent gave it. A client that declared no elicitation is
//! declined, as before.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;
use common::{Hermetic, ServeHttp, python, root, succeeds};

fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pipewright")
}

/// The served file: `ask` (a node whose server asks mid-call) and `greet`
/// (a node whose server answers with an input-required result); `sum` (a
/// node whose server asks for a model's message mid-call).
fn served_file(dir: &Path) -> PathBuf {
    let py = python();
    let interop = root().join("tests/interop");
    let text = format!(
        "vars: {{ who: nobody }}\nservers:\n  hitl:\n    command: {py}\n    args: [{hitl}, dual]\n  modern:\n    command: {py}\n    args: [{modern}, stdio]\n    protocol: 2026-07-28\ncompositions:\n  - name: ask\n    nodes:\n      - id: asked\n        server: hitl\n        tool: ask_name\n        args: {{ who: \"${{var.who}}\" }}\n    output: asked\n  - name: greet\n    nodes:\n      - id: greeted\n        server: modern\n        tool: greet\n    output: greeted\n  - name: sum\n    nodes:\n      - id: summed\n        server: hitl\n        tool: summarize\n        args: {{ text: \"a long text\" }}\n    output: summed\n",
        py = py.display(),
        hitl = interop.join("hitl_server.py").display(),
        modern = interop.join("modern_server.py").display(),
    );
    let file = dir.join("asking.yml");
    std::fs::write(&file, text).expect("write the file");
    file
}

/// A command with pipewright's data, config and XDG directories in `dir`.
fn isolated(mut c: Command, dir: &Path) -> Command {
    c.isolated(dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"));
    c
}

/// `serve FILE --http 127.0.0.1:0`, isolated under `dir`.
fn serve_http(dir: &Path, file: &Path) -> ServeHttp {
    let mut command = isolated(Command::new(bin()), dir);
    command.arg("serve").arg(file);
    ServeHttp::start(command)
}

fn python_client(dir: &Path, file: &Path, where_: &str) -> String {
    let mut c = isolated(Command::new(python()), dir);
    c.arg(root().join("tests/interop/serve_asking_client.py"))
        .arg(bin())
        .arg(file)
        .arg(where_);
    succeeds(&mut c)
}

fn ts_client(dir: &Path, file: &Path, where_: &str, mode: &str) -> String {
    let sdk = root().join("tests/interop/node_modules/@modelcontextprotocol/sdk/package.json");
    assert!(
        sdk.exists(),
        "{} is missing: run `npm ci --prefix tests/interop`",
        sdk.display()
    );
    let mut c = isolated(Command::new("node"), dir);
    c.arg(root().join("tests/interop/serve-asking-client.mjs"))
        .arg(bin())
        .arg(file)
        .arg(where_)
        .arg(mode);
    let text = succeeds(&mut c);
    assert!(text.contains("all checks passed"), "{text}");
    assert!(!text.contains("FAIL"), "{text}");
    text
}

/// The run id on the output line that starts with `prefix`.
fn run_of(text: &str, prefix: &str) -> String {
    let line = text
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line `{prefix}…` in:\n{text}"));
    line.rsplit(" run ").next().expect("a run id").to_owned()
}

/// The one question node `node` of saved run `id` was asked.
fn interaction(dir: &Path, id: &str, node: &str) -> Value {
    let out = isolated(Command::new(bin()), dir)
        .args(["runs", "show", id, "--format", "json"])
        .output()
        .expect("runs show");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace: Value = serde_json::from_slice(&out.stdout).expect("json");
    let asked = &trace["nodes"][node]["interactions"];
    assert_eq!(asked.as_array().map(Vec::len), Some(1), "{trace:#}");
    asked[0].clone()
}

/// Checks the saved runs of the `ask` and `greet` calls on `text`'s
/// lines: each node's question, and the answer `by` gave.
fn saved_answers(dir: &Path, text: &str, (ask, greet): (&str, &str), by: &str) {
    let asked = interaction(dir, &run_of(text, "ask -> "), "asked");
    assert_eq!(asked["kind"], "elicitation");
    assert_eq!(asked["server"], "hitl");
    assert_eq!(asked["by"], by, "{asked:#}");
    assert_eq!(asked["reply"]["content"]["name"], ask, "{asked:#}");
    let greeted = interaction(dir, &run_of(text, "greet -> "), "greeted");
    assert_eq!(greeted["server"], "modern");
    assert_eq!(greeted["request"]["message"], "What is your name?");
    assert_eq!(greeted["by"], by, "{greeted:#}");
    assert_eq!(greeted["reply"]["content"]["name"], greet, "{greeted:#}");
}

/// The Python SDK client in 2026-07-28 mode, its elicitation callback
/// answering: serve returns the node's question as an input-required
/// result, the SDK answers it and calls again, and the upstream server
/// gets the agent's answer (its tool echoes it), over stdio and Streamable
/// HTTP. Driving the rounds by hand, a changed or forged `requestState`,
/// one for another tool and a used one are refused with a clear error, and
/// an oversized answer is refused while the run keeps waiting.
#[test]
fn the_python_sdk_client_in_2026_07_28_mode_answers_input_required_results() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = served_file(dir.path());
    let http = serve_http(dir.path(), &file);
    for where_ in ["stdio", http.url.as_str()] {
        let text = python_client(dir.path(), &file, where_);
        assert!(
            text.contains(r#"ask -> {"who": "agent", "name": "Ada (Name for agent)"}"#),
            "{text}"
        );
        assert!(
            text.contains(r#"greet -> {"greeting": "Hello, Ada (What is your name?)!""#),
            "{text}"
        );
        assert!(text.contains("asked q1: Name for hand"), "{text}");
        assert_eq!(
            text.matches(
                "forged state refused: `requestState` was not issued by this server for this tool"
            )
            .count(),
            3,
            "{text}"
        );
        assert!(
            text.contains("state of another tool refused: `requestState` was not issued"),
            "{text}"
        );
        assert!(
            text.contains("oversized answer refused: `inputResponses.q1`: the answer is 300041 bytes; at most 262144 are taken"),
            "{text}"
        );
        assert!(
            text.contains(r#"by hand -> {"who": "hand", "name": "Hand"}"#),
            "{text}"
        );
        assert!(
            text.contains("replayed state refused: no run is waiting on this `requestState`"),
            "{text}"
        );
        saved_answers(
            dir.path(),
            &text,
            ("Ada (Name for agent)", "Ada (What is your name?)"),
            "agent",
        );
        let by_hand = interaction(dir.path(), &run_of(&text, "by hand -> "), "asked");
        assert_eq!(by_hand["by"], "agent");
        assert_eq!(by_hand["reply"]["content"]["name"], "Hand");
    }
}

/// The TypeScript SDK client (2025-11-25) with an elicitation handler:
/// serve sends it `elicitation/create` on its session while the call runs,
/// and relays its answer to the upstream server, over stdio and
/// Streamable HTTP; a sampling request goes to it as
/// `sampling/createMessage` and its message reaches the server.
#[test]
fn the_typescript_sdk_client_in_2025_11_25_answers_serves_elicitation_and_sampling() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = served_file(dir.path());
    let http = serve_http(dir.path(), &file);
    for where_ in ["stdio", http.url.as_str()] {
        let text = ts_client(dir.path(), &file, where_, "answer");
        assert!(
            text.contains(r#"ask -> {"who":"ts","name":"Lin (Name for ts)"}"#),
            "{text}"
        );
        saved_answers(
            dir.path(),
            &text,
            ("Lin (Name for ts)", "Lin (What is your name?)"),
            "agent",
        );
        // Sampling the same way: the agent writes the model's message.
        assert!(
            text.contains(r#"sum -> {"summary":"short","model":"ts-model"} error false"#),
            "{text}"
        );
        let sampled = interaction(dir.path(), &run_of(&text, "sum -> "), "summed");
        assert_eq!(sampled["kind"], "sampling");
        assert_eq!(sampled["by"], "agent", "{sampled:#}");
        assert_eq!(sampled["reply"]["content"]["text"], "short");
        assert_eq!(sampled["reply"]["model"], "ts-model");
    }
}

/// A 2025-11-25 client that declared no elicitation is not asked: the
/// node's question is declined as before, and the saved run says nobody
/// answered.
#[test]
fn a_client_without_the_capability_gets_a_decline() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = served_file(dir.path());
    let text = ts_client(dir.path(), &file, "stdio", "none");
    assert!(
        text.contains(r#"ask -> {"who":"ts","action":"decline"}"#),
        "{text}"
    );
    let asked = interaction(dir.path(), &run_of(&text, "ask -> "), "asked");
    assert_eq!(asked["by"], "nobody", "{asked:#}");
    assert_eq!(asked["reply"]["action"], "decline");
    let greeted = interaction(dir.path(), &run_of(&text, "greet -> "), "greeted");
    assert_eq!(greeted["by"], "nobody", "{greeted:#}");
    let sampled = interaction(dir.path(), &run_of(&text, "sum -> "), "summed");
    assert_eq!(sampled["kind"], "sampling");
    assert_eq!(sampled["by"], "nobody", "{sampled:#}");
}
