//! What one `serve --http` client can take of the server: at most
//! `--max-sessions` sessions open at once, and at most
//! `--max-calls-per-session` requests in flight in one session. Over a
//! limit the request is refused (503 or 429) with a JSON-RPC error that
//! names the flag to raise it.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use axum::body::{Body, BodyDataStream, Bytes};
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use rmcp::transport::common::http_header::HEADER_SESSION_ID;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde::Deserialize;
use serde_json::{Value, json};

/// The sessions open by default at most (`--max-sessions`).
pub const DEFAULT_MAX_SESSIONS: usize = 64;
/// The requests in flight in one session by default at most
/// (`--max-calls-per-session`).
pub const DEFAULT_MAX_CALLS: usize = 16;

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
}

impl Limits {
    pub fn new(sessions: Arc<LocalSessionManager>, max_sessions: usize, max_calls: usize) -> Self {
        Limits {
            sessions,
            max_sessions,
            opening: tokio::sync::Mutex::new(()),
            max_calls,
            calls: Arc::default(),
        }
    }

    /// A slot for one more request in session `id`, or `None` when the
    /// session has `max_calls` in flight.
    fn enter(&self, id: &str) -> Option<InFlight> {
        let mut calls = lock(&self.calls);
        let n = calls.entry(id.to_owned()).or_insert(0);
        if *n >= self.max_calls {
            return None;
        }
        *n += 1;
        Some(InFlight {
            _slot: Arc::new(CallSlot {
                calls: self.calls.clone(),
                id: id.to_owned(),
            }),
        })
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
}

/// The middleware: counts sessions at `initialize` and requests in flight
/// per `Mcp-Session-Id`; notifications (a cancellation among them) and
/// responses always pass.
pub async fn guard(State(limits): State<Arc<Limits>>, req: Request, next: Next) -> Response {
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
    match (session, peek.method.as_deref()) {
        (None, Some("initialize")) => {
            let _one_at_a_time = limits.opening.lock().await;
            let open = limits.sessions.sessions.read().await.len();
            if open >= limits.max_sessions {
                return refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    peek.id,
                    format!(
                        "this server has {open} session(s) open, its limit (serve --max-sessions {}); close one (HTTP DELETE with its Mcp-Session-Id) or raise --max-sessions",
                        limits.max_sessions
                    ),
                );
            }
            next.run(req).await
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
