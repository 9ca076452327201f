//! mcptest's compositions page: the DAG runner, skip propagation, budgets,
//! the trace, `eval:`, cases and `${var.X}`.

use serde_json::json;

use super::{file, output, pw, run_text};

fn check(text: &str) -> super::Out {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(&dir, "p.yml", text);
    let mut c = pw();
    c.arg("check").arg(&p);
    output(c)
}

/// "When a node … fails (tools/call returned an error), every descendant
/// whose needs: list includes that node also skips." Nothing else does:
/// an independent branch still runs, however late it is ready.
#[test]
fn a_failed_node_skips_its_descendants_and_independent_branches_still_run() {
    let text = r#"
compositions:
  - name: branches
    nodes:
      - id: bad
        tool: fail
        args: { message: "down" }
      - id: child
        needs: [bad]
        tool: echo
        args: { message: "${bad}" }
      - id: slow
        tool: slow
        args: { ms: 300 }
      - id: after_slow
        needs: [slow]
        tool: echo
        args: { message: "slept ${slow.slept_ms}" }
"#;
    for _ in 0..3 {
        let out = run_text("p.yml", text, &["--format", "json"]);
        assert_eq!(out.code, 1, "{}", out.stderr);
        let v = out.json();
        let status = |id: &str| v["nodes"][id]["status"].clone();
        assert_eq!(status("bad"), "failed");
        assert_eq!(status("child"), "skipped");
        assert_eq!(status("slow"), "ok", "{v:#}");
        assert_eq!(status("after_slow"), "ok", "{v:#}");
        assert_eq!(v["nodes"]["after_slow"]["output"], "slept 300");
        assert_eq!(v["composition"]["status"], "partial");
    }
}

/// "composition.budget_tripped carries the name of the cap that fired
/// (max_cost_usd, max_tokens, or max_duration_ms)" — whichever spelling
/// the file used.
#[test]
fn the_duration_cap_trips_as_max_duration_ms_under_both_spellings() {
    for cap in ["max_duration: 100ms", "max_duration_ms: 100"] {
        let text = format!(
            "compositions:\n  - name: gated\n    budget: {{ {cap} }}\n    nodes:\n      - id: s\n        tool: slow\n        args: {{ ms: 2000 }}\n"
        );
        let out = run_text("p.yml", &text, &["--format", "json"]);
        assert_eq!(out.code, 3, "{}", out.stderr);
        assert_eq!(
            out.json()["composition"]["budget_tripped"],
            "max_duration_ms"
        );
    }
}

/// The trace example: `"enrich": { "id": "enrich", "status": "ok", … }`.
#[test]
fn trace_nodes_carry_their_id() {
    let out = run_text(
        "p.yml",
        "compositions:\n  - name: c\n    nodes:\n      - id: enrich\n        tool: echo\n        args: { message: hi }\n",
        &["--format", "json"],
    );
    assert_eq!(out.json()["nodes"]["enrich"]["id"], "enrich");
}

/// "The supported entries are the same five built-ins …": anything else is
/// a load error naming them.
#[test]
fn an_unknown_eval_metric_is_a_load_error_naming_the_five() {
    let out = check(
        "compositions:\n  - name: j\n    eval:\n      helpfulness: { threshold: 0.5 }\n    nodes:\n      - id: a\n        tool: echo\n        args: { message: hi }\n",
    );
    assert_eq!(out.code, 2);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("p.yml:4:"), "{all}");
    for m in [
        "rubric",
        "mcp_task_completion",
        "mcp_use",
        "argument_correctness",
        "plan_quality",
    ] {
        assert!(all.contains(m), "{m} missing: {all}");
    }
}

/// "with no LLM provider set, the metrics defer cleanly so a key-free CI
/// stays green."
#[test]
fn known_eval_metrics_defer_in_the_report_and_json_and_do_not_fail() {
    let text = "compositions:\n  - name: judged\n    eval:\n      mcp_task_completion: { threshold: 0.8 }\n      rubric:\n        criteria: [{ name: covers, weight: 1.0 }]\n    nodes:\n      - id: a\n        tool: echo\n        args: { message: hi }\n";
    let out = run_text("p.yml", text, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("eval mcp_task_completion DEFERRED: no judge provider"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("eval rubric DEFERRED: no judge provider"),
        "{}",
        out.stdout
    );
    let v = run_text("p.yml", text, &["--format", "json"]).json();
    assert_eq!(v["eval"][0]["metric"], "mcp_task_completion");
    assert_eq!(v["eval"][0]["status"], "deferred");
    assert_eq!(v["eval"][1]["metric"], "rubric");
}

const GOLDEN: &str = r#"
compositions:
  - name: parametric
    nodes:
      - id: sum
        tool: add
        args: { a: "${var.a}", b: 2 }
    output: sum
    cases:
      - name: right
        vars: { a: 1 }
        golden: { sum: 3 }
      - name: wrong
        vars: { a: 5 }
        golden: { sum: 3 }
"#;

/// "Each row is a named bundle of variables, optional golden value …":
/// the golden value is the output the row must produce, and "the trace
/// exposes the per-case inputs".
#[test]
fn a_cases_golden_value_is_checked_against_its_output_and_its_vars_are_traced() {
    let out = run_text("p.yml", GOLDEN, &["--format", "json"]);
    assert_eq!(out.code, 1, "the `wrong` row fails: {}", out.stderr);
    let v = out.json();
    let rows = v.as_array().expect("one trace per case");
    assert_eq!(rows[0]["composition"]["case"], "right");
    assert_eq!(rows[0]["vars"], json!({ "a": 1 }));
    assert_eq!(rows[0]["expect"][0]["target"], "output");
    assert_eq!(rows[0]["expect"][0]["pass"], true);
    assert_eq!(rows[1]["vars"], json!({ "a": 5 }));
    assert_eq!(rows[1]["expect"][0]["pass"], false);
    assert_eq!(rows[1]["expect"][0]["actual"], json!({ "sum": 7 }));
    let text = run_text("p.yml", GOLDEN, &[]);
    assert!(
        text.stdout
            .contains("composition [PASS] parametric [right]"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("composition [FAIL] parametric [wrong]"),
        "{}",
        text.stdout
    );
}

/// "${var.X} outside a case context (no dataset declared) passes through
/// unchanged so a single-run composition is backwards-compatible" — with a
/// warning at load; a pipe keeps its "pass it with --var" error.
#[test]
fn a_var_outside_a_case_context_passes_through_unchanged_with_a_warning() {
    let comp = "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: echo\n        args: { message: \"hi ${var.who}\" }\n";
    let out = run_text("p.yml", comp, &["--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["nodes"]["a"]["output"], "hi ${var.who}");
    assert!(out.stderr.contains("p.yml:6:"), "{}", out.stderr);
    let given = run_text("p.yml", comp, &["--format", "json", "--var", "who=bo"]);
    assert_eq!(given.json()["nodes"]["a"]["output"], "hi bo");

    let pipe = "pipe:\n  - id: a\n    tool: echo\n    args: { message: \"hi ${var.who}\" }\n";
    let out = run_text("p.yml", pipe, &["--format", "json"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("pass it with --var who="),
        "{}",
        out.stderr
    );
}

/// "The context the predicate sees is {parents: {<id>: <output>, ...}}":
/// reading a parent that is not in `needs` is always null, and `check`
/// warns at the `when:`.
#[test]
fn a_when_reading_a_parent_not_in_needs_is_warned_at_load() {
    let out = check(
        "compositions:\n  - name: c\n    nodes:\n      - id: search\n        tool: echo\n        args: { message: hi }\n      - id: readme\n        tool: echo\n        when: \".parents.search != null\"\n        args: { message: x }\n",
    );
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("p.yml:9:"), "{all}");
    assert!(all.contains("`.parents.search`"), "{all}");
    assert!(all.contains("add `search` to `needs`"), "{all}");
}

/// "mcptest run --config examples/composition-full.yml": the same command
/// line runs here.
#[test]
fn run_takes_the_file_as_mcptest_s_config_flag() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(
        &dir,
        "suite.yml",
        "compositions:\n  - name: render\n    nodes:\n      - id: a\n        tool: echo\n        args: { message: hi }\n",
    );
    for form in [
        vec!["--config".to_owned(), p.display().to_string()],
        vec![format!("--config={}", p.display())],
    ] {
        let mut c = pw();
        c.args(["run", "--no-save"]).args(&form);
        let out = output(c);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout.contains("composition [PASS] render"),
            "{}",
            out.stdout
        );
        assert!(
            out.stdout
                .contains("ran 1 composition(s): 1 passed, 0 failed"),
            "{}",
            out.stdout
        );
    }
}
