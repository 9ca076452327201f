//! `pipewright run --step` and `--break NODE` end to end: the real binary
//! against the built-in demo server, answers typed on stdin, and the JSON
//! trace and stderr checked.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

mod common;

fn write(dir: &Path, text: &str) -> PathBuf {
    let p = dir.join("pipe.yml");
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    p
}

/// Runs `pipewright run FILE --format json --no-save ARGS…` with `stdin`;
/// returns (exit code, trace, stderr).
fn run(text: &str, args: &[&str], stdin: &str) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let file = write(dir.path(), text);
    let out = Command::from_std(common::pipewright_in(dir.path()))
        .arg("run")
        .arg(&file)
        .args(["--format", "json", "--no-save"])
        .args(args)
        .write_stdin(stdin)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let trace = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), trace, stderr)
}

const THREE: &str = r#"
pipe:
  - id: first
    tool: echo
    args: { message: "one" }
  - id: second
    tool: echo
    args: { message: "two ${first}" }
  - id: third
    tool: echo
    args: { message: "three ${second}" }
"#;

fn prompts(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("⏸")).collect()
}

fn status<'a>(trace: &'a Value, id: &str) -> &'a str {
    trace["nodes"][id]["status"].as_str().unwrap_or("?")
}

#[test]
fn step_asks_after_every_node_and_enter_goes_on() {
    let (code, trace, stderr) = run(THREE, &["--step"], "\n\n\n");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(trace["composition"]["status"], "completed");
    assert_eq!(trace["output"], "three two one");
    let asked = prompts(&stderr);
    // After every node, the last one too: it may still be re-run.
    assert_eq!(asked.len(), 3, "{stderr}");
    assert!(asked[0].contains("next: second"), "{stderr}");
    assert!(asked[0].contains("r re-run first"), "{stderr}");
    assert!(asked[1].contains("next: third"), "{stderr}");
    assert!(asked[2].contains("after third"), "{stderr}");
    assert!(asked[2].contains("r re-run third"), "{stderr}");
    // Each prompt comes after its node's line and before the next node's.
    let at = |needle: &str| {
        stderr
            .find(needle)
            .unwrap_or_else(|| panic!("`{needle}` not in {stderr}"))
    };
    assert!(at("✓ first") < at("⏸ next: second"));
    assert!(at("⏸ next: second") < at("✓ second"));
}

#[test]
fn r_reruns_the_node_that_just_failed() {
    // `flaky` fails once per key, so the re-run succeeds; `continue` lets
    // the run go on either way.
    let text = r#"
pipe:
  - id: shaky
    tool: flaky
    args: { key: "step-rerun", failures: 1 }
  - id: after
    tool: echo
    args: { message: "after ${shaky.attempts}" }
"#;
    let (code, trace, stderr) = run(text, &["--step"], "r\n\n\n");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(status(&trace, "shaky"), "ok", "{stderr}");
    assert!(stderr.contains("✗ shaky"), "{stderr}");
    assert!(stderr.contains("✓ shaky"), "{stderr}");
    assert_eq!(trace["nodes"]["after"]["output"], "after 2");
    assert_eq!(trace["composition"]["status"], "completed");
}

#[test]
fn s_skips_the_next_node() {
    let text = r#"
pipe:
  - id: first
    tool: echo
    args: { message: "one" }
  - id: second
    tool: echo
    args: { message: "two" }
  - id: third
    tool: echo
    args: { message: "three" }
"#;
    let (code, trace, stderr) = run(text, &["--step"], "s\n\n\n");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(status(&trace, "second"), "skipped");
    assert_eq!(
        trace["nodes"]["second"]["skip_reason"],
        "skipped by the user"
    );
    assert_eq!(status(&trace, "third"), "ok");
    let asked = prompts(&stderr);
    assert!(asked.len() >= 2, "{stderr}");
    assert!(asked[0].contains("s skip second"), "{stderr}");
    assert!(asked[1].contains("next: third"), "{stderr}");
}

#[test]
fn q_cancels_the_run() {
    let (code, trace, stderr) = run(THREE, &["--step"], "q\n");
    assert_eq!(code, 130, "{stderr}");
    assert_eq!(trace["composition"]["status"], "cancelled");
    assert_eq!(status(&trace, "first"), "ok");
    assert_eq!(status(&trace, "second"), "skipped");
}

#[test]
fn break_pauses_before_the_node_and_enter_resumes() {
    let (code, trace, stderr) = run(THREE, &["--break", "third"], "\n");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(trace["composition"]["status"], "completed");
    let paused = stderr
        .find("paused before third")
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        stderr.find("✓ second").is_some_and(|i| i < paused),
        "{stderr}"
    );
    assert!(
        stderr.find("✓ third").is_some_and(|i| i > paused),
        "{stderr}"
    );
    assert_eq!(
        prompts(&stderr)
            .iter()
            .filter(|l| l.contains("next: third"))
            .count(),
        1,
        "{stderr}"
    );
}

#[test]
fn break_then_s_skips_the_breakpointed_node() {
    let (code, trace, stderr) = run(
        THREE.replace("${second}", "x").as_str(),
        &["--break", "second"],
        "s\n\n",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(status(&trace, "second"), "skipped");
    assert_eq!(status(&trace, "third"), "ok");
}

#[test]
fn stdin_ending_lets_the_run_go_on() {
    let (code, trace, stderr) = run(THREE, &["--step", "--break", "second"], "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(trace["composition"]["status"], "completed");
}

#[test]
fn break_on_an_unknown_node_is_a_usage_error() {
    let (code, _, stderr) = run(THREE, &["--break", "nope"], "");
    assert_eq!(code, 2);
    assert!(stderr.contains("--break `nope`"), "{stderr}");
}
