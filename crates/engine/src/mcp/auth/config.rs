//! How pipewright identifies itself to a server's authorization server, as
//! a pipeline file's `auth:` block or `auth login`'s flags say: a client id
//! registered out of band (with its secret), a Client ID Metadata Document
//! URL, or the client-credentials grant (a secret or a private key). The
//! servers of a loaded file declare theirs here, by canonical URL, so every
//! connection to that URL (and its re-authorizations) uses it.

use std::{
    collections::HashMap,
    sync::{Mutex, PoisonError},
};

use super::store::canonical_url;

/// The client identity of one server. `Debug` shows no secret.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AuthConfig {
    /// A client id registered with the authorization server out of band.
    pub client_id: Option<String>,
    /// The secret of `client_id` (confidential client, or client
    /// credentials with `client_secret_basic` / `client_secret_post`).
    pub client_secret: Option<String>,
    /// The https URL of a Client ID Metadata Document the user hosts; used
    /// as the client id when the authorization server advertises
    /// `client_id_metadata_document_supported`.
    pub client_id_url: Option<String>,
    /// Use the client-credentials grant (no browser, no user): for CI.
    pub client_credentials: bool,
    /// A PEM private key (PKCS#8, EC P-256 or RSA) for `private_key_jwt`.
    pub private_key: Option<String>,
    /// Scopes to ask for; empty: what the server names.
    pub scopes: Vec<String>,
}

impl std::fmt::Debug for AuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthConfig")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("client_id_url", &self.client_id_url)
            .field("client_credentials", &self.client_credentials)
            .field("private_key", &self.private_key.as_ref().map(|_| "…"))
            .field("scopes", &self.scopes)
            .finish()
    }
}

static DECLARED: Mutex<Option<HashMap<String, AuthConfig>>> = Mutex::new(None);

/// Records the `auth:` block of the server at `url` for this process.
pub fn declare(url: &str, config: AuthConfig) {
    let Ok(key) = canonical_url(url) else { return };
    DECLARED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get_or_insert_with(HashMap::new)
        .insert(key, config);
}

/// The `auth:` block declared for the server at `url`, if any.
pub fn declared(url: &str) -> Option<AuthConfig> {
    let key = canonical_url(url).ok()?;
    DECLARED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()?
        .get(&key)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declaration_is_found_by_any_spelling_of_its_url_and_hides_secrets() {
        let config = AuthConfig {
            client_id: Some("ci".into()),
            client_secret: Some("cs-SECRET".into()),
            client_credentials: true,
            ..AuthConfig::default()
        };
        declare("http://127.0.0.1:7/declared/", config.clone());
        assert_eq!(declared("HTTP://127.0.0.1:7/declared"), Some(config));
        assert_eq!(declared("http://127.0.0.1:7/other"), None);
        let shown = format!("{:?}", declared("http://127.0.0.1:7/declared"));
        assert!(!shown.contains("SECRET"), "{shown}");
    }
}
