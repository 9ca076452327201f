//! The worker's HTTP/2 server for Restate: the SDK's endpoint behind an
//! accept loop whose sockets send small frames at once (TCP_NODELAY). The
//! SDK's own server leaves Nagle's algorithm on, and a run's last journal
//! frames then wait for the peer's delayed acknowledgement: about 40 ms a
//! run, measured with `cargo bench --bench durable`.

use std::future::Future;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo};
use restate_sdk::endpoint::Endpoint;
use restate_sdk::hyper::HyperEndpoint;
use tokio::net::TcpListener;

/// Serves `endpoint` on `listener` until `stop` resolves, then gives open
/// connections up to 10 s to finish.
pub async fn serve(listener: TcpListener, endpoint: Endpoint, stop: impl Future<Output = ()>) {
    let endpoint = HyperEndpoint::new(endpoint);
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
                let conn = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), endpoint.clone());
                let conn = graceful.watch(conn);
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!("a connection from Restate ended: {e}");
                    }
                });
            }
            () = &mut stop => break,
        }
    }
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(10)) => {}
    }
}
