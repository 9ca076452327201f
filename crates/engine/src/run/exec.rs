//! Running one node: resolve its arguments, call (or mock) with retries and
//! timeouts, fan out over `for_each` with real concurrency, reshape with
//! `transform`, and record everything.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::cost::pricing::Pricing;
use crate::file::model::{Composition, Mock, Node, OnError};
use crate::json::Json;
use crate::lang::reference;
use crate::lang::snapshot::{ItemScope, Snapshot, resolve_args};
use crate::mcp::caller::{CallRequest, Caller};
use crate::mcp::human::{CallExtras, CallScope, Notice, Responder};
use crate::mcp::{McpError, error_text, meta_of, output_of};
use crate::redact::Redactor;
use crate::run::cassette::redacted_extras;
use crate::run::events::Event;
use crate::run::trace::{AttemptRecord, IterationRecord, NodeRecord, NodeStatus};

/// Everything a node task needs; it owns its inputs so it never touches the
/// session's state.
pub struct NodeJob {
    pub comp: Arc<Composition>,
    pub idx: usize,
    pub scope: Snapshot,
    pub caller: Arc<dyn Caller>,
    pub cancel: CancellationToken,
    /// True while the session is paused: no new fan-out iteration starts.
    pub paused: watch::Receiver<bool>,
    pub events: mpsc::Sender<Event>,
    pub redactor: Redactor,
    pub default_timeout: Option<Duration>,
    /// Prices each call when its server reports no cost.
    pub pricing: Arc<Pricing>,
    /// Fan-out iterations this run has started so far, and the cap on them.
    pub iterations: Option<(Arc<AtomicU64>, u64)>,
    /// Answers the servers' questions (`None`: they are declined).
    pub responder: Option<Arc<dyn Responder>>,
}

/// Longest wait between two retries.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// How many items one `for_each` may fan out over when the file sets no
/// `budget.max_iterations` (which replaces this cap).
pub const DEFAULT_MAX_FOR_EACH: usize = 10_000;

/// Runs the node to its end and returns its record.
pub async fn run_node(job: NodeJob) -> NodeRecord {
    let node = &job.comp.nodes[job.idx];
    let started = Instant::now();
    let mut rec = NodeRecord {
        status: NodeStatus::Running,
        started_at: Some(now_rfc3339()),
        mocked: node.mock.is_some(),
        ..NodeRecord::default()
    };
    match &node.for_each {
        Some(fe) => {
            let resolved = reference::resolve_reference_shared(&fe.site.reference, &job.scope);
            let items: &[Value] = match resolved.as_deref() {
                Ok(Value::Array(items)) => items,
                Ok(other) => {
                    return fail(
                        rec,
                        started,
                        format!(
                            "`for_each: {}` must resolve to an array, but it is {}",
                            fe.source,
                            crate::run::trace::type_name(other)
                        ),
                        INTERPOLATION_FAILED,
                    );
                }
                Err(e) => return fail(rec, started, e.to_string(), INTERPOLATION_FAILED),
            };
            // Without a budget of iterations, one node fans out over at
            // most DEFAULT_MAX_FOR_EACH items: a reply of a million items
            // is refused before any call, not dispatched.
            if job.iterations.is_none() && items.len() > DEFAULT_MAX_FOR_EACH {
                return fail(
                    rec,
                    started,
                    format!(
                        "`for_each: {}` has {} items; a node fans out over at most {DEFAULT_MAX_FOR_EACH} unless the file sets `budget: {{max_iterations: N}}`",
                        fe.source,
                        items.len()
                    ),
                    "ITERATION_LIMIT",
                );
            }
            if let Some((used, max)) = &job.iterations {
                let n = items.len() as u64;
                let before = used.fetch_add(n, Ordering::Relaxed);
                if before + n > *max {
                    used.fetch_sub(n, Ordering::Relaxed);
                    return fail(
                        rec,
                        started,
                        format!(
                            "`for_each` would make {n} iterations, and {before} were made before it; the run may make at most {max} (`budget.max_iterations`)"
                        ),
                        "ITERATION_LIMIT",
                    );
                }
            }
            fan_out(&job, node, items, &mut rec).await;
        }
        None => {
            let args = match resolve_args(&node.args, &job.scope) {
                Ok(a) => a,
                Err(e) => return fail(rec, started, e.to_string(), INTERPOLATION_FAILED),
            };
            // One value, in the record and in every attempt's event.
            let shown = redacted(&job.redactor, Value::Object(args.clone()));
            rec.args = shown.clone();
            let call = call_with_policy(&job, node, args, Which::Node(shown)).await;
            rec.attempts = call.attempts;
            rec.raw = job.redactor.json(&call.raw);
            rec.rpc = job.redactor.json(&call.rpc);
            rec.cost_usd = call.cost_usd;
            rec.tokens = call.tokens;
            rec.model = call.model;
            rec.replayed = call.replayed;
            rec.extras = redacted_extras(&job.redactor, &call.extras);
            rec.calls = call.calls;
            match call.result {
                Ok(output) => {
                    rec.status = NodeStatus::Ok;
                    // Kept as the server sent it: later nodes and `expect:`
                    // read real values; the session masks what it shows.
                    rec.output = output;
                }
                Err(CallFailure::Cancelled) => {
                    rec.status = NodeStatus::Cancelled;
                    rec.error = Some("cancelled".into());
                }
                Err(CallFailure::Failed(msg)) => {
                    rec.status = NodeStatus::Failed;
                    rec.error = Some(job.redactor.text(&msg));
                    rec.error_code = call.code;
                    rec.error_status = call.status;
                }
            }
        }
    }
    rec.output_tokens = crate::cost::tokens::count_json(&rec.output);
    if rec.mocked {
        rec.duration_ms = 0;
    } else {
        rec.duration_ms = started.elapsed().as_millis() as u64;
    }
    rec
}

/// `v` with secrets masked, to be shared; no copy when the run has no
/// secrets.
fn redacted(redactor: &Redactor, v: Value) -> Json {
    if redactor.is_empty() {
        Json::from_value(v)
    } else {
        Json::from_value(redactor.value(&v))
    }
}

/// The code of a failure to resolve a node's references (Discord's name).
pub const INTERPOLATION_FAILED: &str = "INTERPOLATION_FAILED";

fn fail(mut rec: NodeRecord, started: Instant, error: String, code: &str) -> NodeRecord {
    rec.status = NodeStatus::Failed;
    rec.error = Some(error);
    rec.error_code = Some(code.to_owned());
    rec.duration_ms = started.elapsed().as_millis() as u64;
    rec
}

async fn fan_out(job: &NodeJob, node: &Node, items: &[Value], rec: &mut NodeRecord) {
    let total = items.len();
    let limit = node.max_concurrency.max(1);
    let mut outputs: Vec<Json> = vec![Json::null(); total];
    let mut iterations: Vec<Option<IterationRecord>> = vec![None; total];
    let mut running = FuturesUnordered::new();
    let mut next = 0usize;
    let mut done = 0usize;
    let mut paused = job.paused.clone();
    while done < total {
        // Start iterations while there is room, the run is not paused and
        // nothing was cancelled.
        while next < total
            && running.len() < limit
            && !*paused.borrow()
            && !job.cancel.is_cancelled()
        {
            let index = next;
            next += 1;
            let item = &items[index];
            running.push(async move {
                let started = (Instant::now(), now_rfc3339());
                let scope = item_scope(&job.scope, node, item, index);
                let args = match resolve_args(&node.args, &scope) {
                    Ok(a) => a,
                    Err(e) => {
                        return (
                            index,
                            Value::Null,
                            CallResult {
                                result: Err(CallFailure::Failed(e.to_string())),
                                code: Some(INTERPOLATION_FAILED.to_owned()),
                                ..CallResult::default()
                            },
                            started,
                        );
                    }
                };
                let args_value = Value::Object(args.clone());
                let _ = job
                    .events
                    .send(Event::IterationStarted {
                        id: node.id.clone(),
                        index,
                        total,
                    })
                    .await;
                let call = call_with_policy(job, node, args, Which::Iteration(index)).await;
                (index, args_value, call, started)
            });
        }
        if running.is_empty() {
            if job.cancel.is_cancelled() || next >= total {
                break;
            }
            // Paused with nothing in flight: wait for resume or cancel.
            tokio::select! {
                _ = paused.changed() => {}
                () = job.cancel.cancelled() => {}
            }
            continue;
        }
        tokio::select! {
            Some((index, args, call, (started, started_at))) = running.next() => {
                done += 1;
                rec.attempts = rec.attempts.max(call.attempts);
                rec.cost_usd += call.cost_usd;
                rec.tokens += call.tokens;
                if rec.model.is_none() {
                    rec.model = call.model.clone();
                }
                rec.replayed |= call.replayed;
                rec.calls.extend(call.calls.iter().cloned());
                let (code, error_status) = (call.code.clone(), call.status);
                let (status, output, error) = match call.result {
                    Ok(v) => (NodeStatus::Ok, v, None),
                    Err(CallFailure::Cancelled) => (NodeStatus::Cancelled, Json::null(), Some("cancelled".to_owned())),
                    Err(CallFailure::Failed(m)) => (NodeStatus::Failed, Json::null(), Some(job.redactor.text(&m))),
                };
                // One value, in the node's output and the iteration's record.
                outputs[index] = output.clone();
                rec.raw = job.redactor.json(&call.raw);
                rec.rpc = job.redactor.json(&call.rpc);
                let _ = job.events.send(Event::Iteration {
                    id: node.id.clone(),
                    index,
                    status,
                    done,
                    total,
                }).await;
                iterations[index] = Some(IterationRecord {
                    index,
                    status,
                    args: redacted(&job.redactor, args),
                    output,
                    error_code: error.as_ref().and(code),
                    error_status: error.as_ref().and(error_status),
                    error,
                    attempts: call.attempts,
                    extras: redacted_extras(&job.redactor, &call.extras),
                    started_at: Some(started_at),
                    duration_ms: if node.mock.is_some() { 0 } else { started.elapsed().as_millis() as u64 },
                });
            }
            _ = paused.changed() => {}
        }
    }
    let started = iterations.iter().filter(|r| r.is_some()).count();
    // Items never started (the run was cancelled or stopped) are kept as
    // cancelled iterations, so the record accounts for every item.
    let records: Vec<IterationRecord> = iterations
        .into_iter()
        .enumerate()
        .map(|(index, r)| r.unwrap_or_else(|| never_started(index)))
        .collect();
    let failed = records.iter().find(|r| r.status == NodeStatus::Failed);
    let cancelled = started < total || records.iter().any(|r| r.status == NodeStatus::Cancelled);
    rec.args = Json::from_value(
        json!({ "for_each": node.for_each.as_ref().map(|f| f.source.clone()), "items": total }),
    );
    if let Some(f) = failed {
        rec.status = NodeStatus::Failed;
        rec.error_code = f.error_code.clone();
        rec.error_status = f.error_status;
        rec.error = Some(format!(
            "iteration {} of {total} failed: {}",
            f.index,
            f.error.clone().unwrap_or_default()
        ));
    } else if cancelled {
        rec.status = NodeStatus::Cancelled;
        rec.error = Some(format!(
            "cancelled after {started} of {total} iterations started"
        ));
    } else {
        rec.status = NodeStatus::Ok;
        rec.output = Json::list(outputs);
    }
    rec.iterations = records;
    rec.calls
        .sort_by_key(|c| (c.iteration.unwrap_or(0), c.attempt));
}

/// What iteration `index` of fan-out `node`, over `item`, sees: the
/// node's snapshot with `${item}` set. The run's calls and the
/// workbench's preview both resolve an iteration's args in it.
fn item_scope<'a>(
    base: &'a Snapshot,
    node: &'a Node,
    item: &'a Value,
    index: usize,
) -> ItemScope<'a> {
    ItemScope {
        base,
        item,
        index,
        aligned: &node.aligned,
    }
}

/// A node's args as far as `scope` resolves them now (the rest reads
/// `<from node.path>`), for a preview: a fan-out whose items are known
/// gives the list of each iteration's args, resolved in that iteration's
/// scope as the run will resolve them.
pub fn preview_args(node: &Node, scope: &Snapshot) -> Value {
    let items = node
        .for_each
        .as_ref()
        .and_then(|fe| reference::resolve_reference_shared(&fe.site.reference, scope).ok());
    match items.as_deref() {
        Some(Value::Array(items)) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(index, item)| {
                    let scope = item_scope(scope, node, item, index);
                    reference::resolve_value_partial(&node.args, &scope).value
                })
                .collect(),
        ),
        _ => reference::resolve_value_partial(&node.args, scope).value,
    }
}

/// An iteration the run stopped before it started.
fn never_started(index: usize) -> IterationRecord {
    IterationRecord {
        index,
        status: NodeStatus::Cancelled,
        args: Json::null(),
        output: Json::null(),
        error: Some("not started: the run stopped first".into()),
        error_code: None,
        error_status: None,
        attempts: 0,
        extras: CallExtras::default(),
        started_at: None,
        duration_ms: 0,
    }
}

/// Why a call produced no output.
#[derive(Debug, Clone)]
enum CallFailure {
    Cancelled,
    Failed(String),
}

/// One call after its retries.
#[derive(Debug)]
struct CallResult {
    result: Result<Json, CallFailure>,
    attempts: u32,
    raw: Json,
    rpc: Json,
    cost_usd: f64,
    tokens: u64,
    model: Option<String>,
    replayed: bool,
    /// The failure's code and status (see [`NodeRecord::error_code`]).
    code: Option<String>,
    status: Option<u16>,
    /// What the server asked and said during every attempt.
    extras: CallExtras,
    /// Each attempt, as it ended.
    calls: Vec<AttemptRecord>,
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
fn call_scope(
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
enum Which {
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
async fn call_with_policy(
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
async fn call_attempts(
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
    let kept_elsewhere = last && (matches!(which, Which::Node(_)) || status == NodeStatus::Ok);
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

/// The current time as RFC 3339 (UTC).
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
