//! Fibe and Discord pipelines end to end: the worked examples in
//! `examples/` (the reference documents' examples, rewritten for the
//! demo server) run as they are and, converted with `pipewright convert`,
//! give the same trace; the result envelopes; rules that only a run shows.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

mod common;

fn pw() -> Command {
    Command::from_std(common::pipewright())
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

/// Runs a file with `--format json` and returns the trace and exit code.
fn run_json(path: &Path, extra: &[&str]) -> (Value, i32) {
    let out = pw()
        .args(["run", "--no-save", "--format", "json"])
        .args(extra)
        .arg(path)
        .output()
        .expect("runs");
    let trace = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (trace, out.status.code().unwrap_or(-1))
}

/// The trace without what differs between two runs of the same calls.
fn normalized(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for k in [
                    "started_at",
                    "duration_ms",
                    "file",
                    "progressToken",
                    "run_id",
                ] {
                    m.remove(k);
                }
                if let Some(rpc) = m.get_mut("rpc") {
                    for side in ["request", "response"] {
                        if let Some(Value::Object(r)) = rpc.get_mut(side) {
                            r.remove("id");
                        }
                    }
                }
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// Converts `name`, runs both forms, asserts equal traces; returns the trace.
fn same_trace_both_ways(name: &str) -> Value {
    let original = example(name);
    let conv = pw()
        .arg("convert")
        .arg(&original)
        .output()
        .expect("converts");
    assert!(
        conv.status.success(),
        "{}",
        String::from_utf8_lossy(&conv.stderr)
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let converted = dir.path().join("converted.yml");
    std::fs::write(&converted, &conv.stdout).expect("writes");
    let (a, code_a) = run_json(&original, &[]);
    let (b, code_b) = run_json(&converted, &[]);
    assert_eq!(code_a, 0, "{a:#}");
    assert_eq!(code_b, 0, "{b:#}");
    // Members of a `parallel` block may complete in either order.
    let sorted = |mut v: Value| {
        if let Some(ids) = v["completed_step_ids"].as_array_mut() {
            ids.sort_by_key(|i| i.as_str().unwrap_or_default().to_owned());
        }
        normalized(v)
    };
    let (na, nb) = (sorted(a.clone()), sorted(b));
    assert!(na == nb, "traces differ:\n{na:#}\n---\n{nb:#}");
    a
}

#[test]
fn fibe_find_then_mail_runs_the_same_converted() {
    let t = same_trace_both_ways("fibe-find-then-mail.json");
    assert_eq!(t["composition"]["status"], "completed");
    assert_eq!(t["nodes"]["who"]["args"], json!({"user_id": "u1"}));
    assert_eq!(
        t["nodes"]["mail"]["args"]["subject"], "$.plan report",
        "`$$.` is a literal `$.`"
    );
    assert_eq!(t["output"]["user"], "Alice Anders");
    assert!(
        t["output"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("msg-")),
        "{t:#}"
    );
}

#[test]
fn fibe_idempotency_keys_reach_the_request_meta() {
    let (t, _) = run_json(&example("fibe-find-then-mail.json"), &[]);
    for id in ["find", "who", "mail"] {
        let want = hex::encode(Sha256::digest(format!("digest-2026-11:{id}").as_bytes()));
        assert_eq!(
            t["nodes"][id]["rpc"]["request"]["params"]["_meta"]["idempotencyKey"], want,
            "{id}"
        );
    }
}

#[test]
fn fibe_fan_out_runs_the_same_converted() {
    let t = same_trace_both_ways("fibe-fan-out.json");
    assert_eq!(
        t["nodes"]["notes"]["output"],
        json!(["ticket-0", "ticket-1", "ticket-2"])
    );
    assert_eq!(t["nodes"]["quota"]["output"], 42);
    assert_eq!(t["nodes"]["left"]["output"]["sum"], 40);
    let mails = t["nodes"]["mails"]["output"].as_array().expect("array");
    assert_eq!(mails.len(), 2);
    assert!(
        mails
            .iter()
            .all(|m| m.as_str().is_some_and(|s| s.starts_with("msg-")))
    );
    // `return: "$"` is the bindings: named top-level steps only.
    let keys: Vec<&String> = t["output"].as_object().expect("object").keys().collect();
    assert_eq!(
        keys,
        [
            "tickets", "banner", "quota", "notes", "people", "mails", "left"
        ]
    );
}

#[test]
fn discord_welcome_runs_the_same_converted() {
    let t = same_trace_both_ways("discord-welcome.json");
    assert_eq!(t["nodes"]["welcome"]["status"], "ok");
    assert_eq!(
        t["nodes"]["welcome"]["args"]["subject"],
        "Welcome Alice Anders"
    );
    assert_eq!(
        t["nodes"]["step_3"]["status"], "failed",
        "continue_on_error keeps going"
    );
    let echoed = t["nodes"]["step_4"]["output"].as_str().expect("text");
    assert!(echoed.starts_with("sent msg-"), "{echoed}");
}

#[test]
fn fibe_envelope_of_a_failed_run_is_partial_with_the_failed_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("p.json");
    std::fs::write(
        &f,
        r#"{"steps":[
  {"id":"first","tool":"add","args":{"a":1,"b":2}},
  {"id":"boom","tool":"fail","args":{"message":"quota exhausted"}},
  {"id":"never","tool":"echo","args":{"message":"x"}}
]}"#,
    )
    .expect("writes");
    let out = pw()
        .args(["run", "--no-save", "--format", "fibe"])
        .arg(&f)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["status"], "partial");
    assert_eq!(v["result"], Value::Null);
    assert_eq!(v["completed_step_ids"], json!(["first"]));
    assert_eq!(v["error"]["step_index"], 1);
    assert_eq!(v["error"]["step_id"], "boom");
    assert_eq!(v["error"]["tool"], "fail");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("quota exhausted"))
    );
    assert_eq!(v["steps"], json!({"first": {"sum": 3}}));
}

#[test]
fn discord_envelope_of_an_aborted_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("p.json");
    std::fs::write(
        &f,
        r#"{"steps":[
  {"tool":"add","args":{"a":1,"b":2},"save_as":"total"},
  {"tool":"echo","if":"{{total.missing_flag}}","args":{"message":"skipped"}},
  {"tool":"fail","args":{"message":"rate limited"}},
  {"tool":"echo","args":{"message":"{{total.sum}}"}}
]}"#,
    )
    .expect("writes");
    let out = pw()
        .args(["run", "--no-save", "--format", "discord"])
        .arg(&f)
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    // "does not run subsequent steps": the step after the failure is absent.
    let results = v["results"].as_array().expect("results");
    let steps: Vec<u64> = results.iter().filter_map(|r| r["step"].as_u64()).collect();
    assert_eq!(steps, [1, 2, 3], "{v:#}");
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[0]["data"], json!({"sum": 3}));
    assert_eq!(results[1]["skipped"], true);
    assert_eq!(results[2]["ok"], false);
    assert_eq!(results[2]["error"]["code"], "TOOL_ERROR");
    assert_eq!(
        v["summary"],
        json!({"total": 4, "succeeded": 1, "failed": 1}),
        "{v:#}"
    );
    // The executor's own fields ride along.
    assert_eq!(v["aborted"], true, "{v:#}");
    let statuses: Vec<&str> = v["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(statuses, ["ok", "skipped", "error"]);
    assert_eq!(v["variables"], json!({"total": {"sum": 3}}));
}

#[test]
fn fibe_unknown_tool_is_stopped_by_preflight_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("p.json");
    std::fs::write(
        &f,
        r#"{"steps":[{"id":"x","tool":"fibe_resource_list","args":{}}]}"#,
    )
    .expect("writes");
    let out = pw()
        .args(["run", "--no-save"])
        .arg(&f)
        .output()
        .expect("runs");
    // Preflight checks every tool against tools/list before any call: an
    // invalid run exits 2 and names the tool.
    assert_eq!(out.status.code(), Some(2));
    let text =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("fibe_resource_list"), "{text}");
}

#[test]
fn check_reports_import_problems_at_their_place_and_dialect_can_be_forced() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("bad.json");
    std::fs::write(
        &f,
        "{\"steps\": [\n  {\"id\": \"a\", \"tool\": \"echo\", \"on_error\": \"ignore\"}\n]}",
    )
    .expect("writes");
    let out = pw().arg("check").arg(&f).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json:2:43: error: unknown `on_error` `ignore`"),
        "{err}"
    );
    // Read as native, the same file is not a pipeline at all.
    let out = pw()
        .args(["check", "--dialect", "native"])
        .arg(&f)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither `pipe:` nor `compositions:`"));
}

#[test]
fn convert_refuses_a_native_file() {
    let native = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/search-then-update.yml");
    let out = pw().arg("convert").arg(native).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already a native"));
}
