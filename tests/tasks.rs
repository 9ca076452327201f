//! Tool calls made as MCP tasks (2025-11-25), against the official
//! reference server's `simulate-research-query` (`taskSupport: required`):
//! over stdio and Streamable HTTP, with the server's question answered from
//! an answers file, cancelled by a timeout (the server confirms
//! `tasks/cancel`), through `tools call`, and recorded then replayed. The
//! listed `taskSupport` (`required`, and `forbidden` on the server's other
//! tools) is shown by `tools list` and checked against a node's `task:` in
//! preflight. The reference server speaks only 2025-11-25; the tests that
//! reach it pin `--protocol 2025-11-25` all the same.

use std::{
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
};

use serde_json::Value;

mod common;
use common::Hermetic;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pipewright"))
}

/// The reference server's entry point; fails the test when it is missing.
fn everything_js() -> PathBuf {
    let root = std::env::var_os("PIPEWRIGHT_INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop"));
    let path = root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        path.exists(),
        "{} is missing: run `npm ci --prefix tests/interop`",
        path.display()
    );
    path
}

fn stdio_server() -> String {
    format!(
        "{{command: node, args: [\"{}\", stdio]}}",
        everything_js().display()
    )
}

/// The reference server over Streamable HTTP on a free port; killed on drop.
struct HttpServer {
    child: Child,
    url: String,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_server() -> HttpServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("no free port: {e}"));
    let mut child = Command::new("node")
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn node: {e}"));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.contains("listening on port") => break,
            Some(Ok(_)) => {}
            other => panic!("the HTTP server did not start: {other:?}"),
        }
    }
    // Keep draining its stderr so it never blocks.
    std::thread::spawn(move || for _ in lines {});
    HttpServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// Every directory pipewright reads, under `dir`, and none of the user's
/// variables.
fn isolated(cmd: &mut Command, dir: &Path) {
    cmd.isolated(dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_DATA_HOME", dir.join("share"));
}

/// `pipewright ARGS…` in `dir`: (exit code, stdout, stderr).
fn pipewright(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(bin());
    cmd.args(args).current_dir(dir);
    isolated(&mut cmd, dir);
    let out = cmd.output().unwrap_or_else(|e| panic!("spawn: {e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `pipewright run FILE --format json --no-save ARGS…`: (code, trace, stderr).
fn run(dir: &Path, file: &Path, extra: &[&str]) -> (i32, Value, String) {
    let file = file.display().to_string();
    let mut args = vec!["run", file.as_str(), "--format", "json", "--no-save"];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = pipewright(dir, &args);
    let trace = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (code, trace, stderr)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    p
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

/// A plain call, the task (whose question the answers file answers), and a
/// plain call reading the task's report.
fn mixed(server: &str) -> String {
    format!(
        "servers:\n  everything: {server}\npipe:\n  - id: hello\n    tool: echo\n    args: {{message: before}}\n  - id: research\n    tool: simulate-research-query\n    timeout: 30s\n    args: {{topic: python, ambiguous: true}}\n  - id: after\n    tool: echo\n    args: {{message: \"after: ${{research}}\"}}\n"
    )
}

const ANSWERS: &str = "research:\n  - accept: {interpretation: snake}\n";

/// The run of [`mixed`] passed: the report (with the answer in it) is the
/// task node's output and reaches the next node; the trace keeps the task.
fn assert_mixed_ok(code: i32, t: &Value, stderr: &str) {
    assert_eq!(code, 0, "{stderr}\n{t}");
    let research = &t["nodes"]["research"];
    let report = research["output"].as_str().unwrap_or_default();
    assert!(
        report.contains("# Research Report: python (snake)"),
        "{research}"
    );
    assert_eq!(t["nodes"]["hello"]["output"], "Echo: before");
    assert!(
        t["output"]
            .as_str()
            .is_some_and(|o| o.contains("after: # Research Report: python (snake)")),
        "{}",
        t["output"]
    );
    let task = &research["task"];
    assert!(
        task["id"].as_str().is_some_and(|id| !id.is_empty()),
        "{task}"
    );
    // Sent as a task at once, from the listed `taskSupport: required`:
    // no plain call was refused first. (A replay rebuilds the request
    // without `params.task`.)
    assert!(
        research["replayed"] == true || research["rpc"]["request"]["params"]["task"].is_object(),
        "{research}"
    );
    let log = t["server_logs"].to_string();
    assert!(!log.contains("refused a plain call"), "{log}");
    assert_eq!(task["status"], "completed", "{task}");
    let statuses = statuses_of(task);
    assert!(statuses.contains(&"input_required"), "{statuses:?}");
    assert_eq!(statuses.last(), Some(&"completed"), "{statuses:?}");
    // The question came through `tasks/result` and was answered from the file.
    let asked = &research["interactions"][0];
    assert_eq!(asked["kind"], "elicitation", "{research}");
    assert_eq!(asked["by"], "answers", "{asked}");
    assert_eq!(asked["reply"]["content"]["interpretation"], "snake");
}

#[test]
fn a_task_tool_mixes_with_plain_tools_over_stdio() {
    let d = tmp();
    let f = write(d.path(), "p.yml", &mixed(&stdio_server()));
    let answers = write(d.path(), "answers.yml", ANSWERS);
    let a = answers.display().to_string();
    let (code, t, stderr) = run(d.path(), &f, &["--answers", &a, "--protocol", "2025-11-25"]);
    assert_mixed_ok(code, &t, &stderr);
}

#[test]
fn a_task_tool_mixes_with_plain_tools_over_http() {
    let server = http_server();
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        &mixed(&format!("{{url: \"{}\"}}", server.url)),
    );
    let answers = write(d.path(), "answers.yml", ANSWERS);
    let a = answers.display().to_string();
    let (code, t, stderr) = run(d.path(), &f, &["--answers", &a, "--protocol", "2025-11-25"]);
    assert_mixed_ok(code, &t, &stderr);
}

/// A node timeout shorter than the task: `tasks/cancel` is sent, and the
/// server's answer (`cancelled`, in its own words) is kept in the trace.
fn timeout_cancels_the_task(server: &str) {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        &format!(
            "servers:\n  everything: {server}\npipe:\n  - id: research\n    tool: simulate-research-query\n    timeout: 1500ms\n    args: {{topic: rust}}\n"
        ),
    );
    let started = std::time::Instant::now();
    let (code, t, stderr) = run(d.path(), &f, &[]);
    assert_ne!(code, 0, "{t}");
    // The task takes 4 s; the node gave up at its timeout.
    assert!(started.elapsed().as_secs_f64() < 4.0, "{stderr}");
    let node = &t["nodes"]["research"];
    assert!(
        node["error"]
            .as_str()
            .is_some_and(|e| e.contains("timed out")),
        "{node}"
    );
    let task = &node["task"];
    assert_eq!(task["cancel_sent"], true, "{task}");
    // The server's own status message for a cancel it received.
    assert_eq!(task["status"], "cancelled", "{task}");
    assert_eq!(
        task["message"], "Client cancelled task execution.",
        "{task}"
    );
    let log = t["server_logs"].to_string();
    assert!(log.contains("sent tasks/cancel for task"), "{log}");
}

#[test]
fn a_timeout_sends_tasks_cancel_over_stdio() {
    timeout_cancels_the_task(&stdio_server());
}

#[test]
fn a_timeout_sends_tasks_cancel_over_http() {
    let server = http_server();
    timeout_cancels_the_task(&format!("{{url: \"{}\"}}", server.url));
}

#[test]
fn tools_call_runs_a_task_tool() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        &format!(
            "servers:\n  everything: {}\npipe:\n  - id: a\n    tool: echo\n    args: {{message: x}}\n",
            stdio_server()
        ),
    );
    let file = f.display().to_string();
    let (code, stdout, stderr) = pipewright(
        d.path(),
        &[
            "tools",
            "call",
            "--file",
            &file,
            "simulate-research-query",
            "--args",
            r#"{"topic": "golang"}"#,
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("# Research Report: golang"), "{stdout}");
}

/// A file with one node calling `tool` with `task: SETTING` on the
/// reference server over stdio; the `task:` value is at line 6, column 11.
fn one_task_node(tool: &str, setting: &str) -> String {
    format!(
        "servers:\n  everything: {}\npipe:\n  - id: a\n    tool: {tool}\n    task: {setting}\n    args: {{topic: rust, message: x}}\n",
        stdio_server()
    )
}

/// `task: false` on a tool listed `taskSupport: required` is a preflight
/// error at the `task:` line: nothing is called.
#[test]
fn task_false_on_a_task_only_tool_is_a_clear_error() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        &one_task_node("simulate-research-query", "false"),
    );
    let (code, t, stderr) = run(d.path(), &f, &["--protocol", "2025-11-25"]);
    assert_eq!(code, 2, "{stderr}\n{t}");
    assert!(
        stderr.contains("p.yml:6:11: error: node `a`: `task: false`, but the server says `simulate-research-query` runs only as a task (`execution.taskSupport: required`)"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was called"), "{stderr}");
    let bad = write(
        d.path(),
        "bad.yml",
        "pipe:\n  - id: a\n    tool: echo\n    task: sometimes\n",
    );
    let (code, _, stderr) = run(d.path(), &bad, &[]);
    assert_ne!(code, 0);
    assert!(
        stderr.contains("`task` must be true, false or auto"),
        "{stderr}"
    );
}

/// The reference server lists `echo` with `taskSupport: forbidden`: `task:
/// true` on it is a preflight error at the `task:` line, in `plan` and in
/// `run` alike, and nothing is called.
#[test]
fn task_true_on_a_forbidden_tool_is_a_preflight_error() {
    let d = tmp();
    let f = write(d.path(), "p.yml", &one_task_node("echo", "true"));
    let file = f.display().to_string();
    let expected = "p.yml:6:11: error: node `a`: `task: true`, but the server says `echo` cannot run as a task (`execution.taskSupport: forbidden`)";
    let (code, stdout, stderr) = pipewright(d.path(), &["plan", &file, "--protocol", "2025-11-25"]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains(expected), "{stderr}");
    let (code, t, stderr) = run(d.path(), &f, &["--protocol", "2025-11-25"]);
    assert_eq!(code, 2, "{stderr}\n{t}");
    assert!(stderr.contains(expected), "{stderr}");
    assert!(stderr.contains("nothing was called"), "{stderr}");
    // `auto` on the same tool is a plain call.
    let f = write(d.path(), "auto.yml", &one_task_node("echo", "auto"));
    let (code, t, stderr) = run(d.path(), &f, &["--protocol", "2025-11-25"]);
    assert_eq!(code, 0, "{stderr}\n{t}");
    assert_eq!(t["nodes"]["a"]["output"], "Echo: x", "{t}");
    assert!(t["nodes"]["a"]["task"].is_null(), "{t}");
}

/// `tools list` shows what each tool's `execution.taskSupport` says, read
/// from the server's own answer (rmcp's tool type drops it).
fn tools_list_shows_task_support(server: &[&str]) {
    let d = tmp();
    let mut args = vec!["tools", "list", "--protocol", "2025-11-25", "--json"];
    args.extend_from_slice(server);
    let (code, stdout, stderr) = pipewright(d.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    let listed: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    let tools = listed["everything"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let support = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["execution"]["taskSupport"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(support("simulate-research-query"), "required", "{stdout}");
    assert_eq!(support("echo"), "forbidden", "{stdout}");
    args.retain(|a| *a != "--json");
    let (code, stdout, stderr) = pipewright(d.path(), &args);
    assert_eq!(code, 0, "{stderr}");
    let line = |name: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        line("simulate-research-query").contains("[task only]"),
        "{stdout}"
    );
    assert!(!line("echo").contains("[task"), "{stdout}");
}

#[test]
fn tools_list_shows_task_support_over_stdio() {
    let everything = everything_js().display().to_string();
    tools_list_shows_task_support(&["--server", &format!("everything=node {everything} stdio")]);
}

#[test]
fn tools_list_shows_task_support_over_http() {
    let server = http_server();
    let arg = format!("everything={}", server.url);
    tools_list_shows_task_support(&["--server", &arg]);
}

#[test]
fn a_recorded_task_call_replays_without_a_server() {
    let d = tmp();
    let f = write(d.path(), "p.yml", &mixed(&stdio_server()));
    let answers = write(d.path(), "answers.yml", ANSWERS);
    let cassette = d.path().join("tasks.cassette.json");
    let (a, c) = (
        answers.display().to_string(),
        cassette.display().to_string(),
    );
    let (code, t, stderr) = run(
        d.path(),
        &f,
        &["--answers", &a, "--record", &c, "--protocol", "2025-11-25"],
    );
    assert_mixed_ok(code, &t, &stderr);
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(&cassette).unwrap_or_else(|e| panic!("cassette: {e}")),
    )
    .unwrap_or_else(|e| panic!("cassette JSON: {e}"));
    let entry = recorded["calls"]
        .as_array()
        .and_then(|calls| {
            calls
                .iter()
                .find(|e| e["tool"] == "simulate-research-query")
        })
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(entry["task"]["status"], "completed", "{recorded}");

    // No answers file, no server: the recorded result is the answer.
    let replay = write(
        d.path(),
        "replay.yml",
        &mixed("{command: /nonexistent/pipewright-no-server}"),
    );
    let started = std::time::Instant::now();
    let (code, t, stderr) = run(d.path(), &replay, &["--replay", &c]);
    assert_mixed_ok(code, &t, &stderr);
    assert_eq!(t["nodes"]["research"]["replayed"], true, "{t}");
    // Nothing polled: far quicker than the task's 4 s.
    assert!(started.elapsed().as_secs_f64() < 3.0);
}

/// A server on the 2026-07-28 Tasks extension (SEP-2663), chosen for it
/// by the file's `protocol:` (`serve` speaks both eras, so `auto` would
/// speak 2025-11-25, whose tasks `serve` offers over HTTP): `pipewright
/// serve`, built on rmcp, answers every `tools/call` of a client that
/// declares the extension with a task handle. pipewright follows it to the
/// result through `tasks/get`, and a timeout sends `tasks/cancel`.
#[test]
fn a_2026_task_server_is_followed_to_the_result_and_cancelled() {
    let d = tmp();
    let served = write(
        d.path(),
        "served.yml",
        &format!(
            "servers:\n  everything: {}\ncompositions:\n  - name: quick\n    nodes:\n      - id: a\n        mock: {{result: \"hi from served\"}}\n    output: a\n  - name: slow\n    nodes:\n      - id: op\n        tool: trigger-long-running-operation\n        args: {{duration: 8, steps: 4}}\n    output: op\n",
            stdio_server()
        ),
    );
    let f = write(
        d.path(),
        "p.yml",
        &format!(
            "servers:\n  s: {{command: \"{}\", args: [serve, --no-save, \"{}\"], protocol: 2026-07-28}}\ncompositions:\n  - name: both\n    nodes:\n      - id: quick\n        tool: quick\n      - id: slow\n        tool: slow\n        timeout: 1500ms\n        on_error: continue\n",
            bin().display(),
            served.display()
        ),
    );
    let (_, t, stderr) = run(d.path(), &f, &[]);
    let quick = &t["nodes"]["quick"];
    assert_eq!(quick["status"], "ok", "{stderr}\n{t}");
    assert_eq!(quick["output"]["result"], "hi from served", "{quick}");
    assert_eq!(quick["task"]["status"], "completed", "{quick}");
    let slow = &t["nodes"]["slow"];
    assert!(
        slow["error"]
            .as_str()
            .is_some_and(|e| e.contains("timed out")),
        "{slow}"
    );
    assert_eq!(slow["task"]["cancel_sent"], true, "{slow}");
    let log = t["server_logs"]["s"].as_str().unwrap_or_default();
    assert!(
        log.contains("sent tasks/cancel for task") && log.contains("the server acknowledged it"),
        "{log}"
    );
}

/// `pipewright demo-server --http --conformance-fixtures` on a free port:
/// the Tasks extension's fixtures (SEP-2663); killed on drop.
fn demo_task_server(dir: &Path) -> HttpServer {
    let mut cmd = Command::new(bin());
    cmd.args([
        "demo-server",
        "--http",
        "127.0.0.1:0",
        "--conformance-fixtures",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    isolated(&mut cmd, dir);
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn: {e}"));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) if line.contains("listening on ") => {
                break line.rsplit(' ').next().unwrap_or_default().to_owned();
            }
            Some(Ok(_)) => {}
            other => panic!("the demo server did not start: {other:?}"),
        }
    };
    std::thread::spawn(move || for _ in lines {});
    HttpServer { child, url }
}

/// The 2026-07-28 Tasks extension against the demo server's fixtures over
/// HTTP: the server makes each of these calls a task (pipewright declares
/// the extension), and pipewright follows it with `tasks/get`. A tool
/// error ends the task `completed` with `isError` (a failed node with the
/// tool's text); a protocol error ends it `failed` (a failed node with
/// the error's message).
#[test]
fn the_demo_servers_task_fixtures_end_as_results_tool_errors_and_protocol_errors() {
    let d = tmp();
    let server = demo_task_server(d.path());
    let f = write(
        d.path(),
        "p.yml",
        &format!(
            "servers:\n  demo: {{url: \"{}\", protocol: 2026-07-28}}\ncompositions:\n  - name: tasks\n    nodes:\n      - id: compute\n        tool: slow_compute\n        args: {{seconds: 1, label: sums}}\n      - id: failing\n        tool: failing_job\n        on_error: continue\n      - id: broken\n        tool: protocol_error_job\n        on_error: continue\n",
            server.url
        ),
    );
    let (_, t, stderr) = run(d.path(), &f, &[]);
    let compute = &t["nodes"]["compute"];
    assert_eq!(compute["status"], "ok", "{stderr}\n{t}");
    assert_eq!(compute["output"], "computed `sums` in 1 s", "{compute}");
    assert_eq!(compute["task"]["status"], "completed", "{compute}");
    let failing = &t["nodes"]["failing"];
    assert_eq!(failing["status"], "failed", "{failing}");
    assert!(
        failing["error"]
            .as_str()
            .is_some_and(|e| e.contains("failing_job failed, as it always does")),
        "{failing}"
    );
    assert_eq!(failing["task"]["status"], "completed", "{failing}");
    let broken = &t["nodes"]["broken"];
    assert_eq!(broken["status"], "failed", "{broken}");
    assert!(
        broken["error"]
            .as_str()
            .is_some_and(|e| e.contains("protocol_error_job broke")),
        "{broken}"
    );
    assert_eq!(broken["task"]["status"], "failed", "{broken}");
}

/// A 2026-07-28 task that asks (`input_required`, its questions in
/// `tasks/get`) is answered from the node's `answers:` with `tasks/update`:
/// one question, then two at once.
#[test]
fn a_2026_tasks_questions_are_answered_with_tasks_update() {
    let d = tmp();
    let server = demo_task_server(d.path());
    let f = write(
        d.path(),
        "p.yml",
        &format!(
            "servers:\n  demo: {{url: \"{}\", protocol: 2026-07-28}}\ncompositions:\n  - name: asks\n    nodes:\n      - id: confirm\n        tool: confirm_delete\n        args: {{filename: notes.txt}}\n        answers: [{{accept: {{confirm: true}}}}]\n      - id: both\n        tool: multi_input\n        answers: [{{accept: {{confirm: true}}}}, {{accept: {{name: Ada}}}}]\n",
            server.url
        ),
    );
    let (code, t, stderr) = run(d.path(), &f, &[]);
    assert_eq!(code, 0, "{stderr}\n{t}");
    let confirm = &t["nodes"]["confirm"];
    assert_eq!(
        confirm["output"], "confirmed: notes.txt would be deleted (nothing was)",
        "{confirm}"
    );
    let statuses = statuses_of(&confirm["task"]);
    assert!(statuses.contains(&"input_required"), "{statuses:?}");
    assert_eq!(statuses.last(), Some(&"completed"), "{statuses:?}");
    assert_eq!(
        confirm["interactions"][0]["kind"], "elicitation",
        "{confirm}"
    );
    assert_eq!(confirm["interactions"][0]["by"], "answers", "{confirm}");
    let both = &t["nodes"]["both"];
    assert_eq!(both["output"], "Ada, confirmed: true", "{both}");
    assert_eq!(
        both["interactions"].as_array().map(Vec::len),
        Some(2),
        "{both}"
    );
}

/// A 2026-07-28 task that asks the same key (`confirm`) again in a second
/// `input_required` spell, after working a moment, is answered both times
/// (a key is taken as already answered only within one spell).
#[test]
fn a_2026_task_that_asks_a_key_again_is_answered_again() {
    let d = tmp();
    let server = demo_task_server(d.path());
    let f = write(
        d.path(),
        "p.yml",
        &format!(
            "servers:\n  demo: {{url: \"{}\", protocol: 2026-07-28}}\ncompositions:\n  - name: twice\n    nodes:\n      - id: twice\n        tool: confirm_twice\n        args: {{filename: notes.txt}}\n        timeout: 30s\n        answers: [{{accept: {{confirm: true}}}}, {{accept: {{confirm: true}}}}]\n",
            server.url
        ),
    );
    let (code, t, stderr) = run(d.path(), &f, &[]);
    assert_eq!(code, 0, "{stderr}\n{t}");
    let twice = &t["nodes"]["twice"];
    assert_eq!(
        twice["output"], "confirmed twice: notes.txt would be deleted (nothing was)",
        "{twice}"
    );
    assert_eq!(
        twice["interactions"].as_array().map(Vec::len),
        Some(2),
        "{twice}"
    );
    let statuses = statuses_of(&twice["task"]);
    let spells = statuses.iter().filter(|s| **s == "input_required").count();
    assert_eq!(spells, 2, "{statuses:?}");
}

/// A 2026-07-28 task whose `tasks/update` the server refuses fails the
/// node with the server's error whole, and pipewright cancels the task:
/// the server, asked afterwards, says it is `cancelled`.
#[test]
fn a_refused_tasks_update_fails_the_node_and_cancels_the_task() {
    let d = tmp();
    let server = demo_task_server(d.path());
    let f = write(
        d.path(),
        "p.yml",
        &format!(
            "servers:\n  demo: {{url: \"{}\", protocol: 2026-07-28}}\ncompositions:\n  - name: refused\n    nodes:\n      - id: code\n        tool: refused_answer\n        timeout: 30s\n        answers: [{{accept: {{code: open}}}}]\n",
            server.url
        ),
    );
    let started = std::time::Instant::now();
    let (code, t, stderr) = run(d.path(), &f, &[]);
    assert_ne!(code, 0, "{stderr}\n{t}");
    // Not left to the node's timeout.
    assert!(started.elapsed().as_secs() < 20, "{t}");
    let node = &t["nodes"]["code"];
    assert_eq!(node["status"], "failed", "{node}");
    let error = node["error"].as_str().unwrap_or_default();
    assert!(error.contains("tasks/update"), "{error}");
    assert!(error.contains("-32602"), "{error}");
    assert!(
        error.contains(
            "refused_answer takes only the code `sesame`, not `open`; the answer was not taken"
        ),
        "{error}"
    );
    assert_eq!(node["task"]["cancel_sent"], true, "{node}");
    let log = t["server_logs"]["demo"].as_str().unwrap_or_default();
    assert!(log.contains("sent tasks/cancel for task"), "{log}");
    let id = node["task"]["id"].as_str().unwrap_or_default();
    assert!(!id.is_empty(), "{node}");
    // Cancelling is cooperative: the task settles a moment later.
    let mut status = Value::Null;
    for _ in 0..50 {
        status = task_status(&server.url, id)["status"].clone();
        if status == "cancelled" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(status, "cancelled");
}

/// The task `id` as the demo server at `url` tells it now (`tasks/get`),
/// asked by a client of the test's own that declares the Tasks extension.
fn task_status(url: &str, id: &str) -> Value {
    use rmcp::{
        ServiceExt,
        model::{
            ClientCapabilities, ClientConfig, ClientRequest, GetTaskParams, GetTaskRequest,
            Implementation, TASKS_EXTENSION_ID,
        },
        transport::StreamableHttpClientTransport,
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut capabilities = ClientCapabilities::default();
        capabilities.extensions =
            Some([(TASKS_EXTENSION_ID.to_owned(), Default::default())].into());
        let config = ClientConfig::new(capabilities, Implementation::new("tasks-test", "0"));
        let client = config
            .serve(StreamableHttpClientTransport::from_uri(url.to_owned()))
            .await
            .expect("connect over HTTP");
        let got = client
            .send_request(ClientRequest::GetTaskRequest(GetTaskRequest::new(
                GetTaskParams::new(id),
            )))
            .await
            .expect("tasks/get");
        let _ = client.cancel().await;
        serde_json::to_value(got).unwrap()
    })
}

/// The statuses a node's task went through, from its trace's `history`.
fn statuses_of(task: &Value) -> Vec<&str> {
    task["history"]
        .as_array()
        .map(|h| h.iter().filter_map(|s| s["status"].as_str()).collect())
        .unwrap_or_default()
}
