//! What can go wrong logging in to an OAuth-protected server or using its
//! tokens, in sentences a user can act on. No variant ever holds a token.

/// A failed login, refresh or token-store operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// The server is not named by an http(s) URL.
    #[error("`{url}` is not an http:// or https:// URL")]
    BadUrl { url: String },
    /// The MCP server or its authorization server could not be reached.
    #[error("could not reach {url}: {reason}")]
    Unreachable { url: String, reason: String },
    /// Neither protected resource metadata (RFC 9728) nor authorization
    /// server metadata (RFC 8414 / OpenID discovery) was found.
    #[error(
        "{url} publishes no OAuth metadata (no protected resource metadata, no authorization server metadata), so there is nothing to log in to"
    )]
    NoMetadata { url: String },
    /// Metadata was found but is unusable, or fetching it failed.
    #[error("finding out how to log in to {url} failed: {reason}")]
    Discovery { url: String, reason: String },
    /// The authorization server has no registration endpoint and no client
    /// id was given.
    #[error(
        "the authorization server {issuer} does not support dynamic client registration: register pipewright there (redirect URI http://127.0.0.1/callback, any port) and pass its client id with `--client-id`"
    )]
    NoRegistration { issuer: String },
    /// Dynamic client registration was refused.
    #[error("registering pipewright with the authorization server failed: {reason}")]
    Registration { reason: String },
    /// The authorization server (or the user) refused the authorization.
    #[error("the authorization was refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The `error` code of the redirect, e.g. `access_denied`.
        error: String,
        description: Option<String>,
    },
    /// The redirect's `state` is not the one this login sent.
    #[error(
        "the redirect to pipewright carried a `state` this login did not send (a stale or forged redirect); nothing was stored"
    )]
    StateMismatch,
    /// The redirect carried neither a code nor an error.
    #[error("the redirect to pipewright carried no authorization code")]
    NoCode,
    /// Nobody completed the login in time.
    #[error("no login was completed within {secs} s")]
    TimedOut { secs: u64 },
    /// A browser was required and none could be opened.
    #[error("no browser could be opened for the login")]
    NoBrowser,
    /// The loopback listener for the redirect could not be opened.
    #[error("could not listen for the login redirect on 127.0.0.1: {0}")]
    Listen(String),
    /// The token endpoint refused the authorization code.
    #[error("exchanging the authorization code for a token failed: {reason}")]
    Token { reason: String },
    /// The client-credentials grant failed (configuration, key, or the
    /// token endpoint's refusal).
    #[error("the client-credentials grant failed: {reason}")]
    ClientCredentials { reason: String },
    /// An assertion grant (`grant: jwt_bearer` or `id_jag`) failed: its
    /// assertion could not be had, or the identity provider or the
    /// authorization server refused. The reason never quotes an assertion.
    #[error("the {grant} grant failed: {reason}")]
    Assertion { grant: &'static str, reason: String },
    /// The refresh token could not be used; a new login is needed.
    #[error("refreshing the access token failed: {reason}")]
    Refresh { reason: String },
    /// A DPoP proof could not be made, or DPoP is wanted and cannot be
    /// used.
    #[error("DPoP: {reason}")]
    Dpop { reason: String },
    /// The token store could not be read or written.
    #[error("the token store {path}: {reason}")]
    Store { path: String, reason: String },
    /// No data directory to keep tokens in.
    #[error("no data directory to keep tokens in: set PIPEWRIGHT_DATA_DIR")]
    NoDataDir,
    /// The server wants a login (or more scopes) and none may be made
    /// here (no terminal, no browser allowed).
    #[error(
        "{url} needs a login{}: run `pipewright auth login {url}{}`",
        scope_words(scopes),
        scope_flags(scopes)
    )]
    NeedsLogin { url: String, scopes: Vec<String> },
    /// The server kept refusing for want of scope after re-authorizations.
    #[error(
        "{url} still refuses (HTTP 403 insufficient_scope{}) after {attempts} re-authorizations; the authorization server does not grant pipewright what the server wants",
        scope_words(scopes)
    )]
    ScopeRefused {
        url: String,
        scopes: Vec<String>,
        attempts: u32,
    },
    /// The server refused the tokens of every login this connection made.
    #[error(
        "{url} refused the tokens of {logins} logins made for this connection; no more are made (check the scopes, or run `pipewright auth login {url}`)"
    )]
    TooManyLogins { url: String, logins: usize },
}

/// The innermost cause of an error ("Connection refused (os error 111)").
pub(crate) fn deepest(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// ` with scope a b`, or nothing.
fn scope_words(scopes: &[String]) -> String {
    if scopes.is_empty() {
        String::new()
    } else {
        format!(" with scope `{}`", scopes.join(" "))
    }
}

/// ` --scope a --scope b`, or nothing.
fn scope_flags(scopes: &[String]) -> String {
    scopes.iter().map(|s| format!(" --scope {s}")).collect()
}
