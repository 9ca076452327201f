//! One request at an OAuth token endpoint, as the grants without a browser
//! make it (the client-credentials grant, the assertion grants, the
//! identity provider's token exchange): the endpoint held to TLS, the
//! client authenticated as `auth:` says, a DPoP proof when the login is
//! bound to a key, the answer read within a bound, a refusal in words.

use rmcp::transport::auth::AuthorizationMetadata;

use super::dpop::{DpopKey, MAX_ANSWER_BYTES, Nonces, PROOF_HEADER, failed, htu};
use super::encode::{base64, form_encode};
use super::error::{OAuthError, deepest};
use super::flow::REQUEST_WAIT;
use super::jwt::client_assertion;
use super::store::now_secs;
use crate::file::model::AuthConfig;

/// How the client proves who it is at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Basic,
    Post,
    PrivateKeyJwt,
}

/// The method for `config` that the authorization server takes: a key
/// means `private_key_jwt`; a secret goes in the `Authorization` header
/// (the RFC 8414 default) unless the server lists only `client_secret_post`.
pub(super) fn method(config: &AuthConfig, metadata: &AuthorizationMetadata) -> Method {
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

/// The scopes a token request asks for: those `asked` (a flag, a step-up),
/// else those `auth:` names, else what the server advertises.
pub(super) async fn scopes_to_ask(
    asked: &[String],
    config: &AuthConfig,
    manager: &rmcp::transport::auth::AuthorizationManager,
) -> Vec<String> {
    if !asked.is_empty() {
        asked.to_vec()
    } else if !config.scopes.is_empty() {
        config.scopes.clone()
    } else {
        manager.select_initial_scopes(&[]).await
    }
}

/// `endpoint` as a URL, if it is https or on a loopback address: what is
/// sent there (`sends`: client credentials, assertions) travels over TLS
/// only. `what` names the endpoint in the error.
pub(super) fn secure_endpoint(
    endpoint: &str,
    what: &str,
    sends: &str,
) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(endpoint)
        .map_err(|e| format!("the {what} `{endpoint}` is not a URL: {e}"))?;
    let loopback = url
        .host_str()
        .is_some_and(|h| h == "localhost" || h == "127.0.0.1" || h == "[::1]");
    if url.scheme() != "https" && !loopback {
        return Err(format!(
            "the {what} {url} is not https; pipewright sends {sends} over https only (or to a loopback address)"
        ));
    }
    Ok(url)
}

/// Adds to `form` the client authentication `config` gives at the
/// authorization server `metadata`, and returns the pair that goes in
/// the `Authorization` header instead (`client_secret_basic`). Without a
/// client id there is none; a client id alone is a public client's.
pub(super) fn client_auth(
    config: &AuthConfig,
    metadata: &AuthorizationMetadata,
    form: &mut Vec<(&'static str, String)>,
) -> Result<Option<(String, String)>, OAuthError> {
    let Some(client_id) = config.client_id.clone() else {
        return Ok(None);
    };
    if config.private_key.is_none() && config.client_secret.is_none() {
        form.push(("client_id", client_id));
        return Ok(None);
    }
    let secret = config.client_secret.clone().unwrap_or_default();
    match method(config, metadata) {
        Method::Basic => return Ok(Some((client_id, secret))),
        Method::Post => {
            form.push(("client_id", client_id));
            form.push(("client_secret", secret));
        }
        Method::PrivateKeyJwt => {
            let audience = metadata
                .issuer
                .clone()
                .unwrap_or_else(|| metadata.token_endpoint.clone());
            let pem = config.private_key.as_deref().unwrap_or_default();
            let signed = client_assertion(pem, &client_id, &audience, now_secs())?;
            form.push(("client_id", client_id));
            form.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".to_owned(),
            ));
            form.push(("client_assertion", signed));
        }
    }
    Ok(None)
}

/// POSTs `form` to the token endpoint `endpoint`, with HTTP Basic client
/// authentication when `basic` is given and a proof of `key` when the
/// login is DPoP-bound (once more with the server's nonce, if it asks):
/// the answer's status and text.
pub(super) async fn post(
    endpoint: &reqwest::Url,
    form: &[(&str, String)],
    basic: Option<&(String, String)>,
    key: Option<&DpopKey>,
) -> Result<(reqwest::StatusCode, String), OAuthError> {
    super::tls::ensure_tls();
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
    if let Some((id, secret)) = basic {
        // RFC 6749 §2.3.1: both parts form-encoded before Base64.
        let pair = format!("{}:{}", form_encode(id), form_encode(secret));
        request = request.header(
            reqwest::header::AUTHORIZATION,
            format!("Basic {}", base64(pair.as_bytes(), false)),
        );
    }
    send_token_request(request, endpoint.as_str(), key).await
}

/// Sends a token request made by `request` (with a byte body), with a
/// proof of `key` when there is one and once more with the nonce on a
/// `use_dpop_nonce` answer: the answer's status and text.
async fn send_token_request(
    request: reqwest::RequestBuilder,
    url: &str,
    key: Option<&DpopKey>,
) -> Result<(reqwest::StatusCode, String), OAuthError> {
    let nonces = Nonces::default();
    let unreachable = |e: reqwest::Error| OAuthError::Unreachable {
        url: htu(url),
        reason: deepest(&e),
    };
    let mut retried = false;
    loop {
        let mut attempt = request
            .try_clone()
            .ok_or_else(|| failed("the token request cannot be repeated"))?;
        if let Some(key) = key {
            let proof = key.proof("POST", url, nonces.get(url).as_deref(), None)?;
            attempt = attempt.header(PROOF_HEADER, proof);
        }
        let response = attempt.send().await.map_err(unreachable)?;
        let fresh = nonces.keep(url, response.headers());
        let status = response.status();
        let text = read_text(response, MAX_ANSWER_BYTES, "the token endpoint")
            .await
            .map_err(|reason| OAuthError::Unreachable {
                url: htu(url),
                reason,
            })?;
        let nonce_wanted = status == reqwest::StatusCode::BAD_REQUEST
            && serde_json::from_str::<serde_json::Value>(&text)
                .is_ok_and(|v| v["error"] == "use_dpop_nonce");
        if key.is_some() && fresh && nonce_wanted && !retried {
            retried = true;
            continue;
        }
        return Ok((status, text));
    }
}

/// A refused token request in words: the status, the `error` code and its
/// description (never the request).
pub(super) fn refusal(status: reqwest::StatusCode, text: &str) -> String {
    let json: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
    let code = json["error"].as_str().unwrap_or("no error code");
    let description = json["error_description"]
        .as_str()
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    format!("HTTP {} {code}{description}", status.as_u16())
}

/// The scopes a token answer says it granted, else those `asked`.
pub(super) fn granted(text: &str, asked: Vec<String>) -> Vec<String> {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v["scope"].as_str().map(str::to_owned))
        .map(|s| s.split_whitespace().map(str::to_owned).collect())
        .unwrap_or(asked)
}

/// The body of `response` as text, refused past `limit` bytes; `who`
/// names the answer in errors.
pub(super) async fn read_text(
    mut response: reqwest::Response,
    limit: usize,
    who: &str,
) -> Result<String, String> {
    if response.content_length().is_some_and(|n| n > limit as u64) {
        return Err(format!(
            "{who}'s answer is larger than {} KiB",
            limit / 1024
        ));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| format!("{who}'s answer was cut off: {}", deepest(&e)))?
    {
        if bytes.len() + chunk.len() > limit {
            return Err(format!(
                "{who}'s answer is larger than {} KiB",
                limit / 1024
            ));
        }
        bytes.extend_from_slice(&chunk);
    }
    String::from_utf8(bytes).map_err(|_| format!("{who}'s answer is not text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(methods: Option<&[&str]>) -> AuthorizationMetadata {
        let mut m = serde_json::json!({
            "issuer": "http://127.0.0.1:9",
            "authorization_endpoint": "http://127.0.0.1:9/authorize",
            "token_endpoint": "http://127.0.0.1:9/token",
        });
        if let Some(methods) = methods {
            m["token_endpoint_auth_methods_supported"] = methods.into();
        }
        serde_json::from_value(m).expect("metadata")
    }

    fn field<'a>(form: &'a [(&str, String)], name: &str) -> Option<&'a str> {
        form.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
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

    #[test]
    fn client_authentication_follows_the_block() {
        let mut form = Vec::new();
        let none = AuthConfig::default();
        assert_eq!(client_auth(&none, &metadata(None), &mut form), Ok(None));
        assert!(form.is_empty(), "no client id, no client: {form:?}");
        let public = AuthConfig {
            client_id: Some("wl".into()),
            ..AuthConfig::default()
        };
        assert_eq!(client_auth(&public, &metadata(None), &mut form), Ok(None));
        assert_eq!(field(&form, "client_id"), Some("wl"));
        let mut form = Vec::new();
        let secret = AuthConfig {
            client_id: Some("c".into()),
            client_secret: Some("s".into()),
            ..AuthConfig::default()
        };
        assert_eq!(
            client_auth(&secret, &metadata(None), &mut form),
            Ok(Some(("c".to_owned(), "s".to_owned())))
        );
        assert!(form.is_empty(), "the secret goes in the header: {form:?}");
        let mut form = Vec::new();
        let post = metadata(Some(&["client_secret_post"]));
        assert_eq!(client_auth(&secret, &post, &mut form), Ok(None));
        assert_eq!(field(&form, "client_secret"), Some("s"));
    }

    #[test]
    fn only_loopback_may_be_plain_http() {
        assert!(secure_endpoint("https://idp.example/token", "x", "y").is_ok());
        assert!(secure_endpoint("http://127.0.0.1:8/token", "x", "y").is_ok());
        assert!(secure_endpoint("http://localhost/token", "x", "y").is_ok());
        let refused = secure_endpoint("http://idp.example/token", "token endpoint", "assertions")
            .expect_err("plain http");
        assert!(
            refused.contains("sends assertions over https only"),
            "{refused}"
        );
        assert!(secure_endpoint("not a url", "x", "y").is_err());
    }

    #[test]
    fn a_refusal_says_the_code_and_the_description() {
        let said = refusal(
            reqwest::StatusCode::BAD_REQUEST,
            r#"{"error":"invalid_grant","error_description":"audience is wrong"}"#,
        );
        assert_eq!(said, "HTTP 400 invalid_grant (audience is wrong)");
        assert_eq!(
            refusal(reqwest::StatusCode::UNAUTHORIZED, "<html>"),
            "HTTP 401 no error code"
        );
        assert_eq!(granted(r#"{"scope":"a b"}"#, vec![]), ["a", "b"]);
        assert_eq!(granted("{}", vec!["x".into()]), ["x"]);
    }
}
