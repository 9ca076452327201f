//! How pipewright identifies itself to a server's authorization server: a
//! server's `auth:` block as the file writes it (strings may hold
//! `${env.X}` / `${var.X}`; `client_secret` and `private_key` must be
//! references), and the same block resolved when the server is connected,
//! or as `auth login`'s flags say: a client id registered out of band
//! (with its secret), a Client ID Metadata Document URL, or the
//! client-credentials grant (a secret or a private key). A server's block
//! travels with its spec (`ServerSpec::Http::auth`), so a connection and
//! its re-authorizations use the block of the file that declares the
//! server, whatever other files one process loads. The assertion grants
//! (`jwt_bearer`, `id_jag`) are in [`super::grant`].

use super::grant::AssertionGrant;

/// The client identity of one server, as written or resolved. `Debug`
/// shows no secret.
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
    /// `grant: client_credentials`: no browser, no user (for CI); else the
    /// browser login.
    pub client_credentials: bool,
    /// A PEM private key (PKCS#8, EC P-256 or RSA) for `private_key_jwt`.
    pub private_key: Option<String>,
    /// Scopes to ask for; empty: what the server names.
    pub scopes: Vec<String>,
    /// `grant: jwt_bearer` or `grant: id_jag`: the token comes from an
    /// assertion (no browser, no user). Boxed: most servers have none.
    pub assertion_grant: Option<Box<AssertionGrant>>,
    /// Whether tokens are bound to a proof key (DPoP, RFC 9449).
    pub dpop: DpopMode,
}

/// When pipewright binds a server's tokens to a proof key with DPoP
/// (RFC 9449): `auth: { dpop: auto | required | off }`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DpopMode {
    /// When the authorization server lists ES256 in its
    /// `dpop_signing_alg_values_supported`.
    #[default]
    Auto,
    /// Always; a login fails when the authorization server cannot.
    Required,
    /// Never: tokens are bearer tokens.
    Off,
}

impl DpopMode {
    /// The mode a file or a flag names (`auto`, `required`, `off`).
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "auto" => Some(Self::Auto),
            "required" => Some(Self::Required),
            "off" => Some(Self::Off),
            _ => None,
        }
    }
}

impl AuthConfig {
    /// The block with each string passed through `text`, which is told
    /// whether the string is a secret (`client_secret`, `private_key`):
    /// the file's block resolved for a connection.
    pub fn resolved<E>(
        &self,
        mut text: impl FnMut(&str, bool) -> Result<String, E>,
    ) -> Result<AuthConfig, E> {
        let mut opt =
            |v: &Option<String>, secret: bool| v.as_deref().map(|s| text(s, secret)).transpose();
        Ok(AuthConfig {
            client_id: opt(&self.client_id, false)?,
            client_secret: opt(&self.client_secret, true)?,
            client_id_url: opt(&self.client_id_url, false)?,
            client_credentials: self.client_credentials,
            private_key: opt(&self.private_key, true)?,
            scopes: self.scopes.clone(),
            assertion_grant: self
                .assertion_grant
                .as_ref()
                .map(|g| g.resolved(&mut text).map(Box::new))
                .transpose()?,
            dpop: self.dpop,
        })
    }
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
            .field("assertion_grant", &self.assertion_grant)
            .field("dpop", &self.dpop)
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

    #[test]
    fn resolving_tells_which_strings_are_secrets() {
        let written = AuthConfig {
            client_id: Some("${var.ID}".into()),
            client_secret: Some("${env.S}".into()),
            scopes: vec!["a".into()],
            ..AuthConfig::default()
        };
        let resolved = written
            .resolved(|s, secret| Ok::<_, ()>(format!("{s}:{secret}")))
            .expect("resolves");
        assert_eq!(resolved.client_id.as_deref(), Some("${var.ID}:false"));
        assert_eq!(resolved.client_secret.as_deref(), Some("${env.S}:true"));
        assert_eq!(resolved.private_key, None);
        assert_eq!(resolved.scopes, ["a"]);
    }
}
