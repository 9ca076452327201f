//! Tool calls made as MCP tasks: a `tools/call` with `params.task` is
//! answered with a task handle, not the result; pipewright then polls
//! `tasks/get` at the server's `pollInterval`, fetches the result (and the
//! server's questions, which come with it) with `tasks/result`, and sends
//! `tasks/cancel` when the call is cancelled or times out.
//!
//! Both revisions are spoken: 2025-11-25 (`{"task": {…}}` from
//! `tools/call`, the result from `tasks/result`) and the 2026-07-28 Tasks
//! extension (SEP-2663: a flat `resultType: "task"` handle, the server
//! deciding which calls become tasks; the result or error inline in
//! `tasks/get`, whose `inputRequests` are answered with `tasks/update`).
//! `tasks/get` and `tasks/cancel` have the same shape in both.

pub mod record;

use std::time::Duration;

use rmcp::{
    Peer, RoleClient,
    model::{
        CallToolRequest, CallToolRequestParams, CancelTaskParams, CancelTaskRequest, ClientRequest,
        CustomRequest, GetTaskParams, GetTaskRequest, InputRequests, InputResponses, ServerResult,
        UpdateTaskParams, UpdateTaskRequest,
    },
    service::PeerRequestOptions,
};
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::error::HumanDuration;
use super::error::McpError;
use super::human::{CallExtras, TaskNote};
use super::inflight::{InFlight, Ticket};
use super::log::ServerLog;
use super::tools::TaskSupport;
use super::wire::excerpt;
use record::CANCEL_SENT;

/// The `_meta` key that ties a server's request or result to a task.
pub(crate) const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// With `task:` unset, a tool that may run as a task does so when the
/// node's timeout is longer than this.
pub const AUTO_TASK_AFTER: Duration = Duration::from_secs(60);
/// Bounds on the server's `pollInterval`.
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_secs(5);
/// The poll interval when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// How long `tasks/cancel` may take to be answered.
const CANCEL_WAIT: Duration = Duration::from_secs(2);
/// How many rounds of a 2026-07-28 task's questions are answered before
/// pipewright gives up on a server that keeps asking.
const MAX_ROUNDS: usize = 8;

/// Whether to call `support`-ing tool `tool` as a task: `wanted` is the
/// node's `task:` (`None`: auto), `timeout` the node's. A task asked of a
/// tool that forbids them is an error (the sentence says why).
pub fn use_task(
    tool: &str,
    support: TaskSupport,
    wanted: Option<bool>,
    timeout: Option<Duration>,
) -> Result<bool, String> {
    match (wanted, support) {
        (Some(true), TaskSupport::Forbidden) => Err(format!(
            "`task: true`, but the server says `{tool}` cannot run as a task (`execution.taskSupport: forbidden`)"
        )),
        (Some(false), TaskSupport::Required) => Err(format!(
            "`task: false`, but the server says `{tool}` runs only as a task (`execution.taskSupport: required`)"
        )),
        (Some(w), _) => Ok(w),
        (None, TaskSupport::Required) => Ok(true),
        (None, TaskSupport::Optional) => Ok(timeout.is_some_and(|t| t > AUTO_TASK_AFTER)),
        (None, TaskSupport::Forbidden | TaskSupport::Unstated) => Ok(false),
    }
}

/// The `tools/call` to send: with `params.task` (2025-11-25 task
/// augmentation) when `as_task`.
pub(crate) fn call_request(params: &CallToolRequestParams, as_task: bool) -> ClientRequest {
    if !as_task {
        return ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
    }
    let mut body = serde_json::to_value(params).unwrap_or_else(|_| json!({}));
    if let Some(map) = body.as_object_mut() {
        map.remove("_meta");
        map.insert("task".into(), json!({}));
    }
    ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(body)))
}

/// Adds `params.task` to the request as recorded, when it was sent.
pub(crate) fn mark_request(request: &mut Value, as_task: bool) {
    if let (true, Some(params)) = (
        as_task,
        request.get_mut("params").and_then(Value::as_object_mut),
    ) {
        params.insert("task".into(), json!({}));
    }
}

/// A task handle a `tools/call` was answered with.
pub(crate) struct Created {
    /// `{taskId, status, statusMessage, pollInterval…}` as sent.
    task: Value,
}

/// The task handle in a `tools/call` answer, if it is one.
pub(crate) fn created(answer: &Result<ServerResult, rmcp::ServiceError>) -> Option<Created> {
    let task = match answer {
        Ok(ServerResult::CreateTaskResult(c)) => serde_json::to_value(&c.task).ok(),
        Ok(ServerResult::CustomResult(c)) => {
            c.0.get("task")
                .filter(|t| t.get("taskId").is_some_and(Value::is_string))
                .cloned()
        }
        _ => None,
    };
    task.map(|task| Created { task })
}

/// How a task was last seen.
struct Seen {
    status: String,
    message: Option<String>,
    poll: Duration,
}

fn seen(task: &Value) -> Seen {
    let ms = task
        .get("pollInterval")
        .or_else(|| task.get("pollIntervalMs"))
        .and_then(Value::as_u64);
    Seen {
        status: task
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("working")
            .to_owned(),
        message: task
            .get("statusMessage")
            .and_then(Value::as_str)
            .map(str::to_owned),
        poll: ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_POLL)
            .clamp(MIN_POLL, MAX_POLL),
    }
}

/// Why following a task stopped early.
enum Stop {
    Cancelled,
    TimedOut(Duration),
    /// Its questions could not be answered.
    Unanswered(McpError),
    /// The server refused the answers (`tasks/update` failed).
    Refused(rmcp::ServiceError),
}

/// True when a plain `tools/call` was refused because the tool runs only
/// as a task (2025-11-25: `-32601`, the message naming task augmentation).
pub(crate) fn refused_without_task(e: &rmcp::ServiceError) -> bool {
    match e {
        rmcp::ServiceError::McpError(data) => {
            data.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND
                && data.message.to_lowercase().contains("task")
        }
        _ => false,
    }
}

/// True when a tool error says the tool runs only as a task (the official
/// SDKs wrap the `-32601` in a tool result).
pub(crate) fn refused_text(result: &crate::json::Json) -> bool {
    super::output::error_text(result).contains("requires task augmentation")
}

/// What following a task needs of its connection and call.
pub(crate) struct Follow<'a> {
    pub(crate) peer: &'a Peer<RoleClient>,
    pub(crate) calls: &'a InFlight,
    /// The call's place among the calls in flight.
    pub(crate) ticket: Option<Ticket>,
    pub(crate) log: &'a ServerLog,
    pub(crate) server: &'a str,
    pub(crate) tool: &'a str,
    /// Who answers a 2026-07-28 task's questions.
    pub(crate) asks: &'a dyn Answerer,
}

/// Answers a 2026-07-28 task's questions (its `inputRequests`, which go
/// back with `tasks/update`): the call's answerers, `until` the call's
/// deadline (and the timeout it is after the start) unless `cancel`
/// fires, the exchanges kept in `heard`.
pub(crate) trait Answerer: Sync {
    fn answer<'a>(
        &'a self,
        requests: InputRequests,
        until: (Option<Instant>, Option<Duration>),
        cancel: &'a CancellationToken,
        heard: &'a mut CallExtras,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<InputResponses, McpError>> + Send + 'a>,
    >;
}

/// Why following a task failed.
pub(crate) enum Failure {
    /// A request failed (the connection turns it into an [`McpError`]).
    Service(rmcp::ServiceError),
    /// The connection ended.
    Closed,
    Mcp(McpError),
}

impl From<McpError> for Failure {
    fn from(e: McpError) -> Self {
        Failure::Mcp(e)
    }
}

/// Follows the task `created` that a `tools/call` became, to its result
/// (a `CallToolResult`): polls, answers through `tasks/result`, cancels on
/// `cancel` or when `timeout` (from `started`) passes.
pub(crate) async fn follow(
    f: Follow<'_>,
    created: Created,
    (started, timeout): (Instant, Option<Duration>),
    cancel: &CancellationToken,
) -> Result<Value, Failure> {
    let (peer, calls, ticket, tool) = (f.peer, f.calls, f.ticket, f.tool);
    let server = f.server.to_owned();
    let Some(id) = created
        .task
        .get("taskId")
        .and_then(Value::as_str)
        .map(str::to_owned)
    else {
        return Err(Failure::Mcp(McpError::Transport {
            server,
            reason: format!("`{tool}` was answered with a task that has no `taskId`"),
        }));
    };
    let note = |status: &str, message: Option<String>| {
        if let Some(t) = ticket {
            calls.task_note(
                t,
                TaskNote {
                    task: id.clone(),
                    status: status.to_owned(),
                    message,
                },
            );
        }
    };
    if let Some(t) = ticket {
        calls.task_begun(t, &id);
    }
    let mut last = seen(&created.task);
    note(&last.status, last.message.clone());
    let deadline = timeout.and_then(|t| Some((started.checked_add(t)?, t)));
    // The 2026-07-28 questions answered in this `input_required` spell
    // (a poll may still show them before the answers land; a later spell
    // may ask a key again), and the rounds of them over the whole task.
    let mut answered = std::collections::HashSet::new();
    let mut rounds = 0;
    // `tasks/result` (2025-11-25), once sent.
    let mut fetching: Option<rmcp::service::RequestHandle<rmcp::RoleClient>> = None;
    let mut next_poll = Instant::now() + last.poll;
    let until_deadline = || async move {
        match deadline {
            Some((at, after)) => {
                tokio::time::sleep_until(at).await;
                after
            }
            None => std::future::pending().await,
        }
    };
    let outcome: Result<Value, Stop> = loop {
        let result = async {
            match fetching.as_mut() {
                Some(h) => (&mut h.rx).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = cancel.cancelled() => break Err(Stop::Cancelled),
            after = until_deadline() => break Err(Stop::TimedOut(after)),
            answer = result => {
                fetching = None;
                match answer {
                    Ok(Ok(r)) => {
                        let result = task_result(&server, tool, r)?;
                        if last.status != "completed" {
                            note("completed", None);
                        }
                        break Ok(result);
                    }
                    Ok(Err(e)) => return Err(Failure::Service(e)),
                    Err(_) => return Err(Failure::Closed),
                }
            }
            () = tokio::time::sleep_until(next_poll) => {}
        }
        let got = peer
            .send_request_with_option(
                ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(id.clone()))),
                PeerRequestOptions::no_options(),
            )
            .await;
        let got = match got {
            Ok(h) => tokio::select! {
                biased;
                () = cancel.cancelled() => break Err(Stop::Cancelled),
                after = until_deadline() => break Err(Stop::TimedOut(after)),
                r = h.await_response() => r,
            },
            Err(e) => Err(e),
        };
        let got = match got {
            Ok(r) => serde_json::to_value(r).unwrap_or(Value::Null),
            Err(e) => return Err(Failure::Service(e)),
        };
        let now = seen(&got);
        if (&now.status, &now.message) != (&last.status, &last.message) {
            note(&now.status, now.message.clone());
        }
        last = now;
        next_poll = Instant::now() + last.poll;
        if last.status != "input_required" {
            answered.clear();
        }
        match last.status.as_str() {
            // 2026-07-28: the result comes with the task.
            "completed" if got.get("result").is_some_and(Value::is_object) => {
                break Ok(got.get("result").cloned().unwrap_or(Value::Null));
            }
            "failed" => {
                let why = got
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| last.message.clone())
                    .unwrap_or_else(|| "no reason given".to_owned());
                return Err(Failure::Mcp(McpError::Transport {
                    server,
                    reason: format!("the task `{id}` of `{tool}` failed: {why}"),
                }));
            }
            "cancelled" => {
                return Err(Failure::Mcp(McpError::Transport {
                    server,
                    reason: format!(
                        "the server cancelled the task `{id}` of `{tool}`{}",
                        last.message
                            .as_deref()
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    ),
                }));
            }
            // 2026-07-28: the questions come with the task; each is asked
            // once, and the answers go back with `tasks/update`.
            "input_required" if got.get("inputRequests").is_some() => {
                let asked = match serde_json::from_value::<InputRequests>(
                    got["inputRequests"].clone(),
                ) {
                    Ok(asked) => asked,
                    Err(e) => {
                        break Err(Stop::Unanswered(McpError::Transport {
                            server: server.clone(),
                            reason: format!(
                                "the task `{id}` of `{tool}` asked for input that pipewright cannot read: {e}"
                            ),
                        }));
                    }
                };
                let fresh: InputRequests = asked
                    .into_iter()
                    .filter(|(key, _)| !answered.contains(key))
                    .collect();
                if fresh.is_empty() {
                    // Answered already: wait for the server at its pace.
                    continue;
                }
                rounds += 1;
                if rounds > MAX_ROUNDS {
                    break Err(Stop::Unanswered(McpError::Transport {
                        server: server.clone(),
                        reason: format!(
                            "the task `{id}` of `{tool}` still asked for more input after {} rounds of answers; pipewright gave up (the server may be asking in a loop)",
                            MAX_ROUNDS
                        ),
                    }));
                }
                let keys: Vec<String> = fresh.keys().cloned().collect();
                let mut heard = CallExtras::default();
                let until = (deadline.map(|(at, _)| at), timeout);
                let replies = f.asks.answer(fresh, until, cancel, &mut heard).await;
                if let Some(t) = ticket {
                    calls.heard(t, heard.interactions);
                }
                let replies = match replies {
                    Ok(replies) => replies,
                    Err(McpError::Cancelled { .. }) => break Err(Stop::Cancelled),
                    Err(McpError::Timeout { after, .. }) => break Err(Stop::TimedOut(after)),
                    Err(e) => break Err(Stop::Unanswered(e)),
                };
                answered.extend(keys);
                let update = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(
                    UpdateTaskParams::new(id.clone(), replies),
                ));
                let sent = peer
                    .send_request_with_option(update, PeerRequestOptions::no_options())
                    .await;
                let acked = match sent {
                    Ok(h) => tokio::select! {
                        biased;
                        () = cancel.cancelled() => break Err(Stop::Cancelled),
                        after = until_deadline() => break Err(Stop::TimedOut(after)),
                        r = h.await_response() => r,
                    },
                    Err(e) => Err(e),
                };
                if let Err(e) = acked {
                    break Err(Stop::Refused(e));
                }
                // What the answers changed shows at the next poll, at once.
                next_poll = Instant::now();
            }
            "input_required" | "completed" if fetching.is_none() => {
                let sent = peer
                    .send_request_with_option(
                        ClientRequest::CustomRequest(CustomRequest::new(
                            "tasks/result",
                            Some(json!({ "taskId": id })),
                        )),
                        PeerRequestOptions::no_options(),
                    )
                    .await;
                match sent {
                    Ok(h) => {
                        if let Some(t) = ticket {
                            calls.also(t, h.id.clone());
                        }
                        fetching = Some(h);
                    }
                    Err(e) => return Err(Failure::Service(e)),
                }
            }
            _ => {}
        }
    };
    let result = match outcome {
        Ok(result) => result,
        Err(stop) => {
            let (reason, error) = match stop {
                Stop::Cancelled => (
                    "cancelled by the user".to_owned(),
                    Failure::Mcp(McpError::Cancelled {
                        server: server.clone(),
                        tool: tool.to_owned(),
                    }),
                ),
                Stop::TimedOut(after) => (
                    format!("timed out after {}", HumanDuration(after)),
                    Failure::Mcp(McpError::Timeout {
                        server: server.clone(),
                        tool: tool.to_owned(),
                        after,
                    }),
                ),
                Stop::Unanswered(e) => (
                    format!("its questions were not answered: {e}"),
                    Failure::Mcp(e),
                ),
                Stop::Refused(e) => (
                    format!("the server refused its answers: {e}"),
                    refused(&server, e),
                ),
            };
            if let Some(h) = fetching.take() {
                let _ = tokio::time::timeout(CANCEL_WAIT, h.cancel(Some(reason.clone()))).await;
            }
            let answer = cancel_task(&f, &id, &reason).await;
            note(CANCEL_SENT, Some(reason));
            if let Some(s) = answer {
                note(&s.status, s.message);
            }
            return Err(error);
        }
    };
    Ok(result)
}

/// Why the node failed when a `tasks/update` did: the server's JSON-RPC
/// error whole (named as `tasks/update`'s, so it is not taken for the
/// `tools/call`'s), or the request's failure as the connection tells it.
fn refused(server: &str, e: rmcp::ServiceError) -> Failure {
    match e {
        rmcp::ServiceError::McpError(data) => Failure::Mcp(McpError::Protocol {
            server: server.to_owned(),
            method: "tasks/update".to_owned(),
            code: data.code.0,
            message: data.message.into_owned(),
            data: data.data.map(Box::new),
        }),
        other => Failure::Service(other),
    }
}

/// The `CallToolResult` a `tasks/result` was answered with.
fn task_result(server: &str, tool: &str, r: ServerResult) -> Result<Value, McpError> {
    let v = serde_json::to_value(r).unwrap_or(Value::Null);
    if v.get("content").is_some() || v.get("structuredContent").is_some() {
        return Ok(v);
    }
    Err(McpError::Transport {
        server: server.to_owned(),
        reason: format!(
            "`tasks/result` for `{tool}` was answered with `{}`, which is not a tool result",
            excerpt(&v)
        ),
    })
}

/// Sends `tasks/cancel` for task `id` and notes it in the server log;
/// the task as the server then says it is.
async fn cancel_task(f: &Follow<'_>, id: &str, reason: &str) -> Option<Seen> {
    let tool = f.tool;
    let sent = f
        .peer
        .send_request_with_option(
            ClientRequest::CancelTaskRequest(CancelTaskRequest::new(CancelTaskParams::new(id))),
            PeerRequestOptions::no_options(),
        )
        .await;
    let answered = match sent {
        Ok(h) => tokio::time::timeout(CANCEL_WAIT, h.await_response()).await,
        Err(e) => Ok(Err(e)),
    };
    let mut after = None;
    let how = match answered {
        Ok(Ok(r)) => {
            let task = serde_json::to_value(r).unwrap_or(Value::Null);
            if task.get("status").is_none() {
                // 2026-07-28: an empty acknowledgement.
                "the server acknowledged it".to_owned()
            } else {
                let s = seen(&task);
                let how = format!(
                    "the server says `{}`{}",
                    s.status,
                    s.message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default()
                );
                after = Some(s);
                how
            }
        }
        Ok(Err(e)) => format!("the server answered: {e}"),
        Err(_) => format!("no answer within {}", HumanDuration(CANCEL_WAIT)),
    };
    f.log.push(&format!(
        "[pipewright] sent tasks/cancel for task {id} of `{tool}` ({reason}); {how}"
    ));
    after
}

/// The request's `params` as a map, for building a follow-up.
#[cfg(test)]
fn params_of(request: &ClientRequest) -> serde_json::Map<String, Value> {
    serde_json::to_value(request)
        .ok()
        .and_then(|v| v.get("params").and_then(Value::as_object).cloned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_for_when_a_call_is_a_task() {
        use TaskSupport::*;
        let long = Some(Duration::from_secs(120));
        let short = Some(Duration::from_secs(5));
        assert_eq!(use_task("t", Required, None, None), Ok(true));
        assert_eq!(use_task("t", Optional, None, short), Ok(false));
        assert_eq!(use_task("t", Optional, None, None), Ok(false));
        assert_eq!(use_task("t", Optional, None, long), Ok(true));
        assert_eq!(use_task("t", Forbidden, None, long), Ok(false));
        assert_eq!(use_task("t", Unstated, None, long), Ok(false));
        // Unstated: the server decides (a plain result is taken as it is).
        assert_eq!(use_task("t", Unstated, Some(true), None), Ok(true));
        assert_eq!(use_task("t", Optional, Some(true), None), Ok(true));
        assert!(use_task("t", Forbidden, Some(true), None).is_err());
        assert!(use_task("t", Required, Some(false), None).is_err());
    }

    #[test]
    fn a_task_call_carries_params_task() {
        let params = CallToolRequestParams::new("slow");
        let p = params_of(&call_request(&params, true));
        assert_eq!(p["name"], "slow");
        assert_eq!(p["task"], json!({}));
        assert!(
            params_of(&call_request(&params, false))
                .get("task")
                .is_none()
        );
    }

    #[test]
    fn a_task_handle_is_told_from_a_result() {
        let handle = ServerResult::CustomResult(rmcp::model::CustomResult(
            json!({"task": {"taskId": "t1", "status": "working", "pollInterval": 20}}),
        ));
        let Some(c) = created(&Ok(handle)) else {
            panic!("a task handle")
        };
        let s = seen(&c.task);
        assert_eq!(s.status, "working");
        // Bounded below.
        assert_eq!(s.poll, MIN_POLL);
        let plain = ServerResult::CustomResult(rmcp::model::CustomResult(json!({"x": 1})));
        assert!(created(&Ok(plain)).is_none());
    }
}
