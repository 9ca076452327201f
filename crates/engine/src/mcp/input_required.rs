//! Input-required results (SEP-2322, MCP 2026-07-28): instead of asking in
//! the middle of a `tools/call`, a server may answer it with the questions
//! it needs answered (`inputRequests`) and an opaque `requestState`.
//! pipewright asks them through the call's answerers — the same ones that
//! answer elicitation and sampling requests (answers file, terminal,
//! workbench, model provider) — and calls again with the replies
//! (`inputResponses`) and the state, for at most [`MAX_ROUNDS`] rounds.

use std::{sync::Arc, time::Duration};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, MetaObject, RequestMetaObject, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::error::HumanDuration;
use super::human::{
    Answer, Ask, CallExtras, CallScope, Interaction, Nobody, Notice, Question, Reply, Responder,
    check_reply, with_defaults,
};
use super::inflight::Registered;
use super::revision::log_meta;
use super::task::Answerer;
use super::wire::{AbandonGuard, excerpt};
use super::{CANCEL_NOTICE_WAIT, CallOutcome, Connection, McpError};
use crate::json::Json;

/// How many times a call is made again with answers before pipewright
/// gives up on a server that keeps asking.
pub(super) const MAX_ROUNDS: usize = 8;
/// The most questions one input-required result may ask: each may reach a
/// person or a paid model.
pub(super) const MAX_QUESTIONS: usize = 16;

/// The first answer of a call that asked for input: the questions, the
/// request as first sent (kept in the outcome), when it started, and what
/// it heard so far.
pub(super) type Asked = (InputRequiredResult, Json, Instant, CallExtras);

impl Connection {
    /// Answers the questions of `asked` and calls again, until the server
    /// gives a result, or [`MAX_ROUNDS`] rounds pass. `timeout` counts from
    /// the first request and covers the time spent answering.
    pub(super) async fn answer_input(
        &self,
        asked: Asked,
        timeout: Option<Duration>,
        cancel: &CancellationToken,
        scope: &CallScope,
    ) -> Result<CallOutcome, McpError> {
        follow(self, asked, timeout, cancel, scope).await
    }
}

async fn follow(
    conn: &Connection,
    (mut asked, request, started, mut extras): Asked,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
    scope: &CallScope,
) -> Result<CallOutcome, McpError> {
    let server = conn.name().to_owned();
    let params = request.pick("params").unwrap_or(Value::Null);
    let mut params: CallToolRequestParams =
        serde_json::from_value(params).map_err(|e| McpError::Transport {
            server: server.clone(),
            reason: format!("could not repeat the call: {e}"),
        })?;
    let tool = params.name.to_string();
    // rmcp adds a fresh progress token to every request.
    let meta = params.meta.take().map(|mut meta| {
        meta.0.0.remove("progressToken");
        meta.0.0
    });
    let meta = log_meta(meta, conn.protocol_version(), conn.inner.log_level)
        .map(|m| RequestMetaObject(MetaObject(m)));
    let limit = Limit {
        deadline: timeout.and_then(|t| started.checked_add(t)),
        timeout,
        cancel,
        tool: &tool,
    };
    for _ in 0..MAX_ROUNDS {
        let responses = ask_all(conn, &asked, scope, &limit, &mut extras).await?;
        if responses.is_empty() {
            // Only state, no question: the server wants a moment.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        params.input_responses = (!responses.is_empty()).then_some(responses);
        params.request_state = asked.request_state.take();
        let again = call_again(conn, &params, meta.clone(), scope, &limit, &mut extras).await?;
        let again = match again {
            Again::Kept(result) => {
                let is_error = super::output::is_error(&result);
                return Ok(CallOutcome {
                    request,
                    result,
                    is_error,
                    duration: started.elapsed(),
                    replayed: false,
                    extras,
                });
            }
            Again::Server(result) => *result,
        };
        match again {
            ServerResult::CallToolResult(r) => {
                let result = serde_json::to_string(&r)
                    .map_err(|e| e.to_string())
                    .and_then(|text| Json::parse(text).map_err(|e| e.to_string()))
                    .map_err(|e| McpError::Transport {
                        server: server.clone(),
                        reason: format!("could not read the result of `{tool}`: {e}"),
                    })?;
                let is_error = super::output::is_error(&result);
                return Ok(CallOutcome {
                    request,
                    result,
                    is_error,
                    duration: started.elapsed(),
                    replayed: false,
                    extras,
                });
            }
            ServerResult::InputRequiredResult(next) => asked = next,
            other => {
                let shown = serde_json::to_value(other).unwrap_or(Value::Null);
                return Err(McpError::Transport {
                    server,
                    reason: format!(
                        "`{tool}` was answered with `{}` after its input was given, which is not a tool result",
                        excerpt(&shown)
                    ),
                });
            }
        }
    }
    Err(McpError::Transport {
        server,
        reason: format!(
            "`{tool}` still asked for more input after {MAX_ROUNDS} rounds of answers; \
             pipewright gave up (the server may be asking in a loop)"
        ),
    })
}

/// Who answers a 2026-07-28 task's questions: the call's answerers, on
/// its connection and for its node.
pub(super) struct TaskAsks<'a> {
    pub(super) conn: &'a Connection,
    pub(super) scope: &'a CallScope,
    pub(super) tool: &'a str,
}

impl Answerer for TaskAsks<'_> {
    fn answer<'a>(
        &'a self,
        requests: InputRequests,
        (deadline, timeout): (Option<Instant>, Option<Duration>),
        cancel: &'a CancellationToken,
        heard: &'a mut CallExtras,
    ) -> std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<InputResponses, McpError>> + Send + 'a>,
    > {
        Box::pin(async move {
            let limit = Limit {
                deadline,
                timeout,
                cancel,
                tool: self.tool,
            };
            let asked = InputRequiredResult::new(Some(requests), None);
            ask_all(self.conn, &asked, self.scope, &limit, heard).await
        })
    }
}

/// What bounds the rounds of one call.
struct Limit<'a> {
    deadline: Option<Instant>,
    timeout: Option<Duration>,
    cancel: &'a CancellationToken,
    tool: &'a str,
}

impl Limit<'_> {
    /// Waits for `work`, unless the call is cancelled or its time is up.
    async fn within<T>(&self, server: &str, work: impl Future<Output = T>) -> Result<T, McpError> {
        let deadline = async {
            match self.deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = self.cancel.cancelled() => Err(McpError::Cancelled {
                server: server.to_owned(),
                tool: self.tool.to_owned(),
            }),
            done = work => Ok(done),
            () = deadline => Err(McpError::Timeout {
                server: server.to_owned(),
                tool: self.tool.to_owned(),
                after: self.timeout.unwrap_or_default(),
            }),
        }
    }
}

/// Asks every question of one round; the replies keyed as the server keyed
/// the questions.
async fn ask_all(
    conn: &Connection,
    asked: &InputRequiredResult,
    scope: &CallScope,
    limit: &Limit<'_>,
    extras: &mut CallExtras,
) -> Result<InputResponses, McpError> {
    let server = conn.name();
    let mut responses = InputResponses::new();
    let count = asked.input_requests.as_ref().map_or(0, |r| r.len());
    if count > MAX_QUESTIONS {
        return Err(McpError::Transport {
            server: server.to_owned(),
            reason: format!(
                "`{}` asked {count} questions in one input-required result; pipewright answers at most {MAX_QUESTIONS}",
                limit.tool
            ),
        });
    }
    for (key, request) in asked.input_requests.iter().flatten() {
        let response = match request {
            InputRequest::ListRoots(_) => {
                let roots: Vec<Value> = conn
                    .inner
                    .roots
                    .iter()
                    .map(|r| match &r.name {
                        Some(name) => json!({"uri": r.uri, "name": name}),
                        None => json!({"uri": r.uri}),
                    })
                    .collect();
                json!({ "roots": roots })
            }
            // Elicitation and sampling (and whatever a later revision adds,
            // asked as a form).
            _ => {
                let ask = ask_of(request);
                let reply = ask_one(conn, ask, scope, limit, extras).await?;
                if matches!(request, InputRequest::CreateMessage(_))
                    && !matches!(reply, Reply::Sampled { .. })
                {
                    return Err(McpError::Transport {
                        server: server.to_owned(),
                        reason: format!(
                            "`{}` needs a model's completion (sampling) to go on, and it was declined",
                            limit.tool
                        ),
                    });
                }
                reply.json()
            }
        };
        responses.insert(key.clone(), response);
    }
    Ok(responses)
}

/// The question of an elicitation or sampling input request.
fn ask_of(request: &InputRequest) -> Ask {
    let raw = serde_json::to_value(request).unwrap_or(Value::Null);
    let mut params = raw.get("params").cloned().unwrap_or(Value::Null);
    let text = |k: &str| {
        params
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match request {
        InputRequest::CreateMessage(_) => {
            if let Some(map) = params.as_object_mut() {
                map.remove("_meta");
            }
            Ask::Sample { request: params }
        }
        _ if params.get("mode").and_then(Value::as_str) == Some("url") => Ask::Url {
            message: text("message"),
            url: text("url"),
            elicitation_id: text("elicitationId"),
        },
        _ => Ask::Form {
            message: text("message"),
            schema: params
                .get("requestedSchema")
                .cloned()
                .unwrap_or(Value::Null),
        },
    }
}

/// Asks one question through the call's responder, checks the reply and
/// keeps the exchange with the call (and tells the driver).
async fn ask_one(
    conn: &Connection,
    ask: Ask,
    scope: &CallScope,
    limit: &Limit<'_>,
    extras: &mut CallExtras,
) -> Result<Reply, McpError> {
    let server = conn.name();
    let question = Question {
        server: server.to_owned(),
        node: scope.node.clone(),
        candidates: Vec::new(),
        ask,
    };
    let responder: Arc<dyn Responder> = scope.responder.clone().unwrap_or_else(|| Arc::new(Nobody));
    let mut answer: Answer = limit.within(server, responder.respond(&question)).await?;
    if let (Ask::Form { schema, .. }, Reply::Accept(content)) = (&question.ask, &mut answer.reply) {
        with_defaults(schema, content);
    }
    if let Err(e) = check_reply(&question.ask, &answer.reply) {
        answer.error = Some(e);
        answer.reply = Reply::Cancel;
    }
    let who = question.node.as_deref().unwrap_or("no node");
    conn.log().push(&format!(
        "[pipewright] {} for {who} (input required): {}",
        question.ask.kind(),
        answer.reply.action()
    ));
    let interaction = Interaction {
        kind: question.ask.kind().to_owned(),
        server: server.to_owned(),
        request: question.ask.request_json(),
        reply: answer.reply.json(),
        by: answer.by,
        error: answer.error,
    };
    extras.interactions.push(interaction.clone());
    scope.tell(Notice::Answered(interaction));
    Ok(answer.reply)
}

/// Sends the call again with the round's replies and waits for its answer,
/// keeping what the server says meanwhile with the call.
async fn call_again(
    conn: &Connection,
    params: &CallToolRequestParams,
    meta: Option<RequestMetaObject>,
    scope: &CallScope,
    limit: &Limit<'_>,
    extras: &mut CallExtras,
) -> Result<Again, McpError> {
    let server = conn.name();
    let calls = &conn.inner.calls;
    let mut registered = Registered {
        calls,
        ticket: Some(calls.begin(scope.clone())),
    };
    let mut options = PeerRequestOptions::no_options();
    if let Some(meta) = meta {
        options = options.with_meta(meta);
    }
    let peer = &conn.inner.peer;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
    let mut handle = match peer.send_request_with_option(request, options).await {
        Ok(handle) => handle,
        Err(e) => return Err(conn.call_error(e, limit.tool).await),
    };
    if let Some(ticket) = registered.ticket {
        calls.sent(ticket, handle.id.clone(), handle.progress_token.clone());
    }
    let mut guard = AbandonGuard {
        peer: peer.clone(),
        id: Some(handle.id.clone()),
    };
    let answer = limit.within(server, &mut handle.rx).await;
    guard.id = None;
    let answer = match answer {
        Ok(answer) => answer,
        Err(stopped) => {
            let reason = match &stopped {
                McpError::Timeout { after, .. } => {
                    format!("timed out after {}", HumanDuration(*after))
                }
                _ => "cancelled by the user".to_owned(),
            };
            conn.inner.replies.forget(&handle.id);
            let _ = tokio::time::timeout(CANCEL_NOTICE_WAIT, handle.cancel(Some(reason))).await;
            return Err(stopped);
        }
    };
    let kept = conn.inner.replies.take(&handle.id);
    conn.inner.replies.forget(&handle.id);
    // Notifications are handled on their own tasks: let the ones that
    // came before the answer land.
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
    let heard = registered.finish();
    extras.interactions.extend(heard.interactions);
    heard.logs.into_iter().for_each(|l| extras.log(l));
    heard.progress.into_iter().for_each(|p| extras.progress(p));
    match answer {
        Ok(Ok(result)) if super::reply::is_stand_in(&result) => match kept {
            Some(kept) => Ok(Again::Kept(kept)),
            None => Ok(Again::Server(Box::new(result))),
        },
        Ok(Ok(result)) => Ok(Again::Server(Box::new(result))),
        Ok(Err(e)) => Err(conn.call_error(e, limit.tool).await),
        Err(_) => Err(conn.closed_error().await),
    }
}

/// A call made again with the answers: its result as read and kept by the
/// transport, or one rmcp read (more questions, a task).
enum Again {
    Kept(Json),
    Server(Box<ServerResult>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(request: Value) -> InputRequest {
        serde_json::from_value(request).expect("an input request")
    }

    #[test]
    fn input_requests_become_the_questions_elicitation_asks() {
        let form = input(json!({
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "Name?", "requestedSchema": {
                "type": "object", "properties": {"name": {"type": "string"}}}}
        }));
        let Ask::Form { message, schema } = ask_of(&form) else {
            panic!("a form");
        };
        assert_eq!(message, "Name?");
        assert_eq!(schema["properties"]["name"]["type"], "string");
        let url = input(json!({
            "method": "elicitation/create",
            "params": {"mode": "url", "message": "Log in", "url": "https://x.test/a",
                       "elicitationId": "e1"}
        }));
        assert_eq!(
            ask_of(&url),
            Ask::Url {
                message: "Log in".into(),
                url: "https://x.test/a".into(),
                elicitation_id: "e1".into()
            }
        );
        let sample = input(json!({
            "method": "sampling/createMessage",
            "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                       "maxTokens": 5, "_meta": {"k": 1}}
        }));
        let Ask::Sample { request } = ask_of(&sample) else {
            panic!("a sampling question");
        };
        assert_eq!(request["maxTokens"], 5);
        assert!(request.get("_meta").is_none());
    }
}
