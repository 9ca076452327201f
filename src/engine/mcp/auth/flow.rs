//! One login, end to end: ask the server for its challenge, discover the
//! protected resource and authorization server metadata, register (or use a
//! given client id), send the browser to the authorization endpoint with a
//! PKCE S256 challenge, `state` and `resource`, take the code at the
//! loopback listener, and trade it for tokens, which go to the store.
//! Discovery, registration, PKCE and the token requests are rmcp's
//! `AuthorizationManager`; the listener, the store and the refresh policy
//! are pipewright's.

use std::time::Duration;

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, CredentialStore, InMemoryCredentialStore, OAuthClientConfig,
};

use super::bearer::ensure_tls;
use super::error::OAuthError;
use super::loopback::Listener;
use super::store::{TokenRecord, TokenStore, canonical_url};

/// The `client_name` pipewright registers under.
const CLIENT_NAME: &str = "pipewright";
/// Limit on each request of the login other than the wait for the user.
const REQUEST_WAIT: Duration = Duration::from_secs(30);

/// Whether a login opens the authorization URL in a browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Browser {
    /// Do not: the URL is only shown.
    Skip,
    /// Try `xdg-open` / `open` / `start`; the URL is shown anyway.
    Try,
    /// Open one or fail with [`OAuthError::NoBrowser`] (nothing is shown).
    Require,
}

/// How to log in.
#[derive(Clone)]
pub struct LoginOptions {
    /// A client id registered out of band; without one pipewright registers
    /// itself (RFC 7591).
    pub client_id: Option<String>,
    /// The secret of `client_id`, for a confidential client.
    pub client_secret: Option<String>,
    /// Scopes to ask for; empty: what the server's challenge or metadata
    /// names.
    pub scopes: Vec<String>,
    /// Whether to open the authorization URL in a browser.
    pub browser: Browser,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
}

impl Default for LoginOptions {
    /// Dynamic registration, the server's scopes, a browser, five minutes.
    fn default() -> Self {
        Self {
            client_id: None,
            client_secret: None,
            scopes: Vec::new(),
            browser: Browser::Try,
            timeout: Duration::from_secs(300),
        }
    }
}

impl std::fmt::Debug for LoginOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginOptions")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("scopes", &self.scopes)
            .field("browser", &self.browser)
            .field("timeout", &self.timeout)
            .finish()
    }
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
    ensure_tls();
    let canonical = canonical_url(url)?;
    let discovery = |e: AuthError| OAuthError::Discovery {
        url: canonical.clone(),
        reason: e.to_string(),
    };
    let challenge = probe(&canonical).await?;
    let mut manager = AuthorizationManager::new_allowing_private_addresses(canonical.as_str())
        .await
        .map_err(discovery)?;
    let credentials = InMemoryCredentialStore::new();
    manager.set_credential_store(credentials.clone());
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(discovery)?;
    if !resolution.source.is_discovered() {
        return Err(OAuthError::NoMetadata { url: canonical });
    }
    let metadata = resolution.metadata;
    manager.set_metadata(metadata.clone());

    let listener = Listener::bind().await?;
    let redirect_uri = listener.redirect_uri().to_owned();
    let scopes = if opts.scopes.is_empty() {
        manager.select_initial_scopes(&[]).await
    } else {
        opts.scopes.clone()
    };
    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let client_secret = match &opts.client_id {
        Some(id) => {
            let mut config = OAuthClientConfig::new(id.clone(), redirect_uri.clone())
                .with_scopes(scopes.clone());
            if let Some(secret) = &opts.client_secret {
                config = config.with_client_secret(secret.clone());
            }
            manager
                .configure_client(config)
                .map_err(|e| OAuthError::Registration {
                    reason: e.to_string(),
                })?;
            opts.client_secret.clone()
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
    match opts.browser {
        Browser::Skip => {}
        Browser::Try => {
            open_browser(&authorize_url, false).await;
        }
        Browser::Require => {
            if !open_browser(&authorize_url, true).await {
                return Err(OAuthError::NoBrowser);
            }
        }
    }
    let callback = tokio::time::timeout(opts.timeout, listener.wait(&state))
        .await
        .map_err(|_| OAuthError::TimedOut {
            secs: opts.timeout.as_secs(),
        })??;
    drop(listener);

    tokio::time::timeout(
        REQUEST_WAIT,
        manager.exchange_code_for_token_with_issuer(
            &callback.code,
            &state,
            callback.iss.as_deref(),
        ),
    )
    .await
    .map_err(|_| OAuthError::Token {
        reason: "no answer within 30 s".to_owned(),
    })?
    .map_err(|e| OAuthError::Token {
        reason: e.to_string(),
    })?;
    let credentials = credentials
        .load()
        .await
        .ok()
        .flatten()
        .ok_or_else(|| OAuthError::Token {
            reason: "the token response was not kept".to_owned(),
        })?;
    let record = TokenRecord {
        server_url: canonical,
        resource,
        metadata,
        client_id,
        client_secret,
        redirect_uri,
        credentials,
    };
    store.save(&record)?;
    Ok(record)
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
/// challenge (which names the protected resource metadata). A server that
/// does not answer 401 gives no challenge; discovery then tries the
/// well-known URLs.
async fn probe(url: &str) -> Result<Option<String>, OAuthError> {
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
        return Ok(None);
    }
    Ok(response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned))
}

/// The innermost cause of an error ("Connection refused (os error 111)").
fn deepest(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// Opens `url` in the user's browser. With `confirm`, waits (up to 10 s)
/// for the opener and says whether it succeeded; else it is best effort and
/// true once the opener started.
async fn open_browser(url: &str, confirm: bool) -> bool {
    let opener: &[&str] = if cfg!(target_os = "macos") {
        &["open"]
    } else if cfg!(windows) {
        &["cmd", "/c", "start", ""]
    } else {
        &["xdg-open"]
    };
    let Some((program, args)) = opener.split_first() else {
        return false;
    };
    let spawned = tokio::process::Command::new(program)
        .args(args)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let Ok(mut child) = spawned else {
        return false;
    };
    if !confirm {
        // Reaped in the background so it does not linger as a zombie.
        tokio::spawn(async move { child.wait().await });
        return true;
    }
    matches!(
        tokio::time::timeout(Duration::from_secs(10), child.wait()).await,
        Ok(Ok(status)) if status.success()
    )
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
        const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
            for i in 0..=chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        out
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
