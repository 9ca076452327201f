//! `pipewright run` end to end: the real binary against the real demo
//! server (stdio and Streamable HTTP) and the official reference server,
//! asserting exit codes, reports and traces.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;
use common::{pipewright, pipewright_in};

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pipewright"))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    p
}

/// Runs `pipewright run FILE --format json ARGS…`; returns (exit code, trace, stderr).
fn run_json(file: &Path, extra: &[&str]) -> (i32, Value, String) {
    let home = tmp();
    let out = pipewright_in(home.path())
        .arg("run")
        .arg(file)
        .args(["--format", "json", "--no-save"])
        .args(extra)
        .output()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let trace = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), trace, stderr)
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

#[test]
fn every_example_passes_against_the_demo_server() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let home = tmp();
    for f in files {
        let out = pipewright_in(home.path())
            .args(["run", "--no-save"])
            .arg(&f)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}:\n{stdout}\n{}",
            f.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("0 failed"), "{stdout}");
    }
}

#[test]
fn an_invalid_file_exits_2_with_positions() {
    let d = tmp();
    let f = write(d.path(), "bad.yml", "pipe:\n  - id: a\n    tol: echo\n");
    let (code, _, stderr) = run_json(&f, &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("bad.yml:3:5: error: unknown key `tol`"),
        "{stderr}"
    );
}

#[test]
fn a_server_that_cannot_start_exits_4() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: a\n    tool: echo\n    args: {message: hi}\n",
    );
    let (code, _, stderr) = run_json(&f, &["--server", "x=no-such-server-binary-zz"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("could not start server `x`"), "{stderr}");
}

#[test]
fn an_is_error_result_fails_the_step_with_its_text() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: ok\n    tool: echo\n    args: {message: hi}\n  - id: boom\n    tool: fail\n    args: {message: \"the disk is full\"}\n  - id: after\n    tool: echo\n    args: {message: never}\n",
    );
    let (code, t, _) = run_json(&f, &[]);
    assert_eq!(code, 1);
    assert_eq!(t["nodes"]["boom"]["status"], "failed");
    assert!(
        t["nodes"]["boom"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("the disk is full")
    );
    assert_eq!(t["nodes"]["boom"]["raw"]["isError"], true);
    assert_eq!(t["nodes"]["after"]["status"], "skipped");
    assert_eq!(t["composition"]["status"], "partial");
    assert_eq!(t["failed_step"], "boom");
    assert_eq!(t["completed_step_ids"], serde_json::json!(["ok"]));
}

#[test]
fn a_server_crash_mid_run_keeps_the_trace() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: first\n    tool: echo\n    args: {message: hi}\n  - id: second\n    tool: crash\n  - id: third\n    tool: echo\n    args: {message: never}\n",
    );
    let (code, t, _) = run_json(&f, &["--yes"]);
    assert_eq!(code, 1);
    assert_eq!(t["composition"]["status"], "partial");
    assert_eq!(t["completed_step_ids"], serde_json::json!(["first"]));
    assert_eq!(t["nodes"]["first"]["output"], "hi");
    assert_eq!(t["nodes"]["second"]["status"], "failed");
    assert!(
        t["nodes"]["second"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("closed the connection"),
        "{t}"
    );
    assert_eq!(t["nodes"]["third"]["status"], "skipped");
}

#[test]
fn a_hanging_tool_times_out() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: hang\n    tool: slow\n    args: {ms: 60000}\n    timeout: 500ms\n",
    );
    let (code, t, _) = run_json(&f, &[]);
    assert_eq!(code, 1);
    assert_eq!(t["nodes"]["hang"]["status"], "failed");
    assert!(
        t["nodes"]["hang"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("timed out"),
        "{t}"
    );
}

#[test]
fn retry_counts_attempts() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: recovers\n    tool: flaky\n    args: {key: a, failures: 2}\n    on_error: {retry: {max: 3, backoff: 10ms}}\n  - id: gives_up\n    tool: flaky\n    args: {key: b, failures: 5}\n    on_error: {retry: {max: 2, backoff: 10ms}}\n",
    );
    let (code, t, _) = run_json(&f, &[]);
    assert_eq!(code, 1);
    assert_eq!(t["nodes"]["recovers"]["status"], "ok");
    assert_eq!(t["nodes"]["recovers"]["attempts"], 3);
    assert_eq!(t["nodes"]["recovers"]["output"]["attempts"], 3);
    assert_eq!(t["nodes"]["gives_up"]["status"], "failed");
    assert_eq!(t["nodes"]["gives_up"]["attempts"], 3);
}

#[test]
fn skips_propagate_through_needs() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: echo\n        args: {message: x}\n        when: \"false\"\n      - id: b\n        needs: [a]\n        tool: echo\n        args: {message: \"${a}\"}\n      - id: c\n        needs: [b]\n        tool: echo\n        args: {message: \"${b}\"}\n      - id: free\n        tool: echo\n        args: {message: free}\n    expect:\n      - {target: nodes.c.status, matcher: {exact: skipped}}\n",
    );
    let (code, t, _) = run_json(&f, &[]);
    assert_eq!(code, 0, "{t}");
    assert_eq!(t["nodes"]["b"]["status"], "skipped");
    assert_eq!(t["nodes"]["c"]["status"], "skipped");
    assert_eq!(t["nodes"]["c"]["skip_reason"], "parent `b` was skipped");
    assert_eq!(t["nodes"]["free"]["status"], "ok");
}

#[test]
fn fan_out_keeps_input_order_under_concurrency() {
    let d = tmp();
    // Later items finish first; the output must still follow the input.
    let f = write(
        d.path(),
        "p.yml",
        "compositions:\n  - name: c\n    nodes:\n      - id: delays\n        mock: {result: [400, 300, 200, 100, 0]}\n      - id: wait\n        needs: [delays]\n        for_each: \"${delays}\"\n        max_concurrency: 5\n        tool: slow\n        args: {ms: \"${item}\"}\n        transform: .slept_ms\n    output: wait\n",
    );
    let (code, t, _) = run_json(&f, &[]);
    assert_eq!(code, 0, "{t}");
    assert_eq!(t["output"], serde_json::json!([400, 300, 200, 100, 0]));
    let iters = t["nodes"]["wait"]["iterations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(iters.len(), 5);
    assert!(iters.iter().enumerate().all(|(i, it)| it["index"] == i));
}

#[test]
fn runs_over_streamable_http() {
    let mut server = pipewright()
        .args(["demo-server", "--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stderr = server.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let mut line = String::new();
    let _ = BufReader::new(stderr).read_line(&mut line);
    let url = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{line}");
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/search-then-update.yml");
    let (code, t, stderr) = run_json(&file, &["--url", &url]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(t["nodes"]["notify"]["output"]["status"], "queued");
}

#[test]
fn interop_with_the_reference_server() {
    let root = std::env::var("PIPEWRIGHT_INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop"));
    let entry = root.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "{} is missing: run `npm ci --prefix tests/interop`",
        entry.display()
    );
    let d = tmp();
    let f = write(
        d.path(),
        "interop.yml",
        &format!(
            "servers:\n  everything: {{command: node, args: [\"{}\", stdio]}}\ncompositions:\n  - name: sums\n    nodes:\n      - id: pairs\n        mock: {{result: [{{a: 1, b: 2}}, {{a: 3, b: 4}}, {{a: 5, b: 6}}]}}\n      - id: sums\n        needs: [pairs]\n        server: everything\n        for_each: \"${{pairs}}\"\n        max_concurrency: 3\n        tool: get-sum\n        args: {{a: \"${{item.a}}\", b: \"${{item.b}}\"}}\n        transform: 'capture(\"is (?<n>[0-9]+)\") | .n | tonumber'\n      - id: say\n        needs: [sums]\n        server: everything\n        when: \".parents.sums | length == 3\"\n        tool: echo\n        args: {{message: \"sums: ${{sums}}\"}}\n      - id: quiet\n        needs: [sums]\n        server: everything\n        when: \".parents.sums | add > 100\"\n        tool: echo\n        args: {{message: \"${{sums}}\"}}\n    output: say\n    expect:\n      - {{target: nodes.sums.output, matcher: {{exact: [3, 7, 11]}}}}\n      - {{target: output, matcher: {{contains: \"sums: [3,7,11]\"}}}}\n      - {{target: nodes.quiet.status, matcher: {{exact: skipped}}}}\n",
            entry.display()
        ),
    );
    let (code, t, stderr) = run_json(&f, &[]);
    assert_eq!(code, 0, "{stderr}\n{t}");
    assert!(
        t["expect"]
            .as_array()
            .is_some_and(|e| e.len() == 3 && e.iter().all(|x| x["pass"] == true)),
        "{t}"
    );
}

#[test]
fn secrets_never_reach_the_trace() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: a\n    tool: echo\n    args: {message: \"token=${env.PW_TEST_SECRET}\"}\n",
    );
    let out = pipewright_in(d.path())
        .args(["run", "--format", "json", "--no-save"])
        .arg(&f)
        .env("PW_TEST_SECRET", "hunter2-very-secret")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(text.contains("token=***"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
}

#[test]
fn text_report_ends_with_the_suite_line() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cases.yml");
    let home = tmp();
    let out = pipewright_in(home.path())
        .args(["run", "--no-save"])
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("composition [PASS] lookup [one-match]"),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("ran 3 composition(s): 3 passed, 0 failed")
    );
}

/// `pipewright` with every `PIPEWRIGHT_*` variable and directory it reads
/// set under `dir`, whatever the user exported.
fn isolated(dir: &Path) -> Command {
    let mut c = pipewright_in(dir);
    c.env("XDG_DATA_HOME", dir.join("xdg"))
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("XDG_STATE_HOME", dir.join("xdg"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    c
}

/// `tracing` events reach stderr: by default pipewright's own warnings
/// (here the one about a `PIPEWRIGHT_LOG` that is no filter) and nothing of
/// rmcp; `PIPEWRIGHT_LOG` opens more, as the debug line of a server that
/// ignores the end of its stdin and SIGTERM shows. No subscriber was
/// installed, so every event went nowhere.
#[test]
fn tracing_events_reach_stderr_filtered_by_pipewright_log() {
    let dir = tmp();
    let file = write(
        dir.path(),
        "stubborn.yml",
        &format!(
            "servers:\n  stubborn:\n    command: sh\n    args: [\"-c\", \"trap '' TERM; \\\"$0\\\" demo-server; exec sleep 600\", \"{}\"]\npipe:\n  - id: first\n    tool: echo\n    args: {{message: hello}}\n",
            bin().display()
        ),
    );
    let run = |log: Option<&str>| {
        let mut c = isolated(dir.path());
        c.args(["run", "--no-save", "--shutdown-grace", "100ms"])
            .arg(&file);
        if let Some(l) = log {
            c.env("PIPEWRIGHT_LOG", l);
        }
        let out = c.output().unwrap_or_else(|e| panic!("spawn: {e}"));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let quiet = run(None);
    for noise in ["DEBUG", "INFO", "rmcp"] {
        assert!(!quiet.contains(noise), "{noise} by default: {quiet}");
    }
    let debug = run(Some("pipewright=debug"));
    assert!(
        debug.contains(
            "DEBUG pipewright_engine::mcp::child: server did not exit within the grace after stdin closed"
        ),
        "{debug}"
    );
    assert!(!debug.contains("rmcp"), "{debug}");
    let refused = run(Some("pipewright=loud"));
    assert!(
        refused
            .contains("WARN pipewright_cli::log: PIPEWRIGHT_LOG `pipewright=loud` is not a filter"),
        "{refused}"
    );
}

/// Item 22 of issue 35: `examples/ask.yml` asks a form, a link and a
/// model's reply, answered from `--answers` under both revisions (an
/// input-required result under 2026-07-28, a request on the open call
/// under 2025-11-25). The answers reach the tools' results, and the trace
/// says who gave them.
#[test]
fn the_ask_example_takes_its_replies_from_an_answers_file_in_both_revisions() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ask.yml");
    let d = tmp();
    let answers = write(
        d.path(),
        "answers.yml",
        "confirm:\n  - accept: {signature: Ada, tone: formal, send: true}\n\
         connect:\n  - accept\n\
         draft:\n  - sample: \"Thanks, Ada. See you at the launch.\"\n",
    );
    // `auto` speaks 2025-11-25 to the demo server, which speaks both eras.
    for (protocol, negotiated) in [
        ("auto", "2025-11-25"),
        ("2026-07-28", "2026-07-28"),
        ("2025-11-25", "2025-11-25"),
    ] {
        let answers = answers.display().to_string();
        let (code, t, stderr) =
            run_json(&example, &["--answers", &answers, "--protocol", protocol]);
        assert_eq!(code, 0, "{protocol}: {stderr}");
        assert_eq!(t["server_protocols"]["demo"], negotiated, "{stderr}");
        let nodes = &t["nodes"];
        assert_eq!(
            nodes["confirm"]["output"],
            serde_json::json!({"to": "ada@example.test", "action": "accept",
                               "signature": "Ada", "tone": "formal", "send": true}),
            "{protocol}"
        );
        assert_eq!(nodes["connect"]["output"]["connected"], true, "{protocol}");
        assert_eq!(
            nodes["draft"]["output"]["text"], "Thanks, Ada. See you at the launch.",
            "{protocol}"
        );
        assert_eq!(nodes["send"]["status"], "ok", "{protocol}");
        for id in ["confirm", "connect", "draft"] {
            let asked = &nodes[id]["interactions"];
            assert_eq!(asked.as_array().map(Vec::len), Some(1), "{protocol} {id}");
            assert_eq!(asked[0]["by"], "answers", "{protocol} {id}");
        }
        assert_eq!(nodes["draft"]["interactions"][0]["kind"], "sampling");
    }
}

/// With nobody to answer (off a terminal, no answers file) the form and the
/// link are declined and the tools say so; the example still passes.
#[test]
fn the_ask_example_with_nobody_to_answer_is_declined_and_passes() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/ask.yml");
    let (code, t, stderr) = run_json(&example, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(t["nodes"]["confirm"]["output"]["action"], "decline");
    assert_eq!(t["nodes"]["connect"]["output"]["connected"], false);
    assert_eq!(t["nodes"]["confirm"]["interactions"][0]["by"], "nobody");
    assert_eq!(t["nodes"]["send"]["status"], "skipped");
}
