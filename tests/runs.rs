//! `pipewright runs …` against runs really made on the demo server, each
//! test in its own data directory.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode;
use serde_json::Value;

mod common;

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn cmd(&self) -> Command {
        let mut c = Command::from_std(common::pipewright());
        c.env("PIPEWRIGHT_DATA_DIR", self.dir.path().join("data"));
        c
    }

    fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p
    }

    /// `run FILE ARGS…` (saved), returning its exit code.
    fn run(&self, file: &Path, args: &[&str]) -> i32 {
        let out = self
            .cmd()
            .arg("run")
            .arg(file)
            .args(args)
            .output()
            .expect("runs");
        out.status.code().unwrap_or(-1)
    }

    fn out(&self, args: &[&str]) -> (i32, String, String) {
        let o = self.cmd().args(args).output().expect("runs");
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

const FLOW: &str = "pipe:\n  - id: find\n    tool: search_users\n    args: { query: \"${var.q}\", limit: 1 }\n  - id: details\n    tool: get_user_details\n    args: { user_id: \"${find.users[0].id}\" }\n";

#[test]
fn list_shows_runs_newest_first_and_filters() {
    let h = Home::new();
    let flow = h.file("flow.yml", FLOW);
    let other = h.file(
        "other.yml",
        "pipe:\n  - id: e\n    tool: echo\n    args: { message: hi }\n",
    );
    assert_eq!(h.run(&flow, &["--var", "q=alice"]), 0);
    assert_eq!(h.run(&other, &[]), 0);
    assert_eq!(h.run(&flow, &["--var", "q=nobody-matches"]), 1);
    let (code, out, _) = h.out(&["runs", "list", "--format", "json"]);
    assert_eq!(code, 0);
    let rows: Vec<Value> = serde_json::from_str(&out).expect("json");
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0]["status"], "partial", "newest first: {out}");
    assert_eq!(rows[0]["failed_step"], "details");
    assert_eq!(rows[1]["file"], other.display().to_string());
    let (_, out, _) = h.out(&[
        "runs",
        "list",
        "--file",
        flow.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let rows: Vec<Value> = serde_json::from_str(&out).expect("json");
    assert_eq!(rows.len(), 2);
    let (_, out, _) = h.out(&["runs", "list", "--status", "completed", "--limit", "1"]);
    assert_eq!(out.lines().count(), 2, "a header and one run: {out}");
    assert!(out.contains("other.yml"), "{out}");
}

/// A durable run's id (`…-<16 hex>`, 32 characters) does not push its
/// row's columns out of line with the local runs' (issue 48, item 24).
#[test]
fn list_keeps_its_columns_for_a_durable_runs_longer_id() {
    let h = Home::new();
    let flow = h.file("flow.yml", FLOW);
    assert_eq!(h.run(&flow, &["--var", "q=alice"]), 0);
    let (_, shown, _) = h.out(&["runs", "show", "latest", "--format", "json"]);
    let mut trace: pipewright::engine::run::trace::Trace =
        serde_json::from_str(&shown).expect("a trace");
    // As `new_durable_id` draws them: a local id and 12 more hex digits.
    trace.run_id = format!("{}0123456789ab", trace.run_id);
    assert_eq!(trace.run_id.len(), 32);
    pipewright::engine::run::store::Runs::open(Some(&h.dir.path().join("data")))
        .expect("the runs store")
        .save(&trace)
        .expect("saved");
    assert_eq!(h.run(&flow, &["--var", "q=alice"]), 0);
    let (code, out, _) = h.out(&["runs", "list"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 4, "{out}");
    let at = |line: &str, what: &str| line.find(what).map(|b| line[..b].chars().count());
    let header = out.lines().next().unwrap_or_default();
    let time = at(header, "time (UTC)");
    for line in out.lines().skip(1) {
        let date = line
            .match_indices(" 20")
            .map(|(b, _)| line[..b + 1].chars().count())
            .find(|&c| Some(c) == time);
        assert!(
            date.is_some(),
            "the time column starts at {time:?} on every line:\n{out}"
        );
    }
    assert!(out.contains("0123456789ab  "), "{out}");
}

#[test]
fn show_prints_the_run_as_run_printed_it() {
    let h = Home::new();
    let flow = h.file("flow.yml", FLOW);
    let live = h
        .cmd()
        .args(["run", "--format", "json", "--var", "q=alice"])
        .arg(&flow)
        .output()
        .expect("runs");
    let live: Value = serde_json::from_slice(&live.stdout).expect("json");
    let (code, shown, _) = h.out(&["runs", "show", "latest", "--format", "json"]);
    assert_eq!(code, 0);
    let shown: Value = serde_json::from_str(&shown).expect("json");
    assert_eq!(shown, live, "the saved trace is the printed one");
    let (_, text, _) = h.out(&["runs", "show", &live["run_id"].as_str().unwrap()[..17]]);
    assert!(text.contains("composition [PASS] pipe"), "{text}");
    assert!(text.contains(live["run_id"].as_str().unwrap()), "{text}");
    let (_, junit, _) = h.out(&["runs", "show", "latest", "--format", "junit"]);
    assert!(junit.starts_with("<?xml"), "{junit}");
    let (_, fibe, _) = h.out(&["runs", "show", "latest", "--format", "fibe"]);
    let fibe: Value = serde_json::from_str(&fibe).expect("json");
    assert_eq!(fibe["status"], "completed");
    assert_eq!(fibe["pipeline_id"], live["run_id"]);
}

#[test]
fn diff_exits_0_when_same_1_with_the_changed_path_and_2_on_a_bad_id() {
    let h = Home::new();
    let flow = h.file("flow.yml", FLOW);
    assert_eq!(h.run(&flow, &["--var", "q=alice"]), 0);
    assert_eq!(h.run(&flow, &["--var", "q=alice"]), 0);
    assert_eq!(h.run(&flow, &["--var", "q=bob"]), 0);
    let (code, out, _) = h.out(&["runs", "diff", "latest~2", "latest~1"]);
    assert_eq!(code, 0, "same calls, same answers: {out}");
    assert!(out.contains("no differences"), "{out}");
    let (code, out, _) = h.out(&["runs", "diff", "latest~1", "latest"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("details.output.email: \"alice@example.com\" → \"bob.okafor@example.com\""),
        "{out}"
    );
    assert!(
        out.contains("find.args.query: \"alice\" → \"bob\""),
        "{out}"
    );
    let (code, json, _) = h.out(&["runs", "diff", "latest~1", "latest", "--format", "json"]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["same"], false);
    assert!(
        v["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["path"] == "details.output.email")
    );
    let (code, _, err) = h.out(&["runs", "diff", "latest", "no-such-run"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no saved run has the id `no-such-run`"),
        "{err}"
    );
    let (code, _, _) = h.out(&["runs", "diff", "latest~1", "latest", "--timing"]);
    assert_eq!(code, 1);
}

/// Issue 35, item 10: `runs diff` shows the file edit that made the
/// difference, with line numbers, beside the trace fields it changed.
#[test]
fn diff_shows_the_file_lines_that_changed_between_the_runs() {
    let h = Home::new();
    let flow = h.file("flow.yml", FLOW);
    assert_eq!(h.run(&flow, &["--var", "q=alice"]), 0);
    std::fs::write(&flow, FLOW.replace("limit: 1", "limit: 2")).expect("write");
    assert_eq!(h.run(&flow, &["--var", "q=alice"]), 0);
    let (code, out, _) = h.out(&["runs", "diff", "latest~1", "latest"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("file: 1 line(s) removed, 1 added"), "{out}");
    assert!(
        out.contains("- 4 │     args: { query: \"${var.q}\", limit: 1 }"),
        "{out}"
    );
    assert!(
        out.contains("+ 4 │     args: { query: \"${var.q}\", limit: 2 }"),
        "{out}"
    );
    assert!(out.contains("find.args.limit: 1 → 2"), "{out}");
    let (_, json, _) = h.out(&["runs", "diff", "latest~1", "latest", "--format", "json"]);
    let v: Value = serde_json::from_str(&json).expect("json");
    let lines = v["file"].as_array().expect("file lines");
    assert!(
        lines.iter().any(|l| l["op"] == "added"
            && l["line"] == 4
            && l["text"].as_str().unwrap().contains("limit: 2")),
        "{json}"
    );
    let (_, same, _) = h.out(&["runs", "diff", "latest", "latest"]);
    assert!(same.contains("file: the same text"), "{same}");
}

#[test]
fn prune_keeps_the_newest_and_the_default_cap_bounds_the_directory() {
    let h = Home::new();
    let e = h.file(
        "e.yml",
        "pipe:\n  - id: e\n    tool: echo\n    args: { message: hi }\n",
    );
    for _ in 0..4 {
        assert_eq!(h.run(&e, &[]), 0);
    }
    let (_, before, _) = h.out(&["runs", "list", "--format", "json"]);
    let before: Vec<Value> = serde_json::from_str(&before).unwrap();
    let (code, out, _) = h.out(&["runs", "prune", "--keep", "2"]);
    assert_eq!(code, 0);
    assert!(out.contains("removed 2 run(s), kept 2"), "{out}");
    let (_, after, _) = h.out(&["runs", "list", "--format", "json"]);
    let after: Vec<Value> = serde_json::from_str(&after).unwrap();
    assert_eq!(after, before[..2], "the newest two stay");
    let (code, _, err) = h.out(&["runs", "prune"]);
    assert_eq!(code, 2, "{err}");
    let (code, out, _) = h.out(&["runs", "prune", "--older-than", "30d"]);
    assert_eq!(code, 0);
    assert!(out.contains("removed 0 run(s), kept 2"), "{out}");
    // The cap: PIPEWRIGHT_MAX_RUNS=3 keeps three after every save.
    for _ in 0..3 {
        let o = h
            .cmd()
            .env("PIPEWRIGHT_MAX_RUNS", "3")
            .arg("run")
            .arg(&e)
            .output()
            .unwrap();
        assert!(o.status.success());
    }
    let traces = std::fs::read_dir(h.dir.path().join("data/runs"))
        .unwrap()
        .filter(|f| {
            f.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "json")
        })
        .count();
    assert_eq!(traces, 3);
}

/// The export parses with the OpenTelemetry protobuf definitions, and
/// its spans nest and stay inside each other, with ERROR on failures.
#[test]
fn otlp_export_is_a_valid_request_with_nested_spans_and_error_status() {
    let h = Home::new();
    let f = h.file(
        "fan.yml",
        "compositions:\n  - name: fan\n    nodes:\n      - id: list\n        tool: list_items\n        args: { count: 3 }\n      - id: each\n        needs: [list]\n        for_each: \"${list}\"\n        max_concurrency: 3\n        tool: slow\n        args: { ms: 20 }\n      - id: bad\n        needs: [list]\n        tool: fail\n        args: { message: nope }\n      - id: after_bad\n        needs: [bad]\n        tool: echo\n        args: { message: x }\n",
    );
    assert_eq!(h.run(&f, &[]), 1);
    let out = h.dir.path().join("trace.otlp.json");
    let (code, _, err) = h.out(&["runs", "export", "latest", "--otlp", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let req: ExportTraceServiceRequest =
        serde_json::from_str(&text).expect("an OTLP ExportTraceServiceRequest");
    let spans = &req.resource_spans[0].scope_spans[0].spans;
    let root = spans
        .iter()
        .find(|s| s.parent_span_id.is_empty())
        .expect("a root span");
    assert_eq!(
        spans.iter().filter(|s| s.parent_span_id.is_empty()).count(),
        1
    );
    assert!(
        spans
            .iter()
            .all(|s| s.trace_id == root.trace_id && s.trace_id.len() == 16)
    );
    let by_id = |id: &[u8]| {
        spans
            .iter()
            .find(|s| s.span_id == id)
            .expect("parent exists")
    };
    for s in spans.iter().filter(|s| !s.parent_span_id.is_empty()) {
        let p = by_id(&s.parent_span_id);
        assert!(
            s.start_time_unix_nano >= p.start_time_unix_nano,
            "{} starts inside {}",
            s.name,
            p.name
        );
        assert!(
            s.end_time_unix_nano <= p.end_time_unix_nano,
            "{} ends inside {}",
            s.name,
            p.name
        );
        assert!(s.end_time_unix_nano >= s.start_time_unix_nano);
    }
    let named = |n: &str| {
        spans
            .iter()
            .find(|s| s.name.starts_with(n))
            .unwrap_or_else(|| panic!("{n}"))
    };
    let each = named("each ");
    let iterations: Vec<_> = spans
        .iter()
        .filter(|s| s.parent_span_id == each.span_id)
        .collect();
    assert_eq!(iterations.len(), 3, "one child span per iteration");
    assert!(
        iterations
            .iter()
            .all(|s| s.end_time_unix_nano - s.start_time_unix_nano >= 20_000_000)
    );
    let bad = named("bad ");
    assert_eq!(bad.parent_span_id, root.span_id);
    let status = bad.status.as_ref().expect("status");
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_eq!(status.message, "nope");
    assert_eq!(root.status.as_ref().unwrap().code, StatusCode::Error as i32);
    assert_eq!(
        named("list ").status.as_ref().unwrap().code,
        StatusCode::Ok as i32
    );
    let tool = named("list ")
        .attributes
        .iter()
        .find(|a| a.key == "mcp.tool")
        .expect("tool attribute");
    assert!(format!("{:?}", tool.value).contains("list_items"));
    assert!(
        !spans.iter().any(|s| s.name.starts_with("after_bad")),
        "skipped: an event, not a span"
    );
    assert!(root.events.iter().any(|e| e.name == "node skipped"));
    // `run --otlp` writes the same shape.
    let again = h.dir.path().join("run.otlp.json");
    assert_eq!(h.run(&f, &["--otlp", again.to_str().unwrap()]), 1);
    let req: ExportTraceServiceRequest =
        serde_json::from_str(&std::fs::read_to_string(&again).unwrap()).expect("valid");
    assert_eq!(
        req.resource_spans[0].scope_spans[0].spans.len(),
        spans.len()
    );
}

/// `--otlp-endpoint` POSTs the same body to an OTLP/HTTP collector. No
/// collector runs in CI, so a listener on 127.0.0.1 stands in for one and
/// checks what arrives.
#[test]
fn otlp_endpoint_posts_the_export_to_a_collector() {
    use std::io::{BufRead, BufReader, Read, Write};
    let h = Home::new();
    let e = h.file(
        "e.yml",
        "pipe:\n  - id: e\n    tool: echo\n    args: { message: hi }\n",
    );
    assert_eq!(h.run(&e, &[]), 0);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let collector = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(conn.try_clone().unwrap());
        let mut head = String::new();
        let mut len = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line.to_ascii_lowercase().starts_with("content-length:") {
                len = line[15..].trim().parse().unwrap();
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; len];
        reader.read_exact(&mut body).unwrap();
        conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
            .unwrap();
        (head, body)
    });
    let (code, _, err) = h.out(&["runs", "export", "latest", "--otlp-endpoint", &url]);
    assert_eq!(code, 0, "{err}");
    let (head, body) = collector.join().unwrap();
    assert!(head.starts_with("POST /v1/traces"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{head}"
    );
    let req: ExportTraceServiceRequest = serde_json::from_slice(&body).expect("valid OTLP");
    assert_eq!(req.resource_spans[0].scope_spans[0].spans.len(), 2);
    let (code, _, err) = h.out(&[
        "runs",
        "export",
        "latest",
        "--otlp-endpoint",
        "http://127.0.0.1:9/v1/traces",
    ]);
    assert_eq!(code, 4, "nothing listens there: {err}");
}

/// A saved run exported as a cassette replays with no server: a plain
/// call, a retried one (its failure replayed too) and a fan-out.
#[test]
fn a_saved_run_exported_as_a_cassette_replays_the_same_outputs() {
    let h = Home::new();
    let f = h.file(
        "c.yml",
        "compositions:\n  - name: c\n    nodes:\n      - {id: find, tool: search_users, args: {query: a, limit: 3}}\n      - {id: again, tool: flaky, args: {key: k, failures: 1}, on_error: {retry: {max: 2, backoff: 10ms}}}\n      - {id: each, needs: [find], for_each: \"${find.users}\", max_concurrency: 3, tool: get_user_details, args: {user_id: \"${item.id}\"}}\n",
    );
    assert_eq!(h.run(&f, &[]), 0);
    let (code, live, err) = h.out(&["runs", "show", "latest", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let live: Value = serde_json::from_str(&live).expect("json");
    let c = h.dir.path().join("c.json");
    let (code, _, err) = h.out(&[
        "runs",
        "export",
        "latest",
        "--cassette",
        "--out",
        c.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let cassette: Value =
        serde_json::from_str(&std::fs::read_to_string(&c).expect("cassette")).expect("json");
    // find, again's failed and good attempts, three users.
    assert_eq!(cassette["calls"].as_array().map(Vec::len), Some(1 + 2 + 3));

    let (code, replay, err) = h.out(&[
        "run",
        f.to_str().unwrap(),
        "--replay",
        c.to_str().unwrap(),
        "--no-save",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let replay: Value = serde_json::from_str(&replay).expect("json");
    for id in ["find", "again", "each"] {
        assert_eq!(replay["nodes"][id]["replayed"], true, "{id}: no live call");
        assert_eq!(
            replay["nodes"][id]["output"], live["nodes"][id]["output"],
            "{id}"
        );
    }
    assert_eq!(replay["nodes"]["again"]["attempts"], 2);
}
