//! Knowing before paying, end to end with the real binary and the real demo
//! server: budget caps tripping before dispatch, `--on-budget-exceeded`
//! modes, `_meta` and table pricing, token counts, preflight, `plan`,
//! cassettes (record, then replay with the server stopped) and secret
//! redaction in cassettes, traces and logs.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use serde_json::{Value, json};

mod common;

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap_or_else(|e| panic!("write {}: {e}", p.display()));
    p
}

/// Runs `pipewright SUB FILE --format json ARGS…` with extra env; returns
/// (exit code, parsed stdout, stdout, stderr).
fn pw(
    sub: &str,
    file: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (i32, Value, String, String) {
    let home = tmp();
    let mut cmd = common::pipewright_in(home.path());
    cmd.arg(sub).arg(file).args(["--format", "json"]);
    if sub == "run" {
        cmd.arg("--no-save");
    }
    cmd.args(extra);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap_or_else(|e| panic!("spawn: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap_or(-1), v, stdout, stderr)
}

fn run(file: &Path, extra: &[&str]) -> (i32, Value, String) {
    let (code, v, _, err) = pw("run", file, extra, &[]);
    (code, v, err)
}

/// Three paid calls: each `summarize` reports $0.002 and its word counts
/// as tokens in `_meta`; the bundled table projects $0.002 and 30 tokens.
const THREE_PAID: &str = "pipe:\n  - id: s1\n    tool: summarize\n    args: {text: \"one two three four five\"}\n  - id: s2\n    tool: summarize\n    args: {text: \"one two three four five\"}\n  - id: s3\n    tool: summarize\n    args: {text: \"one two three four five\"}\n";

fn cost(t: &Value) -> f64 {
    t["composition"]["cost_total"].as_f64().unwrap_or(-1.0)
}

#[test]
fn max_cost_trips_before_the_call_that_would_pass_it() {
    let d = tmp();
    let f = write(d.path(), "p.yml", THREE_PAID);
    let (code, t, err) = run(&f, &["--max-cost", "0.005"]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(t["composition"]["status"], "budget_exceeded");
    assert_eq!(t["composition"]["budget_tripped"], "max_cost_usd");
    // s3 would have made it $0.006: it was never dispatched.
    assert_eq!(t["nodes"]["s2"]["status"], "ok");
    assert_eq!(t["nodes"]["s3"]["status"], "skipped");
    assert_eq!(t["nodes"]["s3"]["attempts"], 0);
    assert!((cost(&t) - 0.004).abs() < 1e-9, "{t}");
}

#[test]
fn composition_max_tokens_trips_before_dispatch() {
    let d = tmp();
    // 30 projected per call; 10 actual per call (5 words in, 5 out).
    let f = write(
        d.path(),
        "p.yml",
        "compositions:\n  - name: c\n    budget: {max_tokens: 45}\n    nodes:\n      - {id: s1, tool: summarize, args: {text: \"one two three four five\"}}\n      - {id: s2, needs: [s1], tool: summarize, args: {text: \"one two three four five\"}}\n      - {id: s3, needs: [s2], tool: summarize, args: {text: \"one two three four five\"}}\n",
    );
    let (code, t, err) = run(&f, &[]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(t["composition"]["budget_tripped"], "max_tokens");
    assert_eq!(t["composition"]["tokens_total"], 20);
    assert_eq!(t["nodes"]["s3"]["attempts"], 0);
}

#[test]
fn per_call_caps_trip_before_dispatch() {
    let d = tmp();
    let cases: [(&str, &[&str], &str); 3] = [
        (
            "    max_cost_per_call_usd: 0.001\n",
            &[],
            "max_cost_per_call_usd",
        ),
        ("    max_tokens_per_call: 10\n", &[], "max_tokens_per_call"),
        (
            "",
            &["--max-cost-per-call", "0.001"],
            "max_cost_per_call_usd",
        ),
    ];
    for (field, flags, cap) in cases {
        let f = write(
            d.path(),
            "p.yml",
            &format!(
                "pipe:\n  - id: free\n    tool: echo\n    args: {{message: hi}}\n  - id: paid\n    tool: summarize\n    args: {{text: \"a b c\"}}\n{field}"
            ),
        );
        let (code, t, err) = run(&f, flags);
        assert_eq!(code, 3, "{cap}: {err}");
        assert_eq!(t["composition"]["budget_tripped"], cap, "{t}");
        assert_eq!(t["nodes"]["free"]["status"], "ok");
        assert_eq!(t["nodes"]["paid"]["attempts"], 0, "{cap}: {t}");
        assert_eq!(cost(&t), 0.0);
    }
}

#[test]
fn max_duration_trips_and_names_its_cap() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: wait\n    tool: slow\n    args: {ms: 5000}\n  - id: after\n    tool: echo\n    args: {message: late}\n",
    );
    let (code, t, err) = run(&f, &["--max-duration", "300ms"]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(t["composition"]["budget_tripped"], "max_duration_ms");
    assert_eq!(t["nodes"]["after"]["attempts"], 0);
}

#[test]
fn each_on_budget_exceeded_mode() {
    let d = tmp();
    let f = write(d.path(), "p.yml", THREE_PAID);
    let cap = ["--max-cost", "0.005", "--on-budget-exceeded"];
    let with = |mode: &str| {
        let mut a = cap.to_vec();
        a.push(mode);
        run(&f, &a)
    };
    let (code, t, _) = with("stop");
    assert_eq!((code, t["nodes"]["s3"]["attempts"].clone()), (3, json!(0)));

    let (code, t, err) = with("continue");
    assert_eq!(code, 3, "{err}");
    assert_eq!(t["composition"]["status"], "budget_exceeded");
    assert_eq!(t["composition"]["budget_tripped"], "max_cost_usd");
    assert_eq!(t["nodes"]["s3"]["status"], "ok");
    assert!((cost(&t) - 0.006).abs() < 1e-9);

    let (code, t, err) = with("warn");
    assert_eq!(code, 0, "{err}");
    assert_eq!(t["composition"]["status"], "completed");
    assert_eq!(t["composition"]["budget_tripped"], "max_cost_usd");
    assert_eq!(t["nodes"]["s3"]["status"], "ok");
    assert!(
        err.contains("warning: budget `max_cost_usd` was exceeded"),
        "{err}"
    );
}

#[test]
fn meta_cost_wins_then_file_pricing_then_the_table() {
    let d = tmp();
    let table = write(
        d.path(),
        "prices.yaml",
        "tools:\n  echo: {cost_usd: 0.5}\n  summarize: {cost_usd: 9.0}\n  get_*: {cost_usd: 0.01}\n",
    );
    let f = write(
        d.path(),
        "p.yml",
        "pricing:\n  tools:\n    echo: {cost_usd: 0.25}\npipe:\n  - id: say\n    tool: echo\n    args: {message: \"hello world\"}\n  - id: sum\n    tool: summarize\n    args: {text: \"one two three four five six seven eight nine ten eleven twelve thirteen\"}\n  - id: readme\n    tool: get_readme\n    args: {package: jqlite}\n  - id: plain\n    tool: echo\n    args: {message: x}\n    mock: {result: x}\n",
    );
    let (code, t, err) = run(&f, &["--pricing-table", table.to_str().unwrap_or("")]);
    assert_eq!(code, 0, "{err}");
    let n = &t["nodes"];
    assert_eq!(n["say"]["cost_usd"], 0.25, "the file's pricing: wins");
    assert_eq!(n["sum"]["cost_usd"], 0.002, "_meta wins over the table");
    assert_eq!(n["sum"]["tokens"], 13 + 12);
    assert_eq!(n["sum"]["model"], "demo-small");
    assert_eq!(n["readme"]["cost_usd"], 0.01, "globs match");
    assert_eq!(n["plain"]["cost_usd"], 0.0);
    assert!((cost(&t) - 0.262).abs() < 1e-9, "{t}");
    // Context tokens of outputs, per node and in total.
    assert_eq!(n["say"]["output_tokens"], 2);
    let all = t["composition"]["output_tokens_all"].as_u64().unwrap_or(0);
    let last = t["composition"]["output_tokens"].as_u64().unwrap_or(0);
    assert!(all > last && last > 0, "{t}");

    let bad = write(d.path(), "bad.yaml", "tools:\n  echo: {price: 1}\n");
    let (code, _, err) = run(&f, &["--pricing-table", bad.to_str().unwrap_or("")]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.yaml") && err.contains("price"), "{err}");
}

#[test]
fn preflight_stops_bad_runs_before_any_call() {
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: first\n    tool: echo\n    args: {message: hi}\n  - id: find\n    tool: serch_users\n    args: {query: a}\n",
    );
    let (code, t, err) = run(&f, &[]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(t, Value::Null, "nothing ran, no trace");
    assert!(err.contains("p.yml:6:11"), "{err}");
    assert!(err.contains("has no tool `serch_users`"), "{err}");
    assert!(err.contains("did you mean `search_users`?"), "{err}");

    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: find\n    tool: search_users\n    args: {query: a, limit: many}\n  - id: later\n    tool: get_user_details\n    args: {user_id: \"${find.users[0].id}\"}\n",
    );
    let (code, _, err) = run(&f, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("at /limit"), "{err}");
    assert!(
        !err.contains("later"),
        "unknown args are not validated: {err}"
    );

    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: gone\n    tool: delete_user\n    args: {user_id: u3}\n",
    );
    let (code, _, err) = run(&f, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("destructive") && err.contains("--yes"),
        "{err}"
    );
    let (code, t, err) = run(&f, &["--yes"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(t["nodes"]["gone"]["output"]["deleted"], "u3");

    // A mocked node needs no tool.
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: m\n    tool: no_such_tool\n    mock: {result: 1}\n",
    );
    assert_eq!(run(&f, &[]).0, 0);
}

#[test]
fn plan_shows_waves_args_costs_and_verdict_without_calling() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/budgeted.yml");
    // No saved runs: projections come from the pricing table.
    let data = tmp();
    let home = data.path().to_str().unwrap_or("");
    let env = [("XDG_DATA_HOME", home)];
    let (code, p, _, err) = pw("plan", &file, &[], &env);
    assert_eq!(code, 0, "{err}");
    let c = &p["compositions"][0];
    assert_eq!(c["waves"], json!([["readme"], ["summary"]]));
    assert_eq!(c["calls"][1]["args"], json!({"text": "<from readme.body>"}));
    assert_eq!(c["calls"][1]["projection"]["total"]["cost_usd"], 0.002);
    assert_eq!(c["calls"][1]["projection"]["total"]["source"], "table");
    assert_eq!(c["verdict"]["within_budget"], true);
    assert_eq!(p["preflight"]["problems"], json!([]));

    let (code, p, _, _) = pw("plan", &file, &["--max-cost", "0.001"], &env);
    assert_eq!(code, 3);
    let b = &p["compositions"][0]["verdict"]["breaches"][0];
    assert_eq!(
        (b["cap"].clone(), b["node"].clone()),
        (json!("max_cost_usd"), json!("summary"))
    );

    // run --dry-run is the same plan, and calls nothing.
    let (code, p2, _, _) = pw(
        "run",
        &file,
        &["--dry-run", "--estimate-cost", "--max-cost", "0.001"],
        &[],
    );
    assert_eq!(code, 3);
    assert_eq!(p, p2);

    // Destructive tools are listed, not refused, by a plan.
    let d = tmp();
    let f = write(
        d.path(),
        "p.yml",
        "pipe:\n  - id: gone\n    tool: delete_user\n    args: {user_id: u3}\n",
    );
    let (code, p, _, _) = pw("plan", &f, &[], &[]);
    assert_eq!(code, 0);
    assert_eq!(p["preflight"]["destructive"][0]["node"], "gone");
}

fn http_server() -> (Child, String) {
    let mut server = common::pipewright()
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
    (server, url)
}

#[test]
fn record_then_replay_offline_gives_the_same_trace() {
    let d = tmp();
    let (mut server, url) = http_server();
    let f = write(
        d.path(),
        "p.yml",
        &format!(
            "servers:\n  demo: {{url: \"{url}\", headers: {{Authorization: \"Bearer ${{env.PW_TOKEN}}\"}}}}\ncompositions:\n  - name: c\n    nodes:\n      - {{id: find, tool: search_users, args: {{query: a, limit: 3}}}}\n      - {{id: each, needs: [find], for_each: \"${{find.users}}\", max_concurrency: 3, tool: get_user_details, args: {{user_id: \"${{item.id}}\"}}}}\n      - {{id: sum, needs: [each], tool: summarize, args: {{text: \"${{each[0].name}} key ${{env.PW_KEY}}\"}}}}\n      - {{id: say, needs: [sum], tool: echo, args: {{message: \"${{sum.summary}}\"}}}}\n"
        ),
    );
    let cassette = d.path().join("calls.json");
    let secrets = [
        ("PW_TOKEN", "tok-4f9a-secret-header"),
        ("PW_KEY", "key-77c1-secret-env"),
    ];
    let (code, live, live_text, live_err) = pw(
        "run",
        &f,
        &["--record", cassette.to_str().unwrap_or("")],
        &secrets,
    );
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(code, 0, "{live_err}");
    assert!(cost(&live) > 0.0);

    let text = std::fs::read_to_string(&cassette).unwrap_or_default();
    let c: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    assert_eq!(c["version"], 1);
    assert_eq!(
        c["calls"].as_array().map(Vec::len),
        Some(1 + 3 + 1 + 1),
        "{text}"
    );
    assert!(c["tools"]["demo"].as_array().is_some_and(|t| !t.is_empty()));

    // The server is gone: the replay answers everything from the cassette.
    let (code, replay, replay_text, replay_err) = pw(
        "run",
        &f,
        &["--replay", cassette.to_str().unwrap_or("")],
        &secrets,
    );
    assert_eq!(code, 0, "{replay_err}");
    for id in ["find", "each", "sum", "say"] {
        for k in ["status", "args", "output", "raw", "iterations"] {
            if id == "each" && k == "raw" {
                // A fan-out keeps the raw result of whichever iteration
                // finished last: that varies between runs, not replays.
                continue;
            }
            let strip = |v: &Value| {
                let mut v = v.clone();
                if let Some(items) = v.as_array_mut() {
                    for it in items {
                        it["duration_ms"] = json!(0);
                        it["started_at"] = json!(null);
                    }
                }
                v
            };
            assert_eq!(
                strip(&live["nodes"][id][k]),
                strip(&replay["nodes"][id][k]),
                "{id}.{k}"
            );
        }
        assert_eq!(replay["nodes"][id]["replayed"], true);
    }
    assert_eq!(live["output"], replay["output"]);
    assert_eq!(cost(&replay), 0.0, "replayed calls are free");

    // Secrets reach neither the cassette, nor a trace, nor a log.
    for (what, s) in [
        ("cassette", &text),
        ("live trace", &live_text),
        ("live log", &live_err),
        ("replay trace", &replay_text),
        ("replay log", &replay_err),
    ] {
        for (_, secret) in secrets {
            assert!(!s.contains(secret), "{what} holds {secret}");
        }
    }
    assert!(text.contains("key ***"), "{text}");

    // A call the cassette lacks is an error naming it.
    let other = write(
        d.path(),
        "q.yml",
        &format!(
            "servers:\n  demo: {{url: \"{url}\"}}\npipe:\n  - {{id: x, tool: echo, args: {{message: never recorded}}}}\n"
        ),
    );
    let (code, t, _, err) = pw(
        "run",
        &other,
        &["--replay", cassette.to_str().unwrap_or("")],
        &[],
    );
    assert_eq!(code, 1, "{err}");
    let msg = t["nodes"]["x"]["error"].as_str().unwrap_or("");
    assert!(
        msg.contains("`echo`")
            && msg.contains("calls.json")
            && msg.contains("--replay-fallthrough"),
        "{msg}"
    );

    // Planning against the cassette projects those calls as free.
    let (code, p, _, err) = pw(
        "plan",
        &f,
        &["--replay", cassette.to_str().unwrap_or("")],
        &secrets,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        p["compositions"][0]["calls"][0]["projection"]["total"]["source"],
        "cassette"
    );
}

#[test]
fn replay_fallthrough_calls_the_live_server_for_what_is_missing() {
    let d = tmp();
    let cassette = d.path().join("c.json");
    let cassette = cassette.to_str().unwrap_or("");
    let one = write(
        d.path(),
        "one.yml",
        "pipe:\n  - {id: a, tool: echo, args: {message: recorded}}\n",
    );
    let (code, _, _, err) = pw("run", &one, &["--record", cassette], &[]);
    assert_eq!(code, 0, "{err}");
    let two = write(
        d.path(),
        "two.yml",
        "pipe:\n  - {id: a, tool: echo, args: {message: recorded}}\n  - {id: b, tool: echo, args: {message: live}}\n",
    );
    let (code, t, _, err) = pw(
        "run",
        &two,
        &["--replay", cassette, "--replay-fallthrough"],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(t["nodes"]["a"]["replayed"], true);
    assert_eq!(t["nodes"]["b"]["replayed"], Value::Null, "{t}");
    assert_eq!(t["nodes"]["b"]["output"], "live");
    let (code, t, _, _) = pw("run", &two, &["--replay", cassette], &[]);
    assert_eq!(code, 1);
    assert_eq!(t["nodes"]["b"]["status"], "failed");
}
