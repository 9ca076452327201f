//! Fibe's `fibe_pipeline`, as its tool page documents it.

use serde_json::json;

use super::{file, output, pw, run, run_text};

/// "dry_run | bool | false | Validates refs+schemas without running" — a
/// step that would fail is not called, and the run exits 0.
#[test]
fn dry_run_validates_refs_and_schemas_without_running() {
    let out = run_text(
        "p.json",
        r#"{ "dry_run": true, "steps": [
            { "id": "boom", "tool": "fail", "args": { "message": "called!" } },
            { "id": "next", "tool": "echo", "args": { "message": "$$.literal" } }
        ] }"#,
        &["--format", "json"],
    );
    assert_eq!(out.code, 0, "nothing may be called: {}", out.stderr);
    assert!(out.stderr.contains("dry_run"), "{}", out.stderr);
    let plan = out.json();
    assert!(
        plan.get("compositions").is_some(),
        "a plan, not a trace: {plan:#}"
    );
}

/// dry_run still validates: a bad reference or argument fails with its line.
#[test]
fn dry_run_still_rejects_a_bad_reference_and_a_bad_argument() {
    let out = run_text(
        "p.json",
        "{ \"dry_run\": true, \"steps\": [\n  { \"id\": \"a\", \"tool\": \"add\", \"args\": { \"a\": \"x\", \"b\": 1 } }\n] }",
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("p.json:2:"), "{}", out.stderr);
}

/// `check` and `convert` keep `dry_run`.
#[test]
fn dry_run_is_kept_by_check_and_convert() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(
        &dir,
        "p.json",
        r#"{ "dry_run": true, "steps": [ { "id": "a", "tool": "echo", "args": { "message": "hi" } } ] }"#,
    );
    let mut c = pw();
    c.arg("convert").arg(&p);
    let conv = output(c);
    assert_eq!(conv.code, 0, "{}", conv.stderr);
    assert!(conv.stdout.contains("dry_run: true"), "{}", conv.stdout);
    let yml = file(&dir, "p.yml", &conv.stdout);
    let out = run(&yml, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("dry_run"),
        "the converted file plans only too"
    );
    let mut c = pw();
    c.arg("check").arg(&p);
    assert_eq!(output(c).code, 0);
}

fn steps(n: usize) -> String {
    let s: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id":"s{i}","tool":"echo","args":{{"message":"{i}"}}}}"#))
        .collect();
    format!(r#"{{"steps":[{}]}}"#, s.join(","))
}

/// "steps | array | required | At least 1; max 25 by default
/// (FIBE_MCP_PIPELINE_MAX_STEPS)"
#[test]
fn more_than_25_steps_is_a_load_error_unless_the_cap_is_raised() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(&dir, "p.json", &steps(26));
    let out = run(&p, &[]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("at most 25"), "{}", out.stderr);
    assert!(out.stderr.contains("p.json:1:"), "{}", out.stderr);

    let mut c = pw();
    c.env("FIBE_MCP_PIPELINE_MAX_STEPS", "26")
        .args(["run", "--no-save"])
        .arg(&p);
    let out = output(c);
    assert_eq!(out.code, 0, "the env name raises it: {}", out.stderr);

    let out = run(&p, &["--fibe-max-steps", "26"]);
    assert_eq!(out.code, 0, "the flag raises it: {}", out.stderr);
    assert_eq!(run(&dir.path().join("p.json"), &[]).code, 2);
    let ok = file(&dir, "ok.json", &steps(25));
    assert_eq!(run(&ok, &[]).code, 0);
}

const TWO_LOOPS: &str = r#"{ "steps": [
    { "id": "list", "tool": "list_items", "args": { "count": 30 } },
    { "id": "one", "for_each": "$.list", "as": "it",
      "steps": [ { "id": "a", "tool": "echo", "args": { "message": "$.it.id" } } ] },
    { "id": "two", "for_each": "$.list", "as": "it",
      "steps": [ { "id": "b", "tool": "echo", "args": { "message": "$.it.id" } } ] }
] }"#;

/// "Maximum total for_each iterations across a pipeline:
/// FIBE_MCP_PIPELINE_MAX_ITERATIONS (default 50)."
#[test]
fn for_each_iterations_are_capped_at_50_across_the_pipeline_at_run_time() {
    let out = run_text("p.json", TWO_LOOPS, &["--format", "fibe"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let v = out.json();
    assert_eq!(v["status"], "partial", "{v:#}");
    assert_eq!(v["error"]["step_id"], "two", "{v:#}");
    assert_eq!(v["error"]["code"], "ITERATION_LIMIT", "{v:#}");
    assert!(v["steps"]["one"].is_array(), "the first 30 ran: {v:#}");

    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(&dir, "p.json", TWO_LOOPS);
    let mut c = pw();
    c.env("FIBE_MCP_PIPELINE_MAX_ITERATIONS", "60")
        .args(["run", "--no-save"])
        .arg(&p);
    assert_eq!(output(c).code, 0, "the env name raises it");
    assert_eq!(
        run(&p, &["--fibe-max-iterations", "60"]).code,
        0,
        "so does the flag"
    );
}

/// "on_error | "abort" (default) or "continue" (record {error:...} in
/// bindings, keep going)"
#[test]
fn on_error_continue_records_error_in_bindings_and_keeps_going() {
    let out = run_text(
        "p.json",
        r#"{ "steps": [
            { "id": "bad", "tool": "fail", "args": { "message": "nope" }, "on_error": "continue" },
            { "id": "after", "tool": "echo", "args": { "message": "$.bad.error" } }
        ], "return": "$" }"#,
        &["--format", "fibe"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v = out.json();
    assert_eq!(v["status"], "completed", "{v:#}");
    assert_eq!(v["result"]["bad"], json!({ "error": "nope" }), "{v:#}");
    assert_eq!(v["steps"]["after"], "nope", "{v:#}");
}

/// "Fanout (for_each) — iterate a list with as alias": an inner step reads
/// the alias and an earlier inner step of the same iteration.
#[test]
fn an_inner_step_reads_the_alias_and_an_earlier_inner_step() {
    let out = run_text(
        "p.json",
        r#"{ "steps": [
            { "id": "list", "tool": "list_items", "args": { "count": 3 } },
            { "id": "rolls", "for_each": "$.list", "as": "it", "steps": [
                { "id": "plus", "tool": "add", "args": { "a": "$.it.index", "b": 1 } },
                { "id": "noise", "tool": "echo", "args": { "message": "x" } },
                { "id": "r", "tool": "add", "args": { "a": "$.plus.sum", "b": "$.it.index" } }
            ], "collect": "$.r.sum" }
        ], "return": "$.rolls" }"#,
        &["--format", "fibe"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["result"], json!([1, 3, 5]));
}

/// "No nested pipelines" and nesting inside `for_each`: a clear load error
/// at the nested block's line.
#[test]
fn a_parallel_nested_in_for_each_is_a_load_error_at_its_line() {
    let out = run_text(
        "p.json",
        "{ \"steps\": [\n  { \"id\": \"list\", \"tool\": \"list_items\" },\n  { \"id\": \"f\", \"for_each\": \"$.list\", \"as\": \"it\", \"steps\": [\n    { \"parallel\": [ { \"id\": \"x\", \"tool\": \"echo\", \"args\": { \"message\": \"$.it.id\" } } ] }\n  ] }\n] }",
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("p.json:4:"), "{}", out.stderr);
}

/// Output: `"pipeline_id": "<id>"` (present unless cache=false),
/// `"truncated": false`, and on failure `error: {…, code, status}`.
#[test]
fn the_envelope_has_pipeline_id_truncated_and_the_servers_code_and_status() {
    let src = r#"{ "steps": [
        { "id": "ok", "tool": "add", "args": { "a": 1, "b": 1 } },
        { "id": "wait", "tool": "fail", "args": { "message": "invalid", "code": "unprocessable", "status": 422 } }
    ] }"#;
    let out = run_text("p.json", src, &["--format", "fibe"]);
    let v = out.json();
    let id = v["pipeline_id"].as_str().expect("pipeline_id");
    assert_eq!(id.len(), "20261122-153012-a3f9".len(), "{id}");
    assert_eq!(v["truncated"], false);
    assert_eq!(v["status"], "partial");
    assert_eq!(v["error"]["step_index"], 1);
    assert_eq!(v["error"]["code"], "unprocessable", "{v:#}");
    assert_eq!(v["error"]["status"], 422, "{v:#}");
    assert_eq!(v["completed_step_ids"], json!(["ok"]));

    let uncached = src.replacen("{ \"steps\"", "{ \"cache\": false, \"steps\"", 1);
    let v = run_text("p.json", &uncached, &["--format", "fibe"]).json();
    assert!(v.get("pipeline_id").is_none(), "{v:#}");
}

/// Where pipewright deliberately differs (no 5-minute cache, the
/// idempotency key travels in `_meta`), `check` says so at the line.
#[test]
fn check_warns_where_pipewright_differs_from_fibe() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(
        &dir,
        "p.json",
        "{\n  \"cache\": true,\n  \"idempotency_key\": \"k\",\n  \"steps\": [ { \"id\": \"a\", \"tool\": \"echo\", \"args\": { \"message\": \"hi\" } } ]\n}",
    );
    let mut c = pw();
    c.arg("check").arg(&p);
    let out = output(c);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("p.json:2:") && out.stderr.contains("cache"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("p.json:3:") && out.stderr.contains("_meta"),
        "{}",
        out.stderr
    );
}
