//! The executor's overhead over a plain rmcp client, both talking to the
//! official reference server (`@modelcontextprotocol/server-everything`)
//! over stdio:
//!
//! - `sequential_1000`: a `pipe:` of 1,000 `echo` steps beside a loop of
//!   1,000 awaited `call_tool`s;
//! - `fan_out_2000_x32`: a `for_each` of 2,000 `echo` calls at
//!   `max_concurrency: 32` beside 2,000 `call_tool`s kept 32 in flight.
//!
//! Each side has its own server process, connected once (handshake and
//! `tools/list` are outside the measured loop). Goal: pipewright within 5%
//! of the plain client. Needs `npm ci --prefix tests/interop`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use futures::StreamExt;
use indexmap::IndexMap;
use pipewright::engine::file::model::Composition;
use pipewright::engine::file::open::load_str;
use pipewright::engine::mcp::caller::{CallRequest, Caller};
use pipewright::engine::mcp::servers::ServerPool;
use pipewright::engine::mcp::{ConnectOptions, ServerSpec};
use pipewright::engine::redact::Redactor;
use pipewright::engine::run::events::Event;
use pipewright::engine::run::session::{self, Command, SessionConfig};
use pipewright::engine::run::trace::RunStatus;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use tokio_util::sync::CancellationToken;

const STEPS: usize = 1_000;
const ITEMS: usize = 2_000;
const IN_FLIGHT: usize = 32;

fn everything_js() -> PathBuf {
    let dir = std::env::var_os("PIPEWRIGHT_INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop"));
    let js = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        js.exists(),
        "{} is missing: run `npm ci --prefix tests/interop`",
        js.display()
    );
    js
}

fn message(i: usize) -> String {
    format!("message {i}")
}

/// A `pipe:` of `n` echo steps.
fn sequential(n: usize) -> Arc<Composition> {
    let mut s = String::from("pipe:\n");
    for i in 0..n {
        let _ = writeln!(
            s,
            "  - id: s{i}\n    tool: echo\n    args: {{ message: \"{}\" }}",
            message(i)
        );
    }
    composition(&s)
}

/// One node fanning out over `${var.items}` at `IN_FLIGHT` at once.
fn fan_out() -> Arc<Composition> {
    composition(&format!(
        "compositions:\n  - name: fan\n    nodes:\n      - id: each\n        tool: echo\n        for_each: \"${{var.items[*]}}\"\n        max_concurrency: {IN_FLIGHT}\n        args: {{ message: \"${{item}}\" }}\n"
    ))
}

fn composition(text: &str) -> Arc<Composition> {
    let loaded = load_str(text);
    let Some(p) = loaded.pipeline else {
        panic!("bench pipeline does not load: {:?}", loaded.diagnostics);
    };
    Arc::new(p.compositions[0].clone())
}

async fn run_session(
    comp: &Arc<Composition>,
    caller: &Arc<dyn Caller>,
    vars: &IndexMap<String, Value>,
) {
    let cfg = SessionConfig {
        vars: vars.clone(),
        ..SessionConfig::default()
    };
    let mut s = session::start(comp.clone(), caller.clone(), cfg, Redactor::default());
    s.handle.send(Command::Run);
    while let Some(ev) = s.events.recv().await {
        if let Event::RunFinished { status, .. } = ev {
            assert_eq!(status, RunStatus::Completed);
            break;
        }
    }
}

fn args(i: usize) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("message".into(), json!(message(i)));
    m
}

async fn plain_call(client: &RunningService<RoleClient, ()>, i: usize) {
    let params = CallToolRequestParams::new("echo").with_arguments(args(i));
    match client.call_tool(params).await {
        Ok(r) => assert_ne!(r.is_error, Some(true)),
        Err(e) => panic!("echo failed: {e}"),
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("runtime: {e}"));
    let js = everything_js().display().to_string();
    let spec = ServerSpec::Stdio {
        command: "node".into(),
        args: vec![js.clone(), "stdio".into()],
        env: Default::default(),
        cwd: None,
        protocol: None,
    };
    let mut specs = IndexMap::new();
    specs.insert("everything".to_owned(), spec);
    let pool = rt
        .block_on(ServerPool::connect(
            &specs,
            &["everything".to_owned()],
            &ConnectOptions::default(),
        ))
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let caller: Arc<dyn Caller> = Arc::new(pool);
    let plain = rt
        .block_on(async {
            let mut cmd = tokio::process::Command::new("node");
            cmd.args([js.as_str(), "stdio"]);
            let transport = TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::null())
                .spawn()
                .map(|(t, _)| t)?;
            ().serve(transport).await.map_err(anyhow::Error::from)
        })
        .unwrap_or_else(|e| panic!("plain client: {e}"));

    let seq = sequential(STEPS);
    let fan = fan_out();
    let mut fan_vars = IndexMap::new();
    fan_vars.insert(
        "items".to_owned(),
        Value::Array((0..ITEMS).map(|i| json!(message(i))).collect()),
    );
    let no_vars = IndexMap::new();

    let mut g = c.benchmark_group("sequential_1000");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    g.bench_function("plain_rmcp", |b| {
        b.to_async(&rt).iter(|| async {
            for i in 0..STEPS {
                plain_call(&plain, i).await;
            }
        });
    });
    g.bench_function("pipewright", |b| {
        b.to_async(&rt)
            .iter(|| run_session(&seq, &caller, &no_vars));
    });
    // pipewright's MCP client alone (no session): where the time goes.
    g.bench_function("pipewright_client_only", |b| {
        let never = CancellationToken::new();
        b.to_async(&rt).iter(|| async {
            for i in 0..STEPS {
                let out = caller
                    .call(CallRequest {
                        server: Some("everything"),
                        tool: "echo",
                        args: args(i),
                        meta: None,
                        timeout: None,
                        cancel: &never,
                        scope: &Default::default(),
                    })
                    .await;
                assert!(out.is_ok_and(|o| !o.is_error));
            }
        });
    });
    g.finish();

    let mut g = c.benchmark_group("fan_out_2000_x32");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    g.bench_function("plain_rmcp", |b| {
        b.to_async(&rt).iter(|| async {
            futures::stream::iter(0..ITEMS)
                .map(|i| plain_call(&plain, i))
                .buffered(IN_FLIGHT)
                .collect::<Vec<()>>()
                .await;
        });
    });
    g.bench_function("pipewright", |b| {
        b.to_async(&rt)
            .iter(|| run_session(&fan, &caller, &fan_vars));
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
