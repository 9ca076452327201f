//! The signed client assertion of `private_key_jwt` (RFC 7523 §2.2): a JWT
//! whose issuer and subject are the client id and whose audience is the
//! authorization server, signed ES256 (EC P-256) or RS256 (RSA) with a
//! PKCS#8 PEM key. Signing is rustls' `ring`, already in the build.

use rustls::SignatureScheme;
use rustls::crypto::ring::sign::any_supported_type;
use rustls::pki_types::{PrivateKeyDer, pem::PemObject};

use super::encode::base64;
use super::error::OAuthError;

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

fn bad_key(reason: impl std::fmt::Display) -> OAuthError {
    OAuthError::ClientCredentials {
        reason: format!("the private key for private_key_jwt is unusable: {reason}"),
    }
}

/// A client assertion for `client_id`, for the authorization server
/// `audience`, issued at `now` (Unix seconds).
pub(crate) fn client_assertion(
    pem: &str,
    client_id: &str,
    audience: &str,
    now: u64,
) -> Result<String, OAuthError> {
    let der = PrivateKeyDer::from_pem_slice(pem.trim().as_bytes())
        .map_err(|_| bad_key("it is not a PEM private key"))?;
    let key = any_supported_type(&der)
        .map_err(|_| bad_key("it is neither an EC P-256 nor an RSA key"))?;
    let (alg, scheme) = match key.algorithm() {
        rustls::SignatureAlgorithm::ECDSA => ("ES256", SignatureScheme::ECDSA_NISTP256_SHA256),
        rustls::SignatureAlgorithm::RSA => ("RS256", SignatureScheme::RSA_PKCS1_SHA256),
        other => return Err(bad_key(format!("{other:?} keys are not supported"))),
    };
    let signer = key
        .choose_scheme(&[scheme])
        .ok_or_else(|| bad_key("an EC key must be on the P-256 curve"))?;
    let header = serde_json::json!({"alg": alg, "typ": "JWT"});
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + LIFETIME_SECS,
        "jti": random_id()?,
    });
    let signing_input = format!(
        "{}.{}",
        base64(header.to_string().as_bytes(), true),
        base64(claims.to_string().as_bytes(), true)
    );
    let signature = signer
        .sign(signing_input.as_bytes())
        .map_err(|e| bad_key(format!("signing failed: {e}")))?;
    let signature = if alg == "ES256" {
        der_to_fixed(&signature).ok_or_else(|| bad_key("the signature is malformed"))?
    } else {
        signature
    };
    Ok(format!("{signing_input}.{}", base64(&signature, true)))
}

/// 16 random bytes in hex, for `jti`.
fn random_id() -> Result<String, OAuthError> {
    let mut bytes = [0u8; 16];
    rustls::crypto::ring::default_provider()
        .secure_random
        .fill(&mut bytes)
        .map_err(|_| bad_key("no random numbers"))?;
    Ok(hex::encode(bytes))
}

/// An ASN.1 DER ECDSA signature (`SEQUENCE { r INTEGER, s INTEGER }`) as
/// the 64-byte `r || s` a JWS ES256 signature is (RFC 7518 §3.4).
fn der_to_fixed(der: &[u8]) -> Option<Vec<u8>> {
    let rest = der.strip_prefix(&[0x30])?;
    let (len, rest) = (usize::from(*rest.first()?), rest.get(1..)?);
    if len != rest.len() {
        return None;
    }
    let mut out = Vec::with_capacity(64);
    let mut rest = rest;
    for _ in 0..2 {
        let body = rest.strip_prefix(&[0x02])?;
        let n = usize::from(*body.first()?);
        let int = body.get(1..1 + n)?;
        rest = body.get(1 + n..)?;
        let int = match int {
            [0, tail @ ..] => tail,
            all => all,
        };
        if int.len() > 32 {
            return None;
        }
        out.extend(std::iter::repeat_n(0u8, 32 - int.len()));
        out.extend_from_slice(int);
    }
    rest.is_empty().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_signatures_become_fixed_width() {
        let der = [0x30, 0x08, 0x02, 0x02, 0x00, 0x80, 0x02, 0x02, 0x01, 0x02];
        let fixed = der_to_fixed(&der).expect("fixed");
        assert_eq!(fixed.len(), 64);
        assert_eq!(fixed[31], 0x80);
        assert_eq!(&fixed[62..], &[1, 2]);
        assert_eq!(der_to_fixed(&der[..9]), None);
    }

    #[test]
    fn a_bad_key_is_a_sentence_without_the_key() {
        let e = client_assertion("not a SECRET key", "c", "http://as", 1).expect_err("bad");
        assert!(e.to_string().contains("not a PEM private key"), "{e}");
        assert!(!e.to_string().contains("SECRET"), "{e}");
    }
}
