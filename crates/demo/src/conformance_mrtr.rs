//! The conformance suite's input-required (multi round-trip, SEP-2322)
//! fixture tools: each answers a call without `inputResponses` with an
//! input-required result and completes once the client calls again with
//! the replies. A `requestState` is sealed (HMAC-SHA256, a key made per
//! process) and bound to the tool, so a changed or foreign one is refused
//! with invalid-params; nothing is kept between the calls.

use std::sync::OnceLock;

use rmcp::{
    ErrorData, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, InputRequest, InputRequests,
        InputRequiredResult, InputResponses,
    },
    service::RequestContext,
};
use serde_json::{Value, json};

use pipewright_engine::mac::{hmac_sha256, same};

use super::conformance_parts::{complete, declared, text, typed};

/// The input-required fixture tools and what each one is for.
pub(crate) const TOOLS: &[(&str, &str)] = &[
    (
        "test_input_required_result_elicitation",
        "Asks for a name (`user_name`, a form), then greets it.",
    ),
    (
        "test_input_required_result_sampling",
        "Asks the client's model (`capital_question`), then returns its text.",
    ),
    (
        "test_input_required_result_list_roots",
        "Asks for the client's roots (`client_roots`), then lists them.",
    ),
    (
        "test_input_required_result_request_state",
        "Asks to confirm (`confirm`) with a sealed requestState; `state-ok` once it comes back intact.",
    ),
    (
        "test_input_required_result_multiple_inputs",
        "Asks a form, the model and the roots at once, with a sealed requestState.",
    ),
    (
        "test_input_required_result_multi_round",
        "Asks twice (`step1`, then `step2`), a new sealed requestState each round.",
    ),
    (
        "test_input_required_result_tampered_state",
        "Asks to confirm with a sealed requestState and refuses a changed one.",
    ),
    (
        "test_input_required_result_capabilities",
        "Asks only what the client declared it can answer (elicitation, sampling).",
    ),
];

/// A form asking for one string field.
fn form(message: &str, field: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {field: {"type": "string"}},
                "required": [field],
            },
        },
    })
}

/// A sampling request with one user message.
fn sample(prompt: &str, max_tokens: u32) -> Value {
    json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens,
        },
    })
}

/// The roots request.
fn roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

/// The confirm form `request_state` and `tampered_state` ask.
fn confirm() -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "message": "Please confirm",
            "requestedSchema": {
                "type": "object",
                "properties": {"ok": {"type": "boolean"}},
                "required": ["ok"],
            },
        },
    })
}

/// An input-required result asking `requests` (key, `{method, params}`),
/// with `state` when given.
pub(crate) fn ask<'a, R: From<InputRequiredResult>>(
    requests: impl IntoIterator<Item = (&'a str, Value)>,
    state: Option<String>,
) -> Result<R, ErrorData> {
    let mut asked = InputRequests::new();
    for (key, request) in requests {
        asked.insert(key.to_owned(), typed::<InputRequest>(request)?);
    }
    Ok(InputRequiredResult::new(Some(asked), state).into())
}

/// The reply under `key`, if the client sent one; a reply that is not an
/// object is the client's mistake (invalid params).
pub(crate) fn reply<'a>(
    responses: Option<&'a InputResponses>,
    key: &str,
) -> Result<Option<&'a Value>, ErrorData> {
    match responses.and_then(|r| r.get(key)) {
        None => Ok(None),
        Some(v) if v.is_object() => Ok(Some(v)),
        Some(_) => Err(ErrorData::invalid_params(
            format!("inputResponses.{key} must be an object (the answer to the question asked)"),
            None,
        )),
    }
}

/// The process's sealing key, made once from the system's random source.
fn key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(pipewright_engine::random::bytes)
}

/// HMAC-SHA256 of `tool`, a zero byte and `payload`.
fn tag(tool: &str, payload: &[u8]) -> [u8; 32] {
    let mut msg = Vec::with_capacity(tool.len() + 1 + payload.len());
    msg.extend_from_slice(tool.as_bytes());
    msg.push(0);
    msg.extend_from_slice(payload);
    hmac_sha256(key(), &msg)
}

/// `round` sealed and bound to `tool`: `HEX(round).HEX(tag)`.
fn seal(tool: &str, round: &str) -> String {
    let tag = tag(tool, round.as_bytes());
    format!("{}.{}", hex::encode(round), hex::encode(tag))
}

/// The round a sealed state names, if it is intact and bound to `tool`;
/// anything else is refused (invalid params).
fn open(tool: &str, state: Option<&str>) -> Result<String, ErrorData> {
    let refused =
        |why: &str| ErrorData::invalid_params(format!("requestState refused: {why}"), None);
    let state = state.ok_or_else(|| refused("it is missing; send back the one the server gave"))?;
    let (payload, given) = state
        .split_once('.')
        .and_then(|(p, t)| Some((hex::decode(p).ok()?, hex::decode(t).ok()?)))
        .ok_or_else(|| refused("it is not one this server made"))?;
    if !same(&given, &tag(tool, &payload)) {
        return Err(refused(
            "it failed its integrity check (changed, or from another tool)",
        ));
    }
    String::from_utf8(payload).map_err(|_| refused("it is not one this server made"))
}

/// A complete result of one text block.
fn done(message: &str) -> Result<CallToolResponse, ErrorData> {
    Ok(complete::<CallToolResult>(json!({"content": [text(message)]}))?.into())
}

/// The text of a sampling reply (`content.text`), or "".
fn sampled(reply: &Value) -> &str {
    reply
        .pointer("/content/text")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Runs one of [`TOOLS`].
pub(crate) async fn call(
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let tool = request.name.as_ref();
    let responses = request.input_responses.as_ref();
    let state = request.request_state.as_deref();
    match tool {
        "test_input_required_result_elicitation" => {
            match reply(responses, "user_name")? {
                // Missing (or only other keys): asked again.
                None => ask([("user_name", form("What is your name?", "name"))], None),
                Some(r) => {
                    let name = r.pointer("/content/name").and_then(Value::as_str);
                    done(&format!("Hello, {}!", name.unwrap_or("whoever you are")))
                }
            }
        }
        "test_input_required_result_sampling" => match reply(responses, "capital_question")? {
            None => ask(
                [(
                    "capital_question",
                    sample("What is the capital of France?", 100),
                )],
                None,
            ),
            Some(r) => done(sampled(r)),
        },
        "test_input_required_result_list_roots" => match reply(responses, "client_roots")? {
            None => ask([("client_roots", roots())], None),
            Some(r) => {
                let uris: Vec<&str> = r
                    .get("roots")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(|x| x["uri"].as_str()).collect())
                    .unwrap_or_default();
                done(&format!("roots: {}", uris.join(", ")))
            }
        },
        "test_input_required_result_request_state"
        | "test_input_required_result_tampered_state" => match reply(responses, "confirm")? {
            None => ask([("confirm", confirm())], Some(seal(tool, "1"))),
            Some(_) => {
                open(tool, state)?;
                done("state-ok: the requestState came back intact")
            }
        },
        "test_input_required_result_multiple_inputs" => {
            let keys = ["user_name", "greeting", "client_roots"];
            let mut got = Vec::new();
            for key in keys {
                got.extend(reply(responses, key)?);
            }
            if got.len() < keys.len() {
                return ask(
                    [
                        ("user_name", form("What is your name?", "name")),
                        ("greeting", sample("Generate a greeting", 50)),
                        ("client_roots", roots()),
                    ],
                    Some(seal(tool, "1")),
                );
            }
            open(tool, state)?;
            let name = got[0].pointer("/content/name").and_then(Value::as_str);
            done(&format!(
                "{} {}",
                sampled(got[1]),
                name.unwrap_or("whoever you are")
            ))
        }
        "test_input_required_result_multi_round" => {
            // Round 1, and the answer to a state from another round.
            let step1 = || {
                ask(
                    [("step1", form("Step 1: What is your name?", "name"))],
                    Some(seal(tool, "1")),
                )
            };
            if let Some(r) = reply(responses, "step2")? {
                let round = open(tool, state)?;
                let Some(name) = round.strip_prefix("2:") else {
                    return step1();
                };
                let color = r.pointer("/content/color").and_then(Value::as_str);
                return done(&format!("{name} likes {}", color.unwrap_or("no colour")));
            }
            if let Some(r) = reply(responses, "step1")? {
                if open(tool, state)? != "1" {
                    return step1();
                }
                let name = r.pointer("/content/name").and_then(Value::as_str);
                let next = format!("2:{}", name.unwrap_or("whoever you are"));
                return ask(
                    [(
                        "step2",
                        form("Step 2: What is your favorite color?", "color"),
                    )],
                    Some(seal(tool, &next)),
                );
            }
            step1()
        }
        "test_input_required_result_capabilities" => {
            let mut asked = Vec::new();
            if declared(&context, |c| c.elicitation.is_some()) {
                asked.push(("user_name", form("What is your name?", "name")));
            }
            if declared(&context, |c| c.sampling.is_some()) {
                asked.push(("greeting", sample("Generate a greeting", 50)));
            }
            let answered = asked
                .iter()
                .all(|(key, _)| responses.is_some_and(|r| r.contains_key(*key)));
            if asked.is_empty() || answered {
                done("asked only what the client declared")
            } else {
                ask(asked, None)
            }
        }
        other => Err(ErrorData::invalid_params(
            format!("unknown conformance fixture `{other}`"),
            None,
        )),
    }
}
