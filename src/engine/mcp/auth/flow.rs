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
    let param = |name: &str| {
        reqwest::Url::parse(&authorize_url).ok().and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        })
    };
    let state = param("state").unwrap_or_default();
    let resource = param("resource").unwrap_or_else(|| canonical.clone());
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
