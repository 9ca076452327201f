//! One call of a node (or of one fan-out iteration) under its `on_error`
//! policy: each attempt with its timeout and the scope that hears the
//! server, the backoff between attempts, what each attempt records, and
//! the `transform` of the output.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::job::{NodeJob, now_rfc3339};
use crate::file::model::{Mock, Node, OnError};
use crate::json::Json;
use crate::mcp::caller::CallRequest;
use crate::mcp::human::{CallExtras, CallScope, Notice};
use crate::mcp::{McpError, error_text, meta_of, output_of};
use crate::run::events::Event;
use crate::run::trace::{AttemptRecord, NodeStatus};

/// Longest wait between two retries.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Why a call produced no output.
#[derive(Debug, Clone)]
pub(super) enum CallFailure {
    Cancelled,
    Failed(String),
}

/// One call after its retries.
#[derive(Debug)]
pub(super) struct CallResult {
    pub(super) result: Result<Json, CallFailure>,
    pub(super) attempts: u32,
    pub(super) raw: Json,
    pub(super) rpc: Json,
    pub(super) cost_usd: f64,
    pub(super) tokens: u64,
    pub(super) model: Option<String>,
    pub(super) replayed: bool,
    /// The failure's code and status (see [`NodeRecord::error_code`]).
    pub(super) code: Option<String>,
    pub(super) status: Option<u16>,
    /// What the server asked and said during every attempt.
    pub(super) extras: CallExtras,
    /// Each attempt, as it ended.
    pub(super) calls: Vec<AttemptRecord>,
}

impl Default for CallResult {
    fn default() -> Self {
        Self {
            result: Err(CallFailure::Cancelled),
            attempts: 0,
            raw: Json::null(),
            rpc: Json::null(),
            cost_usd: 0.0,
            tokens: 0,
            model: None,
            replayed: false,
            code: None,
            status: None,
            extras: CallExtras::default(),
            calls: Vec::new(),
        }
    }
}

/// The scope of node `node`'s calls: its id, who answers for it, and a
/// hook that keeps what its server tells in `heard` (whether or not the
/// call then succeeds) and turns it into events.
pub(super) fn call_scope(
    job: &NodeJob,
    node: &Node,
    iteration: Option<usize>,
    heard: Arc<std::sync::Mutex<CallExtras>>,
) -> CallScope {
    let events = job.events.clone();
    let redactor = job.redactor.clone();
    let id = node.id.clone();
    CallScope {
        node: Some(node.id.clone()),
        responder: job.responder.clone(),
        task: node.task,
        notify: Some(Arc::new(move |notice: Notice| {
            if let Ok(mut h) = heard.lock() {
                match &notice {
                    Notice::Progress(p) => h.progress(p.clone()),
                    Notice::Log(l) => h.log(l.clone()),
                    Notice::Answered(i) => h.interactions.push(i.clone()),
                    Notice::Task(t) => h.task(t),
                }
            }
            // Never block the connection's reader: a full channel drops
            // the live notice (the record keeps it).
            let event = match notice {
                Notice::Progress(mut note) => {
                    note.message = note.message.map(|m| redactor.text(&m));
                    Event::Progress {
                        id: id.clone(),
                        iteration,
                        note,
                    }
                }
                Notice::Task(mut note) => {
                    note.message = note.message.map(|m| redactor.text(&m));
                    Event::Task {
                        id: id.clone(),
                        iteration,
                        note,
                    }
                }
                Notice::Log(line) => Event::ServerLog {
                    id: id.clone(),
                    line: redactor.text(&line.text()),
                },
                Notice::Answered(interaction) => Event::Answered {
                    id: id.clone(),
                    kind: interaction.kind.clone(),
                    action: interaction
                        .reply
                        .get("action")
                        .and_then(Value::as_str)
                        .unwrap_or("sampled")
                        .to_owned(),
                },
            };
            let _ = events.try_send(event);
        })),
    }
}

/// Whose call it is: the node's own (with its arguments as shown), or one
/// fan-out iteration's.
pub(super) enum Which {
    Node(Json),
    Iteration(usize),
}

impl Which {
    fn iteration(&self) -> Option<usize> {
        match self {
            Which::Node(_) => None,
            Which::Iteration(i) => Some(*i),
        }
    }
}

/// Calls (or mocks) once per attempt that `on_error` allows, waiting with
/// doubling backoff in between; applies `transform` to the output.
pub(super) async fn call_with_policy(
    job: &NodeJob,
    node: &Node,
    args: Map<String, Value>,
    which: Which,
) -> CallResult {
    let mut out = CallResult::default();
    if let Some(mock) = &node.mock {
        out.attempts = 1;
        if let Mock::Error(e) = mock {
            (out.code, out.status) = error_code_of(e);
        }
        out.result = match mock {
            Mock::Result(v) => apply_transform(node, Json::from_value(v.clone())),
            Mock::Error(e) => Err(CallFailure::Failed(match e {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })),
        };
        return out;
    }
    let meta = node.meta.as_ref().and_then(|m| m.as_object().cloned());
    let timeout = node.timeout.or(job.default_timeout);
    let heard = Arc::new(std::sync::Mutex::new(CallExtras::default()));
    let scope = call_scope(job, node, which.iteration(), heard.clone());
    let mut out = call_attempts(job, node, args, &which, meta, timeout, &scope).await;
    out.extras = heard
        .lock()
        .map(|mut h| std::mem::take(&mut *h))
        .unwrap_or_default();
    out
}

/// The attempts of one call that `on_error` allows.
pub(super) async fn call_attempts(
    job: &NodeJob,
    node: &Node,
    args: Map<String, Value>,
    which: &Which,
    meta: Option<Map<String, Value>>,
    timeout: Option<Duration>,
    scope: &CallScope,
) -> CallResult {
    let mut out = CallResult::default();
    let (max_attempts, mut backoff) = match node.on_error {
        OnError::Retry { max, backoff } => (max.saturating_add(1), backoff),
        _ => (1, Duration::ZERO),
    };
    loop {
        out.attempts += 1;
        let attempt_start = (Instant::now(), now_rfc3339());
        let mut this_rpc = Json::null();
        let mut this_raw = Json::null();
        if let Which::Node(shown) = which {
            let _ = job
                .events
                .send(Event::NodeStarted {
                    id: node.id.clone(),
                    attempt: out.attempts,
                    args: Some(shown.clone()),
                })
                .await;
        }
        let res = job
            .caller
            .call(CallRequest {
                server: node.server.as_deref(),
                tool: &node.tool,
                args: args.clone(),
                meta: meta.clone(),
                timeout,
                cancel: &job.cancel,
                scope,
            })
            .await;
        let (retryable, message) = match res {
            Ok(outcome) => {
                // Built by moving, not with `json!` (which would serialise
                // every value again).
                // The result itself is kept once, in `raw`; the exchange
                // refers to it (`engine::run::trace::RAW_REF`).
                let mut response = Map::new();
                response.insert("jsonrpc".into(), Value::from("2.0"));
                response.insert(
                    "id".into(),
                    outcome.request.pick("id").unwrap_or(Value::Null),
                );
                response.insert("result".into(), crate::run::trace::raw_ref());
                // The request is shared as it was sent, not copied.
                out.rpc = Json::object(vec![
                    ("request".into(), outcome.request),
                    ("response".into(), Json::from_value(Value::Object(response))),
                ]);
                this_rpc = out.rpc.clone();
                let output = output_of(&outcome.result);
                let figures = job.pricing.actual(
                    node.server.as_deref(),
                    &node.tool,
                    &args,
                    meta_of(&outcome.result).as_ref(),
                    &output,
                );
                // A replayed call is free: it reached no server.
                if !outcome.replayed {
                    out.cost_usd += figures.cost_usd;
                    out.tokens += figures.tokens;
                }
                out.replayed |= outcome.replayed;
                out.model = figures.model.or(out.model.take());
                out.raw = outcome.result;
                this_raw = out.raw.clone();
                if outcome.is_error {
                    (out.code, out.status) = error_code_of(output.tree());
                    (true, error_text(&out.raw))
                } else {
                    out.result = apply_transform(node, output);
                    if out.result.is_err() {
                        out.code = Some("TRANSFORM_FAILED".into());
                    }
                    keep_attempt(
                        job,
                        which,
                        &mut out,
                        attempt_start,
                        (this_rpc, this_raw),
                        true,
                    );
                    return out;
                }
            }
            Err(McpError::Cancelled { .. }) => {
                out.result = Err(CallFailure::Cancelled);
                keep_attempt(
                    job,
                    which,
                    &mut out,
                    attempt_start,
                    (this_rpc, this_raw),
                    true,
                );
                return out;
            }
            Err(e @ McpError::Closed { .. }) => {
                out.code = Some("SERVER_CLOSED".into());
                (false, e.to_string())
            }
            Err(McpError::Unreadable {
                server,
                method,
                what,
                received,
            }) => {
                // What arrived stays in the record, escaped, for the trace.
                out.code = Some("UNREADABLE_ANSWER".into());
                let mut kept = Map::new();
                kept.insert("unreadable".into(), *received);
                out.raw = Json::from_value(Value::Object(kept));
                this_raw = out.raw.clone();
                let e = McpError::Unreadable {
                    server,
                    method,
                    what,
                    received: Box::new(Value::Null),
                };
                (true, e.to_string())
            }
            Err(e) => {
                out.code = Some(match &e {
                    McpError::Timeout { .. } => "TIMEOUT".into(),
                    McpError::Protocol { code, .. } => format!("JSONRPC_{code}"),
                    _ => "TRANSPORT_ERROR".into(),
                });
                out.status = None;
                (true, e.to_string())
            }
        };
        let last = !retryable || out.attempts >= max_attempts;
        out.result = Err(CallFailure::Failed(message.clone()));
        keep_attempt(
            job,
            which,
            &mut out,
            attempt_start,
            (this_rpc, this_raw),
            last,
        );
        if last {
            return out;
        }
        let _ = job
            .events
            .send(Event::Retrying {
                id: node.id.clone(),
                attempt: out.attempts,
                error: job.redactor.text(&message),
            })
            .await;
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = job.cancel.cancelled() => {
                out.result = Err(CallFailure::Cancelled);
                return out;
            }
        }
        backoff = backoff.saturating_mul(2).min(MAX_BACKOFF);
    }
}

/// Keeps the attempt that just ended in `out.calls` (secrets masked). The
/// result of a call's last attempt is kept elsewhere (the record's `raw`,
/// or an iteration's output when it succeeded), so it is not kept twice.
fn keep_attempt(
    job: &NodeJob,
    which: &Which,
    out: &mut CallResult,
    (started, started_at): (Instant, String),
    (rpc, raw): (Json, Json),
    last: bool,
) {
    let (status, error) = match &out.result {
        Ok(_) => (NodeStatus::Ok, None),
        Err(CallFailure::Cancelled) => (NodeStatus::Cancelled, Some("cancelled".to_owned())),
        Err(CallFailure::Failed(m)) => (NodeStatus::Failed, Some(job.redactor.text(m))),
    };
    // A node's last attempt's result is the record's `raw`; a fan-out
    // iteration's is kept here (its output is only what was cut out of
    // it, and the Raw tab shows what the server sent). The value is the
    // one the output was cut from, shared, not a copy.
    let kept_elsewhere = last && matches!(which, Which::Node(_));
    let raw = if kept_elsewhere {
        Json::null()
    } else {
        job.redactor.json(&raw)
    };
    out.calls.push(AttemptRecord {
        iteration: which.iteration(),
        attempt: out.attempts,
        of: 0,
        started_at: Some(started_at),
        duration_ms: started.elapsed().as_millis() as u64,
        status,
        error_code: error.as_ref().and(out.code.clone()),
        error,
        rpc: job.redactor.json(&rpc),
        raw,
    });
    if last {
        let of = out.attempts;
        for c in &mut out.calls {
            c.of = of;
        }
    }
}

/// The code and status a server gave with an error result: `code` and
/// `status` at the top of its output or under `error` (Fibe's and Discord's
/// shapes); `TOOL_ERROR` when it gave none.
fn error_code_of(output: &Value) -> (Option<String>, Option<u16>) {
    let inner = output.get("error").filter(|e| e.is_object());
    let field = |name: &str| output.get(name).or_else(|| inner.and_then(|e| e.get(name)));
    let code = match field("code") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "TOOL_ERROR".to_owned(),
    };
    let status = ["status", "status_code", "http_status"]
        .iter()
        .find_map(|k| field(k).and_then(Value::as_u64))
        .and_then(|n| u16::try_from(n).ok());
    (Some(code), status)
}

fn apply_transform(node: &Node, output: Json) -> Result<Json, CallFailure> {
    match &node.transform {
        None => Ok(output),
        Some(p) => p
            .run_one(output.tree())
            .map(Json::from_value)
            .map_err(|e| CallFailure::Failed(format!("transform failed: {e}"))),
    }
}
