//! The handshake of one connection, by the revision chosen for its server.
//! Under `auto`, `initialize` goes first: a server that answers it is
//! spoken to in the 2025 era, where its tools may ask mid-call (the
//! official SDKs' servers speak both eras and ask that way). A server that
//! refuses it speaks only 2026-07-28 and is asked `server/discover` next:
//! a stdio server on the same process (its transport comes back from the
//! refused handshake, see `lent`), an HTTP server with a new transport
//! (each 2026-07-28 request stands alone). Nothing is called before the
//! handshake settles, so nothing is repeated.

use rmcp::{
    RoleClient,
    service::{ClientInitializeError, RunningService},
    transport::{StreamableHttpClientTransport, Transport},
};

use super::auth::BearerClient;
use super::child::StdioChild;
use super::handler::Client;
use super::lent::Home;
use super::revision::{self, Protocol};

type Handshake = Result<RunningService<RoleClient, Client>, ClientInitializeError>;

/// The handshake with a stdio server under `protocol`; `client` makes the
/// client side afresh for a second handshake.
pub(super) async fn stdio(
    child: StdioChild,
    client: impl Fn() -> Client,
    protocol: Protocol,
) -> Handshake {
    if protocol != Protocol::Auto {
        return protocol.serve(client(), child).await;
    }
    let home = Home::default();
    match Protocol::V2025_11_25
        .serve(client(), home.lend(child))
        .await
    {
        Err(e) if revision::refused(&e) => match home.take() {
            Some(child) => second(client(), child, e).await,
            None => Err(e),
        },
        done => done,
    }
}

/// The handshake with an HTTP server under `protocol` over `transport`;
/// `again` makes a transport afresh for a second handshake.
pub(super) async fn http(
    transport: StreamableHttpClientTransport<BearerClient>,
    again: impl Fn() -> Option<StreamableHttpClientTransport<BearerClient>>,
    client: impl Fn() -> Client,
    protocol: Protocol,
) -> Handshake {
    if protocol != Protocol::Auto {
        return protocol.serve(client(), transport).await;
    }
    match Protocol::V2025_11_25.serve(client(), transport).await {
        Err(e) if revision::refused(&e) => match again() {
            Some(transport) => second(client(), transport, e).await,
            None => Err(e),
        },
        done => done,
    }
}

/// `server/discover` after `initialize` was refused with `refusal`.
async fn second<T>(client: Client, transport: T, refusal: ClientInitializeError) -> Handshake
where
    T: Transport<RoleClient> + 'static,
{
    Protocol::V2026_07_28
        .serve(client, transport)
        .await
        .map_err(|discover| revision::both_failed(refusal, discover))
}
