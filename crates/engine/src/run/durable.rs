//! Durable calls: every call's outcome goes into a journal before the run
//! sees it, and a run started again over the same journal (after its
//! worker died) is answered from it instead of calling again.
//!
//! The journal is a list of [`Entry`]s kept by a durable-execution engine
//! (Restate, in `pipewright worker`). It is written by one writer in
//! batches and read back whole before a resumed run starts, so it does not
//! matter in which order a run's concurrent calls finish: a call is found
//! by its [`call_key`], not by its position.
//!
//! A call's key is its node, server, tool and canonical arguments, and how
//! many such calls the run made before it: retries and fan-out iterations
//! are journaled each on their own, and two identical calls of one node
//! are interchangeable. A call whose arguments differ when the run is
//! started again (they read the clock, say) finds nothing and is made
//! again; so is a call that was in flight when the worker died: at least
//! once, like any journaled step.

pub mod ask;
pub mod client;
mod times;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::cassette::canonical;
use super::exec::now_rfc3339;
use crate::json::Json;
use crate::mcp::caller::{CallRequest, Caller};
use crate::mcp::human::{CallExtras, CallScope};
use crate::mcp::{CallOutcome, McpError};
use crate::redact::Redactor;
pub use crate::run::trace::Attempt;

/// One entry of a run's journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Entry {
    /// A worker started (or resumed) the run: the first entry each
    /// execution writes, so the journal says where the run was picked up.
    Attempt(Attempt),
    /// Calls that ended, in the order their outcomes reached the writer,
    /// and calls that began (their outcomes come in a later entry, or in
    /// this one after them).
    Calls {
        calls: Vec<Recorded>,
        /// Calls made live since the last entry: a client following the
        /// run shows them in flight. Not read back by a resumed run.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        opened: Vec<Opened>,
        /// How many calls the execution writing this entry had answered
        /// from the journal, when that grew since its last entry: so an
        /// execution that dies after resuming still says it replayed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replayed: Option<usize>,
    },
    /// A call asked a question that waits for an answer given through
    /// Restate (see [`ask`]).
    Question { question: ask::Asked },
}

/// One call's outcome as journaled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub tool: String,
    pub worker: String,
    /// When the call ended (RFC 3339, UTC).
    pub at: String,
    pub outcome: Result<Outcome, McpError>,
}

/// A call made live, journaled as it begins (a follower shows its node
/// in flight until the call's [`Recorded`] outcome comes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Opened {
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub tool: String,
    pub worker: String,
    /// When the call began (RFC 3339, UTC).
    pub at: String,
}

/// A [`CallOutcome`] in a form that survives the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub request: Json,
    pub result: Json,
    pub is_error: bool,
    pub duration_ms: u64,
    #[serde(default, skip_serializing_if = "CallExtras::is_empty")]
    pub extras: CallExtras,
}

impl Outcome {
    /// The outcome as journaled: the request (with its arguments) and the
    /// questions' answers masked; the result as the server sent it, since
    /// later nodes of a resumed run read it.
    fn of(o: &CallOutcome, redactor: &Redactor) -> Self {
        Outcome {
            request: redactor.json(&o.request),
            result: o.result.clone(),
            is_error: o.is_error,
            duration_ms: u64::try_from(o.duration.as_millis()).unwrap_or(u64::MAX),
            extras: super::cassette::redacted_extras(redactor, &o.extras),
        }
    }

    fn call_outcome(&self) -> CallOutcome {
        CallOutcome {
            request: self.request.clone(),
            result: self.result.clone(),
            is_error: self.is_error,
            duration: Duration::from_millis(self.duration_ms),
            // Replayed from the journal, not from a cassette: the call was
            // made and paid for, so its cost counts against the budget.
            replayed: false,
            extras: self.extras.clone(),
        }
    }
}

/// The key of the `n`-th call (from 0) of `node` with this server, tool
/// and arguments: a short hash, so keys are the same length whatever the
/// arguments, and the journal holds no argument values.
pub fn call_key(
    node: Option<&str>,
    server: Option<&str>,
    tool: &str,
    args: &Map<String, Value>,
) -> String {
    let mut h = Sha256::new();
    for part in [node.unwrap_or(""), server.unwrap_or(""), tool] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    h.update(
        canonical(&Value::Object(args.clone()))
            .to_string()
            .as_bytes(),
    );
    hex::encode(&h.finalize()[..12])
}

/// A write the journal writer has to make durable: `done` is told once it
/// is.
pub struct Pending {
    /// The call's outcome; none when only the count of calls answered from
    /// the journal is to be written (before a resumed execution's first
    /// new call).
    pub recorded: Option<Recorded>,
    pub done: oneshot::Sender<()>,
}

/// What was read back from a journal: the outcomes by key, and the
/// executions before this one.
#[derive(Debug, Default)]
pub struct Replay {
    calls: HashMap<String, Recorded>,
    pub attempts: Vec<Attempt>,
}

impl Replay {
    /// Reads `entries`, in journal order.
    #[cfg(test)]
    fn read(entries: impl IntoIterator<Item = Entry>) -> Self {
        let mut r = Replay::default();
        for e in entries {
            r.push(e);
        }
        r
    }

    /// Adds one entry read back.
    pub fn push(&mut self, e: Entry) {
        match e {
            Entry::Attempt(a) => self.attempts.push(a),
            Entry::Calls {
                calls, replayed, ..
            } => {
                if let (Some(n), Some(a)) = (replayed, self.attempts.last_mut()) {
                    a.replayed_calls = a.replayed_calls.max(n);
                }
                for c in calls {
                    if let Some(a) = self.attempts.last_mut() {
                        a.calls += 1;
                        a.last_at = Some(c.at.clone());
                    }
                    // Two outcomes under one key cannot happen (a key is
                    // written once); keep the first if it did.
                    self.calls.entry(c.key.clone()).or_insert(c);
                }
            }
            Entry::Question { .. } => {}
        }
    }

    /// How many call outcomes were read back.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.calls.len()
    }
}

/// A [`Caller`] that answers from the journal what it holds and journals
/// every other call's outcome before handing it back.
pub struct DurableCaller {
    inner: Arc<dyn Caller>,
    worker: String,
    replay: Replay,
    /// How many calls of each base key this execution made.
    counts: Mutex<HashMap<String, u32>>,
    writer: mpsc::UnboundedSender<Pending>,
    /// How many calls were answered from the journal.
    answered: std::sync::atomic::AtomicUsize,
    /// When each call answered from the journal really ran, by node:
    /// (start, end) in milliseconds since the Unix epoch.
    ran: Mutex<HashMap<String, (i128, i128)>>,
    /// Each call answered from the journal: its node, its request as the
    /// trace keeps it, and when it really ran (as in `ran`).
    ran_calls: Mutex<Vec<(String, Value, i128, i128)>>,
    /// The nodes that made a call live in this execution.
    live: Mutex<std::collections::HashSet<String>>,
    /// Masks what is journaled of a call's request and its questions.
    redactor: Redactor,
    /// Set when this execution no longer holds the run (its handler
    /// ended): no call is made live any more.
    halt: CancellationToken,
    /// The run was cancelled while no worker held it: the first call the
    /// journal does not answer is not made, and `missed` is told, so the
    /// run stops there and compensates everything it had done.
    cancel_at_miss: std::sync::atomic::AtomicBool,
    missed: Arc<tokio::sync::Notify>,
    /// Set once this execution made a call live: a resumed one first has
    /// the journal keep how many calls it had answered from it.
    went_live: std::sync::atomic::AtomicBool,
    /// Where the questions of live calls go to wait in the journal, when
    /// the run is durable end to end (a worker).
    asks: Option<mpsc::UnboundedSender<ask::AskRequest>>,
    /// Where each call made live is said as it begins (the journal loop
    /// writes it with its next entry); nothing waits for it.
    opens: Option<mpsc::UnboundedSender<Opened>>,
}

impl DurableCaller {
    /// Wraps `inner`; `replay` is what the journal held when this execution
    /// started; outcomes go to `writer`, which acknowledges each once it is
    /// durable.
    pub fn new(
        inner: Arc<dyn Caller>,
        worker: String,
        replay: Replay,
        writer: mpsc::UnboundedSender<Pending>,
        redactor: Redactor,
    ) -> Self {
        DurableCaller {
            inner,
            worker,
            replay,
            counts: Mutex::new(HashMap::new()),
            writer,
            answered: std::sync::atomic::AtomicUsize::new(0),
            ran: Mutex::new(HashMap::new()),
            ran_calls: Mutex::new(Vec::new()),
            live: Mutex::new(std::collections::HashSet::new()),
            redactor,
            halt: CancellationToken::new(),
            cancel_at_miss: std::sync::atomic::AtomicBool::new(false),
            missed: Arc::new(tokio::sync::Notify::new()),
            went_live: std::sync::atomic::AtomicBool::new(false),
            asks: None,
            opens: None,
        }
    }

    /// Every call made live is sent to `opens` as it begins, so a client
    /// following the run can show it in flight.
    pub fn with_opens(mut self, opens: mpsc::UnboundedSender<Opened>) -> Self {
        self.opens = Some(opens);
        self
    }

    /// Every question a live call asks goes to `asks` (the journal loop),
    /// whatever the run's own answerers.
    pub fn with_questions(mut self, asks: mpsc::UnboundedSender<ask::AskRequest>) -> Self {
        self.asks = Some(asks);
        self
    }

    /// This execution no longer holds the run: every later call fails
    /// without reaching a server.
    pub fn halt(&self) {
        self.halt.cancel();
    }

    /// Refuse the first call the journal does not answer and tell
    /// [`missed`](Self::missed).
    pub fn cancel_at_first_miss(&self) {
        self.cancel_at_miss
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Told when a call was refused by [`cancel_at_first_miss`](Self::cancel_at_first_miss).
    pub fn missed(&self) -> Arc<tokio::sync::Notify> {
        self.missed.clone()
    }

    /// How many calls were answered from the journal so far.
    pub fn answered(&self) -> usize {
        self.answered.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn next_key(&self, base: String) -> String {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let n = counts.entry(base.clone()).or_insert(0);
        let key = format!("{base}-{n}");
        *n += 1;
        key
    }
}

impl Caller for DurableCaller {
    fn call<'a>(
        &'a self,
        request: CallRequest<'a>,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        let (server, tool, scope) = (request.server, request.tool, request.scope);
        Box::pin(async move {
            let node = scope.node.as_deref();
            let key = self.next_key(call_key(node, server, tool, &request.args));
            if let Some(r) = self.replay.calls.get(&key) {
                self.answered
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if let (Some(node), Ok(o)) = (&r.node, &r.outcome)
                    && let Some(end) = ms_of(&r.at)
                {
                    let start = end - i128::from(o.duration_ms);
                    let mut ran = self.ran.lock().unwrap_or_else(|e| e.into_inner());
                    let span = ran.entry(node.clone()).or_insert((start, end));
                    *span = (span.0.min(start), span.1.max(end));
                    let request = self.redactor.json(&o.request).into_value();
                    self.ran_calls
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((node.clone(), request, start, end));
                }
                return r.outcome.as_ref().map(Outcome::call_outcome).cloned_err();
            }
            let server_name = || server.unwrap_or("").to_owned();
            if self.halt.is_cancelled() || self.writer.is_closed() {
                return Err(McpError::Transport {
                    server: server_name(),
                    reason: "this worker no longer holds the run: the call was not made".into(),
                });
            }
            if self
                .cancel_at_miss
                .swap(false, std::sync::atomic::Ordering::SeqCst)
            {
                self.missed.notify_one();
                return Err(McpError::Cancelled {
                    server: server_name(),
                    tool: tool.to_owned(),
                });
            }
            if self.answered() > 0
                && !self
                    .went_live
                    .swap(true, std::sync::atomic::Ordering::SeqCst)
            {
                // Kept before the call is made, so a worker killed in
                // this call still shows what it replayed.
                let (done, kept) = oneshot::channel();
                if self
                    .writer
                    .send(Pending {
                        recorded: None,
                        done,
                    })
                    .is_ok()
                {
                    let _ = kept.await;
                }
            }
            if let Some(node) = node {
                self.live
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(node.to_owned());
            }
            if let Some(opens) = &self.opens {
                let _ = opens.send(Opened {
                    key: key.clone(),
                    node: node.map(str::to_owned),
                    tool: tool.to_owned(),
                    worker: self.worker.clone(),
                    at: now_rfc3339(),
                });
            }
            // The call's questions wait in the journal, under its key.
            let asking;
            let scope = match &self.asks {
                Some(tx) => {
                    asking = CallScope {
                        responder: Some(Arc::new(ask::CallAsker::new(key.clone(), tx.clone()))),
                        ..scope.clone()
                    };
                    &asking
                }
                None => scope,
            };
            let got = self.inner.call(CallRequest { scope, ..request }).await;
            let recorded = Recorded {
                key,
                node: node.map(str::to_owned),
                tool: tool.to_owned(),
                worker: self.worker.clone(),
                at: now_rfc3339(),
                outcome: got
                    .as_ref()
                    .map(|o| Outcome::of(o, &self.redactor))
                    .map_err(Clone::clone),
            };
            let (done, durable) = oneshot::channel();
            let recorded = Some(recorded);
            if self.writer.send(Pending { recorded, done }).is_err() {
                return Err(McpError::Transport {
                    server: server.unwrap_or("").to_owned(),
                    reason: "the run's journal is closed: its outcome was not kept".into(),
                });
            }
            // The outcome is handed back only once it is durable: a node
            // that acts on it must never see a result a resumed run would
            // not see again.
            if durable.await.is_err() {
                return Err(McpError::Transport {
                    server: server.unwrap_or("").to_owned(),
                    reason: "the run's journal could not keep the call's outcome".into(),
                });
            }
            got
        })
    }

    fn inner(&self) -> Option<&dyn Caller> {
        Some(self.inner.as_ref())
    }
}

/// One line per execution of a durable run, for reports: who ran it,
/// when, how many calls it journaled, and for a resumption how long the
/// run stood still between the last outcome the previous worker journaled
/// and the new worker picking it up.
pub fn attempt_lines(attempts: &[Attempt]) -> Vec<String> {
    let mut out = Vec::new();
    let mut before: Option<&Attempt> = None;
    for a in attempts {
        let at = clock(&a.at);
        let calls = match a.calls {
            1 => "1 call".to_owned(),
            n => format!("{n} calls"),
        };
        match before {
            None => out.push(format!("run by {} at {at} ({calls})", a.worker)),
            Some(b) => {
                let from = b.last_at.as_deref().unwrap_or(&b.at);
                let gap = gap_ms(from, &a.at)
                    .map(|ms| format!(" after {:.1} s", ms as f64 / 1000.0))
                    .unwrap_or_default();
                out.push(format!("resumed by {} at {at}{gap} ({calls})", a.worker));
            }
        }
        before = Some(a);
    }
    out
}

/// An RFC 3339 time in milliseconds since the Unix epoch.
fn ms_of(at: &str) -> Option<i128> {
    time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339)
        .ok()
        .map(|t| t.unix_timestamp_nanos() / 1_000_000)
}

/// Milliseconds from one RFC 3339 time to another (never negative).
pub fn gap_ms(from: &str, to: &str) -> Option<u64> {
    u64::try_from((ms_of(to)? - ms_of(from)?).max(0)).ok()
}

/// `15:51:32` of an RFC 3339 time (the whole text if it is not one).
fn clock(at: &str) -> &str {
    at.split_once('T')
        .and_then(|(_, t)| t.get(..8))
        .unwrap_or(at)
}

/// `Result<T, &E>` → `Result<T, E>` by cloning the error.
trait ClonedErr<T, E> {
    fn cloned_err(self) -> Result<T, E>;
}

impl<T, E: Clone> ClonedErr<T, E> for Result<T, &E> {
    fn cloned_err(self) -> Result<T, E> {
        self.map_err(Clone::clone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A caller that counts its calls and answers with the count.
    struct Counting(std::sync::atomic::AtomicUsize);

    impl Caller for Counting {
        fn call<'a>(
            &'a self,
            request: CallRequest<'a>,
        ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
            let tool = request.tool;
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Box::pin(async move {
                Ok(CallOutcome {
                    request: json!({"tool": tool}).into(),
                    result: json!({"structuredContent": {"n": n}}).into(),
                    is_error: false,
                    duration: Duration::from_millis(5),
                    replayed: false,
                    extras: CallExtras::default(),
                })
            })
        }
    }

    fn writer() -> (mpsc::UnboundedSender<Pending>, Arc<Mutex<Vec<Entry>>>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Pending>();
        let journal = Arc::new(Mutex::new(Vec::new()));
        let j = journal.clone();
        tokio::spawn(async move {
            while let Some(p) = rx.recv().await {
                j.lock().unwrap().push(Entry::Calls {
                    calls: p.recorded.into_iter().collect(),
                    opened: Vec::new(),
                    replayed: None,
                });
                let _ = p.done.send(());
            }
        });
        (tx, journal)
    }

    fn request<'a>(
        args: Map<String, Value>,
        cancel: &'a CancellationToken,
        scope: &'a CallScope,
    ) -> CallRequest<'a> {
        CallRequest {
            server: None,
            tool: "t",
            args,
            meta: None,
            timeout: None,
            cancel,
            scope,
        }
    }

    fn scope(node: &str) -> CallScope {
        CallScope {
            node: Some(node.into()),
            responder: None,
            notify: None,
            task: None,
        }
    }

    /// Issue 48, item 24: a call made live is said as it begins, before
    /// its outcome is journaled; a call answered from the journal is not.
    #[tokio::test]
    async fn a_live_call_is_said_as_it_begins() {
        let inner = Arc::new(Counting(std::sync::atomic::AtomicUsize::new(0)));
        let cancel = CancellationToken::new();
        let args = json!({"i": 1}).as_object().unwrap().clone();
        let (tx, journal) = writer();
        let (opens, mut opened) = mpsc::unbounded_channel();
        let first = DurableCaller::new(
            inner.clone(),
            "w1".into(),
            Replay::default(),
            tx,
            Redactor::default(),
        )
        .with_opens(opens);
        first
            .call(request(args.clone(), &cancel, &scope("a")))
            .await
            .unwrap();
        let o: Opened = opened.try_recv().expect("the call was said as it began");
        assert_eq!(
            (o.node.as_deref(), o.tool.as_str(), o.worker.as_str()),
            (Some("a"), "t", "w1")
        );
        let entries = journal.lock().unwrap().clone();
        let Some(Entry::Calls { calls, .. }) = entries.first() else {
            panic!("{entries:?}");
        };
        assert_eq!(calls[0].key, o.key, "the outcome is the same call's");
        // Resumed over that journal, the call is answered from it: nothing
        // begins.
        let (tx, _) = writer();
        let (opens, mut opened) = mpsc::unbounded_channel();
        let second = DurableCaller::new(
            inner,
            "w2".into(),
            Replay::read(entries),
            tx,
            Redactor::default(),
        )
        .with_opens(opens);
        second
            .call(request(args, &cancel, &scope("a")))
            .await
            .unwrap();
        assert_eq!(second.answered(), 1);
        assert!(opened.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_resumed_run_is_answered_from_the_journal_whatever_the_order() {
        let inner = Arc::new(Counting(Default::default()));
        let (tx, journal) = writer();
        let first = DurableCaller::new(
            inner.clone(),
            "w1".into(),
            Replay::default(),
            tx,
            Redactor::default(),
        );
        let cancel = CancellationToken::new();
        let args = |i: i64| json!({"i": i}).as_object().unwrap().clone();
        // Two identical calls of `a` (a retry), one of `b`.
        for (node, i) in [("a", 1), ("a", 1), ("b", 2)] {
            first
                .call(request(args(i), &cancel, &scope(node)))
                .await
                .unwrap();
        }
        assert_eq!(inner.0.load(std::sync::atomic::Ordering::SeqCst), 3);
        let entries = journal.lock().unwrap().clone();
        let replay = Replay::read(entries);
        assert_eq!(replay.len(), 3);

        // The resumed run asks in another order and once more than before.
        let (tx, journal) = writer();
        let second =
            DurableCaller::new(inner.clone(), "w2".into(), replay, tx, Redactor::default());
        let b = second
            .call(request(args(2), &cancel, &scope("b")))
            .await
            .unwrap();
        assert_eq!(b.result["structuredContent"]["n"], 2);
        for want in [0, 1] {
            let a = second
                .call(request(args(1), &cancel, &scope("a")))
                .await
                .unwrap();
            assert_eq!(a.result["structuredContent"]["n"], want);
        }
        assert_eq!(second.answered(), 3);
        assert_eq!(inner.0.load(std::sync::atomic::Ordering::SeqCst), 3);
        // A third call of `a` was never made: it goes to the server and
        // into the journal, after a write that only says it replayed.
        let a = second
            .call(request(args(1), &cancel, &scope("a")))
            .await
            .unwrap();
        assert_eq!(a.result["structuredContent"]["n"], 3);
        let written: Vec<usize> = journal
            .lock()
            .unwrap()
            .iter()
            .map(|e| match e {
                Entry::Calls { calls, .. } => calls.len(),
                Entry::Attempt(_) | Entry::Question { .. } => 99,
            })
            .collect();
        assert_eq!(written, [0, 1]);

        // `b` was answered wholly from the journal: it keeps the time it
        // ran (5 ms, ending when it was journaled), not the resumption's.
        let mut trace = crate::run::trace::Trace::default();
        let later = "2099-01-01T00:00:00Z";
        for id in ["a", "b"] {
            trace.nodes.insert(
                id.into(),
                crate::run::trace::NodeRecord {
                    started_at: Some(later.into()),
                    duration_ms: 1,
                    ..Default::default()
                },
            );
        }
        trace.composition.started_at = Some(later.into());
        second.restore_times(&mut trace, Some("2020-01-01T00:00:00Z"));
        let b = &trace.nodes["b"];
        assert_eq!(b.duration_ms, 5);
        assert!(b.started_at.as_deref().unwrap() < later);
        // `a` also called live: it ends when its live call did.
        let a = &trace.nodes["a"];
        assert!(a.duration_ms > 1_000_000, "{}", a.duration_ms);
        assert_eq!(
            trace.composition.started_at.as_deref(),
            Some("2020-01-01T00:00:00Z")
        );
    }

    #[test]
    fn attempt_lines_show_the_gap_of_a_resumption() {
        let a = |w: &str, at: &str, calls, last: Option<&str>| Attempt {
            nonce: String::new(),
            worker: w.into(),
            at: at.into(),
            calls,
            replayed_calls: 0,
            last_at: last.map(str::to_owned),
        };
        let lines = attempt_lines(&[
            a(
                "w1",
                "2026-11-25T10:00:00Z",
                2,
                Some("2026-11-25T10:00:01.5Z"),
            ),
            a("w2", "2026-11-25T10:00:04Z", 1, None),
        ]);
        assert_eq!(
            lines,
            [
                "run by w1 at 10:00:00 (2 calls)",
                "resumed by w2 at 10:00:04 after 2.5 s (1 call)"
            ]
        );
    }

    #[test]
    fn keys_ignore_key_order_but_not_values_or_nodes() {
        let a = json!({"x": 1, "y": [1, 2]}).as_object().unwrap().clone();
        let b = json!({"y": [1, 2], "x": 1}).as_object().unwrap().clone();
        let c = json!({"y": [1, 2], "x": 2}).as_object().unwrap().clone();
        assert_eq!(
            call_key(Some("n"), None, "t", &a),
            call_key(Some("n"), None, "t", &b)
        );
        assert_ne!(
            call_key(Some("n"), None, "t", &a),
            call_key(Some("n"), None, "t", &c)
        );
        assert_ne!(
            call_key(Some("n"), None, "t", &a),
            call_key(Some("m"), None, "t", &a)
        );
    }

    #[test]
    fn errors_survive_the_journal() {
        let r = Recorded {
            key: "k".into(),
            node: Some("n".into()),
            tool: "t".into(),
            worker: "w".into(),
            at: now_rfc3339(),
            outcome: Err(McpError::Timeout {
                server: "s".into(),
                tool: "t".into(),
                after: Duration::from_secs(3),
            }),
        };
        let e = Entry::Calls {
            calls: vec![r],
            opened: Vec::new(),
            replayed: Some(3),
        };
        let text = serde_json::to_string(&e).unwrap();
        let back: Entry = serde_json::from_str(&text).unwrap();
        assert_eq!(back, e);
    }
}
