//! The worker's HTTP server: Restate's calls (HTTP/2) go to the SDK's
//! endpoint, and a balancer's or an orchestrator's `GET /healthz` and
//! `GET /readyz` (HTTP/1.1 or HTTP/2) are answered beside it. Its sockets
//! send small frames at once (TCP_NODELAY): the SDK's own server leaves
//! Nagle's algorithm on, and a run's last journal frames then wait for the
//! peer's delayed acknowledgement, about 40 ms a run, measured with
//! `cargo bench --bench durable`.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http_body_util::{Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::Service as _;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use restate_sdk::endpoint::{Endpoint, ResponseBody};
use restate_sdk::hyper::HyperEndpoint;
use serde_json::Value;
use tokio::net::TcpListener;

/// Whether the worker takes work, and what its `/readyz` body says.
pub type Readiness = Arc<dyn Fn() -> (bool, Value) + Send + Sync>;

type Body = Either<Full<Bytes>, ResponseBody>;

/// Serves `endpoint` on `listener` until `stop` resolves, then fails
/// `/readyz` and gives open connections up to 10 s to finish.
pub async fn serve(
    listener: TcpListener,
    endpoint: Endpoint,
    ready: Readiness,
    stop: impl Future<Output = ()>,
) {
    let endpoint = HyperEndpoint::new(endpoint);
    let stopping = Arc::new(AtomicBool::new(false));
    // One builder for the process; each connection borrows it.
    let builder: &'static _ = Box::leak(Box::new(hyper_util::server::conn::auto::Builder::new(
        TokioExecutor::new(),
    )));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of descriptors, say: try again shortly.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let (endpoint, ready, stopping) = (endpoint.clone(), ready.clone(), stopping.clone());
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let answer = route(&req, &ready, &stopping)
                        .map(|r| r.map(Either::Left))
                        .unwrap_or_else(|| endpoint.call(req).into_inner().unwrap_or_else(|e| match e {}).map(Either::Right));
                    std::future::ready(Ok::<Response<Body>, Infallible>(answer))
                });
                let conn = builder.serve_connection(TokioIo::new(stream), service);
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!("a connection to the worker ended: {e}");
                    }
                });
            }
            () = &mut stop => break,
        }
    }
    stopping.store(true, Ordering::SeqCst);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(10)) => {}
    }
}

/// The answer to `GET /healthz` or `GET /readyz`; `None` for Restate's
/// requests.
fn route(
    req: &Request<Incoming>,
    ready: &Readiness,
    stopping: &AtomicBool,
) -> Option<Response<Full<Bytes>>> {
    if req.method() != hyper::Method::GET {
        return None;
    }
    let (status, body) = match req.uri().path() {
        "/healthz" => (StatusCode::OK, "ok\n".to_owned()),
        "/readyz" => {
            let (mut ok, mut body) = ready();
            let stopping = stopping.load(Ordering::SeqCst);
            ok &= !stopping;
            body["draining"] = Value::Bool(stopping);
            body["ready"] = Value::Bool(ok);
            let status = if ok {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            (status, body.to_string())
        }
        _ => return None,
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    Some(response)
}
