//! What a server sends, read once, before rmcp sees it.
//!
//! rmcp parses every message into its typed model; for a `tools/call`
//! answer that means an untagged union tried variant by variant over a
//! buffered copy of the whole result, and a message it cannot parse is
//! dropped while its call waits for ever. Here every message (a line of a
//! stdio server, the data of an event of an HTTP one) is looked at first:
//!
//! - the answer to a `tools/call` pipewright sent is checked and kept as
//!   the text it arrived in ([`Json`], no tree), handed to the waiting call
//!   through [`Replies`]; rmcp gets a small stand-in answer;
//! - an answer that cannot be read (invalid UTF-8, not JSON, `NaN`, nested
//!   too deep, not the shape of an answer) becomes a JSON-RPC error for the
//!   request it answers, found by its `id` even in a broken message, so
//!   the call fails at once with what was wrong and where;
//! - anything else goes to rmcp as before.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::StreamExt;
use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, CustomResult, ErrorCode, ErrorData, JsonRpcMessage,
    NumberOrString, RequestId, ServerResult,
};
use rmcp::service::RxJsonRpcMessage;
use rmcp::transport::streamable_http_client::StreamableHttpPostResponse;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::stdout::DEFAULT_MAX_MESSAGE_MB;
use crate::json::{Json, scan};

/// The error code of a stand-in error for an answer that cannot be read
/// (JSON-RPC's "parse error"); [`UNREADABLE_KEY`] in its data tells it
/// from a server's own.
pub(crate) const UNREADABLE_CODE: i32 = -32700;
/// The key of the data of such an error.
pub(crate) const UNREADABLE_KEY: &str = "pipewright/unreadable";
/// The key of the stand-in answer of a `tools/call` kept aside.
const KEPT_KEY: &str = "pipewright/kept";
/// Bytes of a broken message kept for the trace.
const KEPT_BYTES: usize = 64 * 1024;
/// Bytes around the first bad byte quoted in the error.
const NEAR_BYTES: usize = 60;

/// The `tools/call` requests of one connection waiting for an answer, and
/// the answers read for them, until the call takes its own. Shared by the
/// transport (which reads) and the connection (which calls), with the
/// limits of what it reads (`ConnectOptions::limits`).
#[derive(Clone, Default)]
pub(crate) struct Replies {
    inner: Arc<Mutex<Waiting>>,
    limits: MessageLimits,
}

/// How big a server's whole tool list may be, in MiB, unless
/// `PIPEWRIGHT_MAX_TOOL_LIST_MB` says otherwise: the definitions as JSON,
/// every page together.
pub const DEFAULT_MAX_TOOL_LIST_MB: usize = 16;

/// How much one server may send: one message, and its whole tool list;
/// `None` is the default ([`DEFAULT_MAX_MESSAGE_MB`],
/// [`DEFAULT_MAX_TOOL_LIST_MB`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageLimits {
    /// `PIPEWRIGHT_MAX_MESSAGE_MB`.
    pub max_message_mb: Option<usize>,
    /// `PIPEWRIGHT_MAX_TOOL_LIST_MB`.
    pub max_tool_list_mb: Option<usize>,
}

impl MessageLimits {
    /// The largest message, in bytes.
    pub fn max_message_bytes(self) -> usize {
        self.max_message_mb
            .unwrap_or(DEFAULT_MAX_MESSAGE_MB)
            .saturating_mul(1024 * 1024)
    }

    /// The largest tool list, in bytes.
    pub fn max_tool_list_bytes(self) -> usize {
        self.max_tool_list_mb
            .unwrap_or(DEFAULT_MAX_TOOL_LIST_MB)
            .saturating_mul(1024 * 1024)
    }
}

#[derive(Default)]
struct Waiting {
    calls: HashSet<RequestId>,
    answers: HashMap<RequestId, Json>,
    /// Each `tools/call` request as it went on the wire, for its record.
    requests: HashMap<RequestId, Json>,
    /// `tools/list` requests whose answer is not read yet.
    lists: HashSet<RequestId>,
    /// What the `tools/list` answers said of each tool's
    /// `execution.taskSupport`, by tool name: rmcp's tool type drops
    /// `execution`, so it is read here, before rmcp sees the answer.
    task_support: HashMap<String, &'static str>,
}

/// Tool names whose `taskSupport` is kept at most; past it the oldest
/// answers' are forgotten (a server that renames its tools on every list
/// cannot grow the map without bound).
const KEPT_TOOLS: usize = 10_000;

impl Replies {
    /// No call waiting yet, reading within `limits`.
    pub(crate) fn within(limits: MessageLimits) -> Replies {
        Replies {
            limits,
            ..Replies::default()
        }
    }

    /// The limits of what the connection reads.
    pub(crate) fn limits(&self) -> MessageLimits {
        self.limits
    }

    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Notes an outgoing message: a `tools/call` request's answer will be
    /// kept aside.
    pub(crate) fn sent(&self, message: &ClientJsonRpcMessage) {
        let JsonRpcMessage::Request(r) = message else {
            return;
        };
        match r.request {
            ClientRequest::CallToolRequest(_) => {
                self.lock().calls.insert(r.id.clone());
            }
            ClientRequest::ListToolsRequest(_) => {
                self.lock().lists.insert(r.id.clone());
            }
            _ => {}
        }
    }

    /// The `execution.taskSupport` the server last listed for `tool`
    /// (`required`, `optional` or `forbidden`), if it said one.
    pub(crate) fn task_support(&self, tool: &str) -> Option<&'static str> {
        self.lock().task_support.get(tool).copied()
    }

    /// Reads the `execution.taskSupport` of each tool in `result`, the
    /// answer to a `tools/list` request; a tool listed without one
    /// forgets what an earlier list said.
    fn listed(&self, result: &RawValue) {
        #[derive(Deserialize)]
        struct Page {
            tools: Vec<Entry>,
        }
        #[derive(Deserialize)]
        struct Entry {
            name: Option<Value>,
            execution: Option<Value>,
        }
        let Ok(page) = serde_json::from_str::<Page>(result.get()) else {
            return;
        };
        let mut waiting = self.lock();
        let kept = &mut waiting.task_support;
        if kept.len().saturating_add(page.tools.len()) > KEPT_TOOLS {
            kept.clear();
        }
        for entry in page.tools {
            let Some(Value::String(name)) = entry.name else {
                continue;
            };
            let said = entry
                .execution
                .as_ref()
                .and_then(|e| e.get("taskSupport"))
                .and_then(Value::as_str);
            match said.and_then(|w| {
                ["required", "optional", "forbidden"]
                    .into_iter()
                    .find(|k| *k == w)
            }) {
                Some(word) => {
                    kept.insert(name, word);
                }
                None => {
                    kept.remove(&name);
                }
            }
        }
    }

    /// Keeps the text a `tools/call` request was sent as (`line`, one
    /// JSON-RPC message), so its record holds the very bytes sent.
    pub(crate) fn sent_as(&self, message: &ClientJsonRpcMessage, line: &[u8]) {
        let JsonRpcMessage::Request(r) = message else {
            return;
        };
        if !matches!(r.request, ClientRequest::CallToolRequest(_)) {
            return;
        }
        let Ok(text) = std::str::from_utf8(line) else {
            return;
        };
        if let Ok(request) = Json::parse(text.trim_end().to_owned()) {
            self.lock().requests.insert(r.id.clone(), request);
        }
    }

    /// The request `id` as it was sent, when the transport kept it.
    pub(crate) fn take_request(&self, id: &RequestId) -> Option<Json> {
        self.lock().requests.remove(id)
    }

    /// The answer kept for the call `id`, once it came.
    pub(crate) fn take(&self, id: &RequestId) -> Option<Json> {
        self.lock().answers.remove(id)
    }

    /// The call `id` stopped waiting (cancelled, timed out): its answer, if
    /// it still comes, is not kept.
    pub(crate) fn forget(&self, id: &RequestId) {
        let mut waiting = self.lock();
        waiting.calls.remove(id);
        waiting.answers.remove(id);
        waiting.requests.remove(id);
        waiting.lists.remove(id);
    }

    fn answered(&self, id: &RequestId) -> bool {
        self.lock().calls.remove(id)
    }

    fn keep(&self, id: RequestId, answer: Json) {
        self.lock().answers.insert(id, answer);
    }
}

/// What became of one message.
pub(crate) enum Read {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleClient>>),
    /// A line that is not JSON-RPC at all (a stdio server's stray
    /// output), given back.
    Junk(Vec<u8>),
    /// Nothing for rmcp: an empty line, a notification rmcp would not
    /// know, an answer nobody waits for that cannot be read.
    Skip,
    /// A request from the server that cannot be read: it is refused with
    /// this error (the server waits for an answer).
    Refuse(Box<ClientJsonRpcMessage>),
}

/// Reads one message (`bytes`: a line without its end, or an event's
/// data).
pub(crate) fn read(bytes: Vec<u8>, replies: &Replies) -> Read {
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let what = format!(
                "byte 0x{:02x} is not UTF-8",
                bytes.get(at).copied().unwrap_or(0)
            );
            return unreadable(&bytes, &what, at, replies);
        }
    };
    let trimmed = text
        .trim_start_matches('\u{feff}')
        .trim_matches(|c: char| c.is_ascii_whitespace());
    if trimmed.is_empty() {
        return Read::Skip;
    }
    if !trimmed.starts_with(['{', '[']) {
        return Read::Junk(text.into_bytes());
    }
    let envelope = match serde_json::from_str::<Envelope<'_>>(trimmed) {
        Ok(envelope) => envelope,
        Err(e) => {
            let invalid = scan::from_serde(trimmed, &e);
            return unreadable(trimmed.as_bytes(), &invalid.what, invalid.at, replies);
        }
    };
    let id = envelope.id.and_then(request_id);
    if let Some(id) = &id
        && replies.lock().lists.remove(id)
        && let Some(result) = envelope.result
    {
        replies.listed(result);
    }
    let kept = match (id, envelope.result) {
        (Some(id), Some(result)) if replies.answered(&id) => (id, kept_answer(&text, result)),
        _ => return parse_for_rmcp(&text, replies),
    };
    match kept {
        (id, Some(Keep::Shared(range))) => {
            replies.keep(id.clone(), super::output::keep(text, range));
            Read::Message(Box::new(stand_in(id)))
        }
        (id, Some(Keep::Compacted(answer))) => {
            replies.keep(id.clone(), answer);
            Read::Message(Box::new(stand_in(id)))
        }
        (id, Some(Keep::Invalid(at, what))) => {
            Read::Message(Box::new(error_for(id, &what, at, text.as_bytes())))
        }
        // A task or an input-required result: rmcp's to read.
        (_, None) => parse_for_rmcp(&text, replies),
    }
}

/// The parts of a message looked at before rmcp parses it.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
}

fn request_id(raw: &RawValue) -> Option<RequestId> {
    match serde_json::from_str::<Value>(raw.get()).ok()? {
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        Value::String(s) => Some(NumberOrString::String(s.into())),
        _ => None,
    }
}

/// How a `tools/call` answer is kept.
enum Keep {
    /// As the bytes `range` of the message: no copy.
    Shared(std::ops::Range<usize>),
    /// Made compact (the server put spaces between its tokens).
    Compacted(Json),
    /// It cannot be read: what is wrong at which byte of the message.
    Invalid(usize, String),
}

/// A `tools/call` answer, checked: `None` when it is no plain result (a
/// task was created, or more input is required: rmcp reads those).
fn kept_answer(text: &str, result: &RawValue) -> Option<Keep> {
    #[derive(Deserialize)]
    struct Head<'a> {
        #[serde(rename = "resultType", borrow)]
        result_type: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        task: Option<&'a RawValue>,
    }
    let head = serde_json::from_str::<Head<'_>>(result.get()).ok();
    if let Some(head) = &head
        && (head.task.is_some() || head.result_type.as_deref().is_some_and(|t| t != "complete"))
    {
        return None;
    }
    let part = result.get();
    let start = offset_in(text, part).unwrap_or(0);
    // Read already (a `RawValue` of the envelope): its grammar is good.
    Some(match scan::check_read(part) {
        Ok(None) => Keep::Shared(start..start + part.len()),
        Ok(Some(compact)) => {
            let whole = 0..compact.len();
            Keep::Compacted(super::output::keep(compact, whole))
        }
        Err(e) => Keep::Invalid(start + e.at, e.what),
    })
}

/// Where `part`, a slice of `text`, starts in it.
fn offset_in(text: &str, part: &str) -> Option<usize> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    (start + part.len() <= text.len()).then_some(start)
}

/// The stand-in rmcp gets for an answer kept aside.
fn stand_in(id: RequestId) -> RxJsonRpcMessage<RoleClient> {
    let mut mark = serde_json::Map::new();
    mark.insert(KEPT_KEY.into(), Value::Bool(true));
    JsonRpcMessage::response(
        ServerResult::CustomResult(CustomResult(Value::Object(mark))),
        id,
    )
}

/// True when `result` is the stand-in for an answer kept aside.
pub(crate) fn is_stand_in(result: &ServerResult) -> bool {
    matches!(result, ServerResult::CustomResult(CustomResult(Value::Object(m)))
        if m.len() == 1 && m.get(KEPT_KEY) == Some(&Value::Bool(true)))
}

/// Hands `text` to rmcp's parser; a response it cannot read becomes an
/// error for its request, a request is refused, anything else is skipped.
fn parse_for_rmcp(text: &str, replies: &Replies) -> Read {
    let e = match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(text) {
        Ok(message) => return Read::Message(Box::new(message)),
        Err(e) => e,
    };
    let Ok(envelope) = serde_json::from_str::<Envelope<'_>>(text) else {
        return Read::Skip;
    };
    let id = envelope.id.and_then(request_id);
    let invalid = scan::from_serde(text, &e);
    match (id, envelope.method) {
        (Some(id), None) if envelope.result.is_some() || envelope.error.is_some() => {
            replies.answered(&id);
            Read::Message(Box::new(error_for(
                id,
                &invalid.what,
                invalid.at,
                text.as_bytes(),
            )))
        }
        (Some(id), Some(_)) => Read::Refuse(Box::new(JsonRpcMessage::error(
            ErrorData::invalid_request(
                format!("pipewright could not read this request: {invalid}"),
                None,
            ),
            Some(id),
        ))),
        // A notification rmcp does not know (or cannot read) is ignored,
        // as rmcp itself does.
        _ => Read::Skip,
    }
}

/// A message that cannot be read: an error for the request it answers,
/// found by its `id`.
fn unreadable(bytes: &[u8], what: &str, at: usize, replies: &Replies) -> Read {
    let Some(id) = scan::find_id(bytes).and_then(|v| match v {
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        Value::String(s) => Some(NumberOrString::String(s.into())),
        _ => None,
    }) else {
        // No request to fail: noted like any line that is not JSON-RPC.
        return Read::Junk(bytes.to_vec());
    };
    if scan::has_member(bytes, "method") {
        // A request of the server's own: refused, so it does not wait.
        let near = scan::quote(bytes, at, NEAR_BYTES);
        return Read::Refuse(Box::new(JsonRpcMessage::error(
            ErrorData::invalid_request(
                format!(
                    "pipewright could not read this request: {what} at byte {at} (near `{near}`)"
                ),
                None,
            ),
            Some(id),
        )));
    }
    replies.answered(&id);
    Read::Message(Box::new(error_for(id, what, at, bytes)))
}

/// The stand-in error for an unreadable answer to request `id`.
fn error_for(id: RequestId, what: &str, at: usize, bytes: &[u8]) -> RxJsonRpcMessage<RoleClient> {
    let near = scan::quote(bytes, at, NEAR_BYTES);
    let mut detail = serde_json::Map::new();
    detail.insert("what".into(), Value::from(what));
    detail.insert("at".into(), Value::from(at));
    detail.insert("near".into(), Value::from(near.clone()));
    detail.insert("bytes".into(), Value::from(bytes.len()));
    detail.insert(
        "received".into(),
        Value::from(scan::quote(bytes, 0, KEPT_BYTES)),
    );
    let mut data = serde_json::Map::new();
    data.insert(UNREADABLE_KEY.into(), Value::Object(detail));
    JsonRpcMessage::error(
        ErrorData::new(
            ErrorCode(UNREADABLE_CODE),
            format!("{what} at byte {at} of the message (near `{near}`)"),
            Some(Value::Object(data)),
        ),
        Some(id),
    )
}

/// The answer to a POST, watched: each event of an event stream goes
/// through [`read`] (a kept `tools/call` answer becomes its stand-in, an
/// unreadable answer its error), and an event over the size limit ends the
/// POST's request with an error that says so, instead of a stream that
/// stops short.
pub(crate) fn watch_post(
    response: StreamableHttpPostResponse,
    sent: &ClientJsonRpcMessage,
    replies: &Replies,
) -> StreamableHttpPostResponse {
    let StreamableHttpPostResponse::Sse(events, session) = response else {
        return response;
    };
    let id = match sent {
        JsonRpcMessage::Request(r) => Some(r.id.clone()),
        _ => None,
    };
    let replies = replies.clone();
    let events = events.map(move |event| match event {
        Ok(mut event) => {
            if let Some(data) = event.data.take() {
                event.data = match read(data.into_bytes(), &replies) {
                    Read::Message(message) => serde_json::to_string(&*message).ok(),
                    Read::Junk(_) | Read::Skip | Read::Refuse(_) => None,
                };
            }
            Ok(event)
        }
        Err(e) if e.to_string().contains("exceeded the maximum size") => match &id {
            Some(id) => {
                replies.answered(id);
                let error: RxJsonRpcMessage<RoleClient> = JsonRpcMessage::error(
                    ErrorData::new(
                        ErrorCode(TOO_LARGE_CODE),
                        format!(
                            "it sent a message larger than {} MiB (one event of its event stream), so pipewright stopped reading it; raise the limit with PIPEWRIGHT_MAX_MESSAGE_MB=N",
                            replies.limits.max_message_bytes() / (1024 * 1024)
                        ),
                        Some(serde_json::json!({ TOO_LARGE_KEY: true })),
                    ),
                    Some(id.clone()),
                );
                Ok(sse_stream::Sse {
                    data: serde_json::to_string(&error).ok(),
                    ..Default::default()
                })
            }
            None => Err(e),
        },
        // An event whose bytes are not UTF-8 cannot be read: an error for
        // the call it answers, not a stream that seems cut short.
        Err(sse_stream::Error::Utf8Parse(bad)) => match &id {
            Some(id) => {
                replies.answered(id);
                let what = format!(
                    "an event of its event stream is not UTF-8 ({} bytes of it are)",
                    bad.valid_up_to()
                );
                Ok(sse_stream::Sse {
                    data: serde_json::to_string(&error_for(id.clone(), &what, bad.valid_up_to(), &[]))
                        .ok(),
                    ..Default::default()
                })
            }
            None => Err(sse_stream::Error::Utf8Parse(bad)),
        },
        Err(e) => Err(e),
    });
    StreamableHttpPostResponse::Sse(events.boxed(), session)
}

/// The error code and data key of a stand-in error for an event over the
/// size limit.
pub(crate) const TOO_LARGE_CODE: i32 = -32001;
pub(crate) const TOO_LARGE_KEY: &str = "pipewright/too_large_mb";

/// True when `data` is the stand-in error for an event over the limit.
pub(crate) fn too_large(code: i32, data: Option<&Value>) -> bool {
    code == TOO_LARGE_CODE && data.and_then(|d| d.get(TOO_LARGE_KEY)).is_some()
}

/// What an unreadable answer's stand-in error says: `(sentence, what
/// arrived)`, when `data` is one.
pub(crate) fn unreadable_detail(
    code: i32,
    message: &str,
    data: Option<&Value>,
) -> Option<(String, Value)> {
    let detail = data?.get(UNREADABLE_KEY)?;
    (code == UNREADABLE_CODE).then(|| (message.to_owned(), detail.clone()))
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequest, CallToolRequestParams};

    use super::*;

    fn waiting(id: i64) -> Replies {
        let replies = Replies::default();
        let request =
            ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("t")));
        replies.sent(&JsonRpcMessage::request(
            request,
            NumberOrString::Number(id),
        ));
        replies
    }

    fn error_of(read: Read) -> (RequestId, ErrorData) {
        match read {
            Read::Message(m) => match *m {
                JsonRpcMessage::Error(e) => (e.id.expect("an id"), e.error),
                other => panic!("not an error: {other:?}"),
            },
            _ => panic!("no message"),
        }
    }

    #[test]
    fn a_tool_answer_is_kept_as_its_text_and_rmcp_gets_a_stand_in() {
        let replies = waiting(3);
        let line = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}"#;
        let Read::Message(m) = read(line.as_bytes().to_vec(), &replies) else {
            panic!("a message")
        };
        let JsonRpcMessage::Response(r) = *m else {
            panic!("a response")
        };
        assert!(is_stand_in(&r.result));
        let kept = replies.take(&NumberOrString::Number(3)).expect("kept");
        assert_eq!(
            kept.as_text(),
            Some(r#"{"content":[{"type":"text","text":"hi"}]}"#)
        );
        assert!(replies.take(&NumberOrString::Number(3)).is_none());
    }

    /// rmcp's tool type drops `execution`: the answer to a `tools/list`
    /// is read for it first (and still goes to rmcp); a later list that
    /// says nothing of a tool forgets what the earlier one said.
    #[test]
    fn a_tool_lists_task_support_is_read_before_rmcp_sees_it() {
        use rmcp::model::ListToolsRequest;
        let replies = Replies::default();
        let list = |id: i64, line: &str| {
            replies.sent(&JsonRpcMessage::request(
                ClientRequest::ListToolsRequest(ListToolsRequest::default()),
                NumberOrString::Number(id),
            ));
            let Read::Message(m) = read(line.as_bytes().to_vec(), &replies) else {
                panic!("a message")
            };
            assert!(matches!(*m, JsonRpcMessage::Response(_)), "{m:?}");
        };
        list(
            1,
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[
                {"name":"a","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}},
                {"name":"b","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}},
                {"name":"c","inputSchema":{"type":"object"},"execution":{"taskSupport":"forbidden"}},
                {"name":"d","inputSchema":{"type":"object"},"execution":{"taskSupport":"sometimes"}}]}}"#,
        );
        let said = |t: &str| replies.task_support(t);
        assert_eq!(
            [said("a"), said("b"), said("c"), said("d")],
            [Some("required"), Some("optional"), Some("forbidden"), None]
        );
        list(
            2,
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}"#,
        );
        assert_eq!(said("a"), None);
        // An answer to anything else is not read as a tool list.
        let other = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b","execution":{"taskSupport":"required"}}]}}"#;
        let _ = read(other.as_bytes().to_vec(), &replies);
        assert_eq!(said("b"), Some("optional"));
    }

    #[test]
    fn an_answer_nobody_asked_for_as_a_tool_call_goes_to_rmcp() {
        let replies = Replies::default();
        let line = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#;
        let Read::Message(m) = read(line.as_bytes().to_vec(), &replies) else {
            panic!("a message")
        };
        assert!(matches!(*m, JsonRpcMessage::Response(_)));
    }

    #[test]
    fn unreadable_answers_become_errors_for_their_request() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":4,"result":{{"content":[],"structuredContent":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}}".to_vec(),
                "byte 0xff is not UTF-8",
            ),
            (
                br#"{"jsonrpc":"2.0","id":4,"result":{"structuredContent":{"score":NaN}}}"#.to_vec(),
                "expected value",
            ),
            (deep.into_bytes(), "nested more than 127 levels"),
            (
                br#"{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"unterminated}"#.to_vec(),
                "EOF",
            ),
        ];
        for (bytes, said) in cases {
            let replies = waiting(4);
            let (id, error) = error_of(read(bytes.clone(), &replies));
            assert_eq!(id, NumberOrString::Number(4));
            assert_eq!(error.code.0, UNREADABLE_CODE);
            assert!(
                error.message.contains(said),
                "{}: {}",
                String::from_utf8_lossy(&bytes),
                error.message
            );
            let (_, detail) =
                unreadable_detail(error.code.0, &error.message, error.data.as_ref()).expect("ours");
            assert!(detail["received"].as_str().is_some_and(|r| !r.is_empty()));
        }
    }

    #[test]
    fn stray_output_and_unknown_notifications_are_not_messages() {
        let replies = Replies::default();
        assert!(matches!(
            read(b"Listening on :3000".to_vec(), &replies),
            Read::Junk(_)
        ));
        assert!(matches!(read(b"   ".to_vec(), &replies), Read::Skip));
        // A notification of a kind rmcp does not know is its to ignore.
        assert!(matches!(
            read(
                br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"x":1}}"#.to_vec(),
                &replies
            ),
            Read::Message(_)
        ));
        // A broken message with no id to answer is noted like stray output.
        assert!(matches!(
            read(
                br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":NaN}}"#
                    .to_vec(),
                &replies
            ),
            Read::Junk(_)
        ));
    }
}
