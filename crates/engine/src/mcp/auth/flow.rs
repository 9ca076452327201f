//! One login, end to end: ask the server for its challenge, discover the
//! protected resource and authorization server metadata (or, for a
//! 2025-03-26 server that refuses without publishing any, its origin's
//! `/authorize`, `/token` and `/register`), identify pipewright (a given
//! client id, a Client ID Metadata Document URL, or dynamic registration),
//! send the browser to the authorization endpoint with a PKCE S256
//! challenge, `state` and `resource`, take the code at the loopback
//! listener, and trade it for tokens, which go to the store. Discovery,
//! registration, PKCE and the token requests are rmcp's
//! `AuthorizationManager`; the listener, the store and the refresh policy
//! are pipewright's.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, CredentialStore,
    InMemoryCredentialStore, InMemoryStateStore, OAuthClientConfig,
};

use super::browser;
use super::dpop::{DpopKey, key_for_login, token_manager};
use super::error::OAuthError;
pub(crate) use super::error::deepest;
use super::loopback::Listener;
use super::store::{TokenRecord, TokenStore, canonical_url};
use super::tls::ensure_tls;
use crate::file::model::DpopMode;

/// The `client_name` pipewright registers under.
const CLIENT_NAME: &str = "pipewright";
/// Limit on each request of the login other than the wait for the user.
pub(crate) const REQUEST_WAIT: Duration = Duration::from_secs(30);

/// Whether a login opens the authorization URL in a browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Browser {
    /// Do not: the URL is only shown.
    Skip,
    /// Try `$BROWSER`, else `xdg-open` / `open` / `start`; the URL is shown
    /// anyway.
    Try,
    /// Open one or fail with [`OAuthError::NoBrowser`] (nothing is shown).
    Require,
}

/// How to log in.
#[derive(Clone)]
pub struct LoginOptions {
    /// A client id registered out of band; without one pipewright uses
    /// `client_id_url` or registers itself (RFC 7591).
    pub client_id: Option<String>,
    /// The secret of `client_id`, for a confidential client.
    pub client_secret: Option<String>,
    /// The client (id, secret) of an earlier login, used where the
    /// authorization server cannot register a new one; elsewhere
    /// pipewright registers afresh (a registered loopback redirect URI
    /// holds the earlier login's port, which strict servers compare).
    pub known_client: Option<(String, Option<String>)>,
    /// The https URL of a Client ID Metadata Document, used as the client
    /// id where the authorization server supports them.
    pub client_id_url: Option<String>,
    /// Scopes to ask for; empty: what the server's challenge or metadata
    /// names.
    pub scopes: Vec<String>,
    /// The server's `WWW-Authenticate` challenge, when a request already
    /// got one (no probe is then made).
    pub challenge: Option<String>,
    /// Whether to open the authorization URL in a browser.
    pub browser: Browser,
    /// `$BROWSER`, as the driver's environment gives it: the commands that
    /// open the URL (`None`: the system's opener).
    pub browser_command: Option<String>,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
    /// Whether the tokens are bound to a proof key (DPoP).
    pub dpop: DpopMode,
}

impl Default for LoginOptions {
    /// Dynamic registration, the server's scopes, a browser, five minutes.
    fn default() -> Self {
        Self {
            client_id: None,
            client_secret: None,
            known_client: None,
            client_id_url: None,
            scopes: Vec::new(),
            challenge: None,
            browser: Browser::Try,
            browser_command: None,
            timeout: Duration::from_secs(300),
            dpop: DpopMode::Auto,
        }
    }
}

impl std::fmt::Debug for LoginOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginOptions")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("client_id_url", &self.client_id_url)
            .field("scopes", &self.scopes)
            .field("browser", &self.browser)
            .field("browser_command", &self.browser_command)
            .field("timeout", &self.timeout)
            .field("dpop", &self.dpop)
            .finish()
    }
}

/// The authorization server of the server at `canonical`, found from
/// `challenge` (or a probe's), its protected resource metadata or its
/// origin's authorization server metadata. A server that refused a
/// request (HTTP 401) but publishes no metadata gets the 2025-03-26
/// defaults: `/authorize`, `/token` and `/register` at its origin.
pub(crate) async fn discover(
    canonical: &str,
    challenge: Option<String>,
) -> Result<(AuthorizationManager, AuthorizationMetadata), OAuthError> {
    ensure_tls();
    let discovery = |e: AuthError| OAuthError::Discovery {
        url: canonical.to_owned(),
        reason: e.to_string(),
    };
    let (refused, challenge) = match challenge {
        Some(c) => (true, Some(c)),
        None => probe(canonical).await?,
    };
    let mut manager = AuthorizationManager::new_allowing_private_addresses(canonical)
        .await
        .map_err(discovery)?;
    let metadata = match manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
    {
        Ok(resolution) if !resolution.source.is_discovered() && !refused => {
            return Err(OAuthError::NoMetadata {
                url: canonical.to_owned(),
            });
        }
        Ok(resolution) => resolution.metadata,
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) if same_origin_issuer(canonical, &expected_issuer, &received_issuer) => {
            legacy_metadata(canonical).await?
        }
        Err(e) => return Err(discovery(e)),
    };
    manager.set_metadata(metadata.clone());
    Ok((manager, metadata))
}

/// True when a server without protected resource metadata (the 2025-03-26
/// layout, where the MCP server is its own authorization server) serves
/// authorization server metadata at its origin whose issuer differs from
/// the origin only by its path. RFC 8414 wants them equal; such servers
/// exist, and an issuer at the server's own origin names no other party.
fn same_origin_issuer(canonical: &str, expected: &str, received: &str) -> bool {
    let origin = |u: &str| reqwest::Url::parse(u).ok().map(|u| u.origin());
    let root =
        |u: &str| reqwest::Url::parse(u).is_ok_and(|u| u.path() == "/" || u.path().is_empty());
    origin(canonical).is_some()
        && origin(canonical) == origin(expected)
        && origin(canonical) == origin(received)
        && root(expected)
}

/// The authorization server metadata at the origin of `canonical`, taken
/// as is (see [`same_origin_issuer`]).
async fn legacy_metadata(canonical: &str) -> Result<AuthorizationMetadata, OAuthError> {
    let failed = |reason: String| OAuthError::Discovery {
        url: canonical.to_owned(),
        reason,
    };
    let mut url = reqwest::Url::parse(canonical).map_err(|e| failed(e.to_string()))?;
    url.set_path("/.well-known/oauth-authorization-server");
    url.set_query(None);
    let client = reqwest::Client::builder()
        .timeout(REQUEST_WAIT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| failed(e.to_string()))?;
    let response = client
        .get(url.clone())
        .send()
        .await
        .map_err(|e| failed(format!("{url}: {}", deepest(&e))))?;
    if !response.status().is_success() {
        return Err(failed(format!(
            "{url} answered HTTP {}",
            response.status().as_u16()
        )));
    }
    response.json::<AuthorizationMetadata>().await.map_err(|e| {
        failed(format!(
            "{url} is not authorization server metadata: {}",
            deepest(&e)
        ))
    })
}

/// True when the authorization server accepts URLs of Client ID Metadata
/// Documents as client ids.
fn supports_cimd(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// Logs in to the MCP server at `url` and keeps the tokens in `store`.
/// `show_url` is given the authorization URL once, before the wait (the
/// CLI prints it); the record returned holds the tokens, so show only what
/// [`super::Status`] shows.
pub async fn login(
    url: &str,
    store: &TokenStore,
    opts: &LoginOptions,
    show_url: &(dyn Fn(&str) + Send + Sync),
) -> Result<TokenRecord, OAuthError> {
    let canonical = canonical_url(url)?;
    let discovery = |e: AuthError| OAuthError::Discovery {
        url: canonical.clone(),
        reason: e.to_string(),
    };
    let (mut manager, metadata) = discover(&canonical, opts.challenge.clone()).await?;
    let key = key_for_login(opts.dpop, &metadata, opts.challenge.as_deref())?;
    let credentials = InMemoryCredentialStore::new();
    manager.set_credential_store(credentials.clone());
    let states = InMemoryStateStore::new();
    manager.set_state_store(states.clone());

    let listener = Listener::bind().await?;
    let redirect_uri = listener.redirect_uri().to_owned();
    let scopes = if opts.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        opts.scopes.clone()
    };
    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let cimd = opts
        .client_id_url
        .clone()
        .filter(|_| opts.client_id.is_none() && supports_cimd(&metadata));
    // A client known from an earlier login, where no other way is open.
    let known = opts.known_client.clone().filter(|_| {
        opts.client_id.is_none() && cimd.is_none() && metadata.registration_endpoint.is_none()
    });
    let given = match (&opts.client_id, &known) {
        (Some(id), _) => Some((id.clone(), opts.client_secret.clone())),
        (None, Some((id, secret))) => Some((id.clone(), secret.clone())),
        (None, None) => cimd.map(|url| (url, None)),
    };
    let client_secret = match given {
        Some((id, secret)) => {
            let mut config =
                OAuthClientConfig::new(id, redirect_uri.clone()).with_scopes(scopes.clone());
            if let Some(secret) = &secret {
                config = config.with_client_secret(secret.clone());
            }
            manager
                .configure_client(config)
                .map_err(|e| OAuthError::Registration {
                    reason: e.to_string(),
                })?;
            secret
        }
        None if metadata.registration_endpoint.is_none() => {
            return Err(OAuthError::NoRegistration {
                issuer: metadata
                    .issuer
                    .clone()
                    .unwrap_or_else(|| metadata.authorization_endpoint.clone()),
            });
        }
        None => {
            let registered = tokio::time::timeout(
                REQUEST_WAIT,
                manager.register_client(CLIENT_NAME, &redirect_uri, &scope_refs),
            )
            .await
            .map_err(|_| OAuthError::Registration {
                reason: "no answer within 30 s".to_owned(),
            })?
            .map_err(|e| OAuthError::Registration {
                reason: e.to_string(),
            })?;
            registered.client_secret
        }
    };
    let client_id = manager
        .get_credentials()
        .await
        .map_err(|e| OAuthError::Registration {
            reason: e.to_string(),
        })?
        .0;

    let authorize_url = manager
        .get_authorization_url(&scope_refs)
        .await
        .map_err(discovery)?;
    let state = query_param(&authorize_url, "state").unwrap_or_default();
    let resource = query_param(&authorize_url, "resource").unwrap_or_else(|| canonical.clone());
    show_url(&authorize_url);
    // The browser runs while the listener waits: an opener that follows
    // the redirect itself (`BROWSER="curl -sL"`) needs the listener.
    let opener = match opts.browser {
        Browser::Skip => None,
        Browser::Try | Browser::Require => {
            browser::spawn(&authorize_url, opts.browser_command.as_deref())
        }
    };
    let require = opts.browser == Browser::Require;
    if require && opener.is_none() {
        return Err(OAuthError::NoBrowser);
    }
    let opener = if require {
        opener
    } else {
        // Reaped in the background so it does not linger as a zombie.
        if let Some(mut child) = opener {
            tokio::spawn(async move { child.wait().await });
        }
        None
    };
    let callback = tokio::select! {
        waited = tokio::time::timeout(opts.timeout, listener.wait(&state)) => waited
            .map_err(|_| OAuthError::TimedOut {
                secs: opts.timeout.as_secs(),
            })??,
        () = browser::failure(opener), if require => return Err(OAuthError::NoBrowser),
    };
    drop(listener);

    let proving = match &key {
        Some(key) => Some(
            proving_manager(
                key,
                &resource,
                &metadata,
                (&client_id, client_secret.as_deref(), &redirect_uri),
                (&scopes, states, credentials.clone()),
            )
            .await?,
        ),
        None => None,
    };
    tokio::time::timeout(
        REQUEST_WAIT,
        proving
            .as_ref()
            .unwrap_or(&manager)
            .exchange_code_for_token_with_issuer(&callback.code, &state, callback.iss.as_deref()),
    )
    .await
    .map_err(|_| OAuthError::Token {
        reason: "no answer within 30 s".to_owned(),
    })?
    .map_err(|e| OAuthError::Token {
        reason: e.to_string(),
    })?;
    let mut credentials =
        credentials
            .load()
            .await
            .ok()
            .flatten()
            .ok_or_else(|| OAuthError::Token {
                reason: "the token response was not kept".to_owned(),
            })?;
    if credentials.granted_scopes.is_empty() {
        credentials.granted_scopes = scopes;
    }
    let record = TokenRecord {
        server_url: canonical,
        resource,
        metadata,
        client_id,
        client_secret,
        redirect_uri,
        credentials,
        client_credentials: false,
        dpop: key,
    };
    store.save(&record)?;
    Ok(record)
}

/// The manager that makes a DPoP-bound login's token request: the login's
/// client (id, secret, redirect URI), scopes, authorization state and
/// credential store, with a proof on each request.
async fn proving_manager(
    key: &DpopKey,
    resource: &str,
    metadata: &AuthorizationMetadata,
    (client_id, client_secret, redirect_uri): (&str, Option<&str>, &str),
    (scopes, states, credentials): (&[String], InMemoryStateStore, InMemoryCredentialStore),
) -> Result<AuthorizationManager, OAuthError> {
    let failed = |e: AuthError| OAuthError::Token {
        reason: e.to_string(),
    };
    let mut manager = token_manager(resource, Some(key)).await.map_err(failed)?;
    manager.set_metadata(metadata.clone());
    let mut config = OAuthClientConfig::new(client_id, redirect_uri).with_scopes(scopes.to_vec());
    if let Some(secret) = client_secret {
        config = config.with_client_secret(secret);
    }
    manager.configure_client(config).map_err(failed)?;
    manager.set_state_store(states);
    manager.set_credential_store(credentials);
    Ok(manager)
}

/// The decoded query parameter `name` of `url`.
fn query_param(url: &str, name: &str) -> Option<String> {
    reqwest::Url::parse(url).ok().and_then(|u| {
        u.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    })
}

/// An unauthenticated request to the server, for its `WWW-Authenticate`
/// challenge (which names the protected resource metadata): whether it
/// refused (HTTP 401), and the challenge. A server that does not answer
/// 401 gives no challenge; discovery then tries the well-known URLs.
async fn probe(url: &str) -> Result<(bool, Option<String>), OAuthError> {
    let client = reqwest::Client::builder()
        .timeout(REQUEST_WAIT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| OAuthError::Unreachable {
            url: url.to_owned(),
            reason: e.to_string(),
        })?;
    let ping = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "ping"});
    let response = client
        .post(url)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .json(&ping)
        .send()
        .await
        .map_err(|e| OAuthError::Unreachable {
            url: url.to_owned(),
            reason: deepest(&e),
        })?;
    if response.status() != reqwest::StatusCode::UNAUTHORIZED {
        return Ok((false, None));
    }
    Ok((
        true,
        response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::transport::auth::{
        AuthorizationMetadata, InMemoryStateStore, StateStore, WWWAuthenticateParams,
    };
    use sha2::{Digest, Sha256};

    /// Base64url without padding (RFC 7636 appendix A).
    fn base64url(bytes: &[u8]) -> String {
        crate::mcp::auth::encode::base64(bytes, true)
    }

    fn metadata() -> AuthorizationMetadata {
        serde_json::from_value(serde_json::json!({
            "issuer": "http://127.0.0.1:9",
            "authorization_endpoint": "http://127.0.0.1:9/authorize",
            "token_endpoint": "http://127.0.0.1:9/token",
            "registration_endpoint": "http://127.0.0.1:9/register",
            "code_challenge_methods_supported": ["S256"],
            "revocation_endpoint": "http://127.0.0.1:9/revoke",
        }))
        .expect("metadata")
    }

    #[test]
    fn metadata_keeps_the_fields_a_refresh_and_a_logout_need() {
        let m = metadata();
        assert_eq!(m.token_endpoint, "http://127.0.0.1:9/token");
        assert_eq!(m.issuer.as_deref(), Some("http://127.0.0.1:9"));
        assert_eq!(
            m.additional_fields["revocation_endpoint"],
            "http://127.0.0.1:9/revoke"
        );
        let round: AuthorizationMetadata =
            serde_json::from_value(serde_json::to_value(&m).expect("json")).expect("back");
        assert_eq!(round.registration_endpoint, m.registration_endpoint);
    }

    #[test]
    fn the_challenge_names_the_resource_metadata() {
        let base = reqwest::Url::parse("http://127.0.0.1:9/mcp").expect("url");
        let params = WWWAuthenticateParams::parse(
            r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="mcp""#,
            &base,
        );
        assert_eq!(
            params
                .resource_metadata_url
                .as_ref()
                .map(|u| u.to_string())
                .as_deref(),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(params.scope.as_deref(), Some("mcp"));
        assert!(params.is_invalid_token());
    }

    #[test]
    fn the_base64url_helper_matches_rfc_7636() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(
            base64url(&Sha256::digest(verifier.as_bytes())),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[tokio::test]
    async fn the_authorization_url_carries_an_s256_challenge_state_and_resource() {
        ensure_tls();
        let mut manager =
            AuthorizationManager::new_allowing_private_addresses("http://127.0.0.1:9/mcp")
                .await
                .expect("manager");
        let states = InMemoryStateStore::new();
        manager.set_state_store(states.clone());
        manager.set_metadata(metadata());
        manager
            .configure_client(OAuthClientConfig::new("c1", "http://127.0.0.1:5/callback"))
            .expect("client");
        let url = manager
            .get_authorization_url(&["mcp"])
            .await
            .expect("authorization URL");
        let param = |name| query_param(&url, name);
        assert!(url.starts_with("http://127.0.0.1:9/authorize?"), "{url}");
        assert_eq!(param("response_type").as_deref(), Some("code"));
        assert_eq!(param("client_id").as_deref(), Some("c1"));
        assert_eq!(param("code_challenge_method").as_deref(), Some("S256"));
        assert_eq!(param("resource").as_deref(), Some("http://127.0.0.1:9/mcp"));
        assert_eq!(
            param("redirect_uri").as_deref(),
            Some("http://127.0.0.1:5/callback")
        );
        assert_eq!(param("scope").as_deref(), Some("mcp"));
        let state = param("state").expect("state");
        assert!(state.len() >= 16, "{state}");
        let kept = states
            .load(&state)
            .await
            .expect("state store")
            .expect("the verifier is kept under the state");
        assert!((43..=128).contains(&kept.pkce_verifier.len()));
        assert_eq!(
            param("code_challenge"),
            Some(base64url(&Sha256::digest(kept.pkce_verifier.as_bytes())))
        );
        let again = manager
            .get_authorization_url(&["mcp"])
            .await
            .expect("another URL");
        assert_ne!(
            query_param(&again, "state"),
            Some(state),
            "a fresh state each time"
        );
    }
}
