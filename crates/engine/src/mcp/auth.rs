//! OAuth 2.1 for Streamable HTTP servers, as the MCP authorization spec
//! describes it: [`login`] (discovery, registration, PKCE, loopback
//! redirect), a [`TokenStore`] in the data directory, and the
//! [`BearerClient`] every HTTP connection uses, which puts the stored token
//! on requests and refreshes it. When a server answers 401 and no token
//! helps, a connection on a terminal logs in and goes on; elsewhere it
//! fails with a sentence that says to run `pipewright auth login`.

mod addresses;
mod bearer;
mod browser;
mod credentials;
mod dpop;
pub mod encode;
mod error;
mod exchange;
mod flow;
mod jwt;
mod loopback;
mod prompt;
mod reauth;
mod store;
mod tls;
mod token_request;

use std::time::Duration;

use oauth2::TokenResponse;
use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

pub use crate::file::model::AuthConfig;
pub use bearer::BearerClient;
pub use credentials::client_credentials;
pub use dpop::DpopKey;
pub use error::OAuthError;
pub use exchange::assertion_grant;
pub use flow::{Browser, LoginOptions, login};
pub use prompt::{Logins, Prompt, Say};
pub use store::{TokenRecord, TokenStore, canonical_url};

use super::error::McpError;
use encode::form_encode;

/// What `auth status` shows of one server: never a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The server's canonical URL.
    pub server_url: String,
    /// True when an access or refresh token is stored.
    pub logged_in: bool,
    /// The authorization server's issuer.
    pub issuer: Option<String>,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// When the access token expires (Unix seconds), if the server said.
    pub expires_at: Option<u64>,
    /// True when a refresh token is stored.
    pub refreshable: bool,
    /// The client id pipewright logs in as.
    pub client_id: Option<String>,
    /// True when the access token is DPoP-bound (sent only with a proof
    /// of the login's key).
    pub dpop_bound: bool,
}

impl Status {
    /// The status shown for a stored record.
    pub fn of(record: &TokenRecord) -> Self {
        Self {
            server_url: record.server_url.clone(),
            logged_in: record.credentials.token_response.is_some(),
            issuer: record.issuer().map(str::to_owned),
            scopes: record.scopes().to_vec(),
            expires_at: record.expires_at(),
            refreshable: record.refreshable(),
            client_id: Some(record.client_id.clone()),
            dpop_bound: record.dpop_bound(),
        }
    }

    /// The status of a server with nothing stored.
    pub fn logged_out(server_url: &str) -> Self {
        Self {
            server_url: server_url.to_owned(),
            logged_in: false,
            issuer: None,
            scopes: Vec::new(),
            expires_at: None,
            refreshable: false,
            client_id: None,
            dpop_bound: false,
        }
    }
}

/// The login status of the server at `url`.
pub fn status(store: &TokenStore, url: &str) -> Result<Status, OAuthError> {
    let canonical = canonical_url(url)?;
    Ok(match store.load(&canonical)? {
        Some(record) => Status::of(&record),
        None => Status::logged_out(&canonical),
    })
}

/// What [`logout`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggedOut {
    /// Tokens were stored and are deleted.
    pub removed: bool,
    /// The authorization server accepted the revocation (RFC 7009).
    pub revoked: bool,
}

/// Deletes the stored tokens of the server at `url`, after asking the
/// authorization server to revoke the refresh token (or the access token)
/// when it advertises a revocation endpoint. Revocation is best effort: the
/// tokens are deleted either way.
pub async fn logout(store: &TokenStore, url: &str) -> Result<LoggedOut, OAuthError> {
    let canonical = canonical_url(url)?;
    let Some(record) = store.load(&canonical)? else {
        return Ok(LoggedOut {
            removed: store.remove(&canonical)?,
            revoked: false,
        });
    };
    let revoked = revoke(&record).await;
    Ok(LoggedOut {
        removed: store.remove(&canonical)?,
        revoked,
    })
}

/// Asks the authorization server to revoke the record's refresh token (it
/// takes its access tokens with it), else its access token.
async fn revoke(record: &TokenRecord) -> bool {
    let Some(endpoint) = record
        .metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(|v| v.as_str())
    else {
        return false;
    };
    let Some(response) = record.credentials.token_response.as_ref() else {
        return false;
    };
    let (token, hint) = match response.refresh_token() {
        Some(refresh) => (refresh.secret().as_str(), "refresh_token"),
        None => (response.access_token().secret().as_str(), "access_token"),
    };
    let mut form = vec![
        ("token", token),
        ("token_type_hint", hint),
        ("client_id", record.client_id.as_str()),
    ];
    if let Some(secret) = &record.client_secret {
        form.push(("client_secret", secret));
    }
    tls::ensure_tls();
    let Ok(client) = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
    else {
        return false;
    };
    let body: String = form
        .iter()
        .map(|(k, v)| format!("{k}={}", form_encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    client
        .post(endpoint)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(body)
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
}

/// True when a failed HTTP handshake was the server asking for
/// authorization (HTTP 401) that the stored tokens could not give.
pub(crate) fn wants_login(e: &ClientInitializeError) -> bool {
    let ClientInitializeError::TransportError { error, .. } = e else {
        return false;
    };
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(&*error.error);
    while let Some(e) = current {
        if let Some(StreamableHttpError::<reqwest::Error>::AuthRequired(_)) =
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return true;
        }
        current = e.source();
    }
    false
}

/// A connection to `server` at `url` was refused for want of a login: log
/// in as `logins` allows (or by the client-credentials grant, when the
/// server is set up for it), or say how to. `Ok` means tokens are stored
/// and the caller should connect afresh, once: the login took the user's
/// time, not the connect timeout's. A second refusal of a server these
/// `logins` logged in to is an error, never another login. `declared` is
/// the server's `auth:` block.
pub(crate) async fn login_for_connect(
    server: &str,
    url: &str,
    declared: Option<&AuthConfig>,
    logins: &Logins,
) -> Result<(), McpError> {
    let shown = canonical_url(url).unwrap_or_else(|_| url.to_owned());
    let failed = |reason: String| McpError::Connect {
        server: server.to_owned(),
        url: shown.clone(),
        reason,
    };
    let how = format!("run `pipewright auth login {shown}`");
    if logins.made(&shown) {
        return Err(failed(format!(
            "it refused the token of the login just made (HTTP 401); check the scopes, or {how}"
        )));
    }
    let store = logins.store().map_err(|e| failed(e.to_string()))?;
    let previous = store.load(&shown).ok().flatten();
    if !reauth::is_unattended(declared, previous.as_ref()) && logins.prompt() == Prompt::Never {
        return Err(failed(format!("it needs a login (HTTP 401): {how}")));
    }
    let login = reauth::reauthorize(
        server,
        url,
        &store,
        None,
        Vec::new(),
        previous.as_ref(),
        (declared, logins),
    );
    match login.await {
        Ok(_) => {
            logins.note(&shown);
            Ok(())
        }
        Err(e) => Err(failed(format!(
            "it needs a login, which failed: {e}; {how}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_auth_challenge_wants_a_login() {
        use rmcp::transport::{
            DynamicTransportError, StreamableHttpClientTransport,
            streamable_http_client::AuthRequiredError,
        };
        type Http = StreamableHttpClientTransport<BearerClient>;
        let failed =
            |error: StreamableHttpError<reqwest::Error>| ClientInitializeError::TransportError {
                error: DynamicTransportError::new::<Http, rmcp::RoleClient>(error),
                context: "send initialize request".into(),
            };
        let challenge = AuthRequiredError::new("Bearer".into());
        assert!(wants_login(&failed(StreamableHttpError::AuthRequired(
            challenge
        ))));
        assert!(!wants_login(&failed(
            StreamableHttpError::ServerDoesNotSupportSse
        )));
        assert!(!wants_login(&ClientInitializeError::ConnectionClosed(
            "closed".into()
        )));
    }

    #[test]
    fn a_server_with_nothing_stored_is_logged_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::new(dir.path());
        let shown = status(&store, "http://127.0.0.1:9/mcp/").expect("status");
        assert_eq!(shown, Status::logged_out("http://127.0.0.1:9/mcp"));
        assert!(matches!(
            status(&store, "ftp://x"),
            Err(OAuthError::BadUrl { .. })
        ));
    }
}
