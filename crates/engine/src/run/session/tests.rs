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

const CHAIN: &str = "vars: { who: ada }\npipe:\n  - id: find\n    tool: search_users\n    args: { query: \"${var.who}\" }\n  - id: details\n    tool: get\n    args: { id: \"${find.query}\" }\n  - id: notify\n    tool: echo\n    args: { message: \"${details.id}\" }\n";

/// Sends `text`'s plan and returns what the session said of it: the
/// nodes stale, and those fresh again.
async fn replace(s: &mut Session, text: &str) -> (Vec<String>, Vec<String>) {
    s.handle.send(Command::ReplacePlan(comp(text)));
    said(s).await
}

/// Sets `${var.who}` and returns what the session said of it.
async fn set_who(s: &mut Session, who: &str) -> (Vec<String>, Vec<String>) {
    let mut vars = IndexMap::new();
    vars.insert("who".to_owned(), json!(who));
    s.handle.send(Command::SetVars(vars));
    said(s).await
}

/// What the next adopted plan made stale and fresh.
async fn said(s: &mut Session) -> (Vec<String>, Vec<String>) {
    let events = events_until(s, |e| matches!(e, Event::PlanReplaced { .. })).await;
    match events.last() {
        Some(Event::PlanReplaced { stale, fresh, .. }) => (stale.clone(), fresh.clone()),
        _ => unreachable!(),
    }
}

fn ids(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn an_edit_undone_makes_its_nodes_fresh_again() {
    let mut s = session(CHAIN);
    s.handle.send(Command::Run);
    events_until(&mut s, finished).await;
    let edited = CHAIN.replace("tool: get\n", "tool: get_user\n");
    assert_eq!(
        replace(&mut s, &edited).await,
        (ids(&["details", "notify"]), ids(&[])),
        "the edited node and its descendant"
    );
    // Another edit of the same node: still stale.
    let again = CHAIN.replace("tool: get\n", "tool: get_u\n");
    assert_eq!(replace(&mut s, &again).await.0, ids(&["details", "notify"]));
    // Back to the text that ran: fresh, as they were.
    assert_eq!(
        replace(&mut s, CHAIN).await,
        (ids(&[]), ids(&["details", "notify"]))
    );
    // A variable changed, then changed back.
    assert_eq!(
        set_who(&mut s, "grace").await.0,
        ids(&["find", "details", "notify"])
    );
    assert_eq!(
        set_who(&mut s, "ada").await.1,
        ids(&["find", "details", "notify"])
    );
    // A run now has every record it had.
    s.handle.send(Command::Rerun("notify".into()));
    let events = events_until(&mut s, finished).await;
    let trace = trace_of(&events);
    assert!(
        trace.nodes.values().all(|r| r.status == NodeStatus::Ok),
        "{:?}",
        trace.nodes.values().map(|r| r.status).collect::<Vec<_>>()
    );
    assert_eq!(
        trace.completed_step_ids,
        ids(&["find", "details", "notify"])
    );
}

#[tokio::test]
async fn a_parent_run_again_makes_its_children_stale_until_they_run() {
    let mut s = session(CHAIN);
    s.handle.send(Command::Run);
    events_until(&mut s, finished).await;
    let edited = CHAIN.replace("tool: search_users", "tool: search");
    assert_eq!(
        replace(&mut s, &edited).await.0,
        ids(&["find", "details", "notify"])
    );
    // `find` runs again with the edit: its children read the old output.
    s.handle.send(Command::Rerun("find".into()));
    events_until(&mut s, finished).await;
    // Undoing the edit does not make them fresh: `find`'s record is new.
    assert_eq!(
        replace(&mut s, CHAIN).await,
        (ids(&["find", "details", "notify"]), ids(&[]))
    );
}

#[tokio::test]
async fn pinning_a_recorded_output_makes_nothing_stale() {
    let mut s = session(CHAIN);
    s.handle.send(Command::Run);
    events_until(&mut s, finished).await;
    s.handle.send(Command::Pin("find".into()));
    let events = events_until(&mut s, |e| matches!(e, Event::Pinned { .. })).await;
    let Some(Event::Pinned { yaml, .. }) = events.last() else {
        unreachable!()
    };
    // The driver writes the mock under the node, as the workbench does.
    let block: String = yaml.lines().map(|l| format!("    {l}\n")).collect();
    let pinned = CHAIN.replace(
        "    args: { query: \"${var.who}\" }\n",
        &format!("    args: {{ query: \"${{var.who}}\" }}\n{block}"),
    );
    assert!(pinned.contains("mock:"), "{pinned}");
    assert_eq!(replace(&mut s, &pinned).await, (ids(&[]), ids(&[])));
    // A hand edit of the pinned value is a change.
    let other = pinned.replace("ada", "bob");
    assert_ne!(other, pinned);
    assert!(replace(&mut s, &other).await.0.contains(&"find".to_owned()));
}
