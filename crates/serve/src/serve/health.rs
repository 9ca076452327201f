//! What a load balancer or an orchestrator asks `serve --http` and
//! `worker`, off the MCP path (no `Origin` or `Host` check, no bearer
//! token, no session): `GET /healthz` (the process answers) and
//! `GET /readyz` (200 while it takes new work: not stopping, every
//! upstream server connected, Restate's ingress reachable with `--on`; 503
//! otherwise, from the moment it is told to stop). Its body says why, with
//! the sessions, the limit, the idle time and the calls in flight.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use serde_json::{Value, json};

use super::limits::Limits;
use super::model::Upstream;

/// How long `/readyz` waits to reach Restate's ingress.
const REACH: Duration = Duration::from_secs(1);

/// What readiness looks at besides the session limits.
pub struct Watched {
    pub upstreams: Arc<Vec<Arc<Upstream>>>,
    /// `restate://HOST:PORT` with `--on`.
    pub restate: Option<String>,
}

/// The two routes, over the server's session limits and what it depends on.
pub fn routes(limits: Arc<Limits>, watched: Watched) -> axum::Router {
    axum::Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(ready))
        .with_state(Arc::new((limits, watched)))
}

async fn ready(State(state): State<Arc<(Arc<Limits>, Watched)>>) -> (StatusCode, Json<Value>) {
    let (limits, watched) = &*state;
    let mut body = limits.status().await;
    let (connected, upstreams) = upstreams(&watched.upstreams);
    body["upstreams"] = upstreams;
    let mut ready = !limits.draining() && connected;
    if let Some(on) = &watched.restate {
        let reached = reachable(on).await;
        body["restate"] = json!({ "on": on, "reachable": reached });
        ready &= reached;
    }
    body["ready"] = Value::Bool(ready);
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body))
}

/// Whether every upstream server's connection is open, and each by name.
pub fn upstreams(upstreams: &[Arc<Upstream>]) -> (bool, Value) {
    let mut all = true;
    let mut each = serde_json::Map::new();
    for up in upstreams {
        for c in up.pool.connections() {
            let open = !c.is_closed();
            all &= open;
            each.insert(c.name().to_owned(), Value::Bool(open));
        }
    }
    (all, Value::Object(each))
}

/// Whether a TCP connection to `restate://HOST:PORT` opens within [`REACH`].
async fn reachable(on: &str) -> bool {
    let Some(addr) = on.strip_prefix("restate://") else {
        return false;
    };
    let addr = addr.trim_end_matches('/');
    matches!(
        tokio::time::timeout(REACH, tokio::net::TcpStream::connect(addr)).await,
        Ok(Ok(_))
    )
}
