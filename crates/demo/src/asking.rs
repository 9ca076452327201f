//! The tools that ask the client mid-call — `confirm_send` (a form),
//! `connect_account` (a URL to open) and `draft_reply` (a model's
//! completion) — and how they ask in each protocol revision.
//!
//! A client that negotiated 2026-07-28 gets an input-required result (the
//! question under the key [`KEY`]) and calls again with the reply in
//! `inputResponses`; the server keeps nothing between the two calls. An
//! older client gets the question as a request (`elicitation/create`,
//! `sampling/createMessage`) sent while the call is open, and the tool
//! waits for the reply. Either way the result is built from the reply
//! alone, so the same answers give the same results.
// Sampling is deprecated by SEP-2577, but clients still answer it, and the
// demo shows how.
#![expect(deprecated, reason = "sampling is still spoken by clients today")]

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock,
        CreateMessageRequest, ElicitRequest, InputRequest, InputRequests, InputRequiredResult,
        JsonObject, ProtocolVersion, ServerRequest,
    },
    service::RequestContext,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::catalog::{DEFAULT_SERVICE, DemoTool};

/// The key the question travels under in `inputRequests` and its reply in
/// `inputResponses` (2026-07-28).
pub(crate) const KEY: &str = "answer";
/// The made-up page `connect_account` sends the user to.
pub(crate) const CONNECT_URL: &str = "https://example.org/pipewright-demo/connect";
/// The system prompt `draft_reply` sends with its sampling request.
const DRAFT_SYSTEM_PROMPT: &str = "You write short, friendly email replies.";
/// The most tokens `draft_reply` asks the model for.
const DRAFT_MAX_TOKENS: u32 = 200;

/// Whether `tool` asks the client mid-call.
pub(crate) fn asks(tool: DemoTool) -> bool {
    matches!(
        tool,
        DemoTool::ConfirmSend | DemoTool::ConnectAccount | DemoTool::DraftReply
    )
}

/// Runs an asking tool: asks its question the way the client's revision
/// allows, and builds the result from the reply.
pub(crate) async fn call(
    tool: DemoTool,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let arguments = request.arguments.unwrap_or_default();
    let question = match question(tool, arguments) {
        Ok(question) => question,
        Err(message) => return Ok(error(message).into()),
    };
    if let Some(reply) = request
        .input_responses
        .as_ref()
        .and_then(|responses| responses.get(KEY))
    {
        return Ok(result(tool, &question, Ok(reply.clone())).into());
    }
    let modern = context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
    if modern {
        let input = input_request(&question.request).map_err(internal)?;
        let asked = InputRequests::from([(KEY.to_owned(), input)]);
        return Ok(InputRequiredResult::from_input_requests(asked).into());
    }
    let server_request = server_request(&question.request).map_err(internal)?;
    let reply = tokio::select! {
        reply = context.peer.send_request(server_request) => reply,
        () = context.ct.cancelled() => {
            return Ok(error(format!("{}: cancelled", tool.name())).into());
        }
    };
    let reply = match reply {
        Ok(reply) => serde_json::to_value(reply).map_err(|e| e.to_string()),
        Err(rmcp::ServiceError::McpError(e)) if e.code.0 == -1 => {
            // The spec's "user rejected sampling request".
            Ok(json!({"action": "decline"}))
        }
        Err(e) => Err(format!("{}: the client did not answer: {e}", tool.name())),
    };
    Ok(result(tool, &question, reply).into())
}

/// What a tool asks, and the arguments its result repeats.
struct Question {
    /// `{method, params}` of the request to send.
    request: Value,
    /// What the result says besides the reply (`to`, `service`).
    echo: JsonObject,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfirmArgs {
    to: String,
    subject: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConnectArgs {
    #[serde(default = "default_service")]
    service: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DraftArgs {
    to: String,
    topic: String,
}

fn default_service() -> String {
    DEFAULT_SERVICE.to_owned()
}

fn parse<T: serde::de::DeserializeOwned>(
    tool: DemoTool,
    arguments: JsonObject,
) -> Result<T, String> {
    serde_json::from_value(Value::Object(arguments))
        .map_err(|e| format!("{}: invalid arguments: {e}", tool.name()))
}

/// The question `tool` asks for `arguments`.
fn question(tool: DemoTool, arguments: JsonObject) -> Result<Question, String> {
    let (request, echo) = match tool {
        DemoTool::ConfirmSend => {
            let args: ConfirmArgs = parse(tool, arguments)?;
            let about = args
                .subject
                .map(|s| format!(" (\"{s}\")"))
                .unwrap_or_default();
            let request = json!({
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": format!("Send the email{about} to {}?", args.to),
                    "requestedSchema": form_schema(),
                },
            });
            (request, json!({ "to": args.to }))
        }
        DemoTool::ConnectAccount => {
            let args: ConnectArgs = parse(tool, arguments)?;
            let service = args.service;
            if service.is_empty()
                || !service
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-')
            {
                return Err(format!(
                    "{}: `service` must be letters, digits and dashes, got {service:?}",
                    tool.name()
                ));
            }
            let request = json!({
                "method": "elicitation/create",
                "params": {
                    "mode": "url",
                    "message": format!(
                        "Sign in to your demo {service} account in the browser, then come back."
                    ),
                    "url": format!("{CONNECT_URL}?service={service}"),
                    "elicitationId": format!("connect-{service}"),
                },
            });
            (request, json!({ "service": service }))
        }
        DemoTool::DraftReply => {
            let args: DraftArgs = parse(tool, arguments)?;
            let request = json!({
                "method": "sampling/createMessage",
                "params": {
                    "systemPrompt": DRAFT_SYSTEM_PROMPT,
                    "messages": [{
                        "role": "user",
                        "content": {
                            "type": "text",
                            "text": format!(
                                "Write a two-line reply to {} about {}.",
                                args.to, args.topic
                            ),
                        },
                    }],
                    "maxTokens": DRAFT_MAX_TOKENS,
                },
            });
            (request, json!({ "to": args.to }))
        }
        _ => return Err(format!("{}: does not ask", tool.name())),
    };
    let echo = match echo {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    Ok(Question { request, echo })
}

/// The form `confirm_send` asks for: a string, a choice and a yes/no.
pub(crate) fn form_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "signature": {
                "type": "string",
                "title": "Sign as",
                "description": "The name the email is signed with.",
                "minLength": 1,
            },
            "tone": {
                "type": "string",
                "title": "Tone",
                "enum": ["brief", "friendly", "formal"],
                "default": "friendly",
            },
            "send": {
                "type": "boolean",
                "title": "Send it now",
                "default": true,
            },
        },
        "required": ["signature", "tone"],
    })
}

fn input_request(request: &Value) -> Result<InputRequest, String> {
    let input = if request["method"] == "sampling/createMessage" {
        InputRequest::CreateMessage(typed::<CreateMessageRequest>(request)?)
    } else {
        InputRequest::Elicitation(typed::<ElicitRequest>(request)?)
    };
    Ok(input)
}

fn server_request(request: &Value) -> Result<ServerRequest, String> {
    let sent = if request["method"] == "sampling/createMessage" {
        ServerRequest::CreateMessageRequest(typed::<CreateMessageRequest>(request)?)
    } else {
        ServerRequest::ElicitRequest(typed::<ElicitRequest>(request)?)
    };
    Ok(sent)
}

fn typed<T: serde::de::DeserializeOwned>(request: &Value) -> Result<T, String> {
    serde_json::from_value(request.clone()).map_err(|e| format!("a malformed demo question: {e}"))
}

fn internal(message: String) -> ErrorData {
    ErrorData::internal_error(message, None)
}

fn error(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// The tool's result for the client's `reply`: `{action, …}` with the
/// form's fields, the service, or the model's text.
fn result(tool: DemoTool, question: &Question, reply: Result<Value, String>) -> CallToolResult {
    let reply = match reply {
        Ok(reply) => reply,
        Err(message) => return error(message),
    };
    let mut out = question.echo.clone();
    if tool == DemoTool::DraftReply {
        // A sampling reply has no action: it is the model's message.
        if reply.get("action").and_then(Value::as_str) == Some("decline") {
            out.insert("action".into(), json!("decline"));
        } else {
            let text = reply["content"]["text"].as_str().unwrap_or_default();
            out.insert("action".into(), json!("accept"));
            out.insert("text".into(), json!(text));
            out.insert("model".into(), reply["model"].clone());
        }
        return CallToolResult::structured(Value::Object(out));
    }
    let action = reply
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("cancel");
    out.insert("action".into(), json!(action));
    match tool {
        DemoTool::ConfirmSend if action == "accept" => {
            let content = reply.get("content").cloned().unwrap_or(json!({}));
            for field in ["signature", "tone", "send"] {
                if let Some(value) = content.get(field) {
                    out.insert(field.into(), value.clone());
                }
            }
        }
        DemoTool::ConnectAccount => {
            out.insert("connected".into(), json!(action == "accept"));
        }
        _ => {}
    }
    CallToolResult::structured(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question_of(tool: DemoTool, arguments: Value) -> Question {
        let Value::Object(map) = arguments else {
            panic!("arguments")
        };
        question(tool, map).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn every_question_is_a_request_rmcp_reads() {
        for (tool, args) in [
            (DemoTool::ConfirmSend, json!({"to": "ada@example.test"})),
            (DemoTool::ConnectAccount, json!({})),
            (
                DemoTool::DraftReply,
                json!({"to": "ada@example.test", "topic": "the launch"}),
            ),
        ] {
            let q = question_of(tool, args);
            input_request(&q.request).unwrap_or_else(|e| panic!("{}: {e}", tool.name()));
            server_request(&q.request).unwrap_or_else(|e| panic!("{}: {e}", tool.name()));
        }
    }

    #[test]
    fn a_form_reply_becomes_the_result() {
        let q = question_of(DemoTool::ConfirmSend, json!({"to": "ada@example.test"}));
        let reply = json!({"action": "accept", "content": {"signature": "Ada", "tone": "brief", "send": false}});
        let r = result(DemoTool::ConfirmSend, &q, Ok(reply));
        assert_eq!(
            r.structured_content,
            Some(
                json!({"to": "ada@example.test", "action": "accept", "signature": "Ada", "tone": "brief", "send": false})
            )
        );
        let r = result(DemoTool::ConfirmSend, &q, Ok(json!({"action": "decline"})));
        assert_eq!(
            r.structured_content,
            Some(json!({"to": "ada@example.test", "action": "decline"}))
        );
    }

    #[test]
    fn a_sampling_reply_gives_the_models_text() {
        let q = question_of(DemoTool::DraftReply, json!({"to": "a", "topic": "b"}));
        let reply = json!({"role": "assistant", "model": "human", "content": {"type": "text", "text": "Hi!"}});
        let r = result(DemoTool::DraftReply, &q, Ok(reply));
        assert_eq!(
            r.structured_content,
            Some(json!({"to": "a", "action": "accept", "text": "Hi!", "model": "human"}))
        );
    }

    #[test]
    fn a_service_that_is_not_a_word_is_a_tool_error() {
        let Value::Object(args) = json!({"service": "x y"}) else {
            panic!()
        };
        assert!(question(DemoTool::ConnectAccount, args).is_err());
    }
}
