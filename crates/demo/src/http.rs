//! The Streamable HTTP server settings every pipewright MCP server shares:
//! `serve --http` and `demo-server --http` both serve rmcp's Streamable
//! HTTP service with [`http_config`], so what one accepts (sessions,
//! `Origin`, `Host`, the 2026-07-28 headers) the other accepts too.

use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use tokio_util::sync::CancellationToken;

/// Origins a browser may call a pipewright server from: pages served from
/// loopback, on any port. A page elsewhere (DNS rebinding, a site the user
/// has open) is refused 403; clients that send no `Origin` are not browsers
/// and pass.
const LOOPBACK_ORIGINS: &[&str] = &[
    "http://127.0.0.1:*",
    "http://localhost:*",
    "http://[::1]:*",
    "https://127.0.0.1:*",
    "https://localhost:*",
    "https://[::1]:*",
];

/// rmcp's Streamable HTTP settings: `Origin` checked always, `Host` checked
/// (loopback names only) unless a bearer token guards the server
/// (`token`), which then answers on whatever name the network reaches it
/// by. `cancel` ends every session.
pub fn http_config(cancel: CancellationToken, token: bool) -> StreamableHttpServerConfig {
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel)
        .with_allowed_origins(LOOPBACK_ORIGINS.iter().copied())
        .enforce_origin_validation();
    if token {
        config.disable_allowed_hosts()
    } else {
        config
    }
}

/// Sends each answer's bytes at once (`TCP_NODELAY`) on an accepted
/// connection. With Nagle's algorithm on, a small answer written in two
/// pieces waits for the client's delayed ACK, about 40 ms per call for a
/// client that does not answer at once (the official TypeScript SDK's);
/// every pipewright HTTP listener taps its accepted sockets with this.
pub fn no_delay(tcp: &mut tokio::net::TcpStream) {
    // A socket that refuses the option still serves, only slower.
    let _ = tcp.set_nodelay(true);
}
