//! mcptest's `pipe` and `tools call` page: the flags and rules a pipe file
//! or a chained call relies on.

use serde_json::json;

use super::{bin, file, output, pw, run, run_text};

fn tools_call(args: &[&str], stdin: &str) -> super::Out {
    let mut c = pw();
    c.args(["tools", "call"])
        .args(args)
        .write_stdin(stdin.to_owned());
    output(c)
}

/// "--args-from-stdin | Read the entire args object from stdin JSON."
#[test]
fn args_from_stdin_reads_the_entire_args_object() {
    let out = tools_call(
        &["echo", "--args-from-stdin"],
        r#"{"message": "from stdin"}"#,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "from stdin");
}

/// "--arg NAME=$.path | Extract a value from stdin JSON by JSONPath into
/// the named arg. Repeatable."
#[test]
fn arg_extracts_a_value_from_stdin_json_by_jsonpath() {
    let out = tools_call(
        &["add", "--arg", "a=$.x.first", "--arg", "b=$.x.list[1]"],
        r#"{"x": {"first": 40, "list": [0, 2]}}"#,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(v, json!({"sum": 42}));
    let bad = tools_call(&["add", "--arg", "a=$.nope"], "{}");
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("--arg a"), "{}", bad.stderr);
}

/// "--max-cost <USD> | Aggregate cap across both calls."
#[test]
fn max_cost_is_an_aggregate_cap_across_both_calls() {
    let dir = tempfile::tempdir().expect("temp dir");
    let table = file(
        &dir,
        "pricing.yaml",
        "tools:\n  \"demo/echo\": { cost_usd: 0.02 }\n",
    );
    let table = table.to_str().expect("utf-8 path");
    let base = [
        "echo",
        "--args",
        r#"{"message": "one"}"#,
        "--then",
        "echo",
        "--then-arg",
        "message=two",
        "--pricing-table",
        table,
    ];
    let mut capped = base.to_vec();
    capped.extend(["--max-cost", "0.03"]);
    let out = tools_call(&capped, "");
    assert_eq!(
        out.code, 3,
        "the second call would pass $0.03: {}",
        out.stderr
    );
    assert!(out.stderr.contains("--max-cost"), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "nothing printed: {}", out.stdout);
    let mut roomy = base.to_vec();
    roomy.extend(["--max-cost", "0.05"]);
    let out = tools_call(&roomy, "");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "two");
}

/// A tool annotated `destructiveHint: true` is called only with `--yes`,
/// as in `run`.
#[test]
fn a_destructive_tool_is_called_only_with_yes() {
    let out = tools_call(&["delete_user", "--args", r#"{"user_id": "u1"}"#], "");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("--yes"), "{}", out.stderr);
    let out = tools_call(
        &["delete_user", "--args", r#"{"user_id": "u1"}"#, "--yes"],
        "",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
}

fn demo_cmd() -> String {
    format!("{} demo-server", bin().display())
}

/// "server | Server key resolved through the suite's servers: map": a
/// server added with `--server NAME=…` is part of that map.
#[test]
fn a_server_added_with_server_can_be_named_by_a_node() {
    let out = run_text(
        "p.yml",
        "pipe:\n  - id: a\n    server: extra\n    tool: echo\n    args: { message: hi }\n",
        &[
            "--server",
            &format!("extra={}", demo_cmd()),
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["nodes"]["a"]["output"], "hi");
}

/// `--servers-from` is repeatable, and nodes name its servers.
#[test]
fn servers_from_is_repeatable_and_its_servers_are_nameable() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cfg = |name: &str| {
        json!({"mcpServers": {name: {"command": bin(), "args": ["demo-server"]}}}).to_string()
    };
    let one = file(&dir, "one.json", &cfg("first"));
    let two = file(&dir, "two.json", &cfg("second"));
    let p = file(
        &dir,
        "p.yml",
        "pipe:\n  - id: a\n    server: first\n    tool: echo\n    args: { message: one }\n  - id: b\n    server: second\n    tool: echo\n    args: { message: \"${a} two\" }\n",
    );
    let out = run(
        &p,
        &[
            "--servers-from",
            one.to_str().expect("utf-8"),
            "--servers-from",
            two.to_str().expect("utf-8"),
            "--format",
            "json",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.json()["nodes"]["b"]["output"], "one two");
}

/// "Mandatory when the suite declares more than one server": two servers
/// and a node that names none fail at load, at the node's line.
#[test]
fn a_node_naming_no_server_among_two_fails_at_load_at_its_line() {
    let out = run_text(
        "p.yml",
        "pipe:\n  - id: a\n    tool: echo\n    args: { message: hi }\n",
        &[
            "--server",
            &format!("one={}", demo_cmd()),
            "--server",
            &format!("two={}", demo_cmd()),
        ],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("p.yml:2:"), "{}", out.stderr);
    assert!(
        out.stderr.contains("does not say which server"),
        "{}",
        out.stderr
    );
}

/// `expect:` sees the real values: an env value that also occurs in an
/// output does not break a correct assertion; the trace still masks it.
#[test]
fn expectations_see_real_values_and_only_what_is_written_is_masked() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(
        &dir,
        "p.yml",
        "pipe:\n  - id: who\n    tool: echo\n    args: { message: \"${env.PW_FIDELITY_TOKEN}\" }\n  - id: hello\n    tool: echo\n    args: { message: \"hello ${who}\" }\nexpect:\n  - target: nodes.hello.output\n    matcher: { contains: hello }\n  - target: nodes.who.output\n    matcher: { regex: \"^s3cr3t-[0-9]+$\" }\n",
    );
    let mut c = pw();
    c.env("PW_FIDELITY_TOKEN", "s3cr3t-42")
        .args(["run", "--no-save", "--format", "json"])
        .arg(&p);
    let out = output(c);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        !out.stdout.contains("s3cr3t-42"),
        "the secret is masked: {}",
        out.stdout
    );
    let v = out.json();
    assert_eq!(v["nodes"]["hello"]["output"], "hello ***");
    assert!(
        v["expect"]
            .as_array()
            .expect("rows")
            .iter()
            .all(|e| e["pass"] == true)
    );
}

/// `--step` pauses after the last node too, so it can be re-run before the
/// run ends.
#[test]
fn step_pauses_after_the_last_node_so_it_can_be_re_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(
        &dir,
        "p.yml",
        "pipe:\n  - id: only\n    tool: flaky\n    args: { key: fidelity-last-step, failures: 1 }\n",
    );
    let mut c = pw();
    c.args(["run", "--no-save", "--format", "json", "--step"])
        .arg(&p)
        .write_stdin("r\n\n");
    let out = output(c);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.json()["nodes"]["only"]["status"],
        "ok",
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("after only"), "{}", out.stderr);
}
