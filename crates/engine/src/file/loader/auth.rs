//! A server's `auth:` block: how pipewright identifies itself to the
//! server's OAuth authorization server (client id, Client ID Metadata
//! Document URL, client-credentials grant with a secret or a key, or an
//! assertion grant: a workload's JWT, or an enterprise identity
//! provider's ID-JAG) and whether its tokens are bound to a proof key
//! (DPoP).

use super::*;
use crate::file::keys::{ASSERTION_SOURCE_KEYS, AUTH_KEYS, IDENTITY_PROVIDER_KEYS};
use crate::file::model::{AssertionGrant, AssertionSource, AuthConfig, DpopMode, IdentityProvider};

/// The grants `auth.grant` names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GrantName {
    AuthorizationCode,
    ClientCredentials,
    JwtBearer,
    IdJag,
}

impl<'s> Loader<'s> {
    /// The `auth:` of the server declaration `decl`, if it has one.
    pub(super) fn server_auth(
        &mut self,
        name: &str,
        source: &ServerSource,
        decl: &YNode,
    ) -> Option<AuthConfig> {
        let v = decl.as_map().and(decl.get("auth"))?;
        if !matches!(source, ServerSource::Http { .. }) {
            self.err(
                v.span,
                format!("server `{name}` has `auth:`, which only an HTTP (`url:`) server takes"),
            );
            return None;
        }
        let what = format!("`auth` of server `{name}`");
        let pairs = self.mapping(v, AUTH_KEYS, &what)?;
        let mut out = AuthConfig::default();
        let mut grant = GrantName::AuthorizationCode;
        let (mut assertion, mut idp) = (None, None);
        for (key, k, val) in pairs {
            let field = format!("`auth.{key}`");
            match &*key {
                "client_id" => out.client_id = self.string(val, &field),
                "client_id_url" => {
                    out.client_id_url = self.string(val, &field);
                    if let Some(url) = &out.client_id_url
                        && !url.starts_with("https://")
                        && !url.contains("${")
                    {
                        self.err_hint(
                            val.span,
                            format!("{field} must be an https:// URL"),
                            "authorization servers fetch the Client ID Metadata Document over https",
                        );
                    }
                }
                "client_secret" | "private_key" => {
                    let text = self.string(val, &field);
                    if text.as_deref().is_some_and(|t| !t.contains("${")) {
                        self.err_secret(
                            val.span,
                            format!("{field} must be a reference such as `${{env.CLIENT_SECRET}}`"),
                            "a secret written in the file would be committed and shared with it",
                        );
                    }
                    if key == "client_secret" {
                        out.client_secret = text;
                    } else {
                        out.private_key = text;
                    }
                }
                "dpop" => {
                    if let Some(text) = self.string(val, &field) {
                        match DpopMode::parse(&text) {
                            Some(mode) => out.dpop = mode,
                            None => self.err_hint(
                                val.span,
                                format!("unknown {field} `{text}`"),
                                "use `auto` (when the authorization server supports it, the default), `required` or `off`",
                            ),
                        }
                    }
                }
                "grant" => match self.string(val, &field).as_deref() {
                    Some("client_credentials") => {
                        out.client_credentials = true;
                        grant = GrantName::ClientCredentials;
                    }
                    Some("jwt_bearer") => grant = GrantName::JwtBearer,
                    Some("id_jag") => grant = GrantName::IdJag,
                    Some("authorization_code") | None => {}
                    Some(other) => self.err_hint(
                        val.span,
                        format!("unknown grant `{other}` in {field}"),
                        "use `authorization_code` (a browser login, the default), `client_credentials`, `jwt_bearer` (a workload's JWT) or `id_jag` (an enterprise identity provider's grant)",
                    ),
                },
                "assertion" => assertion = Some((k.span, self.assertion_source(val, &field))),
                "identity_provider" => idp = Some((k.span, self.identity_provider(val, &field))),
                _ => out.scopes = self.string_list(val, &field),
            }
        }
        out.assertion_grant = self
            .assertion_grant(&what, v.span, grant, assertion, idp)
            .map(Box::new);
        if matches!(grant, GrantName::JwtBearer)
            && out.client_id.is_none()
            && (out.client_secret.is_some() || out.private_key.is_some())
        {
            self.err_hint(
                v.span,
                format!("{what}: a client secret or key beside `grant: jwt_bearer` needs `client_id`"),
                "the secret or key authenticates the client the authorization server knows by that id; without it nothing would be sent",
            );
        }
        if matches!(grant, GrantName::IdJag) && out.client_id.is_none() {
            self.err_hint(
                v.span,
                format!("{what}: `grant: id_jag` needs `client_id`"),
                "the identity provider issues the grant to the client id the authorization server knows pipewright by",
            );
        }
        if out.client_credentials && out.client_id.is_none() {
            self.err(
                v.span,
                format!("{what}: `grant: client_credentials` needs `client_id`"),
            );
        }
        if out.client_credentials && out.client_secret.is_none() && out.private_key.is_none() {
            self.err(
                v.span,
                format!(
                    "{what}: `grant: client_credentials` needs `client_secret` or `private_key`"
                ),
            );
        }
        Some(out)
    }

    /// The assertion grant `grant` names, from the block's `assertion`
    /// and `identity_provider` (each with its key's span, and what it
    /// loaded to); an error at the block or the key for what does not fit.
    fn assertion_grant(
        &mut self,
        what: &str,
        block: Span,
        grant: GrantName,
        assertion: Option<(Span, Option<AssertionSource>)>,
        idp: Option<(Span, Option<IdentityProvider>)>,
    ) -> Option<AssertionGrant> {
        if grant != GrantName::JwtBearer
            && let Some((span, _)) = &assertion
        {
            self.err_hint(
                *span,
                format!("{what}: `assertion` is for `grant: jwt_bearer`"),
                "a workload's JWT is presented with `grant: jwt_bearer`; an ID token goes in `identity_provider.id_token` with `grant: id_jag`",
            );
        }
        if grant != GrantName::IdJag
            && let Some((span, _)) = &idp
        {
            self.err(
                *span,
                format!("{what}: `identity_provider` is for `grant: id_jag`"),
            );
        }
        match grant {
            GrantName::JwtBearer => match assertion {
                Some((_, source)) => source.map(AssertionGrant::JwtBearer),
                None => {
                    self.err_hint(
                        block,
                        format!("{what}: `grant: jwt_bearer` needs `assertion`"),
                        "the workload's JWT: `assertion: { file: PATH }`, `assertion: { command: [PROGRAM, ARGS…] }` or `assertion: \"${env.TOKEN}\"`",
                    );
                    None
                }
            },
            GrantName::IdJag => match idp {
                Some((_, provider)) => provider.map(AssertionGrant::IdJag),
                None => {
                    self.err_hint(
                        block,
                        format!("{what}: `grant: id_jag` needs `identity_provider`"),
                        "the enterprise identity provider: its `issuer` or `token_endpoint`, pipewright's `client_id` there and the user's `id_token`",
                    );
                    None
                }
            },
            GrantName::AuthorizationCode | GrantName::ClientCredentials => None,
        }
    }

    /// `identity_provider: {issuer | token_endpoint, client_id,
    /// client_secret?, id_token}`.
    fn identity_provider(&mut self, v: &YNode, what: &str) -> Option<IdentityProvider> {
        let pairs = self.mapping(v, IDENTITY_PROVIDER_KEYS, what)?;
        let (mut issuer, mut token_endpoint, mut client_id, mut client_secret) =
            (None, None, None, None);
        let mut id_token = None;
        for (key, _, val) in pairs {
            let field = format!("`auth.identity_provider.{key}`");
            match &*key {
                "issuer" => issuer = self.endpoint_url(val, &field),
                "token_endpoint" => token_endpoint = self.endpoint_url(val, &field),
                "client_id" => client_id = self.string(val, &field),
                "client_secret" => client_secret = self.secret_reference(val, &field),
                _ => id_token = self.assertion_source(val, &field),
            }
        }
        if issuer.is_none() && token_endpoint.is_none() {
            self.err(v.span, format!("{what} needs `issuer` or `token_endpoint`"));
        }
        let mut need = |present: bool, key: &str| {
            if !present {
                self.err(v.span, format!("{what} needs `{key}`"));
            }
        };
        need(client_id.is_some(), "client_id");
        need(
            id_token.is_some() || v.get("id_token").is_some(),
            "id_token",
        );
        Some(IdentityProvider {
            issuer,
            token_endpoint,
            client_id: client_id?,
            client_secret,
            id_token: id_token?,
        })
    }

    /// An assertion: a `${env.X}` reference, or `{file: PATH}` or
    /// `{command: [PROGRAM, ARGS…]}`.
    fn assertion_source(&mut self, v: &YNode, what: &str) -> Option<AssertionSource> {
        if v.as_map().is_none() {
            return self.secret_reference(v, what).map(AssertionSource::Value);
        }
        let pairs = self.mapping(v, ASSERTION_SOURCE_KEYS, what)?;
        if pairs.len() != 1 {
            self.err(v.span, format!("{what} takes one of `file` or `command`"));
            return None;
        }
        let (key, _, val) = pairs.into_iter().next()?;
        let field = format!("`{key}` of {what}");
        if key == "file" {
            return self.name(val, &field).map(AssertionSource::File);
        }
        let argv = match val.as_seq() {
            Some(_) => self.string_list(val, &field),
            // A plain string: the program alone (no shell is involved).
            None => self.name(val, &field).into_iter().collect(),
        };
        if argv.first().is_none_or(|p| p.trim().is_empty()) {
            self.err(val.span, format!("{field} must name a program"));
            return None;
        }
        Some(AssertionSource::Command(argv))
    }

    /// A secret's text, which must be a `${env.X}`-style reference.
    fn secret_reference(&mut self, v: &YNode, what: &str) -> Option<String> {
        let text = self.string(v, what)?;
        if !text.contains("${") {
            self.err_secret(
                v.span,
                format!("{what} must be a reference such as `${{env.TOKEN}}`"),
                "a secret written in the file would be committed and shared with it",
            );
        }
        Some(text)
    }

    /// An https URL, or http to a loopback address (or one with a
    /// reference in it): an identity provider is sent ID tokens and
    /// secrets.
    fn endpoint_url(&mut self, v: &YNode, what: &str) -> Option<String> {
        let url = self.string(v, what)?;
        let loopback = ["http://localhost", "http://127.0.0.1", "http://[::1]"]
            .iter()
            .any(|l| {
                url.strip_prefix(l)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '/']))
            });
        if !url.contains("${") && !url.starts_with("https://") && !loopback {
            self.err(
                v.span,
                format!("{what} must be an https:// URL (http:// only to a loopback address)"),
            );
        }
        Some(url)
    }
}

#[cfg(test)]
mod tests {
    use crate::file::loader::load_native_str;
    use crate::file::model::{AuthConfig, DpopMode};

    fn load(auth: &str, server: &str) -> (Option<AuthConfig>, Vec<String>) {
        let source = format!(
            "servers:\n  api:\n    {server}\n    auth: {auth}\npipe:\n  - {{ id: a, tool: t }}\n"
        );
        let loaded = load_native_str(&source);
        let errors = loaded.errors().map(|d| d.message.clone()).collect();
        let decl = loaded
            .pipeline
            .as_ref()
            .and_then(|p| p.servers.get("api"))
            .and_then(|s| s.auth.clone());
        (decl, errors)
    }

    #[test]
    fn an_auth_block_is_read_with_its_references() {
        let (decl, errors) = load(
            "{ grant: client_credentials, client_id: ci, private_key: \"${env.KEY}\", scopes: [a, b] }",
            "url: https://mcp.example/mcp",
        );
        assert!(errors.is_empty(), "{errors:?}");
        let decl = decl.expect("auth");
        assert!(decl.client_credentials);
        assert_eq!(decl.private_key.as_deref(), Some("${env.KEY}"));
        assert_eq!(decl.scopes, ["a", "b"]);
        let (decl, errors) = load(
            "{ client_id_url: https://me.example/client.json }",
            "url: https://mcp.example/mcp",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            decl.and_then(|d| d.client_id_url).as_deref(),
            Some("https://me.example/client.json")
        );
    }

    #[test]
    fn dpop_is_auto_unless_the_block_says() {
        let (decl, _) = load("{ client_id: x }", "url: https://h/mcp");
        assert_eq!(decl.map(|d| d.dpop), Some(DpopMode::Auto));
        for (text, mode) in [("required", DpopMode::Required), ("off", DpopMode::Off)] {
            let (decl, errors) = load(&format!("{{ dpop: {text} }}"), "url: https://h/mcp");
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(decl.map(|d| d.dpop), Some(mode));
        }
    }

    #[test]
    fn assertion_grants_are_read_with_where_their_assertion_comes_from() {
        use crate::file::model::{AssertionGrant, AssertionSource, IdentityProvider};
        let url = "url: https://mcp.example/mcp";
        for (assertion, source) in [
            (
                "{ file: /var/run/secrets/tokens/mcp }",
                AssertionSource::File("/var/run/secrets/tokens/mcp".into()),
            ),
            (
                "{ command: [print-token, --audience, as] }",
                AssertionSource::Command(vec![
                    "print-token".into(),
                    "--audience".into(),
                    "as".into(),
                ]),
            ),
            (
                "{ command: print-token }",
                AssertionSource::Command(vec!["print-token".into()]),
            ),
            (
                "\"${env.WORKLOAD_JWT}\"",
                AssertionSource::Value("${env.WORKLOAD_JWT}".into()),
            ),
        ] {
            let (decl, errors) = load(
                &format!("{{ grant: jwt_bearer, assertion: {assertion} }}"),
                url,
            );
            assert!(errors.is_empty(), "{assertion}: {errors:?}");
            let decl = decl.expect("auth");
            assert_eq!(
                decl.assertion_grant.as_deref(),
                Some(&AssertionGrant::JwtBearer(source))
            );
            assert!(!decl.client_credentials);
        }
        let (decl, errors) = load(
            "{ grant: id_jag, client_id: mcp-client, client_secret: \"${env.S}\", identity_provider: { issuer: https://idp.example, client_id: pw, id_token: { file: id.jwt } } }",
            url,
        );
        assert!(errors.is_empty(), "{errors:?}");
        let decl = decl.expect("auth");
        assert_eq!(decl.client_secret.as_deref(), Some("${env.S}"));
        assert_eq!(
            decl.assertion_grant.as_deref(),
            Some(&AssertionGrant::IdJag(IdentityProvider {
                issuer: Some("https://idp.example".into()),
                token_endpoint: None,
                client_id: "pw".into(),
                client_secret: None,
                id_token: AssertionSource::File("id.jwt".into()),
            }))
        );
    }

    #[test]
    fn bad_assertion_grants_are_errors_at_the_line_that_say_why() {
        let url = "url: https://h/mcp";
        let idp = "identity_provider: { token_endpoint: https://idp/token, client_id: pw, id_token: \"${env.T}\" }";
        for (auth, says) in [
            (
                "{ grant: jwt_bearer }",
                "`grant: jwt_bearer` needs `assertion`",
            ),
            (
                "{ grant: jwt_bearer, assertion: eyJhbGc.e30.sig }",
                "must be a reference",
            ),
            (
                "{ grant: jwt_bearer, assertion: { file: a, command: b } }",
                "takes one of `file` or `command`",
            ),
            (
                "{ grant: jwt_bearer, assertion: {} }",
                "takes one of `file` or `command`",
            ),
            (
                "{ grant: jwt_bearer, assertion: { command: [] } }",
                "must name a program",
            ),
            (
                "{ grant: jwt_bearer, assertion: { path: a } }",
                "unknown key `path`",
            ),
            (
                "{ assertion: { file: a } }",
                "`assertion` is for `grant: jwt_bearer`",
            ),
            (
                &format!("{{ grant: jwt_bearer, assertion: {{ file: a }}, {idp} }}"),
                "`identity_provider` is for `grant: id_jag`",
            ),
            (
                "{ grant: id_jag, client_id: c }",
                "`grant: id_jag` needs `identity_provider`",
            ),
            (
                &format!("{{ grant: id_jag, {idp} }}"),
                "`grant: id_jag` needs `client_id`",
            ),
            (
                "{ grant: id_jag, client_id: c, identity_provider: { client_id: pw, id_token: { file: t } } }",
                "needs `issuer` or `token_endpoint`",
            ),
            (
                "{ grant: id_jag, client_id: c, identity_provider: { issuer: https://idp, id_token: { file: t } } }",
                "needs `client_id`",
            ),
            (
                "{ grant: id_jag, client_id: c, identity_provider: { issuer: https://idp, client_id: pw } }",
                "needs `id_token`",
            ),
            (
                "{ grant: id_jag, client_id: c, identity_provider: { issuer: idp.example, client_id: pw, id_token: { file: t } } }",
                "must be an https:// URL",
            ),
            (
                "{ grant: id_jag, client_id: c, identity_provider: { issuer: https://idp, client_id: pw, client_secret: s3cret, id_token: { file: t } } }",
                "must be a reference",
            ),
            (
                "{ grant: id_jag, client_id: c, identity_provider: { issuer: http://idp.example, client_id: pw, id_token: { file: t } } }",
                "http:// only to a loopback address",
            ),
            (
                "{ grant: id_jag, client_id: c, identity_provider: { issuer: http://localhost.evil.example, client_id: pw, id_token: { file: t } } }",
                "http:// only to a loopback address",
            ),
            (
                "{ grant: jwt_bearer, client_secret: \"${env.S}\", assertion: { file: a } }",
                "beside `grant: jwt_bearer` needs `client_id`",
            ),
        ] {
            let (_, errors) = load(auth, url);
            assert!(
                errors.iter().any(|e| e.contains(says)),
                "{auth}: {errors:?}"
            );
        }
    }

    #[test]
    fn an_assertion_error_points_at_its_line() {
        let source = "servers:\n  api:\n    url: https://h/mcp\n    auth:\n      grant: jwt_bearer\n      assertion:\n        file: a\n        command: b\npipe:\n  - { id: a, tool: t }\n";
        let loaded = load_native_str(source);
        let error = loaded
            .errors()
            .find(|d| d.message.contains("takes one of"))
            .expect("an error");
        assert_eq!(error.span.start.line, 7, "{error:?}");
        let missing = "servers:\n  api:\n    url: https://h/mcp\n    auth:\n      grant: jwt_bearer\npipe:\n  - { id: a, tool: t }\n";
        let loaded = load_native_str(missing);
        let error = loaded
            .errors()
            .find(|d| d.message.contains("needs `assertion`"))
            .expect("an error");
        assert_eq!(error.span.start.line, 5, "{error:?}");
    }

    #[test]
    fn bad_auth_blocks_are_errors_that_say_why() {
        for (auth, server, says) in [
            (
                "{ client_id: x }",
                "command: demo",
                "only an HTTP (`url:`) server",
            ),
            (
                "{ client_id: x, client_secret: s3cret }",
                "url: https://h/mcp",
                "must be a reference",
            ),
            (
                "{ grant: implicit }",
                "url: https://h/mcp",
                "unknown grant `implicit`",
            ),
            (
                "{ grant: client_credentials, client_id: x }",
                "url: https://h/mcp",
                "needs `client_secret` or `private_key`",
            ),
            (
                "{ client_id_url: http://me/c.json }",
                "url: https://h/mcp",
                "must be an https:// URL",
            ),
            (
                "{ dpop: always }",
                "url: https://h/mcp",
                "unknown `auth.dpop` `always`",
            ),
            (
                "{ client_ud: x }",
                "url: https://h/mcp",
                "unknown key `client_ud`",
            ),
        ] {
            let (_, errors) = load(auth, server);
            assert!(
                errors.iter().any(|e| e.contains(says)),
                "{auth}: {errors:?}"
            );
        }
    }
}
