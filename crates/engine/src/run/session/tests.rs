//! The session's events and bookkeeping against a caller that answers
//! every call with its arguments after `ms` milliseconds: what a record
//! names, when time is a pause, which node a step stops before, and when a
//! record is stale.

use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::*;
use crate::file::open::load_str;
use crate::mcp::caller::CallRequest;
use crate::mcp::human::CallExtras;
use crate::mcp::{CallOutcome, McpError};

/// Answers a call with its arguments, after `args.ms` milliseconds.
struct Sleepy;

impl Caller for Sleepy {
    fn call<'a>(
        &'a self,
        request: CallRequest<'a>,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        Box::pin(async move {
            let ms = request.args.get("ms").and_then(Value::as_u64).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            let args = Value::Object(request.args.clone());
            Ok(CallOutcome {
                request: json!({"tool": request.tool}).into(),
                result: json!({ "structuredContent": args }).into(),
                is_error: false,
                duration: Duration::from_millis(ms),
                replayed: false,
                extras: CallExtras::default(),
            })
        })
    }
}

fn comp(text: &str) -> Arc<Composition> {
    let loaded = load_str(text);
    assert!(!loaded.has_errors(), "{:#?}", loaded.diagnostics);
    Arc::new(loaded.pipeline.expect("a pipeline").compositions[0].clone())
}

/// A session on `text` with the sleepy caller, `${var.who}` set to `ada`.
fn session(text: &str) -> Session {
    let mut vars = IndexMap::new();
    vars.insert("who".to_owned(), json!("ada"));
    let cfg = SessionConfig {
        vars,
        ..SessionConfig::default()
    };
    start(comp(text), Arc::new(Sleepy), cfg, Redactor::default())
}

/// The events up to and including the first that `until` accepts.
async fn events_until(s: &mut Session, until: impl Fn(&Event) -> bool) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), s.events.recv())
            .await
            .expect("an event within 10 s")
            .expect("the session is open");
        let stop = until(&ev);
        out.push(ev);
        if stop {
            return out;
        }
    }
}

fn finished(ev: &Event) -> bool {
    matches!(ev, Event::RunFinished { .. })
}

fn trace_of(events: &[Event]) -> &Trace {
    match events.last() {
        Some(Event::RunFinished { trace, .. }) => trace,
        other => panic!("no trace: {other:?}"),
    }
}

const THREE: &str = "pipe:\n  - id: hello\n    tool: echo\n    args: { message: hi }\n  - id: wait\n    tool: slow\n    args: { ms: 300 }\n  - id: bye\n    tool: echo\n    args: { message: bye }\n";

#[tokio::test]
async fn a_record_names_the_tool_it_called_after_the_file_changes() {
    let mut s = session(THREE);
    s.handle.send(Command::Run);
    let events = events_until(&mut s, finished).await;
    let hello = events
        .iter()
        .find_map(|e| match e {
            Event::NodeFinished { id, record } if id == "hello" => Some(record),
            _ => None,
        })
        .expect("hello finished");
    assert_eq!(
        (hello.id.as_str(), hello.tool.as_str()),
        ("hello", "echo"),
        "the live record names its node and tool"
    );
    // `hello` now calls another tool: stale, and its record still says
    // what ran; a re-run of `bye` alone writes a trace that says so.
    s.handle.send(Command::ReplacePlan(comp(&THREE.replacen(
        "tool: echo",
        "tool: echo2",
        1,
    ))));
    s.handle.send(Command::Rerun("bye".into()));
    let events = events_until(&mut s, finished).await;
    let trace = trace_of(&events);
    assert_eq!(trace.nodes["hello"].status, NodeStatus::Stale);
    assert_eq!(trace.nodes["hello"].tool, "echo", "the tool it called");
    assert_eq!(trace.nodes["bye"].tool, "echo");
}

#[tokio::test]
async fn a_pause_while_a_call_runs_leaves_the_call_in_the_run() {
    let mut s = session(THREE);
    s.handle.send(Command::Run);
    events_until(
        &mut s,
        |e| matches!(e, Event::NodeStarted { id, .. } if id == "wait"),
    )
    .await;
    s.handle.send(Command::Pause);
    let events = events_until(
        &mut s,
        |e| matches!(e, Event::NodeFinished { id, .. } if id == "wait"),
    )
    .await;
    assert!(
        events.iter().any(|e| matches!(
            e,
            Event::Paused {
                reason: PauseReason::User,
                ..
            }
        )),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| matches!(e, Event::Idle { .. })),
        "no pause while `wait` runs: {events:?}"
    );
    // Now nothing is in flight: the pause starts.
    let idle = events_until(&mut s, |e| matches!(e, Event::Idle { .. })).await;
    let Some(Event::Idle { at_ms }) = idle.last() else {
        unreachable!()
    };
    assert!(
        *at_ms >= 300,
        "the pause starts when `wait` ends: {at_ms} ms"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    s.handle.send(Command::Resume);
    let events = events_until(&mut s, finished).await;
    let busy = events.iter().find_map(|e| match e {
        Event::Busy { pause } => Some(*pause),
        _ => None,
    });
    let busy = busy.expect("the pause ends when the run goes on");
    assert!(busy.ms >= 200 && busy.at_ms == *at_ms, "{busy:?}");
    let run = &trace_of(&events).composition;
    assert!(run.duration_ms >= 300, "`wait`'s 300 ms count: {run:?}");
    assert_eq!(run.pauses, vec![busy], "one pause, the one said");
    assert_eq!(run.paused_ms, busy.ms);
}

#[tokio::test]
async fn a_pause_that_ends_with_the_run_while_a_call_runs_is_no_pause() {
    let text = "pipe:\n  - id: hello\n    tool: echo\n  - id: wait\n    tool: slow\n    args: { ms: 300 }\n";
    let mut s = session(text);
    s.handle.send(Command::Run);
    events_until(
        &mut s,
        |e| matches!(e, Event::NodeStarted { id, .. } if id == "wait"),
    )
    .await;
    s.handle.send(Command::Pause);
    let events = events_until(&mut s, finished).await;
    let run = &trace_of(&events).composition;
    assert!(run.duration_ms >= 300, "{run:?}");
    assert!(run.pauses.is_empty() && run.paused_ms == 0, "{run:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Idle { .. } | Event::Busy { .. }))
    );
}

#[tokio::test]
async fn a_stepped_call_counts_in_the_run_and_the_next_node_is_said() {
    let mut s = session(THREE);
    s.handle.send(Command::Step);
    let events = events_until(&mut s, |e| matches!(e, Event::Idle { .. })).await;
    let said: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Paused { reason, before } => Some((*reason, before.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        said,
        [
            (PauseReason::Step, None),
            (PauseReason::Step, Some("wait".to_owned()))
        ],
        "a step pauses as it sends `hello`, then says `wait` is next once `hello` ended"
    );
    // A person reads the screen, then steps `wait` (300 ms): the reading
    // is a pause, the call is not.
    tokio::time::sleep(Duration::from_millis(200)).await;
    s.handle.send(Command::Step);
    let events = events_until(&mut s, |e| matches!(e, Event::Idle { .. })).await;
    assert!(
        events.iter().any(
            |e| matches!(e, Event::Paused { reason: PauseReason::Step, before: Some(b) } if b == "bye")
        ),
        "{events:?}"
    );
    s.handle.send(Command::Resume);
    let events = events_until(&mut s, finished).await;
    let run = &trace_of(&events).composition;
    assert!(run.duration_ms >= 300, "the stepped call counts: {run:?}");
    assert_eq!(run.pauses.len(), 2, "{run:?}");
    assert!(run.pauses[0].ms >= 200, "{run:?}");
}
