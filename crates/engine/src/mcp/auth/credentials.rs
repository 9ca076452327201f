//! The client-credentials grant (OAuth 2.1 §4.2, MCP's SEP-1046): for CI
//! and other runs without a user, pipewright trades its own credentials for
//! a token at the token endpoint. The client authenticates with its secret
//! (`client_secret_basic`, or `client_secret_post` where the authorization
//! server takes only that) or with a JWT signed by its private key
//! (`private_key_jwt`, RFC 7523). No browser, no redirect. Where DPoP is
//! used, the request carries a proof and the token is bound to its key.

use rmcp::transport::auth::{OAuthTokenResponse, StoredCredentials};

use super::dpop::key_for_login;
use super::error::OAuthError;
use super::flow::discover;
use super::store::{TokenRecord, TokenStore, canonical_url, now_secs};
use super::token_request::{client_auth, granted, post, refusal, scopes_to_ask, secure_endpoint};
use crate::file::model::AuthConfig;

/// Obtains a token for the server at `url` with the client-credentials
/// grant and keeps it in `store`, with the client secret when
/// `keep_secret` (so a later run can renew it without the flags).
/// `challenge` is the server's `WWW-Authenticate`, when a request got
/// one; `scopes`, when not empty, are asked for instead of the configured
/// or advertised ones.
pub async fn client_credentials(
    url: &str,
    store: &TokenStore,
    config: &AuthConfig,
    keep_secret: bool,
    challenge: Option<String>,
    scopes: &[String],
) -> Result<TokenRecord, OAuthError> {
    let failed = |reason: String| OAuthError::ClientCredentials { reason };
    let canonical = canonical_url(url)?;
    let client_id = config.client_id.clone().ok_or_else(|| {
        failed(
            "the client-credentials grant needs a client id (`client_id:` or `--client-id`)"
                .to_owned(),
        )
    })?;
    if config.private_key.is_none() && config.client_secret.is_none() {
        return Err(failed(
            "the client-credentials grant needs a client secret or a private key".to_owned(),
        ));
    }
    let (manager, metadata) = discover(&canonical, challenge.clone()).await?;
    let scopes = scopes_to_ask(scopes, config, &manager).await;
    let endpoint = secure_endpoint(
        &metadata.token_endpoint,
        "token endpoint",
        "client credentials",
    )
    .map_err(failed)?;
    let mut form: Vec<(&str, String)> = vec![
        ("grant_type", "client_credentials".to_owned()),
        ("resource", canonical.clone()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    let basic = client_auth(config, &metadata, &mut form)?;
    let key = key_for_login(config.dpop, &metadata, challenge.as_deref())?;
    let (status, text) = post(&endpoint, &form, basic.as_ref(), key.as_ref()).await?;
    if !status.is_success() {
        return Err(failed(format!(
            "the token endpoint refused the client credentials: {}",
            refusal(status, &text)
        )));
    }
    let token: OAuthTokenResponse = serde_json::from_str(&text)
        .map_err(|_| failed("the token endpoint's answer is not a token response".to_owned()))?;
    let granted = granted(&text, scopes);
    let record = TokenRecord {
        server_url: canonical.clone(),
        resource: canonical,
        metadata,
        client_id: client_id.clone(),
        client_secret: config.client_secret.clone().filter(|_| keep_secret),
        redirect_uri: String::new(),
        credentials: StoredCredentials::new(client_id, Some(token), granted, Some(now_secs())),
        client_credentials: true,
        dpop: key,
    };
    store.save(&record)?;
    Ok(record)
}
