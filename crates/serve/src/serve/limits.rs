//! What one `serve --http` client can take of the server: at most
//! `--max-sessions` sessions open at once, and at most
//! `--max-calls-per-session` requests in flight in one session. Over a
//! limit the request is refused (503 or 429) with a JSON-RPC error that
//! names the flag to raise it. Sessions end even when their agent never
//! says so (no HTTP DELETE: the TypeScript SDK's `close()`, a crash): one
//! that no request reached for `--session-idle` is closed, and when every
//! slot is taken a new agent takes the slot of the session idle longest
//! (one with no request in flight; its agent, should it come back, is
//! answered 404 and starts a new session, as the spec says). When the
//! server is told to stop it drains: no new session or call is taken (503,
//! `Retry-After`), the calls in flight are counted down.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, BodyDataStream, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde::Deserialize;
use serde_json::{Value, json};

/// The sessions open by default at most (`--max-sessions`).
pub const DEFAULT_MAX_SESSIONS: usize = 64;
/// The requests in flight in one session by default at most
/// (`--max-calls-per-session`).
pub const DEFAULT_MAX_CALLS: usize = 16;
/// How long a session no request reached stays open by default
/// (`--session-idle`).
pub const DEFAULT_SESSION_IDLE: Duration = Duration::from_secs(5 * 60);
/// How long calls in flight may take to finish once the server is told to
/// stop, by default (`--drain`); what is left then is cancelled.
pub const DEFAULT_DRAIN: Duration = Duration::from_secs(5);
/// The key calls of no session (a 2026-07-28 agent's) are counted under;
/// a session id is never empty.
const SESSIONLESS: &str = "";

/// The limits and what they count, shared by every request.
pub struct Limits {
    /// rmcp's own session table: the count of open sessions is its length,
    /// so a session closed any way (DELETE, idle timeout, the worker
    /// ending) frees its slot.
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    /// Held while an `initialize` is checked and answered, so two at once
    /// cannot both take the last slot.
    opening: tokio::sync::Mutex<()>,
    max_calls: usize,
    calls: Arc<Mutex<HashMap<String, usize>>>,
    /// When a request of each session last arrived (or its `initialize`
    /// was answered).
    seen: Mutex<HashMap<String, Instant>>,
    /// A session no request reached for this long is closed.
    idle: Duration,
    /// Set once the server is told to stop: nothing new is taken.
    draining: AtomicBool,
    /// Woken whenever the last call in flight ends.
    quiet: Arc<tokio::sync::Notify>,
}

impl Limits {
    pub fn new(
        sessions: Arc<LocalSessionManager>,
        max_sessions: usize,
        max_calls: usize,
        idle: Duration,
    ) -> Self {
        Limits {
            sessions,
            max_sessions,
            opening: tokio::sync::Mutex::new(()),
            max_calls,
            calls: Arc::default(),
            seen: Mutex::default(),
            idle,
            draining: AtomicBool::new(false),
            quiet: Arc::default(),
        }
    }

    /// From now on no new session or call is taken, and `/readyz` fails.
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Requests in flight now, over every session and none.
    pub fn in_flight(&self) -> usize {
        lock(&self.calls).values().sum()
    }

    /// Waits until no request is in flight.
    pub async fn quiet(&self) {
        loop {
            let woken = self.quiet.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            if self.in_flight() == 0 {
                return;
            }
            woken.await;
        }
    }

    /// Notes that session `id` was just used.
    fn touch(&self, id: &str) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.insert(id.to_owned(), Instant::now());
    }

    /// The open sessions with no request in flight, idle longest first,
    /// each with how long it has been idle. Forgets sessions closed since.
    async fn idle_sessions(&self) -> Vec<(String, Duration)> {
        let open: Vec<String> = {
            let table = self.sessions.sessions.read().await;
            table.keys().map(|id| id.to_string()).collect()
        };
        let busy = lock(&self.calls).clone();
        let now = Instant::now();
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.retain(|id, _| open.contains(id));
        let mut idle: Vec<(String, Duration)> = open
            .into_iter()
            .filter(|id| !busy.contains_key(id))
            .map(|id| {
                // A session met for the first time starts its clock now.
                let since = *seen.entry(id.clone()).or_insert(now);
                (id, now.saturating_duration_since(since))
            })
            .collect();
        idle.sort_by_key(|s| std::cmp::Reverse(s.1));
        idle
    }

    /// Closes every session idle past `--session-idle`; the count closed.
    pub async fn close_idle(&self) -> usize {
        let mut closed = 0;
        for (id, for_how_long) in self.idle_sessions().await {
            if for_how_long < self.idle {
                break;
            }
            if self.close(&id).await {
                tracing::info!(
                    "closed session {id}: no request for {}s (serve --session-idle {}s)",
                    for_how_long.as_secs(),
                    self.idle.as_secs()
                );
                closed += 1;
            }
        }
        closed
    }

    /// Frees one slot for a new session when every slot is taken: the
    /// session idle longest goes. False when every session has a request
    /// in flight.
    async fn make_room(&self) -> bool {
        let Some((id, for_how_long)) = self.idle_sessions().await.into_iter().next() else {
            return false;
        };
        let closed = self.close(&id).await;
        if closed {
            tracing::info!(
                "closed session {id}, idle {} ms, to open a new one (serve --max-sessions {})",
                for_how_long.as_millis(),
                self.max_sessions
            );
        }
        closed
    }

    async fn close(&self, id: &str) -> bool {
        let closed = self.sessions.close_session(&Arc::from(id)).await.is_ok();
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.remove(id);
        closed
    }

    /// Closes idle sessions until `stop`, looking a few times per
    /// `--session-idle` (at least every second, at most every 30 s).
    pub async fn sweep(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        let every = (self.idle / 4).clamp(Duration::from_secs(1), Duration::from_secs(30));
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            self.close_idle().await;
        }
    }

    /// What `/readyz` says of the sessions: how many are open, the limit,
    /// and how long an idle one stays.
    pub async fn status(&self) -> Value {
        let open = self.sessions.sessions.read().await.len();
        json!({
            "ready": !self.draining(),
            "draining": self.draining(),
            "sessions": open,
            "max_sessions": self.max_sessions,
            "session_idle_secs": self.idle.as_secs(),
            "calls_in_flight": self.in_flight(),
        })
    }

    /// A slot for one more request in session `id`, or `None` when the
    /// session has `max_calls` in flight.
    fn enter(&self, id: &str) -> Option<InFlight> {
        let mut calls = lock(&self.calls);
        let n = calls.entry(id.to_owned()).or_insert(0);
        // Calls of no session are bounded by the server's own limits
        // (parked runs, tasks), not by a session's.
        if *n >= self.max_calls && id != SESSIONLESS {
            return None;
        }
        *n += 1;
        Some(InFlight {
            _slot: Arc::new(CallSlot {
                calls: self.calls.clone(),
                id: id.to_owned(),
                quiet: self.quiet.clone(),
            }),
        })
    }
}

/// What `serve --http` does when told to stop: takes nothing new (and
/// `/readyz` fails at once), lets the calls in flight finish for up to
/// `within`, and returns; the caller then ends the sessions, which cancels
/// what is left the way an agent's cancel does.
pub async fn drain(limits: &Limits, within: Duration) {
    limits.drain();
    let left = limits.in_flight();
    if left > 0 {
        tracing::warn!(
            "stopping: {left} call(s) in flight get up to {}s to finish (serve --drain)",
            within.as_secs_f64()
        );
    }
    if tokio::time::timeout(within, limits.quiet()).await.is_err() {
        tracing::warn!(
            "cancelling {} call(s) still in flight after serve --drain",
            limits.in_flight()
        );
    }
}

/// How long cancelled calls may take to run their compensations and save
/// their runs before the process ends anyway.
const SETTLE: Duration = Duration::from_secs(30);

/// Waits, after the sessions ended, for the cancelled calls to finish
/// (their compensations, their saved runs), for at most [`SETTLE`].
pub async fn settle(limits: &Limits) {
    if tokio::time::timeout(SETTLE, limits.quiet()).await.is_err() {
        tracing::warn!(
            "{} call(s) did not end within {}s of being cancelled",
            limits.in_flight(),
            SETTLE.as_secs()
        );
    }
}

/// A poisoned lock only means another request panicked mid-count; the
/// counts are still usable.
fn lock(m: &Mutex<HashMap<String, usize>>) -> MutexGuard<'_, HashMap<String, usize>> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One request's slot in its session; given back when the last copy is
/// dropped.
struct CallSlot {
    calls: Arc<Mutex<HashMap<String, usize>>>,
    id: String,
    quiet: Arc<tokio::sync::Notify>,
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        let mut calls = lock(&self.calls);
        if let Some(n) = calls.get_mut(&self.id) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                calls.remove(&self.id);
            }
        }
        if calls.is_empty() {
            self.quiet.notify_waiters();
        }
    }
}

/// A request's slot, held twice: by the response body until it ends or is
/// dropped, and in the request's extensions, which rmcp hands to the tool
/// call. So a call whose client hung up still counts until it ends.
#[derive(Clone)]
struct InFlight {
    _slot: Arc<CallSlot>,
}

/// The two fields of a JSON-RPC message that tell a request (both) from a
/// notification or a response.
#[derive(Deserialize, Default)]
struct Peek {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<PeekParams>,
}

/// Whether a request answers a run that waits (a 2026-07-28 agent's
/// answers carry the `requestState` they were given).
#[derive(Deserialize, Default)]
struct PeekParams {
    #[serde(default, rename = "requestState")]
    request_state: Option<Value>,
}

/// The middleware: counts sessions at `initialize` and requests in flight
/// per `Mcp-Session-Id`; notifications (a cancellation among them) and
/// responses always pass.
pub async fn guard(State(limits): State<Arc<Limits>>, req: Request, next: Next) -> Response {
    if let Some(id) = req
        .headers()
        .get(HEADER_SESSION_ID)
        .and_then(|v| v.to_str().ok())
    {
        limits.touch(id);
    }
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    // The body limit layer outside this one bounds what is read here.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is over the limit (serve --max-body)\n",
        )
            .into_response();
    };
    let peek: Peek = serde_json::from_slice(&bytes).unwrap_or_default();
    let session = parts
        .headers
        .get(HEADER_SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut req = Request::from_parts(parts, Body::from(bytes));
    let answers_a_run = peek
        .params
        .as_ref()
        .is_some_and(|p| p.request_state.is_some());
    if limits.draining() && peek.id.is_some() && peek.method.is_some() && !answers_a_run {
        return refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            peek.id,
            "this server is shutting down and takes no new call; retry, another instance will take it".into(),
        );
    }
    match (session, peek.method.as_deref()) {
        (None, Some("initialize")) => {
            let _one_at_a_time = limits.opening.lock().await;
            let mut open = limits.sessions.sessions.read().await.len();
            if open >= limits.max_sessions && limits.make_room().await {
                open = limits.sessions.sessions.read().await.len();
            }
            if open >= limits.max_sessions {
                return refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    peek.id,
                    format!(
                        "this server has {open} session(s) open, each with a request in flight, its limit (serve --max-sessions {}); retry shortly or raise --max-sessions",
                        limits.max_sessions
                    ),
                );
            }
            let response = next.run(req).await;
            if let Some(id) = response
                .headers()
                .get(HEADER_SESSION_ID)
                .and_then(|v| v.to_str().ok())
            {
                limits.touch(id);
            }
            response
        }
        (Some(id), Some(_)) if peek.id.is_some() => {
            let Some(slot) = limits.enter(&id) else {
                return refusal(
                    StatusCode::TOO_MANY_REQUESTS,
                    peek.id,
                    format!(
                        "this session has {0} request(s) in flight, its limit (serve --max-calls-per-session {0}); wait for one to end or raise --max-calls-per-session",
                        limits.max_calls
                    ),
                );
            };
            req.extensions_mut().insert(slot.clone());
            held_until_done(next.run(req).await, slot)
        }
        // A call of no session (2026-07-28): counted, so a drain waits
        // for it.
        (None, Some(_)) if peek.id.is_some() => match limits.enter(SESSIONLESS) {
            Some(slot) => {
                req.extensions_mut().insert(slot.clone());
                held_until_done(next.run(req).await, slot)
            }
            None => next.run(req).await,
        },
        _ => next.run(req).await,
    }
}

/// A JSON-RPC error answering request `id` with HTTP `status`.
fn refusal(status: StatusCode, id: Option<Value>, message: String) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": { "code": -32000, "message": message },
    });
    (status, [(header::RETRY_AFTER, "1")], axum::Json(body)).into_response()
}

/// `response` with `slot` held until its body ends (an SSE stream ends
/// after the call's result) or is dropped (the client hung up).
fn held_until_done(response: Response, slot: InFlight) -> Response {
    let (parts, body) = response.into_parts();
    let body = Body::from_stream(Held {
        inner: body.into_data_stream(),
        slot: Some(slot),
    });
    Response::from_parts(parts, body)
}

struct Held {
    inner: BodyDataStream,
    slot: Option<InFlight>,
}

impl Stream for Held {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = Pin::new(&mut self.inner).poll_next(cx);
        // Given back as the last byte is out, before the client can see
        // the end and send its next request.
        if let Poll::Ready(None) = next {
            self.slot = None;
        }
        next
    }
}
