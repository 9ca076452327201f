//! The HTTP layer in front of rmcp for 2025-11-25 tasks: a pre-2026 client
//! (told by its `MCP-Protocol-Version` header) has its `tasks/*` requests,
//! a `tools/call` carrying `task` and `tools/list` renamed to
//! `pipewright/2025/…`, which rmcp hands to `on_custom_request` untouched
//! (`tasks_2025_11_25.rs` answers them).

use serde_json::Value;

/// The prefix of the renamed methods.
pub const PREFIX: &str = "pipewright/2025/";

/// The methods renamed for a pre-2026 client.
const RENAMED: &[&str] = &[
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "tools/list",
];

/// The HTTP layer: for a client on a revision before 2026-07-28, renames
/// the task methods (and a `tools/call` with `task`, and `tools/list`) in
/// the (size-limited) body before rmcp reads it.
pub async fn rename(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let legacy = req
        .headers()
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v < pipewright_engine::mcp::Protocol::V2026_07_28.name());
    if !legacy || req.method() != axum::http::Method::POST {
        return next.run(req).await;
    }
    let (mut parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return axum::response::IntoResponse::into_response((
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is too large (serve --max-body)\n",
        ));
    };
    let mut bytes = bytes.to_vec();
    if let Ok(Value::Object(mut msg)) = serde_json::from_slice::<Value>(&bytes)
        && let Some(method) = msg.get("method").and_then(Value::as_str)
    {
        let task_call = method == "tools/call"
            && msg
                .get("params")
                .is_some_and(|p| p.get("task").is_some_and(Value::is_object));
        if task_call || RENAMED.contains(&method) {
            let renamed = format!("{PREFIX}{method}");
            msg.insert("method".into(), Value::String(renamed));
            bytes = serde_json::to_vec(&Value::Object(msg)).unwrap_or(bytes);
            parts.headers.remove(axum::http::header::CONTENT_LENGTH);
        }
    }
    next.run(axum::extract::Request::from_parts(
        parts,
        axum::body::Body::from(bytes),
    ))
    .await
}
