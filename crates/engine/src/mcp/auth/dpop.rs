//! DPoP (RFC 9449; MCP's SEP-1932): tokens bound to a proof key. A P-256
//! key made for each login is kept in the login's token record (the store
//! is 0600; the key is never shown); every token request and every request
//! to the server carries a fresh proof it signs (`typ: dpop+jwt`, ES256,
//! the public key as `jwk`, `ath` beside an access token); the nonce a
//! server hands out (`DPoP-Nonce`) is kept per origin, and a
//! `use_dpop_nonce` refusal is answered once with it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use reqwest::header::HeaderMap;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, OAuthHttpClient, OAuthHttpClientError,
    OAuthHttpClientFuture, OAuthHttpRequest,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::addresses::Policy;
use super::encode::base64;
use super::error::{OAuthError, deepest};
use crate::file::model::DpopMode;

/// The request header a proof travels in.
pub(crate) const PROOF_HEADER: &str = "dpop";
/// The response header a server's nonce comes in.
const NONCE_HEADER: &str = "dpop-nonce";
/// Limit on each request, as on a login's other requests.
const REQUEST_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// The most an authorization server's answer may weigh.
pub(super) const MAX_ANSWER_BYTES: usize = 1 << 20;

pub(super) fn failed(reason: impl std::fmt::Display) -> OAuthError {
    OAuthError::Dpop {
        reason: reason.to_string(),
    }
}

/// A login's proof key: an EC P-256 key pair as a JWK (RFC 7518 §6.2).
/// `Debug` shows no private part.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DpopKey {
    kty: String,
    crv: String,
    x: String,
    y: String,
    d: String,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey")
            .field("crv", &self.crv)
            .field("x", &self.x)
            .finish_non_exhaustive()
    }
}

impl DpopKey {
    /// A new key.
    pub(crate) fn generate() -> Result<Self, OAuthError> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| failed("no proof key could be made"))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| failed("the new proof key is unusable"))?;
        let d = private_scalar(pkcs8.as_ref())
            .ok_or_else(|| failed("the new proof key is unusable"))?;
        let (x, y) = point(pair.public_key().as_ref())
            .ok_or_else(|| failed("the new proof key is unusable"))?;
        Ok(Self {
            kty: "EC".to_owned(),
            crv: "P-256".to_owned(),
            x: base64(x, true),
            y: base64(y, true),
            d: base64(d, true),
        })
    }

    /// The key pair, for signing.
    fn pair(&self) -> Result<EcdsaKeyPair, OAuthError> {
        let unusable = || failed("the stored proof key is unusable; log in again");
        let (x, y, d) = (
            unbase64url(&self.x).ok_or_else(unusable)?,
            unbase64url(&self.y).ok_or_else(unusable)?,
            unbase64url(&self.d).ok_or_else(unusable)?,
        );
        let public: Vec<u8> = [&[4u8][..], &x, &y].concat();
        EcdsaKeyPair::from_private_key_and_public_key(
            &ECDSA_P256_SHA256_FIXED_SIGNING,
            &d,
            &public,
            &SystemRandom::new(),
        )
        .map_err(|_| unusable())
    }

    /// The public key as a JWK (no `d`).
    fn public_jwk(&self) -> serde_json::Value {
        serde_json::json!({"kty": self.kty, "crv": self.crv, "x": self.x, "y": self.y})
    }

    /// A proof for a `method` request to `url` (RFC 9449 §4.2): a fresh
    /// `jti`, `htu` without query or fragment, the server's `nonce` when
    /// it gave one, and `ath` when the request presents `access_token`.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        nonce: Option<&str>,
        access_token: Option<&str>,
    ) -> Result<String, OAuthError> {
        let pair = self.pair()?;
        let header = serde_json::json!({
            "typ": "dpop+jwt",
            "alg": "ES256",
            "jwk": self.public_jwk(),
        });
        let mut claims = serde_json::json!({
            "jti": random_id()?,
            "htm": method,
            "htu": htu(url),
            "iat": unix_now(),
        });
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        if let Some(token) = access_token {
            claims["ath"] = base64(&Sha256::digest(token.as_bytes()), true).into();
        }
        let input = format!(
            "{}.{}",
            base64(header.to_string().as_bytes(), true),
            base64(claims.to_string().as_bytes(), true)
        );
        let signature = pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|_| failed("signing a proof failed"))?;
        Ok(format!("{input}.{}", base64(signature.as_ref(), true)))
    }
}

/// Seconds since the Unix epoch (`store::now_secs`, which this module does
/// not import: the store imports the key).
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `url` without its query and fragment (the `htu` claim).
pub(super) fn htu(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or_default().to_owned(),
    }
}

/// 16 random bytes in hex, for `jti`.
fn random_id() -> Result<String, OAuthError> {
    let mut bytes = [0u8; 16];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| failed("no random numbers"))?;
    Ok(hex::encode(bytes))
}

/// The private scalar of a P-256 PKCS#8 document: the 32-byte OCTET
/// STRING after the version 1 of its `ECPrivateKey` (RFC 5915).
fn private_scalar(pkcs8: &[u8]) -> Option<&[u8]> {
    const BEFORE: [u8; 5] = [0x02, 0x01, 0x01, 0x04, 0x20];
    let at = pkcs8.windows(BEFORE.len()).position(|w| w == BEFORE)?;
    pkcs8.get(at + BEFORE.len()..at + BEFORE.len() + 32)
}

/// The coordinates of an uncompressed P-256 point (`04 || x || y`).
fn point(public: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = public.strip_prefix(&[4])?;
    (rest.len() == 64).then(|| rest.split_at(32))
}

/// Base64url without padding, decoded.
fn unbase64url(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(u32::from(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        }))
    };
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.as_bytes().chunks(4) {
        if chunk.len() == 1 {
            return None;
        }
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= value(*c)? << (18 - 6 * i);
        }
        for i in 0..chunk.len() - 1 {
            out.push((n >> (16 - 8 * i)) as u8);
        }
    }
    Some(out)
}

/// The nonces servers gave, the latest per origin. Clones share them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Nonces(Arc<Mutex<HashMap<String, String>>>);

impl Nonces {
    fn origin(url: &str) -> Option<String> {
        reqwest::Url::parse(url)
            .ok()
            .map(|u| u.origin().ascii_serialization())
    }

    /// The latest nonce of `url`'s origin.
    pub(crate) fn get(&self, url: &str) -> Option<String> {
        let origin = Self::origin(url)?;
        self.0.lock().ok()?.get(&origin).cloned()
    }

    /// Keeps the `DPoP-Nonce` of an answer from `url`; true when it gave
    /// one.
    pub(crate) fn keep(&self, url: &str, headers: &HeaderMap) -> bool {
        let Some(nonce) = headers
            .get(NONCE_HEADER)
            .and_then(|v| v.to_str().ok())
            .filter(|n| !n.is_empty())
        else {
            return false;
        };
        if let (Some(origin), Ok(mut nonces)) = (Self::origin(url), self.0.lock()) {
            nonces.insert(origin, nonce.to_owned());
        }
        true
    }
}

/// True when the authorization server takes ES256 proofs (RFC 9449 §5.1).
fn supports_es256(metadata: &AuthorizationMetadata) -> bool {
    metadata
        .additional_fields
        .get("dpop_signing_alg_values_supported")
        .and_then(serde_json::Value::as_array)
        .is_some_and(|algs| algs.iter().any(|a| a == "ES256"))
}

/// True when a `WWW-Authenticate` challenge names the `DPoP` scheme: the
/// server wants DPoP-bound tokens.
pub(crate) fn is_dpop_challenge(challenge: &str) -> bool {
    challenge.split(',').any(|part| {
        part.split_whitespace()
            .next()
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("dpop"))
    })
}

/// True when a `WWW-Authenticate` challenge asks for a nonce (RFC 9449 §9).
pub(crate) fn is_nonce_challenge(challenge: &str) -> bool {
    is_dpop_challenge(challenge) && challenge.contains("use_dpop_nonce")
}

/// A proof key for a login when DPoP is to be used: by `mode`, the
/// authorization server's `metadata`, and the server's `challenge` (a
/// `DPoP` one means the server wants bound tokens).
pub(crate) fn key_for_login(
    mode: DpopMode,
    metadata: &AuthorizationMetadata,
    challenge: Option<&str>,
) -> Result<Option<DpopKey>, OAuthError> {
    let supported = supports_es256(metadata);
    let wanted = challenge.is_some_and(is_dpop_challenge);
    let issuer = || {
        metadata
            .issuer
            .clone()
            .unwrap_or_else(|| metadata.token_endpoint.clone())
    };
    match mode {
        DpopMode::Off => Ok(None),
        DpopMode::Auto if !supported && !wanted => Ok(None),
        _ if supported => DpopKey::generate().map(Some),
        _ => Err(failed(format!(
            "{} wants DPoP-bound tokens, but the authorization server {} does not list ES256 in `dpop_signing_alg_values_supported`",
            if mode == DpopMode::Required {
                "`auth: dpop: required`"
            } else {
                "the server"
            },
            issuer()
        ))),
    }
}

/// An authorization manager for the token requests of a login bound to
/// `key` (none: the usual one), for the resource `resource`: each request
/// carries a proof, and a `use_dpop_nonce` refusal is retried once with
/// the nonce. Its requests follow no redirects and reach the addresses
/// rmcp's would (see [`Policy`]).
pub(crate) async fn token_manager(
    resource: &str,
    key: Option<&DpopKey>,
) -> Result<AuthorizationManager, AuthError> {
    let Some(key) = key else {
        return AuthorizationManager::new_allowing_private_addresses(resource).await;
    };
    let policy = Policy::for_server(resource);
    let http = reqwest::Client::builder()
        .timeout(REQUEST_WAIT)
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(policy))
        .build()
        .map_err(|e| AuthError::InternalError(e.to_string()))?;
    let client = ProvingClient {
        http,
        policy,
        key: key.clone(),
        nonces: Nonces::default(),
    };
    AuthorizationManager::new_with_oauth_http_client(resource, Arc::new(client)).await
}

/// The OAuth HTTP client of a DPoP-bound login's token requests.
struct ProvingClient {
    /// Refuses the addresses [`Policy`] refuses, as rmcp's own client does.
    http: reqwest::Client,
    policy: Policy,
    key: DpopKey,
    nonces: Nonces,
}

impl ProvingClient {
    async fn send(
        &self,
        request: &oauth2::HttpRequest,
        timeout: Option<std::time::Duration>,
    ) -> Result<(oauth2::HttpResponse, bool), OAuthHttpClientError> {
        let url = request.uri().to_string();
        if !self.policy.allows_url(&url) {
            return Err(Box::new(failed(format!(
                "{} is an address pipewright's OAuth requests may not reach",
                htu(&url)
            ))));
        }
        let mut builder = self
            .http
            .request(request.method().clone(), &url)
            .headers(request.headers().clone())
            .body(request.body().clone());
        if let Some(timeout) = timeout {
            builder = builder.timeout(timeout);
        }
        if request.method() == reqwest::Method::POST {
            let nonce = self.nonces.get(&url);
            let proof = self.key.proof("POST", &url, nonce.as_deref(), None)?;
            builder = builder.header(PROOF_HEADER, proof);
        }
        let response = builder.send().await?;
        let fresh = self.nonces.keep(&url, response.headers());
        let mut answer = oauth2::http::Response::builder()
            .status(response.status())
            .version(response.version());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        if response
            .content_length()
            .is_some_and(|n| n > MAX_ANSWER_BYTES as u64)
        {
            return Err(Box::new(failed(
                "the authorization server's answer is too large",
            )));
        }
        let body = response.bytes().await?;
        if body.len() > MAX_ANSWER_BYTES {
            return Err(Box::new(failed(
                "the authorization server's answer is too large",
            )));
        }
        Ok((answer.body(body.to_vec())?, fresh))
    }
}

/// True for an authorization server's `use_dpop_nonce` error (RFC 9449 §8).
fn wants_nonce(response: &oauth2::HttpResponse) -> bool {
    response.status() == reqwest::StatusCode::BAD_REQUEST
        && serde_json::from_slice::<serde_json::Value>(response.body())
            .ok()
            .is_some_and(|v| v["error"] == "use_dpop_nonce")
}

impl OAuthHttpClient for ProvingClient {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let OAuthHttpRequest {
                request, timeout, ..
            } = request;
            let (response, fresh) = self.send(&request, timeout).await?;
            if fresh && wants_nonce(&response) {
                return Ok(self.send(&request, timeout).await?.0);
            }
            Ok(response)
        })
    }
}

/// The nonce of the server at `url`, learnt from its refusal of a proof
/// without one: RFC 9449 §9 gives it in the `DPoP-Nonce` header of a 401,
/// which the transport does not pass on, so a `ping` with a fresh proof
/// asks again (refused like the request it stands for, it does nothing).
/// `headers` are the request's own (session, protocol version).
pub(crate) async fn learn_nonce(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    key: &DpopKey,
    nonces: &Nonces,
    headers: HeaderMap,
) -> Result<bool, OAuthError> {
    let proof = key.proof("POST", url, nonces.get(url).as_deref(), Some(token))?;
    let ping =
        serde_json::json!({"jsonrpc": "2.0", "id": "pipewright-dpop-nonce", "method": "ping"});
    let response = http
        .post(url)
        .headers(headers)
        .header(
            reqwest::header::ACCEPT,
            "application/json, text/event-stream",
        )
        .header(reqwest::header::AUTHORIZATION, format!("DPoP {token}"))
        .header(PROOF_HEADER, proof)
        .timeout(REQUEST_WAIT)
        .json(&ping)
        .send()
        .await
        .map_err(|e| OAuthError::Unreachable {
            url: htu(url),
            reason: deepest(&e),
        })?;
    Ok(nonces.keep(url, response.headers()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn claims(proof: &str) -> (serde_json::Value, serde_json::Value) {
        let part = |i: usize| {
            let text = proof.split('.').nth(i).expect("part");
            serde_json::from_slice(&unbase64url(text).expect("base64url")).expect("json")
        };
        (part(0), part(1))
    }

    #[test]
    fn a_proof_carries_the_public_key_and_fresh_claims() {
        let key = DpopKey::generate().expect("key");
        let proof = key
            .proof(
                "POST",
                "http://as.example/token?x=1#f",
                Some("n1"),
                Some("at"),
            )
            .expect("proof");
        let (header, body) = claims(&proof);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], "ES256");
        assert_eq!(header["jwk"]["crv"], "P-256");
        assert!(header["jwk"].get("d").is_none(), "{header}");
        assert_eq!(body["htm"], "POST");
        assert_eq!(body["htu"], "http://as.example/token");
        assert_eq!(body["nonce"], "n1");
        assert_eq!(
            body["ath"],
            base64(&Sha256::digest(b"at"), true),
            "ath is the token's SHA-256"
        );
        let again = key
            .proof("POST", "http://as.example/token", None, None)
            .expect("proof");
        assert_ne!(
            claims(&again).1["jti"],
            body["jti"],
            "a fresh jti each time"
        );
        assert!(claims(&again).1.get("ath").is_none());
    }

    #[test]
    fn a_proof_verifies_with_its_own_key_and_a_stored_key_signs_alike() {
        let key = DpopKey::generate().expect("key");
        let stored: DpopKey =
            serde_json::from_str(&serde_json::to_string(&key).expect("json")).expect("back");
        let proof = stored
            .proof("GET", "http://rs/mcp", None, None)
            .expect("proof");
        let (input, signature) = proof.rsplit_once('.').expect("signed");
        let (x, y) = (
            unbase64url(&key.x).expect("x"),
            unbase64url(&key.y).expect("y"),
        );
        let public = [&[4u8][..], &x, &y].concat();
        ring::signature::UnparsedPublicKey::new(&ring::signature::ECDSA_P256_SHA256_FIXED, public)
            .verify(input.as_bytes(), &unbase64url(signature).expect("sig"))
            .expect("the signature verifies");
        assert!(!format!("{key:?}").contains(&key.d), "Debug hides d");
    }

    #[rstest]
    #[case(r#"DPoP error="use_dpop_nonce", resource_metadata="x""#, true, true)]
    #[case(r#"DPoP resource_metadata="x""#, true, false)]
    #[case(r#"Bearer error="invalid_token", DPoP algs="ES256""#, true, false)]
    #[case(r#"Bearer error="use_dpop_nonce""#, false, false)]
    fn challenges_are_read(#[case] text: &str, #[case] dpop: bool, #[case] nonce: bool) {
        assert_eq!(is_dpop_challenge(text), dpop, "{text}");
        assert_eq!(is_nonce_challenge(text), nonce, "{text}");
    }

    #[test]
    fn the_mode_and_the_metadata_decide() {
        let metadata = |algs: serde_json::Value| -> AuthorizationMetadata {
            serde_json::from_value(serde_json::json!({
                "issuer": "http://as",
                "authorization_endpoint": "http://as/authorize",
                "token_endpoint": "http://as/token",
                "dpop_signing_alg_values_supported": algs,
            }))
            .expect("metadata")
        };
        let es256 = metadata(serde_json::json!(["ES256"]));
        let none = metadata(serde_json::json!(["RS256"]));
        let key = |m, md: &AuthorizationMetadata, c| key_for_login(m, md, c).map(|k| k.is_some());
        assert_eq!(key(DpopMode::Auto, &es256, None), Ok(true));
        assert_eq!(key(DpopMode::Auto, &none, None), Ok(false));
        assert_eq!(key(DpopMode::Off, &es256, Some("DPoP x=1")), Ok(false));
        assert!(key(DpopMode::Required, &none, None).is_err());
        let e = key(DpopMode::Auto, &none, Some("DPoP x=1")).expect_err("wanted, not possible");
        assert!(e.to_string().contains("ES256"), "{e}");
    }

    #[test]
    fn nonces_are_kept_per_origin() {
        let nonces = Nonces::default();
        let mut headers = HeaderMap::new();
        assert!(!nonces.keep("http://a:1/token", &headers));
        headers.insert(NONCE_HEADER, "n1".parse().expect("value"));
        assert!(nonces.keep("http://a:1/token", &headers));
        assert_eq!(nonces.get("http://a:1/other").as_deref(), Some("n1"));
        assert_eq!(nonces.get("http://a:2/token"), None);
    }

    #[test]
    fn base64url_round_trips() {
        for n in 0..7 {
            let bytes: Vec<u8> = (0..n).map(|i| i * 37 + 5).collect();
            assert_eq!(unbase64url(&base64(&bytes, true)), Some(bytes));
        }
        assert_eq!(unbase64url("a"), None);
        assert_eq!(unbase64url("a+b="), None);
    }
}
