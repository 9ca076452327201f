//! Judged eval end to end: the real binary, the built-in demo server, and
//! a scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1 as
//! the judge. Every test sets its own data and config directories and the
//! judge's variables it reads.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

mod common;
#[path = "eval/judge.rs"]
mod judge;

use judge::{Judge, Reply};

/// The reference's `judged` composition, key for key, as an mcptest user
/// has it: it must run unchanged.
const JUDGED: &str = r#"compositions:
  - name: judged
    nodes:
      - id: search
        tool: search_packages
        args: { query: "${var.query}" }
    output: search
    eval:
      mcp_task_completion: { threshold: 0.8 }
      mcp_use: { threshold: 0.7 }
      rubric:
        criteria:
          - { name: "covers query", weight: 1.0 }
"#;

/// The reference's `parametric` cases composition, key for key.
const PARAMETRIC: &str = r#"compositions:
  - name: parametric
    nodes:
      - id: search
        tool: search_packages
        args:
          q: "${var.query}"
          limit: "${var.limit}"
    output: search
    cases:
      - name: short
        vars: { query: "mcp", limit: 1 }
      - name: long
        vars: { query: "test framework", limit: 10 }
      - name: golden
        vars: { query: "rubric", limit: 5 }
        golden:
          hits: []
        expect:
          - target: "nodes.search.output.hits"
            matcher: { exact: [] }
"#;

/// The judge's key: it must reach the endpoint and nothing else.
const KEY: &str = "sk-test-judge-0f3c9a7e5b2d41";

/// A home for one test: data and config directories of its own.
struct Home {
    dir: tempfile::TempDir,
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\n{}", self.stdout, self.stderr))
    }
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).expect("write");
        p
    }

    /// The binary with this home's directories and no judge from outside.
    fn cmd(&self) -> Command {
        let mut c = common::pipewright();
        c.env("PIPEWRIGHT_DATA_DIR", self.path("data"))
            .env("PIPEWRIGHT_CONFIG_DIR", self.path("config"))
            .env("JUDGE_KEY", KEY)
            .stdin(Stdio::null());
        c
    }

    fn out(&self, args: &[&str]) -> Out {
        let o = self
            .cmd()
            .env("PIPEWRIGHT_SHUTDOWN_GRACE", "10s")
            .args(args)
            .output()
            .expect("pipewright runs");
        Out {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// `--judge-url URL --judge-model judge-1 --judge-key-env JUDGE_KEY`.
fn judged_by(j: &Judge) -> Vec<String> {
    vec![
        "--judge-url".into(),
        j.url.clone(),
        "--judge-model".into(),
        "judge-1".into(),
        "--judge-key-env".into(),
        "JUDGE_KEY".into(),
    ]
}

fn run(h: &Home, file: &Path, extra: &[&str], j: Option<&Judge>) -> Out {
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    if let Some(j) = j {
        args.extend(judged_by(j));
    }
    args.push(file.display().to_string());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    h.out(&refs)
}

fn row<'a>(trace: &'a Value, metric: &str) -> &'a Value {
    trace["eval"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["metric"] == metric))
        .unwrap_or_else(|| panic!("no `{metric}` row: {trace:#}"))
}

/// The scores gate the exit code, and each metric is its own row in the
/// text report, the JSON trace and JUnit.
#[test]
fn judge_scores_gate_the_exit_code_in_text_json_and_junit() {
    let h = Home::new();
    let j = Judge::start();
    let f = h.file("judged.yml", JUDGED);
    let text = run(&h, &f, &[], Some(&j));
    assert_eq!(text.code, 0, "{}\n{}", text.stdout, text.stderr);
    for line in [
        "eval mcp_task_completion 0.90 ≥ 0.80 PASS",
        "eval mcp_use 0.90 ≥ 0.70 PASS",
        "eval rubric 0.90 ≥ 0.50 PASS",
        "judge judge-1 · rubric@1 · 800 + 60 tok",
        "composition [PASS] judged",
    ] {
        assert!(text.stdout.contains(line), "{line}:\n{}", text.stdout);
    }
    j.answer("rubric", Reply::Grade(0.3));
    let json = run(&h, &f, &["--format", "json"], Some(&j));
    assert_eq!(json.code, 1, "a rubric under its threshold fails the run");
    let t = json.json();
    let r = row(&t, "rubric");
    assert_eq!(r["status"], "fail");
    assert_eq!(r["score"], 0.3);
    assert_eq!(r["threshold"], 0.5);
    assert_eq!(r["items"][0]["name"], "covers query");
    assert_eq!(r["judge"]["prompt"], "rubric@1");
    assert_eq!(r["judge"]["model"], "judge-1");
    assert_eq!(r["judge"]["input_tokens"], 800);
    assert_eq!(row(&t, "mcp_use")["status"], "pass");
    let junit = run(&h, &f, &["--format", "junit"], Some(&j));
    assert_eq!(junit.code, 1);
    assert!(
        junit
            .stdout
            .contains(r#"tests="4" failures="1" errors="0" skipped="0""#),
        "{}",
        junit.stdout
    );
    assert!(
        junit.stdout.contains(r#"name="judged eval rubric""#),
        "{}",
        junit.stdout
    );
    assert!(
        junit
            .stdout
            .contains(r#"<failure message="score 0.30 &lt; 0.50">"#),
        "{}",
        junit.stdout
    );
    let text = run(&h, &f, &[], Some(&j));
    assert!(
        text.stdout.contains("eval rubric 0.30 < 0.50 FAIL"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("composition [FAIL] judged"),
        "{}",
        text.stdout
    );
}

/// Each metric's request carries what that metric is about: the rubric
/// and the output, the calls and their arguments, the tools' schemas, the
/// DAG; the key goes only in the `Authorization` header.
#[test]
fn each_request_carries_the_rubric_the_output_and_the_trace_parts_its_metric_needs() {
    let h = Home::new();
    let j = Judge::start();
    let f = h.file(
        "f.yml",
        &JUDGED.replace(
            "      rubric:",
            "      argument_correctness: { threshold: 0.5 }\n      plan_quality: {}\n      rubric:",
        ),
    );
    let out = run(
        &h,
        &f,
        &["--var", "query=mcp", "--format", "json"],
        Some(&j),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let seen = j.seen();
    assert_eq!(seen.len(), 5, "one request per metric: {seen:#?}");
    for s in &seen {
        assert_eq!(s.auth.as_deref(), Some(format!("Bearer {KEY}").as_str()));
        assert_eq!(s.body["model"], "judge-1");
        assert_eq!(s.body["temperature"], 0.0);
        assert_eq!(s.body["response_format"]["type"], "json_object");
        assert!(!s.body.to_string().contains(KEY), "the key is in a body");
        if s.metric != "plan_quality" {
            assert_eq!(s.material["inputs"]["query"], "mcp", "{}", s.metric);
        }
    }
    let rubric = j.request("rubric");
    assert_eq!(rubric.material["criteria"][0]["name"], "covers query");
    assert_eq!(rubric.material["criteria"][0]["weight"], 1.0);
    assert!(
        rubric.material["output"]["hits"].is_array(),
        "{:#}",
        rubric.material
    );
    let task = j.request("mcp_task_completion");
    assert_eq!(task.material["calls"][0]["tool"], "demo/search_packages");
    assert_eq!(task.material["calls"][0]["status"], "ok");
    assert_eq!(task.material["run"]["status"], "completed");
    let using = j.request("mcp_use");
    let offered = using.material["tools_offered"].to_string();
    assert!(offered.contains("demo/get_readme"), "{offered}");
    assert_eq!(using.material["calls"][0]["arguments"]["query"], "mcp");
    let args = j.request("argument_correctness");
    let call = &args.material["calls"][0];
    assert_eq!(call["call"], "c1");
    assert_eq!(call["arguments"]["query"], "mcp");
    assert!(call["input_schema"]["properties"].is_object(), "{call:#}");
    let plan = j.request("plan_quality");
    assert_eq!(
        plan.material["dag"]["nodes"][0]["args"]["query"],
        "${var.query}"
    );
    assert!(
        plan.material.get("output").is_none(),
        "the plan is judged on the plan alone"
    );
    let t = out.json();
    assert_eq!(row(&t, "argument_correctness")["parts"][0]["by"], "judge");
}

/// What pipewright can decide without a model it decides, and says so:
/// arguments that break the tool's inputSchema score 0 without the judge;
/// the tools `expect` names are checked against the calls.
#[test]
fn schema_checks_and_expected_tools_are_decided_without_the_judge() {
    let h = Home::new();
    let j = Judge::start();
    let f = h.file(
        "f.yml",
        "compositions:\n  - name: c\n    nodes:\n      - id: src\n        tool: echo\n        args: { message: one }\n      - id: bad\n        needs: [src]\n        tool: add\n        args: { a: \"${src}\", b: 2 }\n        on_error: continue\n      - id: good\n        tool: add\n        args: { a: 1, b: 2 }\n    eval:\n      argument_correctness: { threshold: 0.4 }\n      mcp_use: { threshold: 0.5, expect: [add, get_readme] }\n",
    );
    let out = run(&h, &f, &["--format", "json"], Some(&j));
    let t = out.json();
    let args = row(&t, "argument_correctness");
    let items = args["items"].as_array().expect("items");
    assert_eq!(items[0]["name"], "bad", "{args:#}");
    assert_eq!(items[0]["by"], "pipewright");
    assert_eq!(items[0]["score"], 0.0);
    assert!(
        items[0]["reasoning"]
            .as_str()
            .unwrap_or_default()
            .contains("inputSchema")
    );
    let judged: Vec<&str> = items[1..]
        .iter()
        .filter_map(|i| i["name"].as_str())
        .collect();
    assert_eq!(judged, ["src", "good"]);
    assert!(items[1..].iter().all(|i| i["by"] == "judge"));
    assert!(
        (args["score"].as_f64().unwrap_or_default() - 0.6).abs() < 1e-9,
        "(0 + 0.9 + 0.9) / 3"
    );
    let asked = j.request("argument_correctness");
    assert_eq!(
        asked.material["calls"].as_array().map(Vec::len),
        Some(2),
        "only the calls that passed"
    );
    let using = row(&t, "mcp_use");
    assert_eq!(using["parts"][0]["by"], "pipewright");
    assert_eq!(
        using["parts"][0]["score"], 0.5,
        "add called, get_readme not"
    );
    assert_eq!(using["parts"][1]["by"], "judge");
    assert_eq!(using["score"], 0.7);
    let text = run(&h, &f, &[], Some(&j));
    assert!(
        text.stdout.contains("parts: tools named in expect were called 0.50 by pipewright; tools fit the task 0.90 by the judge"),
        "{}",
        text.stdout
    );
}

/// A run that failed before it gave an output scores 0 on
/// `mcp_task_completion` unasked, as the docs say, so a judge's 0.9 cannot
/// make it pass (the second review's item 20).
#[test]
fn a_failed_run_with_no_output_scores_zero_without_the_judge() {
    let h = Home::new();
    let j = Judge::start();
    let f = h.file(
        "f.yml",
        "compositions:\n  - name: c\n    cases: [{name: one}]\n    nodes:\n      - {id: a, tool: echo, args: {message: hi}}\n      - {id: b, needs: [a], tool: fail, args: {message: no}}\n    output: b\n    eval:\n      mcp_task_completion: { threshold: 0.5 }\n",
    );
    let out = run(&h, &f, &["--format", "json"], Some(&j));
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let t = out.json();
    let done = row(&t, "mcp_task_completion");
    assert_eq!(done["score"], 0.0, "{done:#}");
    assert_eq!(done["parts"][0]["by"], "pipewright", "{done:#}");
    assert_eq!(done["status"], "fail", "{done:#}");
    assert!(
        j.seen().iter().all(|s| s.metric != "mcp_task_completion"),
        "the judge was asked: {:?}",
        j.seen()
    );
    let text = run(&h, &f, &[], Some(&j));
    assert!(!text.stdout.contains("1 passed"), "{}", text.stdout);
}

/// A reply that is not a verdict, a refusal, a timeout and a 429 are each
/// an `error` row saying why, and the run fails: an error is not a pass.
#[test]
fn a_malformed_reply_a_refusal_a_timeout_and_a_429_are_error_rows_with_the_reason() {
    let h = Home::new();
    let j = Judge::start();
    let f = h.file(
        "f.yml",
        &format!(
            "{}      provider: {{ url: \"{}\", model: judge-1, api_key: \"${{env.JUDGE_KEY}}\", timeout: 1s, retries: 1 }}\n      plan_quality: {{}}\n",
            JUDGED, j.url
        ),
    );
    j.answer(
        "rubric",
        Reply::Text("The output covers the query well: 9/10.".into()),
    );
    j.answer(
        "mcp_use",
        Reply::Refuse("I can't help with grading this.".into()),
    );
    j.answer("mcp_task_completion", Reply::Hang);
    j.answer(
        "plan_quality",
        Reply::Status(429, "Rate limit reached for judge-1".into()),
    );
    let out = run(&h, &f, &["--format", "json"], None);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let t = out.json();
    let reason = |m: &str| {
        let r = row(&t, m);
        assert_eq!(r["status"], "error", "{r:#}");
        assert!(r.get("score").is_none(), "{r:#}");
        r["reason"].as_str().unwrap_or_default().to_owned()
    };
    let malformed = reason("rubric");
    assert!(
        malformed.contains("not the JSON object asked for"),
        "{malformed}"
    );
    assert!(
        malformed.contains("9/10"),
        "what came is quoted: {malformed}"
    );
    let refused = reason("mcp_use");
    assert!(
        refused.contains("refused to grade: I can't help with grading this."),
        "{refused}"
    );
    let timeout = reason("mcp_task_completion");
    assert!(timeout.contains("did not answer within 1s"), "{timeout}");
    let limited = reason("plan_quality");
    assert!(
        limited.contains("429 Too Many Requests: Rate limit reached for judge-1 (2 attempts)"),
        "{limited}"
    );
    assert_eq!(
        j.seen()
            .iter()
            .filter(|s| s.metric == "plan_quality")
            .count(),
        2,
        "a 429 is tried again once (retries: 1)"
    );
    let text = run(&h, &f, &[], None);
    assert!(
        text.stdout
            .contains("eval mcp_use ERROR: the judge refused to grade"),
        "{}",
        text.stdout
    );
    let junit = run(&h, &f, &["--format", "junit"], None);
    assert!(junit.stdout.contains(r#"errors="4""#), "{}", junit.stdout);
    assert!(
        junit.stdout.contains("<error message=\"the judge refused"),
        "{}",
        junit.stdout
    );
}

/// With no judge configured, every metric defers saying why and the exit
/// code is what it would be without `eval:`; the reference's examples run
/// unchanged either way.
#[test]
fn the_reference_examples_run_unchanged_with_and_without_a_judge() {
    let h = Home::new();
    let j = Judge::start();
    let judged = h.file("judged.yml", JUDGED);
    let without = run(&h, &judged, &[], None);
    assert_eq!(without.code, 0, "{}", without.stderr);
    assert!(
        without
            .stdout
            .contains("eval mcp_task_completion DEFERRED: no judge provider is configured"),
        "{}",
        without.stdout
    );
    let junit = run(&h, &judged, &["--format", "junit"], None);
    assert!(junit.stdout.contains(r#"skipped="3""#), "{}", junit.stdout);
    // A judge named in the file whose key is not set defers, saying so.
    let named = h.file(
        "named.yml",
        &format!(
            "{JUDGED}      provider: {{ url: \"{}\", model: judge-1, api_key: \"${{env.NO_SUCH_JUDGE_KEY}}\" }}\n",
            j.url
        ),
    );
    let unset = run(&h, &named, &["--format", "json"], None);
    assert_eq!(unset.code, 0, "{}", unset.stderr);
    let reason = row(&unset.json(), "rubric")["reason"].to_string();
    assert!(reason.contains("NO_SUCH_JUDGE_KEY"), "{reason}");
    assert!(j.seen().is_empty());

    let with = run(&h, &judged, &[], Some(&j));
    assert_eq!(with.code, 0, "{}", with.stdout);
    assert_eq!(j.seen().len(), 3);

    let parametric = h.file("parametric.yml", PARAMETRIC);
    let plain = run(&h, &parametric, &["--format", "json"], None);
    let judged_run = run(&h, &parametric, &["--format", "json"], Some(&j));
    assert_eq!(plain.code, judged_run.code);
    assert_eq!(j.seen().len(), 3, "no eval: block, no judge call");
    let rows = judged_run.json();
    for (t, name) in rows
        .as_array()
        .expect("a trace per case")
        .iter()
        .zip(["short", "long", "golden"])
    {
        assert_eq!(t["composition"]["case"], name);
        assert!(t.get("eval").is_none(), "{t:#}");
    }
}

/// With `cases:`, every case gets its own row per metric, and the report
/// aggregates each metric over the cases (mean and minimum).
#[test]
fn each_case_is_judged_and_the_cases_are_aggregated() {
    let h = Home::new();
    let j = Judge::start();
    let text = PARAMETRIC.replace(
        "    cases:",
        "    eval:\n      rubric:\n        threshold: 0.6\n        criteria: [relevant hits, \"right count\"]\n      plan_quality: { threshold: 0.5 }\n    cases:",
    );
    let f = h.file("p.yml", &text);
    let json = run(&h, &f, &["--format", "json"], Some(&j));
    let traces = json.json();
    let traces = traces.as_array().expect("a trace per case");
    assert_eq!(traces.len(), 3);
    for t in traces {
        assert_eq!(row(t, "rubric")["status"], "pass");
        let agg = &t["eval_aggregate"][0];
        assert_eq!(agg["metric"], "rubric");
        assert_eq!(agg["cases"], 3);
        assert_eq!(agg["mean"], 0.9);
        assert_eq!(agg["min"], 0.9);
    }
    assert_eq!(
        j.seen().iter().filter(|s| s.metric == "rubric").count(),
        3,
        "the rubric is asked per case: each case's output differs"
    );
    assert_eq!(
        j.seen()
            .iter()
            .filter(|s| s.metric == "plan_quality")
            .count(),
        1,
        "the plan is the same for every case: asked once"
    );
    assert_eq!(row(&traces[1], "plan_quality")["judge"]["reused"], true);
    let out = run(&h, &f, &[], Some(&j));
    assert!(
        out.stdout
            .contains("eval parametric rubric: mean 0.90 · min 0.90 over 3 case(s) (3 passed)"),
        "{}",
        out.stdout
    );
    let junit = run(&h, &f, &["--format", "junit"], Some(&j));
    assert!(
        junit
            .stdout
            .contains(r#"<property name="eval.parametric.rubric.min" value="0.9000"/>"#),
        "{}",
        junit.stdout
    );
    assert!(
        junit
            .stdout
            .contains(r#"name="parametric [long] eval rubric""#)
    );
}

/// The key reaches the endpoint and no file: not a saved run, not its copy
/// of the file, not a cassette, not the report.
#[test]
fn the_key_is_in_no_file() {
    let h = Home::new();
    let j = Judge::start();
    let f = h.file(
        "f.yml",
        &format!(
            "{JUDGED}      provider: {{ url: \"{}\", model: judge-1, api_key: \"${{env.JUDGE_KEY}}\" }}\n",
            j.url
        ),
    );
    let cassette = h.path("c.json");
    let c = cassette.display().to_string();
    let out = run(&h, &f, &["--record", &c, "--format", "json"], None);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let eval = h.out(&["eval", "latest", "--format", "json"]);
    assert_eq!(eval.code, 0, "{}", eval.stderr);
    assert!(
        j.seen()
            .iter()
            .all(|s| s.auth.as_deref() == Some(format!("Bearer {KEY}").as_str()))
    );
    for o in [&out, &eval] {
        assert!(!o.stdout.contains(KEY) && !o.stderr.contains(KEY));
    }
    let mut files = vec![cassette];
    let mut dirs = vec![h.path("data")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("dir").flatten() {
            if e.path().is_dir() {
                dirs.push(e.path());
            } else {
                files.push(e.path());
            }
        }
    }
    assert!(files.len() > 4, "{files:?}");
    for p in files {
        let text = String::from_utf8_lossy(&std::fs::read(&p).expect("read")).into_owned();
        assert!(!text.contains(KEY), "the key is in {}", p.display());
    }
}

/// A cassette keeps the judge's calls: a replay is judged as the recording
/// was, with the endpoint stopped and no judge configured, for free.
#[test]
fn a_cassette_replays_the_judge_with_the_endpoint_stopped() {
    let h = Home::new();
    let mut j = Judge::start();
    let f = h.file("judged.yml", JUDGED);
    let cassette = h.path("c.json").display().to_string();
    j.answer("rubric", Reply::Grade(0.4));
    let recorded = run(
        &h,
        &f,
        &["--record", &cassette, "--format", "json"],
        Some(&j),
    );
    assert_eq!(recorded.code, 1);
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).expect("cassette")).expect("json");
    assert_eq!(
        saved["judge"].as_array().map(Vec::len),
        Some(3),
        "{saved:#}"
    );
    assert_eq!(saved["judge"][0]["model"], "judge-1");
    j.stop();
    for judge in [true, false] {
        let mut args = vec!["--replay", cassette.as_str(), "--format", "json"];
        let flags: Vec<String> = judged_by(&j);
        if judge {
            args.extend(flags.iter().map(String::as_str));
        }
        let replayed = run(&h, &f, &args, None);
        assert_eq!(replayed.code, 1, "{}", replayed.stderr);
        let (a, b) = (recorded.json(), replayed.json());
        for m in ["mcp_task_completion", "mcp_use", "rubric"] {
            assert_eq!(row(&a, m)["score"], row(&b, m)["score"], "{m}");
            assert_eq!(row(&a, m)["status"], row(&b, m)["status"], "{m}");
            assert_eq!(row(&a, m)["reasoning"], row(&b, m)["reasoning"], "{m}");
            assert_eq!(row(&b, m)["judge"]["replayed"], true);
            assert_eq!(row(&b, m)["judge"]["cost_usd"], 0.0);
        }
    }
    // A replay whose prompt changed is not judged by the old answer.
    let changed = h.file(
        "changed.yml",
        &JUDGED.replace("covers query", "names a package"),
    );
    let out = run(
        &h,
        &changed,
        &["--replay", &cassette, "--format", "json"],
        None,
    );
    let reason = row(&out.json(), "rubric")["reason"].to_string();
    assert!(reason.contains("is not in cassette"), "{reason}");
}

/// A demo server over HTTP whose `call_counts` tool counts every call.
struct Demo {
    child: Child,
    url: String,
}

impl Demo {
    fn start() -> Demo {
        let mut child = common::pipewright()
            .args(["demo-server", "--http", "127.0.0.1:0"])
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn");
        let stderr = child.stderr.take().expect("stderr");
        let mut line = String::new();
        let _ = BufReader::new(stderr).read_line(&mut line);
        let url = line
            .trim()
            .rsplit(' ')
            .next()
            .unwrap_or_default()
            .to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{line}");
        Demo { child, url }
    }

    /// How often each tool was called.
    fn counts(&self, h: &Home) -> Value {
        let o = h.out(&["tools", "call", "call_counts", "--url", &self.url]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let v: Value = serde_json::from_str(&o.stdout).expect("json");
        v.get("counts")
            .cloned()
            .unwrap_or_else(|| v["structuredContent"]["counts"].clone())
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `pipewright eval RUN` grades a saved run again with the file as it is
/// now, calling no tool; `runs diff` shows what the new rubric changed.
#[test]
fn eval_judges_a_saved_run_again_with_zero_tool_calls() {
    let h = Home::new();
    let j = Judge::start();
    let demo = Demo::start();
    let f = h.file("judged.yml", JUDGED);
    let first = run(&h, &f, &["--url", &demo.url, "--format", "json"], Some(&j));
    assert_eq!(first.code, 0, "{}", first.stderr);
    let old = first.json()["run_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let before = demo.counts(&h);
    assert_eq!(before["search_packages"], 1, "{before}");
    // The rubric changes; yesterday's run is judged again.
    std::fs::write(
        &f,
        JUDGED.replace(
            "          - { name: \"covers query\", weight: 1.0 }",
            "          - { name: \"covers query\", weight: 1.0 }\n          - { name: \"ranks by relevance\", weight: 3.0 }",
        ),
    )
    .expect("write");
    j.answer("rubric", Reply::Grade(0.2));
    let again = h.out(&["eval", old.as_str(), "--format", "json"].concat_flags(&judged_by(&j)));
    assert_eq!(again.code, 1, "{}", again.stderr);
    let t = again.json();
    assert_eq!(t["judged_from"], old);
    assert_ne!(t["run_id"], old);
    assert_eq!(row(&t, "rubric")["items"][1]["name"], "ranks by relevance");
    assert_eq!(row(&t, "rubric")["status"], "fail");
    assert!(
        again
            .stderr
            .contains(&format!("judged run {old} again as run")),
        "{}",
        again.stderr
    );
    assert_eq!(demo.counts(&h), before, "no tool was called again");
    let new = t["run_id"].as_str().unwrap_or_default().to_owned();
    let diff = h.out(&["runs", "diff", old.as_str(), new.as_str()]);
    assert_eq!(diff.code, 1);
    assert!(
        diff.stdout
            .contains("eval.rubric.status: \"pass\" → \"fail\""),
        "{}",
        diff.stdout
    );
    assert!(
        diff.stdout.contains("eval.rubric.score: 0.9 → 0.2"),
        "{}",
        diff.stdout
    );
    // `--dry-run` shows the prompt the judge would get, and asks nothing.
    let asked = j.seen().len();
    let dry = h.out(&["eval", old.as_str(), "--dry-run"].concat_flags(&judged_by(&j)));
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(dry.stdout.contains("── eval rubric · "), "{}", dry.stdout);
    assert!(dry.stdout.contains("ranks by relevance"), "{}", dry.stdout);
    assert_eq!(j.seen().len(), asked);
}

/// Judge calls count against `budget:` and appear in the plan.
#[test]
fn judge_calls_count_against_the_budget_and_appear_in_the_plan() {
    let h = Home::new();
    let j = Judge::start();
    let text = format!(
        "pricing:\n  models:\n    judge-1: {{ input_per_mtok: 100, output_per_mtok: 100 }}\n{}",
        JUDGED.replace(
            "    output: search\n",
            "    output: search\n    budget: { max_cost_usd: 1.0 }\n",
        )
    );
    let f = h.file("f.yml", &text);
    let plan = h.out(&["plan", f.to_str().unwrap_or_default()].concat_flags(&judged_by(&j)));
    assert_eq!(plan.code, 0, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout.contains("eval  rubric  judge judge-1  $0."),
        "{}",
        plan.stdout
    );
    assert!(plan.stdout.contains("+ 3 judge call(s)"), "{}", plan.stdout);
    let tight = h.file(
        "tight.yml",
        &text.replace("max_cost_usd: 1.0", "max_cost_usd: 0.1"),
    );
    let plan = h.out(&["plan", tight.to_str().unwrap_or_default()].concat_flags(&judged_by(&j)));
    assert_eq!(plan.code, 3, "{}", plan.stdout);
    assert!(plan.stdout.contains("trips at `eval "), "{}", plan.stdout);
    let out = run(&h, &tight, &["--format", "json"], Some(&j));
    assert_eq!(out.code, 3, "{}", out.stderr);
    let t = out.json();
    assert_eq!(t["composition"]["budget_tripped"], "max_cost_usd");
    let stopped: Vec<&Value> = t["eval"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| {
            r["reason"]
                .as_str()
                .unwrap_or_default()
                .starts_with("not judged: the budget")
        })
        .collect();
    assert!(!stopped.is_empty(), "{t:#}");
    let spent: f64 = t["eval"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["judge"]["cost_usd"].as_f64())
        .sum();
    assert!((t["composition"]["cost_total"].as_f64().unwrap_or_default() - spent).abs() < 1e-9);
}

/// `serve --eval`: a served composition is graded after the answer, and
/// the judged rows land in its saved run.
#[test]
fn serve_grades_a_served_run_after_the_answer() {
    let h = Home::new();
    let j = Judge::start();
    let f = h.file("judged.yml", JUDGED);
    let server = format!(
        "s={} serve --eval --judge-url {} --judge-model judge-1 --judge-key-env JUDGE_KEY {}",
        assert_cmd::cargo::cargo_bin("pipewright").display(),
        j.url,
        f.display()
    );
    // The served process gets time to finish judging after its stdin
    // closes (an MCP client that kills at once may cut it short).
    let out = h.out(&[
        "tools",
        "call",
        "judged",
        "--server",
        &server,
        "--args",
        r#"{"query":"mcp"}"#,
    ]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let list = h.out(&["runs", "list", "--format", "json"]);
    let runs: Value = serde_json::from_str(&list.stdout).expect("json");
    let id = runs[0]["id"].as_str().unwrap_or_default().to_owned();
    let shown = h.out(&["runs", "show", &id, "--format", "json"]);
    let t = shown.json();
    assert_eq!(row(&t, "rubric")["status"], "pass", "{t:#}");
    assert_eq!(row(&t, "rubric")["judge"]["model"], "judge-1");
    assert_eq!(j.seen().len(), 3);
}

/// `["a", "b"].concat_flags(&flags)`: the arguments then the flags.
trait ConcatFlags {
    fn concat_flags<'a>(&'a self, flags: &'a [String]) -> Vec<&'a str>;
}

impl ConcatFlags for [&str] {
    fn concat_flags<'a>(&'a self, flags: &'a [String]) -> Vec<&'a str> {
        let mut v: Vec<&str> = self.to_vec();
        v.extend(flags.iter().map(String::as_str));
        v
    }
}

/// A rubric's decision tree: the judge answers its questions in one call,
/// pipewright walks them to a leaf; an answer that is no option is an
/// error.
#[test]
fn a_decision_tree_is_walked_by_the_judges_answers() {
    let h = Home::new();
    let j = Judge::start();
    j.answer_all(Reply::Grade(1.0));
    let f = h.file(
        "tree.yml",
        &JUDGED.replace(
            "      mcp_task_completion: { threshold: 0.8 }\n      mcp_use: { threshold: 0.7 }\n      rubric:\n        criteria:\n          - { name: \"covers query\", weight: 1.0 }\n",
            "      rubric:\n        threshold: 0.6\n        tree:\n          question: Does the output name a package?\n          options:\n            yes:\n              question: Is the first package relevant to the query?\n              options: { yes: 1, no: { score: 0.4, label: off-topic } }\n            no: 0\n",
        ),
    );
    let walked = |a1: &str, a2: &str| {
        Reply::Object(serde_json::json!({
            "answers": [
                { "question": "q1", "answer": a1, "reasoning": "names mcp-core" },
                { "question": "q2", "answer": a2, "reasoning": "it is about something else" }
            ],
            "reasoning": "named, not relevant"
        }))
    };
    j.answer("rubric_tree", walked("Yes", "no"));
    let out = run(&h, &f, &["--format", "json"], Some(&j));
    assert_eq!(out.code, 1);
    let t = out.json();
    let r = row(&t, "rubric");
    assert_eq!(r["status"], "fail");
    assert_eq!(r["score"], 0.4);
    assert_eq!(r["reasoning"], "[off-topic] named, not relevant");
    assert_eq!(r["items"][0]["answer"], "yes");
    assert_eq!(
        r["items"][1]["name"],
        "Is the first package relevant to the query?"
    );
    assert_eq!(r["judge"]["prompt"], "rubric_tree@1");
    let asked = j.request("rubric_tree");
    assert_eq!(
        asked.material["questions"][1]["answers"],
        serde_json::json!(["yes", "no"])
    );
    j.answer("rubric_tree", walked("perhaps", "no"));
    let out = run(&h, &f, &["--format", "json"], Some(&j));
    let reason = row(&out.json(), "rubric")["reason"].to_string();
    assert!(
        reason.contains("answered question `q1` with `perhaps`, not one of: yes, no"),
        "{reason}"
    );
}

/// The judge's reply is untrusted input: an answer over its size limit is
/// refused unread past the limit (which a variable raises), a verdict
/// nested past the depth limit is refused before a tree is built, and a
/// long reasoning is kept cut to its bound.
#[test]
fn a_reply_over_its_size_or_depth_limit_is_an_error_row_and_reasoning_is_cut() {
    let h = Home::new();
    let j = Judge::start();
    let f = h.file("judged.yml", JUDGED);
    j.answer("rubric", Reply::Big(200 * 1024));
    j.answer(
        "mcp_use",
        Reply::Text(format!("{}{}", "[".repeat(300), "]".repeat(300))),
    );
    j.answer("mcp_task_completion", Reply::Big(20_000));
    let mut c = h.cmd();
    c.env("PIPEWRIGHT_JUDGE_MAX_REPLY_KB", "64")
        .args(["run", "--format", "json"])
        .args(judged_by(&j))
        .arg(&f);
    let o = c.output().expect("runs");
    let t: Value = serde_json::from_slice(&o.stdout).expect("json");
    let big = row(&t, "rubric");
    assert_eq!(big["status"], "error");
    let reason = big["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("larger than 64 KiB") && reason.contains("PIPEWRIGHT_JUDGE_MAX_REPLY_KB"),
        "{reason}"
    );
    let deep = row(&t, "mcp_use")["reason"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(deep.contains("nested more than 127 levels"), "{deep}");
    let long = row(&t, "mcp_task_completion");
    assert_eq!(long["status"], "pass");
    assert_eq!(
        long["reasoning"].as_str().map(|r| r.chars().count()),
        Some(4001),
        "4000 and `…`"
    );
    // Raised, the same answer is read.
    let mut c = h.cmd();
    c.env("PIPEWRIGHT_JUDGE_MAX_REPLY_KB", "1024")
        .args(["run", "--format", "json"])
        .args(judged_by(&j))
        .arg(&f);
    let t: Value = serde_json::from_slice(&c.output().expect("runs").stdout).expect("json");
    assert_eq!(
        row(&t, "rubric")["status"],
        "pass",
        "{:#}",
        row(&t, "rubric")
    );
}
