//! A server's `auth:` block: how pipewright identifies itself to the
//! server's OAuth authorization server (client id, Client ID Metadata
//! Document URL, client-credentials grant with a secret or a key) and
//! whether its tokens are bound to a proof key (DPoP).

use super::*;
use crate::file::keys::AUTH_KEYS;
use crate::file::model::{AuthConfig, DpopMode};

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
        for (key, _, val) in pairs {
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
                    Some("client_credentials") => out.client_credentials = true,
                    Some("authorization_code") | None => {}
                    Some(other) => self.err_hint(
                        val.span,
                        format!("unknown grant `{other}` in {field}"),
                        "use `authorization_code` (a browser login, the default) or `client_credentials`",
                    ),
                },
                _ => out.scopes = self.string_list(val, &field),
            }
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
