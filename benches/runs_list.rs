//! `pipewright runs list` over 5,000 saved runs, as a whole command.
//!
//! Builds a data directory of 5,000 real-shaped traces (three nodes each,
//! with outputs), then times the release binary in interleaved pairs: `runs
//! list` over those runs, and `runs list` over an empty directory (the cost
//! of starting the process at all). Also times reading the index in
//! process. Goal: the whole command under 100 ms.
//!
//! `cargo build --release && cargo bench --bench runs_list [-- --pairs N]`

#[path = "common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use pipewright::engine::run::store::Runs;
use pipewright::engine::run::trace::{NodeRecord, NodeStatus, RunStatus, RunSummary, Trace};
use serde_json::json;

const RUNS: usize = 5_000;

fn trace(i: usize) -> Trace {
    let mut t = Trace {
        run_id: format!("20261123-{:06}-{:04x}", i / 60 * 100 + i % 60, i % 0xffff),
        file: format!("pipelines/flow-{}.yml", i % 7),
        composition: RunSummary {
            name: "pipe".into(),
            started_at: Some(format!(
                "2026-11-23T{:02}:{:02}:{:02}.{:09}Z",
                (i / 3600) % 24,
                (i / 60) % 60,
                i % 60,
                i
            )),
            status: if i.is_multiple_of(9) {
                RunStatus::Partial
            } else {
                RunStatus::Completed
            },
            duration_ms: 40 + (i % 50) as u64,
            cost_total: 0.002,
            tokens_total: 120,
            ..RunSummary::default()
        },
        failed_step: i.is_multiple_of(9).then(|| "details".to_owned()),
        ..Trace::default()
    };
    for id in ["find", "details", "notify"] {
        t.nodes.insert(
            id.into(),
            NodeRecord {
                id: id.into(),
                tool: "search_users".into(),
                status: NodeStatus::Ok,
                args: json!({"query": "alice", "limit": 5}).into(),
                output: json!({"users": [{"id": "u1", "name": "Alice Anders", "email": "alice@example.com"}], "count": 1}).into(),
                duration_ms: 12,
                ..NodeRecord::default()
            },
        );
    }
    t
}

fn time_list(bin: &Path, data: &Path) -> Duration {
    let start = Instant::now();
    let out = Command::new(bin)
        .args(["runs", "list", "--limit", "50"])
        .env("PIPEWRIGHT_DATA_DIR", data)
        .output()
        .expect("the binary runs");
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let pairs = common::pairs(21);
    let bin = common::release_bin();
    let dir = tempfile::tempdir().expect("temp dir");
    let full = dir.path().join("full");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let runs = Runs::at(full.join("runs"));
    let made = Instant::now();
    for i in 0..RUNS {
        runs.save_capped(&trace(i), 0).expect("save");
    }
    let size: u64 = std::fs::metadata(full.join("runs/index.jsonl"))
        .map(|m| m.len())
        .unwrap_or(0);
    eprintln!(
        "made {RUNS} runs in {:.1}s; index {} KiB",
        made.elapsed().as_secs_f64(),
        size / 1024
    );
    let t = Instant::now();
    let n = runs.entries().len();
    eprintln!(
        "in process: reading the index of {n} runs took {:.2} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    // Warm the page cache and the binary.
    time_list(&bin, &full);
    time_list(&bin, &empty);
    let (mut listed, mut bare, mut extra) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..pairs {
        let a = time_list(&bin, &full);
        let b = time_list(&bin, &empty);
        listed.push(a);
        bare.push(b);
        extra.push(a.saturating_sub(b));
    }
    let worst = *listed.iter().max().unwrap();
    println!(
        "runs list over {RUNS} runs: median {:.1} ms, worst {:.1} ms ({pairs} pairs); empty directory (process start): median {:.1} ms; the runs add {:.1} ms (median of pairs)",
        median(&mut listed).as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e3,
        median(&mut bare).as_secs_f64() * 1e3,
        median(&mut extra).as_secs_f64() * 1e3,
    );
}
