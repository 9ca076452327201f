//! Requests on the wire: listing tools page by page, the JSON of a call as
//! rmcp sends it, and the cancellation a dropped call owes the server.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, GetMeta,
    PaginatedRequestParams, ProgressToken, RequestId,
};
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::{Map, Value};

use super::error::{HumanDuration, chain_message};
use super::reply::Replies;
use super::tools::ToolInfo;

/// A server that pages `tools/list` more often than this is looping.
const MAX_TOOL_PAGES: usize = 1000;

/// Sends `notifications/cancelled` when a call's future is dropped while it
/// still waits for its answer.
pub(super) struct AbandonGuard {
    pub(super) peer: Peer<RoleClient>,
    pub(super) id: Option<RequestId>,
}

impl Drop for AbandonGuard {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let param = rmcp::model::CancelledNotificationParam::new(
                Some(id),
                Some("the caller stopped waiting".to_owned()),
            );
            let _ = peer.notify_cancelled(param).await;
        });
    }
}

#[derive(Debug, thiserror::Error)]
pub(super) enum ListError {
    #[error("{}", chain_message(.0))]
    Service(ServiceError),
    #[error("the server sent the cursor `{0}` twice")]
    RepeatedCursor(String),
    #[error("the server kept paging after {MAX_TOOL_PAGES} pages")]
    TooManyPages,
    #[error(
        "its tool list is larger than {} MiB ({tools} tools on {pages} pages so far), so pipewright stopped reading it; raise the limit with PIPEWRIGHT_MAX_TOOL_LIST_MB=N",
        .limit / (1024 * 1024)
    )]
    TooLarge {
        limit: usize,
        tools: usize,
        pages: usize,
    },
    #[error("no complete answer within {}", HumanDuration(*.0))]
    TooSlow(Duration),
}

/// How long the tool list as last read stays fresh: the `ttlMs` the server
/// gave with it (MCP 2026-07-28 cache hints). Past it, the list counts as
/// changed and is read again before the next call. No hint, or `0`, keeps
/// the list until the server says it changed (`list_changed`), as before
/// 2026-07-28; rmcp's own response cache honours the hint too.
#[derive(Default)]
pub(super) struct Freshness {
    stale_at: Mutex<Option<tokio::time::Instant>>,
}

impl Freshness {
    /// True once the list's time to live has passed.
    pub(super) fn expired(&self) -> bool {
        let stale_at = *self.stale_at.lock().unwrap_or_else(PoisonError::into_inner);
        stale_at.is_some_and(|at| tokio::time::Instant::now() >= at)
    }

    fn set(&self, ttl_ms: Option<u64>) {
        let stale_at = ttl_ms
            .filter(|ms| *ms > 0)
            // A server's `ttlMs` past the clock's end never expires.
            .and_then(|ms| tokio::time::Instant::now().checked_add(Duration::from_millis(ms)));
        *self.stale_at.lock().unwrap_or_else(PoisonError::into_inner) = stale_at;
    }
}

/// Every tool, following `nextCursor` until the server stops paging; the
/// shortest `ttlMs` of the pages goes to `fresh`. Each tool's
/// `execution.taskSupport`, which rmcp's tool type drops, comes back from
/// what `replies` read of the answers.
pub(super) async fn list_tools(
    peer: &Peer<RoleClient>,
    fresh: &Freshness,
    replies: &Replies,
) -> Result<Vec<ToolInfo>, ListError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    let mut ttl_ms: Option<u64> = None;
    let limit = replies.limits().max_tool_list_bytes();
    let mut bytes = 0usize;
    for pages in 1..=MAX_TOOL_PAGES {
        let page = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .map_err(ListError::Service)?;
        ttl_ms = match (ttl_ms, page.ttl_ms) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        for tool in &page.tools {
            let Ok(text) = serde_json::to_string(tool) else {
                continue;
            };
            bytes = bytes.saturating_add(text.len());
            if bytes > limit {
                return Err(ListError::TooLarge {
                    limit,
                    tools: tools.len(),
                    pages,
                });
            }
            let Ok(mut raw) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            if let (Some(word), Some(map)) = (replies.task_support(&tool.name), raw.as_object_mut())
            {
                map.insert("execution".into(), serde_json::json!({"taskSupport": word}));
            }
            if let Some(info) = ToolInfo::from_json(raw) {
                tools.push(info);
            }
        }
        match page.next_cursor {
            None => {
                fresh.set(ttl_ms);
                return Ok(tools);
            }
            Some(next) if !seen.insert(next.clone()) => {
                return Err(ListError::RepeatedCursor(next));
            }
            Some(next) => cursor = Some(next),
        }
    }
    Err(ListError::TooManyPages)
}

/// The start of `value` as compact JSON, for an error message.
pub(super) fn excerpt(value: &Value) -> String {
    const SHOWN: usize = 120;
    let text = value.to_string();
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// The request as rmcp puts it on the wire: same `_meta` merge, same
/// progress token.
pub(super) fn request_json(
    params: CallToolRequestParams,
    meta: Option<Map<String, Value>>,
    id: RequestId,
    progress_token: ProgressToken,
) -> Value {
    let mut request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    if let Some(meta) = meta {
        request.get_meta_mut().0.0.extend(meta);
    }
    request.get_meta_mut().set_progress_token(progress_token);
    let message = ClientJsonRpcMessage::request(request, id);
    serde_json::to_value(message).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_json_carries_meta_and_the_progress_token() {
        let mut args = Map::new();
        args.insert("message".into(), Value::from("hi"));
        let mut meta = Map::new();
        meta.insert("idempotencyKey".into(), Value::from("k1"));
        let json = request_json(
            CallToolRequestParams::new("echo").with_arguments(args),
            Some(meta),
            RequestId::Number(7),
            ProgressToken(rmcp::model::NumberOrString::Number(3)),
        );
        assert_eq!(json["jsonrpc"], "2.0");
        assert_eq!(json["id"], 7);
        assert_eq!(json["method"], "tools/call");
        assert_eq!(json["params"]["name"], "echo");
        assert_eq!(json["params"]["arguments"]["message"], "hi");
        assert_eq!(json["params"]["_meta"]["idempotencyKey"], "k1");
        assert_eq!(json["params"]["_meta"]["progressToken"], 3);
    }
}
