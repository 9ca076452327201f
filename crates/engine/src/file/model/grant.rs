//! The assertion grants of a server's `auth:` block, where no user and no
//! client secret of its own obtain the token: `grant: jwt_bearer`, a
//! workload's platform-issued JWT presented as an RFC 7523 authorization
//! grant (workload identity federation, MCP's SEP-1933), and
//! `grant: id_jag`, a user's ID token traded at the enterprise identity
//! provider for an Identity Assertion JWT Authorization Grant (RFC 8693
//! token exchange), which is then presented the same way
//! (enterprise-managed authorization, SEP-990). Each says where its
//! assertion comes from: a reference, a file read afresh for every token
//! request, or a command's output.

/// Where an assertion (a workload JWT, an ID token) comes from. It is a
/// secret: `Debug` shows where it comes from, never a value.
#[derive(Clone, PartialEq, Eq)]
pub enum AssertionSource {
    /// The text itself, as a `${env.X}` reference (resolved when the
    /// server is connected).
    Value(String),
    /// A file holding it, read on each token request: runners rotate the
    /// tokens they mount (Kubernetes projected service account tokens,
    /// cloud metadata files).
    File(String),
    /// A program and its arguments whose standard output is it, run on
    /// each token request (`gcloud auth print-identity-token`, a script
    /// asking the CI runner for an OIDC token).
    Command(Vec<String>),
}

impl std::fmt::Debug for AssertionSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AssertionSource::Value(_) => f.write_str("Value(…)"),
            AssertionSource::File(path) => f.debug_tuple("File").field(path).finish(),
            // The arguments may come from secrets (`${env.X}`): the
            // program only.
            AssertionSource::Command(argv) => f
                .debug_tuple("Command")
                .field(&argv.first().map_or("", String::as_str))
                .field(&format_args!(
                    "… {} argument(s)",
                    argv.len().saturating_sub(1)
                ))
                .finish(),
        }
    }
}

/// The enterprise identity provider of `grant: id_jag`: where the ID
/// token is traded for an ID-JAG, and as which client.
#[derive(Clone, PartialEq, Eq)]
pub struct IdentityProvider {
    /// The provider's issuer; its token endpoint is read from its OpenID
    /// Connect (or RFC 8414) metadata when `token_endpoint` is not given.
    pub issuer: Option<String>,
    /// The provider's token endpoint.
    pub token_endpoint: Option<String>,
    /// pipewright's client id at the provider.
    pub client_id: String,
    /// Its secret there (`client_secret_basic`), if it is a confidential
    /// client.
    pub client_secret: Option<String>,
    /// The user's ID token from the provider (the token exchange's subject
    /// token).
    pub id_token: AssertionSource,
}

impl std::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("id_token", &self.id_token)
            .finish()
    }
}

/// An assertion grant: the token comes from the authorization server's
/// RFC 7523 JWT bearer grant, with the assertion this says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AssertionGrant {
    /// `grant: jwt_bearer`: the workload's own JWT is the assertion.
    JwtBearer(AssertionSource),
    /// `grant: id_jag`: the assertion is the ID-JAG the identity provider
    /// issues for the user's ID token.
    IdJag(IdentityProvider),
}

impl AssertionSource {
    /// The source with each string passed through `text` (told whether
    /// it is a secret: the value itself, and a command's argument read
    /// from the environment, as a stdio server's `env:` values are).
    pub fn resolved<E>(
        &self,
        text: &mut impl FnMut(&str, bool) -> Result<String, E>,
    ) -> Result<AssertionSource, E> {
        Ok(match self {
            AssertionSource::Value(v) => AssertionSource::Value(text(v, true)?),
            AssertionSource::File(p) => AssertionSource::File(text(p, false)?),
            AssertionSource::Command(argv) => AssertionSource::Command(
                argv.iter()
                    .map(|a| text(a, a.contains("${env.")))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
}

impl AssertionGrant {
    /// The grant's name in `auth.grant`.
    pub fn key(&self) -> &'static str {
        match self {
            AssertionGrant::JwtBearer(_) => "jwt_bearer",
            AssertionGrant::IdJag(_) => "id_jag",
        }
    }

    /// The grant with each string passed through `text`, as
    /// [`super::AuthConfig::resolved`] does.
    pub fn resolved<E>(
        &self,
        text: &mut impl FnMut(&str, bool) -> Result<String, E>,
    ) -> Result<AssertionGrant, E> {
        Ok(match self {
            AssertionGrant::JwtBearer(source) => AssertionGrant::JwtBearer(source.resolved(text)?),
            AssertionGrant::IdJag(idp) => {
                let mut opt = |v: &Option<String>, secret: bool| {
                    v.as_deref().map(|s| text(s, secret)).transpose()
                };
                let issuer = opt(&idp.issuer, false)?;
                let token_endpoint = opt(&idp.token_endpoint, false)?;
                let client_secret = opt(&idp.client_secret, true)?;
                AssertionGrant::IdJag(IdentityProvider {
                    issuer,
                    token_endpoint,
                    client_id: text(&idp.client_id, false)?,
                    client_secret,
                    id_token: idp.id_token.resolved(text)?,
                })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_where_an_assertion_comes_from_never_its_value() {
        let grant = AssertionGrant::IdJag(IdentityProvider {
            issuer: Some("https://idp.example".into()),
            token_endpoint: None,
            client_id: "pw".into(),
            client_secret: Some("IDP-SECRET".into()),
            id_token: AssertionSource::Value("ID-TOKEN".into()),
        });
        let shown = format!("{grant:?}");
        assert!(shown.contains("https://idp.example"), "{shown}");
        assert!(
            !shown.contains("IDP-SECRET") && !shown.contains("ID-TOKEN"),
            "{shown}"
        );
        let file = AssertionSource::File("/var/run/token".into());
        assert!(format!("{file:?}").contains("/var/run/token"));
        // A command's arguments may be resolved secrets: the program only.
        let command = AssertionSource::Command(vec!["gcloud".into(), "--token=S3CRET".into()]);
        let shown = format!("{command:?}");
        assert!(
            shown.contains("gcloud") && shown.contains("1 argument"),
            "{shown}"
        );
        assert!(!shown.contains("S3CRET"), "{shown}");
    }

    #[test]
    fn only_the_value_and_the_secret_resolve_as_secrets() {
        let grant = AssertionGrant::IdJag(IdentityProvider {
            issuer: Some("i".into()),
            token_endpoint: None,
            client_id: "c".into(),
            client_secret: Some("s".into()),
            id_token: AssertionSource::Value("v".into()),
        });
        let resolved = grant
            .resolved(&mut |s, secret| Ok::<_, ()>(format!("{s}:{secret}")))
            .expect("resolves");
        let AssertionGrant::IdJag(idp) = resolved else {
            panic!("still id_jag")
        };
        assert_eq!(idp.issuer.as_deref(), Some("i:false"));
        assert_eq!(idp.client_id, "c:false");
        assert_eq!(idp.client_secret.as_deref(), Some("s:true"));
        assert_eq!(idp.id_token, AssertionSource::Value("v:true".into()));
        let command = AssertionSource::Command(vec!["print-token".into(), "${env.AUD}".into()]);
        assert_eq!(
            command
                .resolved(&mut |s, secret| Ok::<_, ()>(format!("{s}:{secret}")))
                .expect("resolves"),
            AssertionSource::Command(vec!["print-token:false".into(), "${env.AUD}:true".into()])
        );
    }
}
