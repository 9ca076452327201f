//! Discord MCP's `mcp_pipeline`, as its pipeline page documents it.

use assert_cmd::Command;
use serde_json::Value;

fn run_discord(json: &str) -> (Value, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("pipeline.json");
    std::fs::write(&file, json).expect("write the pipeline");
    let out = Command::from_std(crate::common::pipewright())
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

/// The envelope of a run that stopped at its second step, and its results.
fn stopped_after_two(out: &super::Out) -> (serde_json::Value, Vec<serde_json::Value>) {
    assert_ne!(out.code, 0);
    let v = out.json();
    let results = v["results"].as_array().expect("results").clone();
    assert_eq!(results.len(), 2, "nothing ran after the second step: {v:#}");
    (v, results)
}

/// "The result envelope shape: { results: [ { step: 1, tool, ok: true,
/// data } … ], summary: { total, succeeded, failed } }"
#[test]
fn the_result_envelope_is_results_with_step_tool_ok_data_and_a_summary() {
    let out = super::run_text(
        "p.json",
        r#"{ "steps": [
            { "tool": "add", "args": { "a": 1, "b": 2 } },
            { "tool": "add", "args": { "a": "{{step1.sum}}", "b": 10 } }
        ] }"#,
        &["--format", "discord"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    assert_eq!(
        v["results"],
        serde_json::json!([
            { "step": 1, "tool": "add", "ok": true, "data": { "sum": 3 } },
            { "step": 2, "tool": "add", "ok": true, "data": { "sum": 13 } }
        ])
    );
    assert_eq!(
        v["summary"],
        serde_json::json!({ "total": 2, "succeeded": 2, "failed": 0 })
    );
    // What Discord's executor returns besides (checked against its source).
    assert_eq!(v["aborted"], false);
    assert_eq!(v["steps"][1]["status"], "ok");
    assert_eq!(v["steps"][1]["result"], serde_json::json!({ "sum": 13 }));
}

/// "Mid-pipeline: step N fails … The pipeline captures the error in the
/// results array, marks the pipeline as failed, and does not run
/// subsequent steps." — and "summary.failed > 0 as the single boolean".
#[test]
fn a_failed_step_is_captured_and_no_subsequent_step_runs() {
    let out = super::run_text(
        "p.json",
        r#"{ "steps": [
            { "tool": "add", "args": { "a": 1, "b": 2 } },
            { "tool": "fail", "args": { "message": "REST said no" } },
            { "tool": "echo", "args": { "message": "never" } }
        ] }"#,
        &["--format", "discord"],
    );
    let (v, results) = stopped_after_two(&out);
    assert_eq!(results[1]["step"], 2);
    assert_eq!(results[1]["ok"], false);
    assert_eq!(results[1]["error"]["code"], "TOOL_ERROR");
    assert_eq!(results[1]["error"]["message"], "REST said no");
    assert_eq!(
        v["summary"],
        serde_json::json!({ "total": 3, "succeeded": 1, "failed": 1 })
    );
}

/// "Resolution failures (path not found, wrong type) raise an
/// INTERPOLATION_FAILED error and abort the pipeline; nothing else runs."
#[test]
fn a_path_not_found_raises_interpolation_failed_and_nothing_else_runs() {
    // `list_items` declares no output schema, so only the run can tell.
    let out = super::run_text(
        "p.json",
        r#"{ "steps": [
            { "tool": "list_items", "args": { "count": 2 } },
            { "tool": "echo", "args": { "message": "{{step1[5].id}}" } },
            { "tool": "echo", "args": { "message": "never" } }
        ] }"#,
        &["--format", "discord"],
    );
    let (v, results) = stopped_after_two(&out);
    assert_eq!(results[1]["error"]["code"], "INTERPOLATION_FAILED", "{v:#}");
    assert_eq!(v["summary"]["failed"], 1);
}

/// A step the server answers with its own error code keeps that code.
#[test]
fn a_servers_own_error_code_is_the_steps_error_code() {
    let out = super::run_text(
        "p.json",
        r#"{ "steps": [
            { "tool": "fail", "args": { "message": "slow down", "code": "bulkhead_saturated", "status": 429 } }
        ] }"#,
        &["--format", "discord"],
    );
    let v = out.json();
    assert_eq!(
        v["results"][0]["error"]["code"], "bulkhead_saturated",
        "{v:#}"
    );
    assert_eq!(v["results"][0]["error"]["status"], 429, "{v:#}");
}
