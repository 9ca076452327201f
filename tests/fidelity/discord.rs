//! Discord MCP's `mcp_pipeline`, as its pipeline page documents it.

use assert_cmd::Command;
use serde_json::Value;

fn run_discord(json: &str) -> (Value, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("pipeline.json");
    std::fs::write(&file, json).expect("write the pipeline");
    let out = Command::cargo_bin("pipewright")
        .expect("the binary builds")
        .args(["run", "--format", "json", "--no-save"])
        .arg(&file)
        .output()
        .expect("pipewright runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let trace = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (trace, stderr)
}

/// "{{stepN.field}} — read field on the Nth step's result (1-indexed)."
#[test]
fn step_n_reads_the_nth_steps_result_counted_from_one() {
    let (t, stderr) = run_discord(
        r#"{ "steps": [
            { "tool": "echo", "args": { "message": "first" } },
            { "tool": "echo", "args": { "message": "second" } },
            { "tool": "echo", "args": { "message": "{{step1}} then {{step2}}" } }
        ] }"#,
    );
    assert_eq!(t["composition"]["status"], "completed", "{stderr}");
    assert_eq!(t["nodes"]["step_2"]["args"]["message"], "first then second");
}

/// "{{step1.count}} evaluating to a number yields a real number in the next
/// step's args" — a whole reference keeps its type, by position too.
#[test]
fn a_whole_step_n_reference_keeps_the_type_of_the_value() {
    let (t, stderr) = run_discord(
        r#"{ "steps": [
            { "id": "find", "tool": "search_users", "args": { "query": "a", "limit": 2 } },
            { "tool": "search_users", "args": { "query": "a", "limit": "{{step1.count}}" } }
        ] }"#,
    );
    assert_eq!(t["composition"]["status"], "completed", "{stderr}");
    assert_eq!(
        t["nodes"]["step_1"]["args"]["limit"],
        serde_json::json!(2),
        "{}",
        t["nodes"]["step_1"]
    );
}

/// A step past the end is an error that says how steps are counted, not a
/// hint towards another step.
#[test]
fn an_unknown_step_n_is_reported_with_how_steps_are_counted() {
    let (_, stderr) = run_discord(
        r#"{ "steps": [
            { "tool": "echo", "args": { "message": "one" } },
            { "tool": "echo", "args": { "message": "{{step9}}" } }
        ] }"#,
    );
    assert!(stderr.contains("unknown step `step9`"), "{stderr}");
    assert!(!stderr.contains("did you mean `step_"), "{stderr}");
}
