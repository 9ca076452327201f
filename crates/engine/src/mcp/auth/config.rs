//! How pipewright identifies itself to a server's authorization server, as
//! a pipeline file's `auth:` block or `auth login`'s flags say: a client id
//! registered out of band (with its secret), a Client ID Metadata Document
//! URL, or the client-credentials grant (a secret or a private key). A
//! server's block travels with its spec (`ServerSpec::Http::auth`), so a
//! connection and its re-authorizations use the block of the file that
//! declares the server, whatever other files one process loads.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_secret_and_the_key() {
        let config = AuthConfig {
            client_id: Some("ci".into()),
            client_secret: Some("cs-SECRET".into()),
            client_credentials: true,
            private_key: Some("KEY-PEM".into()),
            ..AuthConfig::default()
        };
        let shown = format!("{config:?}");
        assert!(shown.contains("ci"), "{shown}");
        assert!(
            !shown.contains("SECRET") && !shown.contains("KEY-PEM"),
            "{shown}"
        );
    }
}
