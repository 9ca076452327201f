//! The HTTP client of a Streamable HTTP connection: rmcp's reqwest client
//! with the stored OAuth access token put on every request (a DPoP-bound
//! one as `Authorization: DPoP` with a fresh proof), refreshed before it
//! expires and once more when the server answers 401. The token lives
//! only here and in the token store: it never passes through a trace, a
//! cassette or an error.
//!
//! rmcp's own `AuthClient` is not used: it refreshes whenever less than 30 s
//! are left (every request, for short-lived tokens) and rebuilds its state
//! by discovery on each connection; here a refresh needs no discovery.

use std::{collections::HashMap, sync::Arc};

use futures::stream::BoxStream;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use rmcp::{
    model::ClientJsonRpcMessage,
    transport::{
        auth::{AuthError, CredentialStore, InMemoryCredentialStore, OAuthClientConfig},
        streamable_http_client::{
            SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
        },
    },
};
use sse_stream::Sse;
use tokio::sync::Mutex;

use super::super::reply::{Replies, watch_post};
use super::dpop::{self, DpopKey, Nonces, PROOF_HEADER, token_manager};
use super::error::OAuthError;
use super::prompt::Logins;
use super::reauth::{STEP_UP_LIMIT, is_unattended, reauthorize, union};
use super::store::{TokenRecord, TokenStore, canonical_url, now_secs};
use super::tls::ensure_tls;
use crate::file::model::AuthConfig;

type HttpError = StreamableHttpError<reqwest::Error>;
/// Headers a request gets besides the transport's own.
type Headers = HashMap<HeaderName, HeaderValue>;

/// A request, as its DPoP proof (and a nonce probe) needs it.
#[derive(Clone, Copy)]
struct Target<'a> {
    method: &'static str,
    uri: &'a str,
    session_id: Option<&'a str>,
    headers: &'a Headers,
}

/// A reqwest client that adds the server's stored OAuth token, if any.
/// Cloning is cheap; clones share the token.
#[derive(Clone)]
pub struct BearerClient {
    http: reqwest::Client,
    tokens: Option<Arc<Tokens>>,
    /// The connection's `tools/call` answers, read from the event streams
    /// before rmcp parses them (see `mcp::reply`).
    replies: Replies,
}

impl std::fmt::Debug for BearerClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerClient")
            .field("oauth", &self.tokens.is_some())
            .finish()
    }
}

/// The token state of one server.
struct Tokens {
    url: String,
    store: TokenStore,
    /// The server's `auth:` block, from the file that declares it.
    declared: Option<AuthConfig>,
    /// How the driver lets a connection log in.
    prompting: Logins,
    /// `None` until read from the store; then the record, if logged in
    /// (read again while not, so a login elsewhere is picked up).
    record: Mutex<Option<Option<TokenRecord>>>,
    /// Held while a login is under way: concurrent refusals make one.
    login: Mutex<()>,
    /// Logins (and step-ups) this connection made: a server that refuses
    /// every token gets [`MAX_LOGINS`], not one per request.
    logins: std::sync::atomic::AtomicUsize,
    /// The DPoP nonces the server gave.
    nonces: Nonces,
}

/// The most logins one connection makes: one, and the step-ups after it.
const MAX_LOGINS: usize = 1 + STEP_UP_LIMIT as usize;

impl BearerClient {
    /// A client for the server at `url`. With `oauth` false (the server's
    /// headers carry their own `Authorization`, or the URL is unusable) it
    /// is rmcp's plain client. `declared` is the server's `auth:` block,
    /// `prompting` how the driver lets it log in.
    pub fn new(
        url: &str,
        oauth: bool,
        (declared, prompting): (Option<AuthConfig>, Logins),
    ) -> Self {
        ensure_tls();
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(same_origin_redirects())
            .build()
            .unwrap_or_default();
        let tokens = oauth
            .then(|| canonical_url(url).ok())
            .flatten()
            .zip(prompting.store().ok())
            .map(|(url, store)| {
                Arc::new(Tokens {
                    url,
                    store,
                    declared,
                    prompting,
                    record: Mutex::new(None),
                    login: Mutex::new(()),
                    logins: Default::default(),
                    nonces: Nonces::default(),
                })
            });
        Self {
            http,
            tokens,
            replies: Replies::default(),
        }
    }

    /// The same client, keeping `tools/call` answers in `replies`.
    pub(crate) fn with_replies(mut self, replies: Replies) -> Self {
        self.replies = replies;
        self
    }

    /// Calls `call` with the token (or none). When the server refuses it
    /// (401), once more with a refreshed token, then with a new login's
    /// (not for `initialize`, whose 401 the connection handles, unless no
    /// user is needed); when it wants more scope (403
    /// `insufficient_scope`), with a token for the granted scopes plus the
    /// wanted ones, at most [`STEP_UP_LIMIT`] times. A DPoP-bound token
    /// goes in `call`'s headers with a proof for `target`; a refusal that
    /// asks for a DPoP nonce is retried once with it.
    async fn authorized<T, F, Fut>(
        &self,
        given: Option<String>,
        initialize: bool,
        target: Target<'_>,
        call: F,
    ) -> Result<T, HttpError>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let Some(tokens) = self.tokens.as_ref().filter(|_| given.is_none()) else {
            return call(given, Headers::new()).await;
        };
        let mut token = tokens.current().await.map_err(as_http_error)?;
        let (mut refreshed, mut logged_in, mut step_ups, mut nonce_asked) =
            (false, false, 0, false);
        loop {
            let (bearer, headers) = tokens
                .present(token.as_deref(), target)
                .await
                .map_err(as_http_error)?;
            match call(bearer, headers).await {
                Err(StreamableHttpError::AuthRequired(challenge)) => {
                    if !nonce_asked
                        && dpop::is_nonce_challenge(&challenge.www_authenticate_header)
                        && let Some(sent) = &token
                    {
                        nonce_asked = true;
                        if tokens
                            .learn_nonce(&self.http, sent, target)
                            .await
                            .map_err(as_http_error)?
                        {
                            continue;
                        }
                    }
                    if !refreshed && let Some(sent) = &token {
                        refreshed = true;
                        if let Some(fresh) =
                            tokens.after_refusal(sent).await.map_err(as_http_error)?
                        {
                            token = Some(fresh);
                            continue;
                        }
                    }
                    if logged_in || (initialize && !tokens.unattended().await) {
                        return Err(StreamableHttpError::AuthRequired(challenge));
                    }
                    logged_in = true;
                    let header = challenge.www_authenticate_header.clone();
                    token = tokens
                        .reauthorize(header, token.as_deref(), None)
                        .await
                        .map_err(as_http_error)?;
                }
                Err(StreamableHttpError::InsufficientScope(refusal)) => {
                    if step_ups >= STEP_UP_LIMIT {
                        return Err(as_http_error(OAuthError::ScopeRefused {
                            url: tokens.url.clone(),
                            scopes: union(&[], refusal.required_scope.as_deref()),
                            attempts: step_ups,
                        }));
                    }
                    step_ups += 1;
                    token = tokens
                        .reauthorize(
                            refusal.www_authenticate_header.clone(),
                            token.as_deref(),
                            Some(refusal.required_scope.as_deref().unwrap_or_default()),
                        )
                        .await
                        .map_err(as_http_error)?;
                }
                other => return other,
            }
        }
    }
}

impl Tokens {
    /// The proof key `token` is bound to, when it is DPoP-bound; an error
    /// when it is and no key is kept (it is never sent without a proof).
    async fn bound_key(&self, token: &str) -> Result<Option<DpopKey>, OAuthError> {
        let of = |record: &TokenRecord| match (record.dpop_bound(), &record.dpop) {
            (false, _) => Ok(None),
            (true, Some(key)) => Ok(Some(key.clone())),
            (true, None) => Err(OAuthError::Dpop {
                reason: format!(
                    "the token for {} is DPoP-bound but no proof key is kept with it; run `pipewright auth login {}`",
                    self.url, self.url
                ),
            }),
        };
        if let Some(Some(record)) = self.record.lock().await.as_ref()
            && record.access_token() == Some(token)
        {
            return of(record);
        }
        match self.store.load(&self.url)? {
            Some(record) if record.access_token() == Some(token) => of(&record),
            _ => Ok(None),
        }
    }

    /// How `token` goes on a request to `target`: as a bearer token (the
    /// transport's `Authorization`), or DPoP-bound in the headers with a
    /// fresh proof.
    async fn present(
        &self,
        token: Option<&str>,
        target: Target<'_>,
    ) -> Result<(Option<String>, Headers), OAuthError> {
        let Some(token) = token else {
            return Ok((None, Headers::new()));
        };
        let Some(key) = self.bound_key(token).await? else {
            return Ok((Some(token.to_owned()), Headers::new()));
        };
        let nonce = self.nonces.get(target.uri);
        let proof = key.proof(target.method, target.uri, nonce.as_deref(), Some(token))?;
        let invalid = || OAuthError::Dpop {
            reason: "the token or its proof is not a valid header value".to_owned(),
        };
        let mut authorization =
            HeaderValue::from_str(&format!("DPoP {token}")).map_err(|_| invalid())?;
        authorization.set_sensitive(true);
        let mut headers = Headers::new();
        headers.insert(AUTHORIZATION, authorization);
        headers.insert(
            HeaderName::from_static(PROOF_HEADER),
            HeaderValue::from_str(&proof).map_err(|_| invalid())?,
        );
        Ok((None, headers))
    }

    /// The server's nonce, after it refused `token`'s proof for want of
    /// one: true when it gave one.
    async fn learn_nonce(
        &self,
        http: &reqwest::Client,
        token: &str,
        target: Target<'_>,
    ) -> Result<bool, OAuthError> {
        let Some(key) = self.bound_key(token).await? else {
            return Ok(false);
        };
        let mut headers: HeaderMap = target
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(session) = target
            .session_id
            .and_then(|s| HeaderValue::from_str(s).ok())
        {
            headers.insert(HeaderName::from_static("mcp-session-id"), session);
        }
        dpop::learn_nonce(http, target.uri, token, &key, &self.nonces, headers).await
    }

    /// True when new tokens need no user (client credentials).
    async fn unattended(&self) -> bool {
        let stored = self.store.load(&self.url).ok().flatten();
        is_unattended(self.declared.as_ref(), stored.as_ref())
    }

    /// New tokens after the server refused `sent` with `challenge`:
    /// another request's login if one was made meanwhile, else a login of
    /// our own. `wanted` (a step-up's scopes) adds to the scopes granted.
    async fn reauthorize(
        &self,
        challenge: String,
        sent: Option<&str>,
        wanted: Option<&str>,
    ) -> Result<Option<String>, OAuthError> {
        let _one_at_a_time = self.login.lock().await;
        let made = self
            .logins
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if made >= MAX_LOGINS {
            return Err(OAuthError::TooManyLogins {
                url: self.url.clone(),
                logins: made,
            });
        }
        let stored = self.store.load(&self.url)?;
        let scopes = match (&stored, wanted) {
            (_, None) => Vec::new(),
            (Some(record), Some(w)) => union(record.scopes(), Some(w)),
            (None, Some(w)) => union(&[], Some(w)),
        };
        if let Some(record) = &stored
            && record.access_token() != sent
            && record.is_fresh(now_secs())
            && scopes.iter().all(|s| record.scopes().contains(s))
        {
            let token = record.access_token().map(str::to_owned);
            *self.record.lock().await = Some(stored);
            return Ok(token);
        }
        let record = reauthorize(
            &self.url,
            &self.url,
            &self.store,
            Some(challenge),
            scopes,
            stored.as_ref(),
            (self.declared.as_ref(), &self.prompting),
        )
        .await?;
        let token = record.access_token().map(str::to_owned);
        *self.record.lock().await = Some(Some(record));
        Ok(token)
    }

    /// A usable access token: the stored one while fresh, else a refreshed
    /// one; `None` when not logged in or the refresh token was refused (the
    /// server's 401 then says a login is needed).
    async fn current(&self) -> Result<Option<String>, OAuthError> {
        let mut slot = self.record.lock().await;
        if !matches!(slot.as_ref(), Some(Some(_))) {
            *slot = Some(self.store.load(&self.url)?);
        }
        let Some(Some(record)) = slot.as_ref() else {
            return Ok(None);
        };
        if record.is_fresh(now_secs()) {
            return Ok(record.access_token().map(str::to_owned));
        }
        self.refresh_locked(&mut slot).await
    }

    /// After the server refused `sent`: a newer token if another request
    /// already refreshed, else a refreshed one, else `None`.
    async fn after_refusal(&self, sent: &str) -> Result<Option<String>, OAuthError> {
        let mut slot = self.record.lock().await;
        // Another login or process may have stored a newer token.
        *slot = Some(self.store.load(&self.url)?);
        match slot.as_ref() {
            Some(Some(record)) if record.access_token().is_some_and(|t| t != sent) => {
                Ok(record.access_token().map(str::to_owned))
            }
            Some(Some(_)) => self.refresh_locked(&mut slot).await,
            _ => Ok(None),
        }
    }

    async fn refresh_locked(
        &self,
        slot: &mut Option<Option<TokenRecord>>,
    ) -> Result<Option<String>, OAuthError> {
        let Some(Some(record)) = slot.as_ref() else {
            return Ok(None);
        };
        if !record.refreshable() {
            return Ok(None);
        }
        let old = record.access_token().map(str::to_owned);
        match refresh(record).await {
            Ok(fresh) => {
                self.store.save(&fresh)?;
                let token = fresh.access_token().map(str::to_owned);
                *slot = Some(Some(fresh));
                Ok(token)
            }
            Err(OAuthError::Refresh { .. }) => {
                // Refresh tokens rotate: another process may have used this
                // one first and stored what it got.
                let reloaded = self.store.load(&self.url)?;
                let token = reloaded
                    .as_ref()
                    .filter(|r| r.is_fresh(now_secs()))
                    .and_then(TokenRecord::access_token)
                    .filter(|t| Some(*t) != old.as_deref())
                    .map(str::to_owned);
                *slot = Some(reloaded);
                Ok(token)
            }
            Err(e) => Err(e),
        }
    }
}

/// Trades the record's refresh token for new tokens (with the `resource`
/// of the login), without discovery: the metadata was kept at login.
/// A refused refresh token is [`OAuthError::Refresh`]; a failure to get an
/// answer is [`OAuthError::Unreachable`].
pub(crate) async fn refresh(record: &TokenRecord) -> Result<TokenRecord, OAuthError> {
    let failed = |e: AuthError| match e {
        AuthError::TokenRefreshRejected(_) | AuthError::AuthorizationRequired => {
            OAuthError::Refresh {
                reason: e.to_string(),
            }
        }
        other => OAuthError::Unreachable {
            url: record.metadata.token_endpoint.clone(),
            reason: other.to_string(),
        },
    };
    let mut manager = token_manager(record.resource.as_str(), record.dpop.as_ref())
        .await
        .map_err(failed)?;
    manager.set_metadata(record.metadata.clone());
    let mut config = OAuthClientConfig::new(record.client_id.clone(), record.redirect_uri.clone())
        .with_scopes(record.scopes().to_vec());
    if let Some(secret) = &record.client_secret {
        config = config.with_client_secret(secret.clone());
    }
    manager.configure_client(config).map_err(failed)?;
    let credentials = InMemoryCredentialStore::new();
    credentials
        .save(record.credentials.clone())
        .await
        .map_err(failed)?;
    manager.set_credential_store(credentials.clone());
    manager.refresh_token().await.map_err(failed)?;
    let stored = credentials
        .load()
        .await
        .map_err(failed)?
        .ok_or_else(|| OAuthError::Refresh {
            reason: "the refreshed token was not kept".to_owned(),
        })?;
    Ok(TokenRecord {
        credentials: stored,
        ..record.clone()
    })
}

/// `headers` and `extra` (a DPoP-bound token and its proof), as one map.
fn with(headers: &Headers, extra: Headers) -> Headers {
    let mut all = headers.clone();
    all.extend(extra);
    all
}

/// True for the `initialize` request.
fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        ClientJsonRpcMessage::Request(r)
            if matches!(r.request, rmcp::model::ClientRequest::InitializeRequest(_))
    )
}

/// A token-store or refresh failure as a transport error, in words.
fn as_http_error(e: OAuthError) -> HttpError {
    StreamableHttpError::Auth(match e {
        OAuthError::Refresh { .. } | OAuthError::Unreachable { .. } => {
            AuthError::TokenRefreshFailed(e.to_string())
        }
        other => AuthError::AuthorizationFailed(other.to_string()),
    })
}

/// rmcp's redirect policy for its default client: same-origin 307/308
/// only, so a message keeps its body and headers never go to another host.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(
            attempt.status(),
            reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
        );
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !keeps_body || !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > 10 {
            attempt.error("more than 10 redirects")
        } else {
            attempt.follow()
        }
    })
}

impl StreamableHttpClient for BearerClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let initialize = is_initialize(&message);
        self.replies.sent(&message);
        let response = self
            .authorized(
                auth_header,
                initialize,
                Target {
                    method: "POST",
                    uri: &uri,
                    session_id: session_id.as_deref(),
                    headers: &custom_headers,
                },
                |token, extra| {
                    self.http.post_message(
                        uri.clone(),
                        message.clone(),
                        session_id.clone(),
                        token,
                        with(&custom_headers, extra),
                    )
                },
            )
            .await?;
        Ok(watch_post(response, &message, &self.replies))
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let initialize = is_initialize(&message);
        self.replies.sent(&message);
        let response = self
            .authorized(
                auth_header,
                initialize,
                Target {
                    method: "POST",
                    uri: &uri,
                    session_id: session_id.as_deref(),
                    headers: &custom_headers,
                },
                |token, extra| {
                    self.http.post_message_with_max_sse_event_size(
                        uri.clone(),
                        message.clone(),
                        session_id.clone(),
                        token,
                        with(&custom_headers, extra),
                        max_sse_event_size,
                    )
                },
            )
            .await?;
        Ok(watch_post(response, &message, &self.replies))
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let target = Target {
            method: "DELETE",
            uri: &uri,
            session_id: Some(&session_id),
            headers: &custom_headers,
        };
        self.authorized(auth_header, false, target, |token, extra| {
            self.http.delete_session(
                uri.clone(),
                session_id.clone(),
                token,
                with(&custom_headers, extra),
            )
        })
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let target = Target {
            method: "GET",
            uri: &uri,
            session_id: session_id.as_deref(),
            headers: &custom_headers,
        };
        self.authorized(auth_header, false, target, |token, extra| {
            self.http.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                with(&custom_headers, extra),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let target = Target {
            method: "GET",
            uri: &uri,
            session_id: session_id.as_deref(),
            headers: &custom_headers,
        };
        self.authorized(auth_header, false, target, |token, extra| {
            self.http.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                with(&custom_headers, extra),
                max_sse_event_size,
            )
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::auth::store::sample_record;

    fn tokens(store: &TokenStore, url: &str) -> Tokens {
        Tokens {
            url: url.to_owned(),
            store: store.clone(),
            declared: None,
            prompting: Logins::default(),
            record: Mutex::new(None),
            login: Mutex::new(()),
            logins: Default::default(),
            nonces: Nonces::default(),
        }
    }

    #[tokio::test]
    async fn a_fresh_token_is_used_and_a_later_login_is_picked_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::new(dir.path());
        let url = "http://127.0.0.1:9/mcp";
        let t = tokens(&store, url);
        assert_eq!(t.current().await, Ok(None), "not logged in");
        store
            .save(&sample_record(url, now_secs(), Some(3600)))
            .expect("save");
        assert_eq!(t.current().await, Ok(Some("at-SECRET".to_owned())));
    }

    #[tokio::test]
    async fn an_unreachable_token_endpoint_is_not_a_lost_login() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::new(dir.path());
        let url = "http://127.0.0.1:9/mcp";
        store
            .save(&sample_record(url, now_secs() - 7200, Some(3600)))
            .expect("save");
        let e = tokens(&store, url)
            .current()
            .await
            .expect_err("the refresh cannot be made");
        assert!(matches!(e, OAuthError::Unreachable { .. }), "{e}");
        assert!(!e.to_string().contains("SECRET"), "{e}");
        assert!(
            store.load(url).expect("load").is_some(),
            "the login is kept"
        );
    }

    /// `sample_record`, DPoP-bound (with a key, or without one).
    fn bound_record(url: &str, key: bool) -> TokenRecord {
        let mut record = sample_record(url, now_secs(), Some(3600));
        let mut response = serde_json::to_value(&record.credentials).expect("json");
        response["token_response"]["token_type"] = "DPoP".into();
        record.credentials = serde_json::from_value(response).expect("back");
        record.dpop = key.then(|| DpopKey::generate().expect("key"));
        record
    }

    #[tokio::test]
    async fn a_bound_token_goes_with_a_proof_and_never_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::new(dir.path());
        let url = "http://127.0.0.1:9/mcp";
        let t = tokens(&store, url);
        let headers = Headers::new();
        let target = Target {
            method: "POST",
            uri: url,
            session_id: None,
            headers: &headers,
        };
        store.save(&bound_record(url, true)).expect("save");
        let token = t.current().await.expect("current");
        let (bearer, extra) = t.present(token.as_deref(), target).await.expect("present");
        assert_eq!(bearer, None, "not as a bearer token");
        assert_eq!(
            extra.get(&AUTHORIZATION).and_then(|v| v.to_str().ok()),
            Some("DPoP at-SECRET")
        );
        assert!(
            extra
                .get(&AUTHORIZATION)
                .is_some_and(HeaderValue::is_sensitive)
        );
        assert_eq!(
            extra
                .get(&HeaderName::from_static(PROOF_HEADER))
                .map(|p| p.len() > 100),
            Some(true)
        );

        store.save(&bound_record(url, false)).expect("save");
        let t = tokens(&store, url);
        let token = t.current().await.expect("current");
        let e = t
            .present(token.as_deref(), target)
            .await
            .expect_err("no key, no request");
        assert!(e.to_string().contains("no proof key"), "{e}");
        assert!(!e.to_string().contains("SECRET"), "{e}");
    }

    #[test]
    fn a_server_with_its_own_authorization_header_gets_no_token() {
        assert!(
            BearerClient::new("http://127.0.0.1:9/mcp", false, (None, Logins::default()))
                .tokens
                .is_none()
        );
        assert!(
            BearerClient::new("not a url", true, (None, Logins::default()))
                .tokens
                .is_none()
        );
    }
}
