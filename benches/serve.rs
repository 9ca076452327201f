//! A served chain against one direct call, through the same MCP client.
//!
//! `pipewright serve` serves `lookup`, a 2-node composition
//! (`search_users` → `get_user_details`) whose upstream is the demo server.
//! Beside it, the demo server itself answers `get_user_details` directly.
//! Both are reached over stdio by pipewright's MCP client, connected once.
//! In interleaved pairs, each side makes a batch of calls with 1 and then
//! 32 in flight; the figures are calls per second and the ratio of a served
//! chain's time to one direct call's. Goal: under 2×.
//!
//! `cargo build --release && cargo bench --bench serve [-- --pairs N]`

#[path = "common/mod.rs"]
mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use pipewright::engine::mcp::{ConnectOptions, Connection, ServerSpec};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

const CALLS: usize = 400;

fn stdio(bin: &std::path::Path, args: &[&str]) -> ServerSpec {
    ServerSpec::Stdio {
        command: bin.display().to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: Default::default(),
        cwd: None,
        protocol: None,
    }
}

async fn batch(
    c: &Arc<Connection>,
    tool: &str,
    args: &Map<String, Value>,
    in_flight: usize,
) -> Duration {
    let started = Instant::now();
    let calls = futures::stream::iter(0..CALLS)
        .map(|_| {
            let c = c.clone();
            let args = args.clone();
            let tool = tool.to_owned();
            async move {
                let out = c
                    .call(&tool, args, None, None, &CancellationToken::new())
                    .await
                    .expect("the call answers");
                assert!(!out.is_error, "{:?}", out.result);
            }
        })
        .buffer_unordered(in_flight);
    calls.collect::<Vec<()>>().await;
    started.elapsed()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let pairs = common::pairs(7);
    let bin = common::release_bin();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("lookup.yml");
    std::fs::write(
        &file,
        "pipe:\n  - id: find\n    tool: search_users\n    args: { query: \"${var.who}\", limit: 1 }\n  - id: details\n    tool: get_user_details\n    args: { user_id: \"${find.users[0].id}\" }\noutput: details\n",
    )
    .expect("write");
    // The same chain with both nodes mocked: what the serve hop and the
    // session cost without any upstream call.
    let mocked = dir.path().join("mocked.yml");
    std::fs::write(
        &mocked,
        "pipe:\n  - id: find\n    mock: { result: { users: [ { id: u2 } ] } }\n  - id: details\n    mock: { result: { id: u2, name: Bob } }\n    args: { user_id: \"${find.users[0].id}\" }\noutput: details\n",
    )
    .expect("write");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let file = file.display().to_string();
        let mocked = mocked.display().to_string();
        let hop = Arc::new(
            Connection::connect("mocked", &stdio(&bin, &["serve", "--no-save", &mocked]), &ConnectOptions::default())
                .await
                .expect("serve starts"),
        );
        let served = Arc::new(
            Connection::connect("served", &stdio(&bin, &["serve", "--no-save", &file]), &ConnectOptions::default())
                .await
                .expect("serve starts"),
        );
        let direct = Arc::new(
            Connection::connect("direct", &stdio(&bin, &["demo-server"]), &ConnectOptions::default())
                .await
                .expect("demo server starts"),
        );
        let chain: Map<String, Value> = json!({"who": "bob"}).as_object().cloned().unwrap_or_default();
        let one: Map<String, Value> = json!({"user_id": "u2"}).as_object().cloned().unwrap_or_default();
        // Warm both.
        batch(&served, "lookup", &chain, 8).await;
        batch(&direct, "get_user_details", &one, 8).await;
        for in_flight in [1usize, 32] {
            let (mut s_rate, mut d_rate, mut ratio, mut m_rate) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let empty = Map::new();
            for _ in 0..pairs {
                let s = batch(&served, "lookup", &chain, in_flight).await.as_secs_f64();
                let d = batch(&direct, "get_user_details", &one, in_flight).await.as_secs_f64();
                let m = batch(&hop, "mocked", &empty, in_flight).await.as_secs_f64();
                s_rate.push(CALLS as f64 / s);
                d_rate.push(CALLS as f64 / d);
                m_rate.push(CALLS as f64 / m);
                ratio.push(s / d);
            }
            let worst = ratio.iter().copied().fold(0.0, f64::max);
            println!(
                "{in_flight:>2} in flight: served 2-node chain {:.0} calls/s, direct call {:.0} calls/s; a served chain costs {:.2}x one direct call (median of {pairs} pairs, worst {:.2}x)",
                median(&mut s_rate),
                median(&mut d_rate),
                median(&mut ratio),
                worst
            );
            println!(
                "{in_flight:>2} in flight: the same chain mocked (serve hop + session, no upstream): {:.0} calls/s",
                median(&mut m_rate)
            );
        }
        if let Ok(c) = Arc::try_unwrap(served) {
            c.close().await;
        }
        if let Ok(c) = Arc::try_unwrap(direct) {
            c.close().await;
        }
    });
}
