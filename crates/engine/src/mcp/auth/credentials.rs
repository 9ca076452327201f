//! The client-credentials grant (OAuth 2.1 §4.2, MCP's SEP-1046): for CI
//! and other runs without a user, pipewright trades its own credentials for
//! a token at the token endpoint. The client authenticates with its secret
//! (`client_secret_basic`, or `client_secret_post` where the authorization
//! server takes only that) or with a JWT signed by its private key
//! (`private_key_jwt`, RFC 7523). No browser, no redirect. Where DPoP is
//! used, the request carries a proof and the token is bound to its key.

use rmcp::transport::auth::{AuthorizationMetadata, OAuthTokenResponse, StoredCredentials};

use super::dpop::{key_for_login, send_token_request};
use super::encode::{base64, form_encode};
use super::error::OAuthError;
use super::flow::{REQUEST_WAIT, discover};
use super::jwt::client_assertion;
use super::store::{TokenRecord, TokenStore, canonical_url, now_secs};
use crate::file::model::AuthConfig;

/// How the client proves who it is at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Basic,
    Post,
    PrivateKeyJwt,
}

/// The method for `config` that the authorization server takes: a key
/// means `private_key_jwt`; a secret goes in the `Authorization` header
/// (the RFC 8414 default) unless the server lists only `client_secret_post`.
fn method(config: &AuthConfig, metadata: &AuthorizationMetadata) -> Method {
    if config.private_key.is_some() {
        return Method::PrivateKeyJwt;
    }
    let supported: Vec<&str> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(serde_json::Value::as_array)
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    if supported.contains(&"client_secret_post") && !supported.contains(&"client_secret_basic") {
        Method::Post
    } else {
        Method::Basic
    }
}

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
    let canonical = canonical_url(url)?;
    let client_id = config
        .client_id
        .clone()
        .ok_or_else(|| OAuthError::ClientCredentials {
            reason:
                "the client-credentials grant needs a client id (`client_id:` or `--client-id`)"
                    .to_owned(),
        })?;
    if config.private_key.is_none() && config.client_secret.is_none() {
        return Err(OAuthError::ClientCredentials {
            reason: "the client-credentials grant needs a client secret or a private key"
                .to_owned(),
        });
    }
    let (manager, metadata) = discover(&canonical, challenge.clone()).await?;
    let scopes = if !scopes.is_empty() {
        scopes.to_vec()
    } else if !config.scopes.is_empty() {
        config.scopes.clone()
    } else {
        manager.select_initial_scopes(&[]).await
    };
    let endpoint =
        reqwest::Url::parse(&metadata.token_endpoint).map_err(|e| OAuthError::Discovery {
            url: canonical.clone(),
            reason: format!("the token endpoint is not a URL: {e}"),
        })?;
    let loopback = endpoint
        .host_str()
        .is_some_and(|h| h == "localhost" || h == "127.0.0.1" || h == "[::1]");
    if endpoint.scheme() != "https" && !loopback {
        return Err(OAuthError::ClientCredentials {
            reason: format!(
                "the token endpoint {endpoint} is not https; pipewright sends client credentials over https only (or to a loopback address)"
            ),
        });
    }
    let method = method(config, &metadata);
    let mut form: Vec<(&str, String)> = vec![
        ("grant_type", "client_credentials".to_owned()),
        ("resource", canonical.clone()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    let secret = config.client_secret.clone().unwrap_or_default();
    match method {
        Method::Basic => {}
        Method::Post => {
            form.push(("client_id", client_id.clone()));
            form.push(("client_secret", secret.clone()));
        }
        Method::PrivateKeyJwt => {
            let audience = metadata
                .issuer
                .clone()
                .unwrap_or_else(|| metadata.token_endpoint.clone());
            let pem = config.private_key.as_deref().unwrap_or_default();
            form.push(("client_id", client_id.clone()));
            form.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
            ));
            form.push((
                "client_assertion",
                client_assertion(pem, &client_id, &audience, now_secs())?,
            ));
        }
    }
    let body = form
        .iter()
        .map(|(k, v)| format!("{k}={}", form_encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    let client = reqwest::Client::builder()
        .timeout(REQUEST_WAIT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| OAuthError::Unreachable {
            url: endpoint.to_string(),
            reason: e.to_string(),
        })?;
    let mut request = client
        .post(endpoint.clone())
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body);
    if method == Method::Basic {
        // RFC 6749 §2.3.1: both parts form-encoded before Base64.
        let pair = format!("{}:{}", form_encode(&client_id), form_encode(&secret));
        request = request.header(
            reqwest::header::AUTHORIZATION,
            format!("Basic {}", base64(pair.as_bytes(), false)),
        );
    }
    let key = key_for_login(config.dpop, &metadata, challenge.as_deref())?;
    let (status, text) = send_token_request(request, endpoint.as_str(), key.as_ref()).await?;
    if !status.is_success() {
        let json: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let code = json["error"].as_str().unwrap_or("no error code");
        let description = json["error_description"]
            .as_str()
            .map(|d| format!(" ({d})"))
            .unwrap_or_default();
        return Err(OAuthError::ClientCredentials {
            reason: format!(
                "the token endpoint refused the client credentials: HTTP {} {code}{description}",
                status.as_u16()
            ),
        });
    }
    let token: OAuthTokenResponse =
        serde_json::from_str(&text).map_err(|_| OAuthError::ClientCredentials {
            reason: "the token endpoint's answer is not a token response".to_owned(),
        })?;
    let granted = serde_json::from_str::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v["scope"].as_str().map(str::to_owned))
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or(scopes);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(methods: Option<&[&str]>) -> AuthorizationMetadata {
        let mut m = serde_json::json!({
            "authorization_endpoint": "http://127.0.0.1:9/authorize",
            "token_endpoint": "http://127.0.0.1:9/token",
        });
        if let Some(methods) = methods {
            m["token_endpoint_auth_methods_supported"] = methods.into();
        }
        serde_json::from_value(m).expect("metadata")
    }

    #[test]
    fn the_auth_method_follows_the_key_and_the_metadata() {
        let secret = AuthConfig {
            client_id: Some("c".into()),
            client_secret: Some("s".into()),
            client_credentials: true,
            ..AuthConfig::default()
        };
        assert_eq!(method(&secret, &metadata(None)), Method::Basic);
        assert_eq!(
            method(&secret, &metadata(Some(&["client_secret_post"]))),
            Method::Post
        );
        assert_eq!(
            method(
                &secret,
                &metadata(Some(&["client_secret_post", "client_secret_basic"]))
            ),
            Method::Basic
        );
        let key = AuthConfig {
            private_key: Some("pem".into()),
            ..secret
        };
        assert_eq!(method(&key, &metadata(None)), Method::PrivateKeyJwt);
    }
}
