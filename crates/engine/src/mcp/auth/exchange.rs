//! The assertion grants of `auth:` (see `file::model::grant`): tokens
//! for a user or a workload that pipewright never logs in as itself.
//!
//! - `grant: jwt_bearer` (workload identity federation, MCP's SEP-1933):
//!   the JWT a platform issued the workload (read from its file or
//!   command afresh for every token request, as such tokens rotate) is
//!   the RFC 7523 §2.1 authorization grant at the MCP server's token
//!   endpoint.
//! - `grant: id_jag` (enterprise-managed authorization, SEP-990, the
//!   Identity Assertion JWT Authorization Grant draft): the user's ID
//!   token is exchanged at the enterprise identity provider's token
//!   endpoint (RFC 8693) for an ID-JAG whose audience is the MCP
//!   server's authorization server and whose resource is the MCP server;
//!   the ID-JAG is then the RFC 7523 grant there, with pipewright's
//!   client authentication as `auth:` configures it.
//!
//! A failed grant is reported, never retried by another grant. No
//! assertion, ID token or ID-JAG is kept or shown: only the access token
//! goes to the token store.

use std::process::Stdio;

use rmcp::transport::auth::{OAuthTokenResponse, StoredCredentials};

use super::dpop::{MAX_ANSWER_BYTES, key_for_login};
use super::error::{OAuthError, deepest};
use super::flow::{REQUEST_WAIT, discover};
use super::store::{TokenRecord, TokenStore, canonical_url, now_secs};
use super::token_request::{
    client_auth, granted, post, read_text, refusal, scopes_to_ask, secure_endpoint,
};
use crate::file::model::{AssertionGrant, AssertionSource, AuthConfig, IdentityProvider};

/// RFC 7523 §2.1's grant type.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// RFC 8693's grant type.
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// RFC 8693 §3's token type of an OpenID Connect ID token.
const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";
/// The ID-JAG draft's token type.
const ID_JAG_TYPE: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The most an assertion, its file or its command's output may weigh: a
/// JWT is a few KiB.
const MAX_ASSERTION_BYTES: u64 = 64 * 1024;

/// The words a grant's errors name it by.
fn grant_name(grant: &AssertionGrant) -> &'static str {
    match grant {
        AssertionGrant::JwtBearer(_) => "workload identity (JWT bearer)",
        AssertionGrant::IdJag(_) => "enterprise-managed (ID-JAG)",
    }
}

/// Obtains a token for the server at `url` by the assertion grant of
/// `config` and keeps it in `store`. `challenge` is the server's
/// `WWW-Authenticate`, when a request got one; `scopes`, when not empty,
/// are asked for instead of the configured or advertised ones.
pub async fn assertion_grant(
    url: &str,
    store: &TokenStore,
    config: &AuthConfig,
    challenge: Option<String>,
    scopes: &[String],
) -> Result<TokenRecord, OAuthError> {
    let Some(grant) = config.assertion_grant.as_deref() else {
        return Err(OAuthError::Assertion {
            grant: "assertion",
            reason: "the server's `auth:` names no `grant: jwt_bearer` or `grant: id_jag`"
                .to_owned(),
        });
    };
    let name = grant_name(grant);
    let failed = |reason: String| OAuthError::Assertion {
        grant: name,
        reason,
    };
    let canonical = canonical_url(url)?;
    let (manager, metadata) = discover(&canonical, challenge.clone()).await?;
    let scopes = scopes_to_ask(scopes, config, &manager).await;
    let endpoint = secure_endpoint(&metadata.token_endpoint, "token endpoint", "assertions")
        .map_err(failed)?;
    let assertion = match grant {
        AssertionGrant::JwtBearer(source) => {
            read_assertion(source, "assertion").await.map_err(failed)?
        }
        AssertionGrant::IdJag(idp) => {
            let audience = metadata.issuer.clone().ok_or_else(|| {
                failed(format!(
                    "the authorization server of {canonical} names no issuer, which the ID-JAG's audience must be"
                ))
            })?;
            id_jag(idp, &audience, &canonical, &scopes)
                .await
                .map_err(failed)?
        }
    };
    let mut form = jwt_bearer_form(&assertion, &canonical, &scopes);
    let basic = client_auth(config, &metadata, &mut form).map_err(|e| match e {
        OAuthError::ClientCredentials { reason } => failed(reason),
        other => other,
    })?;
    // Bound to a proof key where the authorization server or `auth:`
    // wants DPoP, as any other login's token.
    let key = key_for_login(config.dpop, &metadata, challenge.as_deref())?;
    let (status, text) = post(&endpoint, &form, basic.as_ref(), key.as_ref()).await?;
    if !status.is_success() {
        return Err(failed(format!(
            "the authorization server refused it: {}",
            refusal(status, &text)
        )));
    }
    let mut token: OAuthTokenResponse = serde_json::from_str(&text)
        .map_err(|_| failed("the token endpoint's answer is not a token response".to_owned()))?;
    // The grant itself renews the token (a fresh assertion each time); a
    // refresh token would be tried without the client's authentication and
    // refused, so it is not kept.
    token.set_refresh_token(None);
    let granted = granted(&text, scopes);
    let client_id = config.client_id.clone().unwrap_or_default();
    let record = TokenRecord {
        server_url: canonical.clone(),
        resource: canonical,
        metadata,
        client_id: client_id.clone(),
        client_secret: None,
        redirect_uri: String::new(),
        credentials: StoredCredentials::new(client_id, Some(token), granted, Some(now_secs())),
        client_credentials: false,
        dpop: key,
    };
    store.save(&record)?;
    Ok(record)
}

/// The RFC 7523 §2.1 request's form: the grant, its assertion, the
/// RFC 8707 resource, and the scopes (if any).
fn jwt_bearer_form(
    assertion: &str,
    resource: &str,
    scopes: &[String],
) -> Vec<(&'static str, String)> {
    let mut form = vec![
        ("grant_type", JWT_BEARER.to_owned()),
        ("assertion", assertion.to_owned()),
        ("resource", resource.to_owned()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    form
}

/// The RFC 8693 request's form that asks the identity provider for an
/// ID-JAG for the ID token `id_token`: for the authorization server
/// `audience` (its issuer) and the MCP server `resource`.
fn token_exchange_form(
    id_token: &str,
    audience: &str,
    resource: &str,
    scopes: &[String],
) -> Vec<(&'static str, String)> {
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE.to_owned()),
        ("requested_token_type", ID_JAG_TYPE.to_owned()),
        ("audience", audience.to_owned()),
        ("resource", resource.to_owned()),
        ("subject_token", id_token.to_owned()),
        ("subject_token_type", ID_TOKEN_TYPE.to_owned()),
    ];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    form
}

/// The ID-JAG the identity provider `idp` issues for the user's ID token,
/// for the authorization server `audience` and the MCP server `resource`.
async fn id_jag(
    idp: &IdentityProvider,
    audience: &str,
    resource: &str,
    scopes: &[String],
) -> Result<String, String> {
    let endpoint = match (&idp.token_endpoint, &idp.issuer) {
        (Some(endpoint), _) => {
            secure_endpoint(endpoint, "identity provider's token endpoint", "ID tokens")?
        }
        (None, Some(issuer)) => idp_token_endpoint(issuer).await?,
        (None, None) => {
            return Err(
                "`identity_provider` names neither `issuer` nor `token_endpoint`".to_owned(),
            );
        }
    };
    let id_token = read_assertion(&idp.id_token, "ID token").await?;
    let mut form = token_exchange_form(&id_token, audience, resource, scopes);
    let basic = match &idp.client_secret {
        Some(secret) => Some((idp.client_id.clone(), secret.clone())),
        None => {
            form.push(("client_id", idp.client_id.clone()));
            None
        }
    };
    let (status, text) = post(&endpoint, &form, basic.as_ref(), None)
        .await
        .map_err(|e| e.to_string())?;
    if !status.is_success() {
        return Err(format!(
            "the identity provider refused it: {}",
            refusal(status, &text)
        ));
    }
    let answer: serde_json::Value = serde_json::from_str(&text).map_err(|_| {
        "the identity provider's answer to the token exchange is not JSON".to_owned()
    })?;
    let issued = answer["issued_token_type"].as_str().unwrap_or("none");
    if issued != ID_JAG_TYPE {
        return Err(format!(
            "the identity provider issued a token of type `{issued}`, not an ID-JAG ({ID_JAG_TYPE})"
        ));
    }
    answer["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| "the identity provider's answer holds no ID-JAG".to_owned())
}

/// The token endpoint of the identity provider `issuer`, from its OpenID
/// Connect discovery document, else its RFC 8414 metadata; the document's
/// `issuer` must be `issuer` (OpenID Connect Discovery §4.3).
async fn idp_token_endpoint(issuer: &str) -> Result<reqwest::Url, String> {
    // The metadata names where the ID token goes: it is read over TLS too.
    secure_endpoint(issuer, "identity provider's issuer", "ID tokens")?;
    let base = issuer.trim_end_matches('/');
    let parsed = reqwest::Url::parse(issuer)
        .map_err(|e| format!("the identity provider's issuer {issuer} is not a URL: {e}"))?;
    let mut rfc8414 = parsed.clone();
    rfc8414.set_path(&format!(
        "/.well-known/oauth-authorization-server{}",
        parsed.path().trim_end_matches('/')
    ));
    let client = http_client()?;
    let mut tried = Vec::new();
    for url in [
        format!("{base}/.well-known/openid-configuration"),
        rfc8414.to_string(),
    ] {
        let text = match client.get(&url).send().await {
            Ok(r) if r.status().is_success() => {
                read_text(r, MAX_ANSWER_BYTES, "the identity provider").await
            }
            Ok(r) => Err(format!("it answered HTTP {}", r.status().as_u16())),
            Err(e) => Err(deepest(&e)),
        };
        let doc = match text.map(|t| serde_json::from_str::<serde_json::Value>(&t)) {
            Ok(Ok(doc)) => doc,
            Ok(Err(_)) => {
                tried.push(format!("{url} is not JSON"));
                continue;
            }
            Err(why) => {
                tried.push(format!("{url}: {why}"));
                continue;
            }
        };
        let said = doc["issuer"].as_str().unwrap_or_default();
        if said.trim_end_matches('/') != base {
            return Err(format!(
                "the identity provider's metadata at {url} names the issuer `{said}`, not {issuer}"
            ));
        }
        let endpoint = doc["token_endpoint"].as_str().ok_or_else(|| {
            format!("the identity provider's metadata at {url} names no token endpoint")
        })?;
        return secure_endpoint(endpoint, "identity provider's token endpoint", "ID tokens");
    }
    Err(format!(
        "no metadata of the identity provider {issuer} was found ({}); give its `token_endpoint`",
        tried.join("; ")
    ))
}

fn http_client() -> Result<reqwest::Client, String> {
    super::tls::ensure_tls();
    reqwest::Client::builder()
        .timeout(REQUEST_WAIT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| e.to_string())
}

/// The assertion `source` gives (`what` names it in errors): the value,
/// the file's text or the command's output, trimmed. It must look like a
/// JWT (three Base64url parts); what is wrong is said without quoting it.
async fn read_assertion(source: &AssertionSource, what: &str) -> Result<String, String> {
    let (text, whence) = match source {
        AssertionSource::Value(v) => (v.clone(), "the reference".to_owned()),
        AssertionSource::File(path) => (
            read_bounded_file(path, what).await?,
            format!("the file {path}"),
        ),
        AssertionSource::Command(argv) => (
            run(argv, what).await?,
            format!("`{}`", argv.first().map_or("", String::as_str)),
        ),
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("the {what} from {whence} is empty"));
    }
    if !looks_like_jwt(text) {
        return Err(format!(
            "the {what} from {whence} is not a JWT (three Base64url parts joined by dots)"
        ));
    }
    Ok(text.to_owned())
}

/// The text of the file at `path`, refused past [`MAX_ASSERTION_BYTES`]
/// (a wrong path to a large file, or a device, is not read whole).
async fn read_bounded_file(path: &str, what: &str) -> Result<String, String> {
    use tokio::io::AsyncReadExt;

    let cannot =
        |e: std::io::Error| format!("cannot read the {what} file {path}: {}", io_reason(&e));
    let file = tokio::fs::File::open(path).await.map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(MAX_ASSERTION_BYTES + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_ASSERTION_BYTES {
        return Err(format!(
            "the {what} file {path} is over {} KiB, which is no {what}",
            MAX_ASSERTION_BYTES / 1024
        ));
    }
    String::from_utf8(bytes).map_err(|_| format!("the {what} file {path} is not text"))
}

/// An I/O error's reason without the path (which the caller names).
fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    }
}

/// The standard output of `argv`, run without a shell in its own process
/// group, bounded by [`REQUEST_WAIT`] and [`MAX_ASSERTION_BYTES`]; the
/// group is killed once it is read (or given up on), so nothing it started
/// outlives the request. Errors name the program only: its arguments may
/// come from secrets, and its error output, not shown, may hold them.
async fn run(argv: &[String], what: &str) -> Result<String, String> {
    use tokio::io::AsyncReadExt;

    let Some((program, args)) = argv.split_first() else {
        return Err(format!("the {what} command is empty"));
    };
    let shown = program;
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot run `{shown}` for the {what}: {}", io_reason(&e)))?;
    let group = child.id();
    let stdout = child.stdout.take();
    let read = async {
        let mut out = Vec::new();
        if let Some(stdout) = stdout {
            stdout
                .take(MAX_ASSERTION_BYTES + 1)
                .read_to_end(&mut out)
                .await
                .map_err(|e| format!("`{shown}`'s output could not be read: {e}"))?;
        }
        if out.len() as u64 > MAX_ASSERTION_BYTES {
            return Err(format!(
                "`{shown}` printed more than {} KiB, which is no {what}",
                MAX_ASSERTION_BYTES / 1024
            ));
        }
        let status = child
            .wait()
            .await
            .map_err(|e| format!("`{shown}` failed: {e}"))?;
        Ok((out, status))
    };
    let outcome = tokio::time::timeout(REQUEST_WAIT, read).await;
    crate::mcp::child::kill_group(group);
    let (out, status) = outcome.map_err(|_| {
        format!(
            "`{shown}` printed no {what} within {}",
            crate::mcp::error::HumanDuration(REQUEST_WAIT)
        )
    })??;
    if !status.success() {
        return Err(format!(
            "`{shown}` failed ({status}), so there is no {what}"
        ));
    }
    String::from_utf8(out).map_err(|_| format!("`{shown}` printed no text"))
}

/// True when `text` has the shape of a JWS compact serialization.
fn looks_like_jwt(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    parts.len() == 3
        && parts[..2].iter().all(|p| !p.is_empty())
        && parts.iter().all(|p| {
            p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field<'a>(form: &'a [(&str, String)], name: &str) -> Option<&'a str> {
        form.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    const JWT: &str = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ3In0.c2ln";

    #[test]
    fn the_jwt_bearer_request_carries_the_grant_the_assertion_and_the_resource() {
        let form = jwt_bearer_form(JWT, "https://mcp.example/mcp", &["a".into(), "b".into()]);
        assert_eq!(field(&form, "grant_type"), Some(JWT_BEARER));
        assert_eq!(field(&form, "assertion"), Some(JWT));
        assert_eq!(field(&form, "resource"), Some("https://mcp.example/mcp"));
        assert_eq!(field(&form, "scope"), Some("a b"));
        assert_eq!(field(&jwt_bearer_form(JWT, "r", &[]), "scope"), None);
    }

    #[test]
    fn the_token_exchange_asks_for_an_id_jag_for_the_authorization_server() {
        let form = token_exchange_form(JWT, "https://as.example", "https://mcp.example/mcp", &[]);
        assert_eq!(
            field(&form, "grant_type"),
            Some("urn:ietf:params:oauth:grant-type:token-exchange")
        );
        assert_eq!(
            field(&form, "requested_token_type"),
            Some("urn:ietf:params:oauth:token-type:id-jag")
        );
        assert_eq!(field(&form, "audience"), Some("https://as.example"));
        assert_eq!(field(&form, "resource"), Some("https://mcp.example/mcp"));
        assert_eq!(field(&form, "subject_token"), Some(JWT));
        assert_eq!(
            field(&form, "subject_token_type"),
            Some("urn:ietf:params:oauth:token-type:id_token")
        );
        assert_eq!(field(&form, "scope"), None);
    }

    #[tokio::test]
    async fn a_command_that_prints_too_much_is_refused() {
        let argv = ["sh", "-c", "head -c 70000 /dev/zero | tr '\\0' a"].map(String::from);
        let error = run(&argv, "assertion").await.expect_err("refused");
        assert!(error.contains("more than 64 KiB"), "{error}");
        assert!(error.contains("`sh`") && !error.contains("head"), "{error}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn what_the_command_started_is_killed_once_it_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!(
            "sleep 60 >/dev/null 2>&1 & echo $! > {}; echo {JWT}",
            pid_file.display()
        );
        let argv = ["sh".to_owned(), "-c".to_owned(), script];
        assert_eq!(run(&argv, "assertion").await.unwrap().trim(), JWT);
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Gone, or a zombie waiting for a parent that reaps: not running.
        let running = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                !stat
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z')
            })
        };
        for _ in 0..100 {
            if !running() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("the command's child {pid} outlived the request");
    }

    #[tokio::test]
    async fn an_oversized_assertion_file_is_not_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, vec![b'a'; 70_000]).unwrap();
        let error = read_bounded_file(&path.to_string_lossy(), "assertion")
            .await
            .expect_err("refused");
        assert!(error.contains("over 64 KiB"), "{error}");
    }

    #[tokio::test]
    async fn assertions_are_read_afresh_and_never_quoted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("token");
        let file = AssertionSource::File(path.to_string_lossy().into_owned());
        let e = read_assertion(&file, "assertion")
            .await
            .expect_err("absent");
        assert!(e.contains("no such file"), "{e}");
        std::fs::write(&path, format!("{JWT}\n")).expect("write");
        assert_eq!(read_assertion(&file, "assertion").await.as_deref(), Ok(JWT));
        // Rotated: the next request reads the new token.
        std::fs::write(&path, "a.b.c").expect("write");
        assert_eq!(
            read_assertion(&file, "assertion").await.as_deref(),
            Ok("a.b.c")
        );
        std::fs::write(&path, "SECRET not a jwt").expect("write");
        let e = read_assertion(&file, "assertion")
            .await
            .expect_err("not a JWT");
        assert!(e.contains("is not a JWT") && !e.contains("SECRET"), "{e}");
        let value = AssertionSource::Value(String::new());
        let e = read_assertion(&value, "ID token").await.expect_err("empty");
        assert!(e.contains("ID token from the reference is empty"), "{e}");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_command_prints_the_assertion() {
        let echo = AssertionSource::Command(vec!["echo".into(), JWT.into()]);
        assert_eq!(read_assertion(&echo, "assertion").await.as_deref(), Ok(JWT));
        let fails = AssertionSource::Command(vec!["false".into()]);
        let e = read_assertion(&fails, "assertion")
            .await
            .expect_err("fails");
        assert!(e.contains("`false` failed"), "{e}");
        let absent = AssertionSource::Command(vec!["/nonexistent/print-token".into()]);
        let e = read_assertion(&absent, "assertion")
            .await
            .expect_err("absent");
        assert!(e.contains("cannot run"), "{e}");
    }

    #[test]
    fn jwt_shapes() {
        assert!(looks_like_jwt(JWT));
        assert!(looks_like_jwt("a.b."));
        assert!(!looks_like_jwt("a.b"));
        assert!(!looks_like_jwt("a..c"));
        assert!(!looks_like_jwt("a.b.c d"));
    }
}
