//! The conformance suite's fixture resources, prompts and completions,
//! which the demo server offers beside its tools:
//!
//! - resources `test://static-text` (text), `test://static-binary` (a PNG)
//!   and the template `test://template/{id}/data` (JSON naming the id); an
//!   unknown URI is invalid-params (`-32602`) with the URI in `data`;
//! - prompts `test_simple_prompt`, `test_prompt_with_arguments` (`arg1`,
//!   `arg2`), `test_prompt_with_embedded_resource` (`resourceUri`),
//!   `test_prompt_with_image` and `test_input_required_result_prompt`
//!   (asks for `user_context` first);
//! - completions of `test_prompt_with_arguments`'s arguments.

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
        GetPromptResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    },
    service::RequestContext,
};
use serde_json::{Map, Value, json};

use super::conformance_mrtr;
use super::conformance_parts::{PNG, complete, image, text};

/// The text of `test://static-text`.
const STATIC_TEXT: &str = "This is the content of the static text resource.";
/// The template's URI pattern.
const TEMPLATE: &str = "test://template/{id}/data";
/// What completions of `arg1`/`arg2` are chosen from.
const COMPLETIONS: &[&str] = &["paris", "park", "party", "test", "testing"];

/// `resources/list`.
pub(crate) fn resources() -> Result<ListResourcesResult, ErrorData> {
    complete(json!({"resources": [
        {
            "uri": "test://static-text",
            "name": "static-text",
            "description": "A fixed text resource.",
            "mimeType": "text/plain",
        },
        {
            "uri": "test://static-binary",
            "name": "static-binary",
            "description": "A fixed 1x1 PNG.",
            "mimeType": "image/png",
        },
    ]}))
}

/// `resources/templates/list`.
pub(crate) fn templates() -> Result<ListResourceTemplatesResult, ErrorData> {
    complete(json!({"resourceTemplates": [{
        "uriTemplate": TEMPLATE,
        "name": "template-data",
        "description": "JSON data for any id.",
        "mimeType": "application/json",
    }]}))
}

/// `resources/read`.
pub(crate) fn read(request: ReadResourceRequestParams) -> Result<ReadResourceResponse, ErrorData> {
    let uri = request.uri.as_str();
    let contents = match uri {
        "test://static-text" => json!({"uri": uri, "mimeType": "text/plain", "text": STATIC_TEXT}),
        "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
        _ => match uri
            .strip_prefix("test://template/")
            .and_then(|rest| rest.strip_suffix("/data"))
            .filter(|id| !id.is_empty() && !id.contains('/'))
        {
            Some(id) => json!({
                "uri": uri,
                "mimeType": "application/json",
                "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                    .to_string(),
            }),
            None => {
                return Err(ErrorData::invalid_params(
                    format!("no resource {uri}"),
                    Some(json!({"uri": uri})),
                ));
            }
        },
    };
    Ok(complete::<ReadResourceResult>(json!({"contents": [contents]}))?.into())
}

/// `prompts/list`.
pub(crate) fn prompts() -> Result<ListPromptsResult, ErrorData> {
    let arg = |name: &str, description: &str| json!({"name": name, "description": description, "required": true});
    complete(json!({"prompts": [
        {"name": "test_simple_prompt", "description": "A prompt without arguments."},
        {
            "name": "test_prompt_with_arguments",
            "description": "A prompt naming its two arguments.",
            "arguments": [arg("arg1", "First test argument"), arg("arg2", "Second test argument")],
        },
        {
            "name": "test_prompt_with_embedded_resource",
            "description": "A prompt embedding a resource.",
            "arguments": [arg("resourceUri", "URI of the resource to embed")],
        },
        {"name": "test_prompt_with_image", "description": "A prompt with an image."},
        {
            "name": "test_input_required_result_prompt",
            "description": "A prompt that asks the client for context first.",
        },
    ]}))
}

/// `prompts/get`.
pub(crate) fn prompt(request: GetPromptRequestParams) -> Result<GetPromptResponse, ErrorData> {
    let args = request.arguments.clone().unwrap_or_default();
    let arg = |name: &str| -> Result<String, ErrorData> {
        match args.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(ErrorData::invalid_params(
                format!("prompt `{}` needs the argument `{name}`", request.name),
                None,
            )),
        }
    };
    let user = |content: Value| json!({"role": "user", "content": content});
    let messages = match request.name.as_str() {
        "test_simple_prompt" => vec![user(text("This is a simple prompt for testing."))],
        "test_prompt_with_arguments" => vec![user(text(&format!(
            "Prompt with arguments: arg1='{}', arg2='{}'",
            arg("arg1")?,
            arg("arg2")?
        )))],
        "test_prompt_with_embedded_resource" => vec![
            user(json!({
                "type": "resource",
                "resource": {
                    "uri": arg("resourceUri")?,
                    "mimeType": "text/plain",
                    "text": "Embedded resource content for testing.",
                },
            })),
            user(text("Please process the embedded resource above.")),
        ],
        "test_prompt_with_image" => {
            vec![user(image()), user(text("Please analyze the image above."))]
        }
        "test_input_required_result_prompt" => {
            match conformance_mrtr::reply(request.input_responses.as_ref(), "user_context")? {
                None => {
                    let ask = json!({
                        "method": "elicitation/create",
                        "params": {
                            "message": "What context should the prompt use?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"context": {"type": "string"}},
                                "required": ["context"],
                            },
                        },
                    });
                    return conformance_mrtr::ask([("user_context", ask)], None);
                }
                Some(r) => {
                    let context = r.pointer("/content/context").and_then(Value::as_str);
                    vec![user(text(&format!(
                        "Use this context: {}",
                        context.unwrap_or("none given")
                    )))]
                }
            }
        }
        other => {
            return Err(ErrorData::invalid_params(
                format!("no prompt `{other}`"),
                None,
            ));
        }
    };
    Ok(complete::<GetPromptResult>(json!({"messages": messages}))?.into())
}

/// `completion/complete`: for `test_prompt_with_arguments`'s arguments, the
/// known words that start with what was typed; nothing for anything else.
pub(crate) fn completions(
    request: CompleteRequestParams,
    _context: RequestContext<RoleServer>,
) -> Result<CompleteResult, ErrorData> {
    let value = serde_json::to_value(&request).unwrap_or(Value::Null);
    let prompt = value.pointer("/ref/name").and_then(Value::as_str);
    let typed_so_far = value
        .pointer("/argument/value")
        .and_then(Value::as_str)
        .unwrap_or("");
    let values: Vec<&str> = match prompt {
        Some("test_prompt_with_arguments") => COMPLETIONS
            .iter()
            .copied()
            .filter(|c| c.starts_with(typed_so_far))
            .collect(),
        _ => Vec::new(),
    };
    let mut completion = Map::new();
    completion.insert("total".into(), json!(values.len()));
    completion.insert("values".into(), json!(values));
    completion.insert("hasMore".into(), json!(false));
    complete(json!({ "completion": completion }))
}
