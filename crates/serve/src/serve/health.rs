//! What a load balancer or an orchestrator asks `serve --http`, off the
//! MCP path (no `Origin` or `Host` check, no bearer token, no session):
//! `GET /healthz` (the process answers) and `GET /readyz` (200 while it
//! takes new sessions and calls, 503 from the moment it is told to stop;
//! its body says how many sessions are open, the limit, the idle time and
//! the calls in flight).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use serde_json::Value;

use super::limits::Limits;

/// The two routes, over the server's session limits.
pub fn routes(limits: Arc<Limits>) -> axum::Router {
    axum::Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(limits)
}

async fn ready(State(limits): State<Arc<Limits>>) -> (StatusCode, Json<Value>) {
    let status = if limits.draining() {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    (status, Json(limits.status().await))
}
