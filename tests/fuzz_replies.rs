//! The reply fuzz: a stdio server (`tests/interop/fuzz_server.py`) answers
//! every call with a mutated JSON-RPC answer — random bytes, cut-off
//! answers, deep nesting, big strings, wrong types, wrong ids, `NaN`,
//! bytes that are not UTF-8, flipped bytes — for a fixed set of cases and
//! seeds. Every call must end within its timeout (answered, failed with a
//! reason, or timed out when nothing in the answer says which call it was),
//! pipewright must not abort or panic, and the connection must still carry
//! a plain call afterwards.
//!
//! `PIPEWRIGHT_FUZZ_CASES=N` multiplies the number of cases (CI runs 1).
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

/// Cases per seed, and the seeds.
const CASES: usize = 240;
const SEEDS: [u64; 2] = [7, 2026];

/// Longest a run may take: every call's timeout is 2 s and at most 24 run
/// at once, so even if every case timed out this is far above it.
const WALL: Duration = Duration::from_secs(180);

fn cases() -> usize {
    let times = std::env::var("PIPEWRIGHT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    CASES * times
}

/// A run of `cases` fuzz calls (a fan-out, 24 at once, 2 s each) then an
/// `echo`, against the fuzz server with `seed`.
fn pipeline(dir: &Path, seed: u64, cases: usize) -> std::path::PathBuf {
    let server = common::root().join("tests/interop/fuzz_server.py");
    let text = format!(
        "servers:\n  fuzz:\n    command: {python}\n    args: [{server}, \"{seed}\"]\n\
         compositions:\n  - name: fuzz\n    nodes:\n\
         \x20     - id: cases\n        tool: echo\n        args: {{message: x}}\n        transform: '[range({cases})]'\n\
         \x20     - id: each\n        needs: [cases]\n        tool: fuzz\n        for_each: ${{cases}}\n        args: {{case: \"${{item}}\"}}\n        timeout: 2s\n        max_concurrency: 24\n        on_error: continue\n\
         \x20     - id: after\n        needs: [each]\n        tool: echo\n        args: {{message: still here}}\n\
         budget: {{max_iterations: {cases}}}\n",
        python = common::python().display(),
        server = server.display(),
    );
    let file = dir.join(format!("fuzz-{seed}.yml"));
    std::fs::write(&file, text).expect("write the pipeline");
    file
}

#[test]
fn mutated_answers_end_every_call_within_its_timeout_and_nothing_aborts() {
    let cases = cases();
    for seed in SEEDS {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = pipeline(dir.path(), seed, cases);
        let mut cmd = common::pipewright_in(dir.path());
        cmd.args(["run", "--format", "json", "--no-save"])
            .arg(&file)
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("NO_COLOR", "1")
            .env_remove("RUST_BACKTRACE");
        let started = Instant::now();
        let out = run_within(cmd, WALL);
        let took = started.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code().is_some(),
            "seed {seed}: pipewright was killed by a signal ({:?}):\n{stderr}",
            out.status
        );
        assert!(
            !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
            "seed {seed}: pipewright panicked:\n{stderr}"
        );
        let trace: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("seed {seed}: stdout is not a trace ({e}):\n{stderr}"));
        let iterations = trace["nodes"]["each"]["iterations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            iterations.len(),
            cases,
            "seed {seed}: every case has a record"
        );
        let mut by = std::collections::BTreeMap::<String, usize>::new();
        for it in &iterations {
            let status = it["status"].as_str().unwrap_or("?");
            assert!(
                status == "ok" || status == "failed",
                "seed {seed}: case {} ended `{status}`: {it}",
                it["index"]
            );
            let why = match status {
                "ok" => "ok".to_owned(),
                _ => it["error_code"].as_str().unwrap_or("?").to_owned(),
            };
            *by.entry(why).or_default() += 1;
        }
        assert_eq!(
            trace["nodes"]["after"]["output"], "still here",
            "seed {seed}: the connection carries a plain call after the fuzz"
        );
        eprintln!("seed {seed}: {cases} cases in {took:?}: {by:?}");
        // Answers that name their call but cannot be read fail that call at
        // once (they used to be dropped, the call waiting out its timeout).
        assert!(
            by.get("UNREADABLE_ANSWER").copied().unwrap_or(0) > cases / 10,
            "seed {seed}: {by:?}"
        );
    }
}

/// Runs `cmd` to its end, killing it (and failing) past `wall`.
fn run_within(mut cmd: Command, wall: Duration) -> std::process::Output {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = cmd
        .stdout(std::fs::File::create(&out).expect("stdout file"))
        .stderr(std::fs::File::create(&err).expect("stderr file"))
        .spawn()
        .expect("pipewright starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for pipewright") {
            break status;
        }
        if started.elapsed() > wall {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "pipewright hung past {wall:?}:\n{}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: std::fs::read(&out).unwrap_or_default(),
        stderr: std::fs::read(&err).unwrap_or_default(),
    }
}
