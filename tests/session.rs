//! The run session driven by commands against the real demo server
//! (`pipewright demo-server` over stdio, or in-process over Streamable
//! HTTP), asserting the events a driver sees, the final trace, and — through
//! the demo server's `call_counts` tool — which calls were really made.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use pipewright::demo_server::{self, HttpServerHandle};
use pipewright::engine::file::model::Composition;
use pipewright::engine::file::open::load_str;
use pipewright::engine::mcp::caller::{CallRequest, Caller};
use pipewright::engine::mcp::servers::ServerPool;
use pipewright::engine::mcp::{ConnectOptions, ServerSpec};
use pipewright::engine::redact::Redactor;
use pipewright::engine::run::events::{Event, PauseReason};
use pipewright::engine::run::session::{self, Command, Session, SessionConfig};
use pipewright::engine::run::trace::{NodeStatus, RunStatus, Trace};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

mod common;

/// Longest wait for any one event before a test gives up (a hang guard,
/// not a speed requirement).
const HANG: Duration = Duration::from_secs(30);

/// A demo server and a pool connected to it.
struct Demo {
    pool: Arc<ServerPool>,
    _http: Option<HttpServerHandle>,
}

impl Demo {
    /// `pipewright demo-server` spawned over stdio.
    async fn stdio() -> Demo {
        let spec = ServerSpec::Stdio {
            // Through hermetic.sh: this process's environment is the
            // user's, and the server would read their PIPEWRIGHT_* too.
            command: "sh".into(),
            args: vec![
                common::hermetic_sh().display().to_string(),
                env!("CARGO_BIN_EXE_pipewright").into(),
                "demo-server".into(),
            ],
            env: BTreeMap::new(),
            cwd: None,
            protocol: None,
        };
        Demo::connect(spec, None).await
    }

    /// An in-process demo server over Streamable HTTP.
    async fn http() -> Demo {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (_, handle) = demo_server::spawn_http("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("demo server: {e}"));
        let spec = ServerSpec::Http {
            url: handle.url(),
            headers: BTreeMap::new(),
            auth: None,
            protocol: None,
        };
        Demo::connect(spec, Some(handle)).await
    }

    async fn connect(spec: ServerSpec, http: Option<HttpServerHandle>) -> Demo {
        let mut specs = IndexMap::new();
        specs.insert("demo".to_owned(), spec);
        let pool = ServerPool::connect(&specs, &["demo".to_owned()], &ConnectOptions::default())
            .await
            .unwrap_or_else(|e| panic!("connect to the demo server: {e}"));
        Demo {
            pool: Arc::new(pool),
            _http: http,
        }
    }

    fn start(&self, comp: Arc<Composition>) -> Driver {
        self.start_with(comp, SessionConfig::default())
    }

    fn start_with(&self, comp: Arc<Composition>, cfg: SessionConfig) -> Driver {
        let caller: Arc<dyn Caller> = self.pool.clone();
        Driver::new(session::start(comp, caller, cfg, Redactor::default()))
    }

    /// `{counts: {tool: n}, in_flight}` from the server itself.
    async fn counts(&self) -> Value {
        let never = CancellationToken::new();
        let out = self
            .pool
            .call(CallRequest {
                server: Some("demo"),
                tool: "call_counts",
                args: Map::new(),
                meta: None,
                timeout: None,
                cancel: &never,
                scope: &Default::default(),
            })
            .await
            .unwrap_or_else(|e| panic!("call_counts: {e}"));
        out.output().into_value()
    }

    async fn count(&self, tool: &str) -> u64 {
        self.counts().await["counts"][tool].as_u64().unwrap_or(0)
    }
}

/// The driver's side: sends commands, reads events, keeps a short log of
/// every event seen.
struct Driver {
    s: Session,
    log: Vec<String>,
}

impl Driver {
    fn new(s: Session) -> Driver {
        Driver { s, log: Vec::new() }
    }

    fn send(&self, c: Command) {
        assert!(self.s.handle.send(c), "the session ended early");
    }

    async fn next(&mut self) -> Event {
        let ev = tokio::time::timeout(HANG, self.s.events.recv())
            .await
            .unwrap_or_else(|_| panic!("no event for {HANG:?}; seen so far: {:#?}", self.log))
            .unwrap_or_else(|| panic!("the session ended; seen: {:#?}", self.log));
        self.log.push(short(&ev));
        ev
    }

    /// Reads events up to and including the first that `stop` accepts;
    /// returns the short forms of the events read in this call.
    async fn until(&mut self, stop: impl Fn(&Event) -> bool) -> (Vec<String>, Event) {
        let from = self.log.len();
        loop {
            let ev = self.next().await;
            if stop(&ev) {
                return (self.log[from..].to_vec(), ev);
            }
        }
    }

    /// Reads to the end of the current run; returns the events and trace.
    async fn finish(&mut self) -> (Vec<String>, Trace) {
        let (seen, ev) = self.until(|e| matches!(e, Event::RunFinished { .. })).await;
        match ev {
            Event::RunFinished { trace, .. } => (seen, *trace),
            _ => unreachable!(),
        }
    }
}

/// One line per event, enough to compare sequences.
fn short(ev: &Event) -> String {
    match ev {
        Event::RunStarted { nodes, .. } => format!("run {nodes}"),
        Event::NodeStatus { id, status, .. } => format!("{id} {}", status.as_str()),
        Event::NodeStarted { id, attempt, .. } => format!("{id} call {attempt}"),
        Event::Retrying { id, attempt, .. } => format!("{id} retry {attempt}"),
        Event::IterationStarted { id, index, .. } => format!("{id}[{index}] started"),
        Event::Iteration {
            id, index, status, ..
        } => {
            format!("{id}[{index}] {}", status.as_str())
        }
        Event::NodeFinished { id, record } => format!("{id} = {}", record.status.as_str()),
        Event::Compensated { id, ok, .. } => format!("{id} undone {ok}"),
        Event::Paused { reason, before } => match before {
            Some(b) => format!("paused {reason:?} before {b}"),
            None => format!("paused {reason:?}"),
        },
        Event::Resumed => "resumed".into(),
        Event::Idle { .. } => "idle".into(),
        Event::Busy { .. } => "busy".into(),
        Event::Breakpoint { id, on } => format!("breakpoint {id} {on}"),
        Event::PlanReplaced {
            stale,
            added,
            removed,
            ..
        } => format!("plan stale={stale:?} added={added:?} removed={removed:?}"),
        Event::Pinned { id, .. } => format!("pinned {id}"),
        Event::BudgetTripped { cap, .. } => format!("budget {cap}"),
        Event::Rejected { command, reason } => format!("rejected {command}: {reason}"),
        Event::RunFinished { status, .. } => format!("finished {}", status.as_str()),
        Event::Progress { id, note, .. } => format!("{id} progress {}", note.progress),
        Event::ServerLog { id, line } => format!("{id} log {line}"),
        Event::Answered { id, kind, action } => format!("{id} {kind} {action}"),
        Event::Task { id, note, .. } => format!("{id} {}", note.text()),
        Event::ToolsChanged { added, removed } => format!("tools +{added:?} -{removed:?}"),
    }
}

fn plan(text: &str) -> Arc<Composition> {
    let loaded = load_str(text);
    assert!(!loaded.has_errors(), "{:#?}", loaded.diagnostics);
    let p = loaded
        .pipeline
        .unwrap_or_else(|| panic!("no pipeline: {:#?}", loaded.diagnostics));
    Arc::new(p.compositions[0].clone())
}

fn status(trace: &Trace, id: &str) -> NodeStatus {
    trace
        .nodes
        .get(id)
        .unwrap_or_else(|| panic!("no node `{id}` in the trace"))
        .status
}

const BROKEN: &str = r#"
compositions:
  - name: fix
    nodes:
      - id: find
        tool: search_users
        args: { query: "" }
      - id: details
        tool: get_user_details
        needs: [find]
        args: { user_id: "${find.users[0].id}" }
      - id: greet
        tool: add
        needs: [details]
        args: { a: "${details.name}", b: 1 }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_node_is_fixed_by_a_new_plan_and_rerun_alone() {
    let demo = Demo::stdio().await;
    let mut d = demo.start(plan(BROKEN));
    d.send(Command::Run);
    let (seen, trace) = d.finish().await;
    assert_eq!(
        seen,
        [
            "run 3",
            "find running",
            "find call 1",
            "find = ok",
            "details running",
            "details call 1",
            "details = ok",
            "greet running",
            "greet call 1",
            "greet = failed",
            "finished partial",
        ]
    );
    assert_eq!(trace.failed_step.as_deref(), Some("greet"));
    let before = demo.counts().await;
    assert_eq!(before["counts"]["search_users"], 1);
    assert_eq!(before["counts"]["get_user_details"], 1);
    assert_eq!(before["counts"]["add"], 1);

    // The author fixes `greet` in the file; the session adopts the new plan.
    let fixed = BROKEN.replace(
        "tool: add\n        needs: [details]\n        args: { a: \"${details.name}\", b: 1 }",
        "tool: echo\n        needs: [details]\n        args: { message: \"hello ${details.name}\" }",
    );
    assert_ne!(fixed, BROKEN);
    d.send(Command::ReplacePlan(plan(&fixed)));
    d.send(Command::Rerun("greet".into()));
    let (seen, trace) = d.finish().await;
    assert_eq!(
        seen,
        [
            r#"plan stale=["greet"] added=[] removed=[]"#,
            "greet pending",
            "run 1",
            "greet running",
            "greet call 1",
            "greet = ok",
            "finished completed",
        ]
    );
    let name = trace.nodes["details"].output["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!name.is_empty());
    assert_eq!(
        trace.nodes["greet"].output,
        Value::String(format!("hello {name}"))
    );
    assert_eq!(trace.composition.status, RunStatus::Completed);
    assert_eq!(trace.failed_step, None);
    assert_eq!(status(&trace, "find"), NodeStatus::Ok);
    let after = demo.counts().await;
    assert_eq!(
        after["counts"]["search_users"], 1,
        "the parents are not called again"
    );
    assert_eq!(
        after["counts"]["get_user_details"], 1,
        "the parents are not called again"
    );
    assert_eq!(after["counts"]["add"], 1);
    assert_eq!(after["counts"]["echo"], 1);
}

/// a → b → c → d, and a → e (not below b).
const CHAIN: &str = r#"
compositions:
  - name: chain
    nodes:
      - id: a
        tool: list_items
        args: { count: 3 }
      - id: b
        tool: echo
        needs: [a]
        args: { message: "b" }
      - id: c
        tool: add
        needs: [b]
        args: { a: 1, b: 2 }
      - id: d
        tool: fetch_metadata
        needs: [c]
        args: { name: "mcp-kit" }
      - id: e
        tool: search_packages
        needs: [a]
        args: { query: "" }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rerun_from_reruns_exactly_the_descendants() {
    let demo = Demo::stdio().await;
    let mut d = demo.start(plan(CHAIN));
    d.send(Command::Run);
    let (_, trace) = d.finish().await;
    assert_eq!(trace.composition.status, RunStatus::Completed, "{trace:#?}");
    let before = demo.counts().await["counts"].clone();

    d.send(Command::RerunFrom("b".into()));
    let (seen, trace) = d.finish().await;
    assert_eq!(
        seen,
        [
            "b pending",
            "c pending",
            "d pending",
            "run 3",
            "b running",
            "b call 1",
            "b = ok",
            "c running",
            "c call 1",
            "c = ok",
            "d running",
            "d call 1",
            "d = ok",
            "finished completed",
        ]
    );
    let after = demo.counts().await["counts"].clone();
    let delta = |tool: &str| after[tool].as_u64().unwrap_or(0) - before[tool].as_u64().unwrap_or(0);
    assert_eq!(delta("list_items"), 0);
    assert_eq!(delta("search_packages"), 0);
    assert_eq!(delta("echo"), 1);
    assert_eq!(delta("add"), 1);
    assert_eq!(delta("fetch_metadata"), 1);
    for id in ["a", "b", "c", "d", "e"] {
        assert_eq!(status(&trace, id), NodeStatus::Ok, "{id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_breakpoint_pauses_before_the_call_is_made() {
    let demo = Demo::stdio().await;
    let mut d = demo.start(plan(CHAIN));
    d.send(Command::ToggleBreakpoint("c".into()));
    let wall = Instant::now();
    d.send(Command::Run);
    let (seen, _) = d.until(|e| matches!(e, Event::Paused { .. })).await;
    assert_eq!(seen.first().map(String::as_str), Some("breakpoint c true"));
    assert_eq!(
        seen.last().map(String::as_str),
        Some("paused Breakpoint before c")
    );
    assert!(seen.contains(&"b = ok".to_owned()), "{seen:?}");
    assert!(!seen.iter().any(|s| s.starts_with("c ")), "{seen:?}");
    // Nothing has called `add` (c's tool), and nothing is in flight.
    let counts = demo.counts().await;
    assert_eq!(counts["counts"]["add"], 0);
    assert_eq!(counts["counts"]["echo"], 1);

    // A person reads the screen at the breakpoint: that time is the
    // pause's, not the run's.
    // It reads for 650 ms; at least 600 of them must count as the pause
    // (on a loaded machine the actor and the test see the pause begin and
    // end a moment apart).
    let reading = Duration::from_millis(650);
    tokio::time::sleep(reading).await;
    d.send(Command::Resume);
    let (seen, trace) = d.finish().await;
    let wall = wall.elapsed().as_millis() as u64;
    let paused = trace.composition.paused_ms;
    assert!(paused >= 600, "paused {paused} ms");
    assert!(
        trace.composition.duration_ms + 600 <= wall,
        "the run's {} ms include the pause ({wall} ms from Run to the end)",
        trace.composition.duration_ms
    );
    let resumed = seen.iter().position(|s| s == "resumed");
    let c_runs = seen.iter().position(|s| s == "c running");
    assert!(resumed.is_some() && c_runs > resumed, "{seen:?}");
    assert!(seen.contains(&"c = ok".to_owned()), "{seen:?}");
    assert_eq!(trace.composition.status, RunStatus::Completed);
    assert_eq!(demo.count("add").await, 1);

    // Stepping: one node per step, paused in between.
    d.send(Command::Step);
    let (seen, _) = d.until(|e| matches!(e, Event::Paused { .. })).await;
    // A fresh run first says that every node of the last run is pending
    // again, so a driver draws a clean slate.
    assert_eq!(
        seen,
        [
            "a pending",
            "b pending",
            "c pending",
            "d pending",
            "e pending",
            "run 5",
            "a running",
            "paused Step"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_during_a_fan_out_lets_started_iterations_finish_and_starts_none() {
    let demo = Demo::stdio().await;
    let mut vars = IndexMap::new();
    vars.insert(
        "items".to_owned(),
        serde_json::json!([1, 2, 3, 4, 5, 6, 7, 8]),
    );
    let comp = plan(
        r#"
compositions:
  - name: fan
    nodes:
      - id: each
        tool: slow
        for_each: "${var.items[*]}"
        max_concurrency: 2
        args: { ms: 300 }
"#,
    );
    let cfg = SessionConfig {
        vars,
        ..SessionConfig::default()
    };
    let mut d = demo.start_with(comp, cfg);
    d.send(Command::Run);
    let (_, first) = d.until(|e| matches!(e, Event::Iteration { .. })).await;
    d.send(Command::Pause);
    // Iterations may end (and others start) between the first one ending
    // and the pause arriving, more so on a loaded machine: count how many
    // had ended when the session paused.
    let mut done_at_pause = match first {
        Event::Iteration { done, .. } => done,
        _ => unreachable!(),
    };
    let ev = loop {
        let ev = d.next().await;
        if let Event::Iteration { done, .. } = &ev {
            done_at_pause = *done;
        }
        if matches!(ev, Event::Paused { .. }) {
            break ev;
        }
    };
    assert!(matches!(
        ev,
        Event::Paused {
            reason: PauseReason::User,
            before: None
        }
    ));
    // Wait well past one call's length: the iterations that had started
    // finish, and none starts.
    let mut done_after_pause = 0;
    let quiet = tokio::time::sleep(Duration::from_millis(1200));
    tokio::pin!(quiet);
    loop {
        tokio::select! {
            () = &mut quiet => break,
            ev = d.s.events.recv() => {
                if let Some(Event::Iteration { done, .. }) = &ev {
                    done_after_pause = *done;
                }
                if let Some(ev) = ev {
                    d.log.push(short(&ev));
                }
            }
        }
    }
    let counts = demo.counts().await;
    let started = counts["counts"]["slow"].as_u64().unwrap_or(0);
    assert_eq!(counts["in_flight"], 0, "the started iterations finished");
    assert!(done_after_pause >= 1, "{:?}", d.log);
    assert_eq!(
        started, done_after_pause as u64,
        "no iteration started while paused"
    );
    assert!(
        started < 8,
        "the pause stopped the fan-out ({started} of 8 ran)"
    );
    assert!(
        started <= done_at_pause as u64 + 2,
        "at most the two in flight at the pause finished: {started} started, {done_at_pause} done at the pause"
    );

    d.send(Command::Resume);
    let (_, trace) = d.finish().await;
    assert_eq!(trace.composition.status, RunStatus::Completed);
    let each = &trace.nodes["each"];
    assert_eq!(each.iterations.len(), 8);
    assert_eq!(demo.count("slow").await, 8, "no iteration ran twice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_slow_call_returns_within_a_second() {
    let demo = Demo::http().await;
    let mut d = demo.start(plan(
        r#"
pipe:
  - id: first
    tool: echo
    args: { message: "one" }
  - id: wait
    tool: slow
    args: { ms: 20000 }
  - id: after
    tool: echo
    args: { message: "never" }
"#,
    ));
    d.send(Command::Run);
    d.until(|e| matches!(e, Event::NodeStarted { id, .. } if id == "wait"))
        .await;
    // Make sure the server is in the call before cancelling it.
    for _ in 0..100 {
        if demo.counts().await["in_flight"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let asked = Instant::now();
    d.send(Command::Cancel);
    let (seen, trace) = d.finish().await;
    let took = asked.elapsed();
    assert!(took < Duration::from_secs(1), "cancel took {took:?}");
    assert_eq!(
        seen,
        ["wait = cancelled", "after skipped", "finished cancelled"]
    );
    assert_eq!(trace.composition.status, RunStatus::Cancelled);
    assert_eq!(status(&trace, "wait"), NodeStatus::Cancelled);
    assert_eq!(status(&trace, "first"), NodeStatus::Ok);
    // The server got `notifications/cancelled` and stopped sleeping.
    let mut in_flight = Value::Null;
    for _ in 0..100 {
        in_flight = demo.counts().await["in_flight"].clone();
        if in_flight == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(in_flight, 0);
    assert_eq!(demo.count("echo").await, 1);
}

/// a → b → c → d, a → e, and f on its own.
const WIDE: &str = r#"
compositions:
  - name: wide
    nodes:
      - id: a
        tool: echo
        args: { message: "a" }
      - id: b
        tool: echo
        needs: [a]
        args: { message: "${a} b" }
      - id: c
        tool: echo
        needs: [b]
        args: { message: "${b} c" }
      - id: d
        tool: echo
        needs: [c]
        args: { message: "${c} d" }
      - id: e
        tool: echo
        needs: [a]
        args: { message: "${a} e" }
      - id: f
        tool: echo
        args: { message: "f" }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_one_node_makes_it_and_its_descendants_stale_only() {
    let demo = Demo::stdio().await;
    let mut d = demo.start(plan(WIDE));
    d.send(Command::Run);
    let (_, first) = d.finish().await;
    assert_eq!(first.composition.status, RunStatus::Completed);
    assert_eq!(demo.count("echo").await, 6);

    let edited = WIDE.replace("\"${b} c\"", "\"${b} C!\"");
    assert_ne!(edited, WIDE);
    d.send(Command::ReplacePlan(plan(&edited)));
    // A pin is answered after the plan is in: `a` kept its output.
    d.send(Command::Pin("a".into()));
    let (seen, ev) = d.until(|e| matches!(e, Event::Pinned { .. })).await;
    assert_eq!(
        seen,
        [r#"plan stale=["c", "d"] added=[] removed=[]"#, "pinned a"]
    );
    if let Event::Pinned { mock, .. } = ev {
        assert_eq!(mock["result"], "a");
    }

    // Re-running the stale part calls c and d only, with b's kept output.
    d.send(Command::RerunFrom("c".into()));
    let (_, trace) = d.finish().await;
    assert_eq!(demo.count("echo").await, 8);
    assert_eq!(trace.nodes["c"].output, "a b C!");
    assert_eq!(trace.nodes["d"].output, "a b C! d");
    for id in ["a", "b", "e", "f"] {
        assert_eq!(trace.nodes[id].output, first.nodes[id].output, "{id}");
        assert_eq!(
            trace.nodes[id].started_at, first.nodes[id].started_at,
            "{id}"
        );
    }
}

/// Resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_mock_nodes_keep_the_event_queue_bounded() {
    const N: usize = 10_000;
    const CAPACITY: usize = 256;
    let mut text = String::from("pipe:\n");
    for i in 0..N {
        text.push_str(&format!(
            "  - id: s{i}\n    tool: echo\n    mock: {{ result: {{ n: {i} }} }}\n"
        ));
    }
    let comp = plan(&text);
    let caller: Arc<dyn Caller> = Arc::new(ServerPool::default());
    let cfg = SessionConfig {
        event_capacity: CAPACITY,
        ..SessionConfig::default()
    };
    let rss_before = rss_kib();
    let mut s = session::start(comp, caller, cfg, Redactor::default());
    s.handle.send(Command::Run);
    // A slow driver: it reads in bursts and naps in between, so the session
    // is always ahead of it.
    let mut peak_queued = 0;
    let mut events = 0usize;
    let mut peak_rss = rss_before;
    let trace = loop {
        peak_queued = peak_queued.max(s.events.len());
        let ev = tokio::time::timeout(HANG, s.events.recv())
            .await
            .unwrap_or_else(|_| panic!("stalled after {events} events"))
            .unwrap_or_else(|| panic!("ended after {events} events"));
        events += 1;
        if events.is_multiple_of(500) {
            tokio::time::sleep(Duration::from_millis(50)).await;
            peak_rss = peak_rss.max(rss_kib());
        }
        if let Event::RunFinished { trace, .. } = ev {
            break trace;
        }
    };
    let growth = peak_rss.saturating_sub(rss_before);
    eprintln!(
        "10,000 mock nodes: {events} events, peak queued {peak_queued} of {CAPACITY}, peak RSS growth {growth} KiB"
    );
    assert_eq!(trace.composition.status, RunStatus::Completed);
    assert_eq!(trace.nodes.len(), N);
    assert_eq!(trace.nodes["s9999"].output["n"], 9999);
    // Every node reports running and finished at least.
    assert!(events >= 2 * N + 2, "{events}");
    assert!(peak_queued <= CAPACITY, "peak queued {peak_queued}");
    assert!(
        peak_queued >= CAPACITY / 2,
        "the driver was never behind: {peak_queued}"
    );
}

/// Each fan-out iteration keeps what the server sent (issue 48, item 17):
/// its exchange in the trace is the wire response, not the iteration's
/// output standing in for it, and it is the value the output was cut
/// from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_out_iteration_keeps_its_wire_result() {
    let demo = Demo::http().await;
    let mut d = demo.start(plan(
        "pipe:\n  - id: xs\n    mock: { result: [a, b, c] }\n  - id: each\n    for_each: '${xs[*]}'\n    tool: echo\n    args: { message: '${item}' }\n",
    ));
    d.send(Command::Run);
    let (_, trace) = d.finish().await;
    let rec = &trace.nodes["each"];
    assert_eq!(rec.status, NodeStatus::Ok, "{:?}", rec.error);
    assert_eq!(rec.calls.len(), 3, "{:#?}", rec.calls);
    for call in &rec.calls {
        let i = call.iteration.expect("an iteration's call");
        let sent = call.raw.tree();
        assert_eq!(
            sent["content"][0]["text"],
            Value::from(["a", "b", "c"][i]),
            "{sent}"
        );
        let wire = pipewright::engine::run::trace::attempt_messages(rec, call);
        let text = wire.to_string();
        assert!(!text.contains("recorded as the iteration"), "{text}");
        assert_eq!(wire[1]["result"], *sent, "{text}");
    }
}

/// A fan-out that failed names the first failed iteration counted from 1,
/// as the workbench's Raw tab does (`iteration 2/3`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_fan_out_names_its_iteration_counted_from_one() {
    let demo = Demo::http().await;
    let mut d = demo.start(plan(
        "pipe:\n  - id: ids\n    mock: { result: [u1, nope, u2] }\n  - id: each\n    for_each: '${ids[*]}'\n    tool: get_user_details\n    args: { user_id: '${item}' }\n    on_error: continue\n",
    ));
    d.send(Command::Run);
    let (_, trace) = d.finish().await;
    let rec = &trace.nodes["each"];
    assert_eq!(rec.status, NodeStatus::Failed);
    let error = rec.error.as_deref().unwrap_or_default();
    assert!(error.starts_with("iteration 2 of 3 failed: "), "{error}");
}
