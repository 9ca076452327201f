//! `compensate:` as a saga: after a failed run, the undo calls of the nodes
//! that completed run newest first, each recorded; a failed undo is
//! reported and does not stop the others. Real binary, real demo server.

use assert_cmd::Command;
use serde_json::{Value, json};

mod common;

fn run(text: &str, args: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = dir.path().join("p.yml");
    std::fs::write(&p, text).expect("write");
    let out = Command::from_std(common::pipewright())
        .args(["run", "--no-save", "--format", "json"])
        .args(args)
        .arg(&p)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v, stderr)
}

const SAGA: &str = r#"
vars: { who: bo }
pipe:
  - id: mail
    tool: send_email
    args: { to: "a@example.com", subject: hi, body: x }
    compensate:
      tool: echo
      args: { message: "recall ${mail.message_id} for ${var.who}" }
  - id: sum
    tool: add
    args: { a: 1, b: 2 }
    compensate: { tool: fail, args: { message: "cannot undo ${sum.sum}" } }
  - id: plain
    tool: echo
    args: { message: no undo }
  - id: boom
    tool: fail
    args: { message: down }
"#;

#[test]
fn a_failed_run_undoes_what_completed_newest_first_and_records_it() {
    let (code, t, err) = run(SAGA, &[]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(t["composition"]["status"], "partial");
    let rows = t["compensations"].as_array().expect("compensations");
    let order: Vec<&str> = rows.iter().map(|r| r["node"].as_str().unwrap()).collect();
    assert_eq!(
        order,
        ["sum", "mail"],
        "newest first, only nodes with an undo"
    );
    assert_eq!(rows[0]["status"], "failed");
    assert_eq!(
        rows[0]["error"], "cannot undo 3",
        "the node's own output is readable"
    );
    assert_eq!(
        rows[1]["status"], "ok",
        "a failed undo does not stop the others"
    );
    let msg = rows[1]["args"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("recall msg-") && msg.ends_with(" for bo"),
        "{msg}"
    );
    assert_eq!(rows[1]["output"], json!(msg));
    // The text report says what was undone, and what could not be.
    let dir = tempfile::tempdir().expect("temp dir");
    let p = dir.path().join("p.yml");
    std::fs::write(&p, SAGA).expect("write");
    let out = Command::from_std(common::pipewright())
        .args(["run", "--no-save"])
        .arg(&p)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("compensated mail (echo)"), "{text}");
    assert!(
        text.contains("compensation of sum (fail) failed: cannot undo 3"),
        "{text}"
    );
    let progress = String::from_utf8_lossy(&out.stderr);
    assert!(progress.contains("↶ mail  undone"), "{progress}");
}

#[test]
fn a_run_that_completes_undoes_nothing() {
    let ok = SAGA.replace(
        "tool: fail\n    args: { message: down }",
        "tool: echo\n    args: { message: fine }",
    );
    let (code, t, err) = run(&ok, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(t.get("compensations").is_none(), "{t:#}");
}

#[test]
fn a_compensation_reading_its_own_node_loads_in_a_composition_too() {
    let text = r#"
compositions:
  - name: c
    nodes:
      - id: a
        tool: add
        args: { a: 2, b: 2 }
        compensate: { tool: echo, args: { message: "undo ${a.sum}" } }
      - id: b
        needs: [a]
        tool: fail
        args: { message: "after ${a.sum}" }
"#;
    let (code, t, err) = run(text, &[]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(t["compensations"][0]["output"], "undo 4");
}
