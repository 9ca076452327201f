//! The official MCP conformance suite's fixture tools, which the demo
//! server lists after its own so that `pipewright demo-server --http`
//! answers every server scenario of the suite's 2026-07-28 requirement set
//! (tests/conformance/run.sh runs them). Their names, arguments and
//! results are the ones the suite's scenarios ask for:
//!
//! | tool | result |
//! |---|---|
//! | `test_simple_text` | one text block |
//! | `test_image_content` | one PNG image block |
//! | `test_audio_content` | one WAV audio block |
//! | `test_embedded_resource` | one embedded text resource |
//! | `test_multiple_content_types` | text, image and an embedded JSON resource |
//! | `test_error_handling` | a tool error (`isError: true`) |
//! | `test_tool_with_progress` | progress 0, 50, 100 of 100 (50 ms apart) to a caller that sent a progress token, then text |
//! | `test_logging_tool` | one log message, only to a request that set `_meta` `logLevel`, then text |
//! | `test_missing_capability` | needs the client's `sampling` capability: `-32021` (HTTP 400) when it was not declared |
//! | `test_streaming_elicitation` | asks a question, the way the revision allows (needs `elicitation`) |
//! | `test_input_required_result_*` | the input-required (multi round-trip) flows, see `conformance_mrtr.rs` |
//! | `json_schema_2020_12_tool`, `test_custom_header` | their input schemas are under test, see `conformance_schemas.rs` |
//!
//! The resources, prompts and completions are in `conformance_content.rs`.

// Logging is deprecated by SEP-2577, but the suite still checks that a
// server logs only when a request asks it to.
#![expect(deprecated, reason = "the suite still checks request-scoped logging")]

use std::time::Duration;

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, LoggingMessageNotificationParam,
        ProgressNotificationParam, Tool,
    },
    service::RequestContext,
};
use serde_json::{Value, json};

use super::conformance_parts::{complete, declared, image, modern, text, typed};
use super::{conformance_mrtr, conformance_schemas};

/// A WAV file of one silent 8 kHz sample, base64.
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQIAAACAgA==";
/// How long `test_tool_with_progress` waits between its notifications.
const PROGRESS_STEP: Duration = Duration::from_millis(50);

/// The fixture tools without arguments that answer in one go, and what
/// each one is for.
const PLAIN: &[(&str, &str)] = &[
    ("test_simple_text", "Returns one text block."),
    ("test_image_content", "Returns one PNG image block."),
    ("test_audio_content", "Returns one WAV audio block."),
    (
        "test_embedded_resource",
        "Returns one embedded text resource.",
    ),
    (
        "test_multiple_content_types",
        "Returns text, an image and an embedded JSON resource.",
    ),
    (
        "test_error_handling",
        "Always returns a tool error (isError: true).",
    ),
    (
        "test_tool_with_progress",
        "Reports progress 0, 50 and 100 of 100 to a caller that sent a progress token.",
    ),
    (
        "test_logging_tool",
        "Logs one message, only when the request asked for logs (`_meta` logLevel).",
    ),
    (
        "test_missing_capability",
        "Needs the client's sampling capability; without it, error -32021.",
    ),
    (
        "test_streaming_elicitation",
        "Asks the client a question (needs the elicitation capability).",
    ),
];

/// Every fixture tool's `tools/list` entry, in a fixed order.
pub(crate) fn definitions() -> Vec<Tool> {
    PLAIN
        .iter()
        .chain(conformance_mrtr::TOOLS)
        .map(|(name, description)| {
            Tool::new(
                *name,
                format!("Conformance-suite fixture. {description}"),
                std::sync::Arc::new(
                    json!({"type": "object", "properties": {}})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                ),
            )
        })
        .chain(conformance_schemas::definitions())
        .collect()
}

/// Whether `name` is a fixture tool.
pub(crate) fn is_fixture(name: &str) -> bool {
    PLAIN
        .iter()
        .chain(conformance_mrtr::TOOLS)
        .any(|(n, _)| *n == name)
        || conformance_schemas::is_fixture(name)
}

/// Runs the fixture tool `request.name` (one [`is_fixture`] accepts).
pub(crate) async fn call(
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    if conformance_schemas::is_fixture(&request.name) {
        return conformance_schemas::call(&request);
    }
    let content = match request.name.as_ref() {
        "test_simple_text" => vec![text("This is a simple text response for testing.")],
        "test_image_content" => vec![image()],
        "test_audio_content" => {
            vec![json!({"type": "audio", "data": WAV, "mimeType": "audio/wav"})]
        }
        "test_embedded_resource" => vec![json!({
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        })],
        "test_multiple_content_types" => vec![
            text("Multiple content types test:"),
            image(),
            json!({
                "type": "resource",
                "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}",
                },
            }),
        ],
        "test_error_handling" => {
            return Ok(complete::<CallToolResult>(json!({
                "content": [text("This tool intentionally returns an error for testing")],
                "isError": true,
            }))?
            .into());
        }
        "test_tool_with_progress" => {
            progress(&context).await;
            vec![text("Progress reported: 0, 50 and 100 of 100.")]
        }
        "test_logging_tool" => {
            // Only a request that asked for log messages gets one.
            if let Some(level) = context.meta.log_level() {
                let message =
                    LoggingMessageNotificationParam::new(level, json!("test_logging_tool ran"));
                let _ = context.peer.notify_logging_message(message).await;
            }
            vec![text("Logged when asked to.")]
        }
        "test_missing_capability" => {
            if !declared(&context, |c| c.sampling.is_some()) {
                return Err(ErrorData::missing_required_client_capability(typed(
                    json!({"sampling": {}}),
                )?));
            }
            vec![text("The client declared sampling.")]
        }
        "test_streaming_elicitation" => return streaming_elicitation(request, context).await,
        _ => return conformance_mrtr::call(request, context).await,
    };
    Ok(complete::<CallToolResult>(json!({ "content": content }))?.into())
}

/// Progress 0, 50 and 100 of 100, 50 ms apart, to a caller that sent a
/// progress token (and the same pauses for one that did not).
async fn progress(context: &RequestContext<RoleServer>) {
    let token = context.meta.get_progress_token();
    for (i, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(PROGRESS_STEP).await;
        }
        if let Some(token) = &token {
            let p = ProgressNotificationParam::new(token.clone(), done).with_total(100.0);
            let _ = context.peer.notify_progress(p).await;
        }
    }
}

/// `test_streaming_elicitation`: one question, as an input-required result
/// (2026-07-28) or an `elicitation/create` request on the call's stream
/// (older revisions); the answer's action comes back as text.
async fn streaming_elicitation(
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    if !declared(&context, |c| c.elicitation.is_some()) {
        return Err(ErrorData::missing_required_client_capability(typed(
            json!({"elicitation": {}}),
        )?));
    }
    let ask = json!({
        "method": "elicitation/create",
        "params": {
            "message": "Continue?",
            "requestedSchema": {
                "type": "object",
                "properties": {"ok": {"type": "boolean"}},
            },
        },
    });
    let reply = if modern(&context) {
        match request.input_responses.as_ref().and_then(|r| r.get("ok")) {
            Some(reply) => reply.clone(),
            None => return conformance_mrtr::ask([("ok", ask)], None),
        }
    } else {
        let reply = context.peer.send_request(typed(ask)?).await.map_err(|e| {
            ErrorData::internal_error(format!("the client did not answer: {e}"), None)
        })?;
        serde_json::to_value(reply).unwrap_or(Value::Null)
    };
    let action = reply
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or("none");
    Ok(
        complete::<CallToolResult>(json!({"content": [text(&format!("answered: {action}"))]}))?
            .into(),
    )
}
