//! New tokens for a server that refused a request: by the client-credentials
//! grant when the server's `auth:` block (or its stored login) says so, by
//! an assertion grant (`jwt_bearer`, `id_jag`) when the block names one,
//! else by a login as the driver's [`Logins`] allow. A step-up (HTTP 403
//! `insufficient_scope`) asks for the scopes already granted plus the ones
//! the server names.

use super::credentials::client_credentials;
use super::error::OAuthError;
use super::exchange::assertion_grant;
use super::flow::{Browser, LoginOptions, login};
use super::prompt::{Logins, Prompt};
use super::store::{TokenRecord, TokenStore, canonical_url};
use crate::file::model::AuthConfig;

/// How many times one request may re-authorize for more scope before its
/// 403 is final (the MCP spec asks clients to bound this loop).
pub(crate) const STEP_UP_LIMIT: u32 = 2;

/// `granted` plus the scopes of `wanted` (space-separated) it lacks.
pub(crate) fn union(granted: &[String], wanted: Option<&str>) -> Vec<String> {
    let mut out = granted.to_vec();
    for s in wanted.unwrap_or_default().split_whitespace() {
        if !out.iter().any(|g| g == s) {
            out.push(s.to_owned());
        }
    }
    out
}

/// The client-credentials settings of a server: its `auth:` block
/// `declared` (whose secret stays out of the store), else what a
/// `--client-credentials` login stored (a secret; a key is never stored);
/// and whether to store the secret again.
fn unattended(
    declared: Option<&AuthConfig>,
    previous: Option<&TokenRecord>,
) -> Option<(AuthConfig, bool)> {
    if let Some(config) = declared.filter(|c| c.client_credentials) {
        return Some((config.clone(), false));
    }
    let record = previous.filter(|r| r.client_credentials && r.client_secret.is_some())?;
    let config = AuthConfig {
        client_id: Some(record.client_id.clone()),
        client_secret: record.client_secret.clone(),
        client_credentials: true,
        ..AuthConfig::default()
    };
    Some((config, true))
}

/// True when new tokens for a server (its `auth:` block `declared`) need
/// no user.
pub(crate) fn is_unattended(declared: Option<&AuthConfig>, previous: Option<&TokenRecord>) -> bool {
    declared.is_some_and(|c| c.assertion_grant.is_some())
        || unattended(declared, previous).is_some()
}

/// Obtains and stores new tokens for the server at `url`, which answered
/// with `challenge`; `declared` is its `auth:` block, `logins` how the
/// driver lets it log in. `scopes` (when not empty) are asked for;
/// `server` names it in what is printed.
pub(crate) async fn reauthorize(
    server: &str,
    url: &str,
    store: &TokenStore,
    challenge: Option<String>,
    scopes: Vec<String>,
    previous: Option<&TokenRecord>,
    (declared, logins): (Option<&AuthConfig>, &Logins),
) -> Result<TokenRecord, OAuthError> {
    if let Some(config) = declared.filter(|c| c.assertion_grant.is_some()) {
        return assertion_grant(url, store, config, challenge, &scopes).await;
    }
    if let Some((config, keep_secret)) = unattended(declared, previous) {
        return client_credentials(url, store, &config, keep_secret, challenge, &scopes).await;
    }
    let shown = canonical_url(url)?;
    let prompt = logins.prompt();
    if prompt == Prompt::Never {
        return Err(OAuthError::NeedsLogin { url: shown, scopes });
    }
    let config = declared.cloned().unwrap_or_default();
    let opts = LoginOptions {
        client_id: config.client_id.clone(),
        client_secret: config.client_secret.clone(),
        known_client: previous
            .filter(|r| !r.client_credentials)
            .map(|r| (r.client_id.clone(), r.client_secret.clone())),
        client_id_url: config.client_id_url.clone(),
        scopes: if scopes.is_empty() {
            config.scopes.clone()
        } else {
            scopes
        },
        challenge,
        browser: match prompt {
            Prompt::BrowserOnly => Browser::Require,
            Prompt::Print => Browser::Skip,
            _ => Browser::Try,
        },
        browser_command: logins.browser().map(str::to_owned),
        dpop: config.dpop,
        ..LoginOptions::default()
    };
    let printing = matches!(prompt, Prompt::Terminal | Prompt::Print);
    let secs = opts.timeout.as_secs();
    let show = |authorize_url: &str| {
        if printing {
            logins.say(&format!(
                "Server `{server}` needs a login. Open this URL in a browser (waiting {secs} s):\n{authorize_url}"
            ));
        }
    };
    let record = login(url, store, &opts, &show).await?;
    if printing {
        logins.say(&format!("Logged in to {shown}."));
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_up_keeps_the_granted_scopes_and_adds_the_wanted() {
        let granted = vec!["mcp:basic".to_owned()];
        assert_eq!(
            union(&granted, Some("mcp:basic  mcp:write")),
            ["mcp:basic", "mcp:write"]
        );
        assert_eq!(union(&granted, None), ["mcp:basic"]);
        assert_eq!(union(&[], Some("a")), ["a"]);
    }
}
