//! What a load balancer or an orchestrator asks `serve --http`, off the
//! MCP path (no `Origin` or `Host` check, no bearer token, no session):
//! `GET /healthz` (the process answers) and `GET /readyz` (it takes new
//! sessions; its body says how many are open, the limit and the idle
//! time).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
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

async fn ready(State(limits): State<Arc<Limits>>) -> Json<Value> {
    let mut body = limits.status().await;
    body["ready"] = Value::Bool(true);
    Json(body)
}
