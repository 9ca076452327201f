//! A Streamable HTTP server's steps before the handshake: its host
//! resolved, a TCP connection, TLS (the certificate checked as every
//! connection checks it), the endpoint's answer to a POSTed `initialize`,
//! its Host and Origin checks, and, where it asks for a login, its
//! protected resource metadata, its authorization server's metadata, how
//! pipewright would register, and the saved login.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::time::Instant;

use super::checklist::{Checklist, DoctorOptions, Outcome};
use crate::mcp::ServerSpec;
use crate::mcp::auth::{AuthConfig, TokenStore, canonical_url};
use crate::mcp::redact_url;

/// The OAuth steps, in order, after `endpoint` and `origin`.
const OAUTH: &[&str] = &[
    "protected-resource",
    "authorization-server",
    "registration",
    "login",
];

/// Runs the steps; true when the handshakes can be tried.
pub(super) async fn examine(
    _name: &str,
    spec: &ServerSpec,
    opts: &DoctorOptions,
    list: &mut Checklist,
) -> bool {
    let ServerSpec::Http {
        url, headers, auth, ..
    } = spec
    else {
        return false;
    };
    let shown = redact_url(url);
    let https = url.starts_with("https://");
    let rest: Vec<&'static str> = ["tcp"]
        .into_iter()
        .chain(https.then_some("tls"))
        .chain(["endpoint", "origin"])
        .chain(OAUTH.iter().copied())
        .collect();
    let since = Instant::now();
    let parsed = reqwest::Url::parse(url).ok().filter(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    });
    let Some((parsed, host, port)) = parsed.and_then(|u| {
        let host = u.host_str()?.trim_matches(['[', ']']).to_owned();
        let port = u.port_or_known_default()?;
        Some((u, host, port))
    }) else {
        list.push(
            "dns",
            since,
            Outcome::Fail(
                format!("`{shown}` is not an http:// or https:// URL"),
                "write the server's full URL, e.g. http://127.0.0.1:8000/mcp".to_owned(),
            ),
        );
        list.skip(&rest);
        return false;
    };
    // DNS.
    let looked_up =
        tokio::time::timeout(opts.wait, tokio::net::lookup_host((host.as_str(), port))).await;
    let addrs: Vec<SocketAddr> = match looked_up {
        Ok(Ok(addrs)) => addrs.collect(),
        Ok(Err(e)) => {
            list.push(
                "dns",
                since,
                Outcome::Fail(
                    format!("`{host}` does not resolve: {e}"),
                    "check the host name in the URL (a typo?), and your DNS, VPN or /etc/hosts"
                        .to_owned(),
                ),
            );
            list.skip(&rest);
            return false;
        }
        Err(_) => Vec::new(),
    };
    let resolved = !addrs.is_empty();
    let shown_addrs: Vec<String> = addrs.iter().map(SocketAddr::to_string).collect();
    let ok = list.push(
        "dns",
        since,
        if resolved {
            Outcome::Ok(format!("`{host}` is {}", shown_addrs.join(", ")))
        } else {
            Outcome::Fail(
                format!("`{host}` did not resolve within {} s", opts.wait.as_secs()),
                "check your DNS, VPN or /etc/hosts".to_owned(),
            )
        },
    );
    if !ok {
        list.skip(&rest);
        return false;
    }
    // TCP.
    let since = Instant::now();
    let mut last = String::new();
    let mut reached = None;
    for addr in &addrs {
        match tokio::time::timeout(opts.wait, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(_)) => {
                reached = Some(*addr);
                break;
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                last = format!("nothing listens on {addr} (connection refused)");
            }
            Ok(Err(e)) => last = format!("{addr}: {e}"),
            Err(_) => last = format!("{addr} did not answer within {} s", opts.wait.as_secs()),
        }
    }
    let ok = list.push(
        "tcp",
        since,
        match reached {
            Some(addr) => Outcome::Ok(format!("connected to {addr}")),
            None if last.contains("refused") => Outcome::Fail(
                last,
                format!("start the server, or check the port in the URL ({port})"),
            ),
            None => Outcome::Fail(
                last,
                "check the server is up and that no firewall or proxy blocks the port".to_owned(),
            ),
        },
    );
    if !ok {
        list.skip(&rest[1..]);
        return false;
    }
    // TLS, and the endpoint's answer to `initialize`.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let Ok(client) = reqwest::Client::builder()
        .timeout(opts.wait)
        .redirect(reqwest::redirect::Policy::none())
        .build()
    else {
        list.skip(&rest[1..]);
        return false;
    };
    let custom = header_map(headers);
    let since = Instant::now();
    let answer = post_initialize(&client, url, &custom, None).await;
    let endpoint_since = Instant::now();
    let answer = match answer {
        Ok(answer) => {
            if https {
                list.push(
                    "tls",
                    since,
                    Outcome::Ok(format!("the certificate is valid for `{host}`")),
                );
            }
            answer
        }
        Err(e) => {
            match (https, tls_problem(&e, &host)) {
                (true, Some((detail, fix))) => {
                    list.push("tls", since, Outcome::Fail(detail, fix));
                    list.skip(&rest[2..]);
                }
                (https, _) => {
                    if https {
                        list.push(
                            "tls",
                            since,
                            Outcome::Ok("no certificate problem".to_owned()),
                        );
                    }
                    list.push(
                        "endpoint",
                        since,
                        Outcome::Fail(
                            format!("`initialize` to {shown} failed: {}", deepest(&e)),
                            "check the server answers HTTP at this URL (is it an MCP server?)"
                                .to_owned(),
                        ),
                    );
                    let after = rest.iter().position(|s| *s == "origin").unwrap_or(0);
                    list.skip(&rest[after..]);
                }
            }
            return false;
        }
    };
    let status = answer.status;
    let wants_login = status == 401;
    let ok = list.push(
        "endpoint",
        endpoint_since
            .checked_sub(answer.took)
            .unwrap_or(endpoint_since),
        endpoint_outcome(&answer, &parsed),
    );
    if !ok {
        let after = rest.iter().position(|s| *s == "origin").unwrap_or(0);
        list.skip(&rest[after..]);
        return false;
    }
    // Host and Origin.
    let since = Instant::now();
    let origin = parsed.origin().ascii_serialization();
    let with_origin = post_initialize(&client, url, &custom, Some(&origin)).await;
    list.push(
        "origin",
        since,
        match with_origin {
            Ok(a) if matches!(a.status, 403 | 421) => Outcome::Warn(
                format!("it refuses a request with `Origin: {origin}` (HTTP {})", a.status),
                "pipewright sends no Origin, so this does not stop it; browser-based clients send one: allow this origin in the server's settings if they should connect".to_owned(),
            ),
            Ok(_) => Outcome::Ok(format!(
                "it accepts `Host: {}` and `Origin: {origin}`",
                host_header(&parsed)
            )),
            Err(e) => Outcome::Warn(
                format!("a request with `Origin: {origin}` failed: {}", deepest(&e)),
                "check the server's Origin checks".to_owned(),
            ),
        },
    );
    // The login.
    let given = custom.contains_key(reqwest::header::AUTHORIZATION);
    if !wants_login {
        let since = Instant::now();
        list.push(
            "login",
            since,
            Outcome::Ok(if given {
                "the server's `headers:` give an Authorization".to_owned()
            } else {
                format!("not needed: the endpoint answered HTTP {status} without one")
            }),
        );
        return true;
    }
    oauth(url, &answer, auth.as_ref(), given, (&client, opts), list).await
}

/// The OAuth steps of a server that answered 401; true when a login is
/// there to use.
async fn oauth(
    url: &str,
    answer: &Answer,
    auth: Option<&AuthConfig>,
    given: bool,
    (client, opts): (&reqwest::Client, &DoctorOptions),
    list: &mut Checklist,
) -> bool {
    let shown = redact_url(url);
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    let origin = parsed.origin().ascii_serialization();
    let path = parsed.path().trim_end_matches('/');
    // Protected resource metadata (RFC 9728).
    let since = Instant::now();
    let mut candidates: Vec<String> = answer
        .challenge
        .as_deref()
        .and_then(resource_metadata)
        .into_iter()
        .collect();
    if !path.is_empty() {
        candidates.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    let mut seen = std::collections::BTreeSet::new();
    candidates.retain(|c| seen.insert(c.clone()));
    let prm = first_json(client, &candidates, |v| {
        v.get("authorization_servers").is_some() || v.get("resource").is_some()
    })
    .await;
    let issuer = prm.as_ref().and_then(|(_, v)| {
        v.get("authorization_servers")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    let found = list.push(
        "protected-resource",
        since,
        match &prm {
            Some((at, _)) => Outcome::Ok(format!(
                "{at} names {}",
                issuer.as_deref().unwrap_or("no authorization server")
            )),
            None => Outcome::Fail(
                format!(
                    "it asks for a login (HTTP 401) but serves no protected resource metadata (tried {})",
                    candidates.join(", ")
                ),
                format!("publish RFC 9728 metadata at {origin}/.well-known/oauth-protected-resource{path} (and name it in `WWW-Authenticate: Bearer resource_metadata=…`) so clients find the authorization server; until then give a token in the server's `headers: {{Authorization: Bearer …}}`"),
            ),
        },
    );
    if found {
        authorization_server(issuer.as_deref().unwrap_or(&origin), auth, client, list).await;
    } else {
        list.skip(&OAUTH[1..3]);
    }
    // The saved login.
    let since = Instant::now();
    let grant = auth.and_then(|a| a.assertion_grant.as_deref());
    let outcome = if given {
        Outcome::Ok("the server's `headers:` give an Authorization".to_owned())
    } else {
        match (saved_login(url, &shown, opts), grant) {
            (Outcome::Fail(..), Some(grant)) => Outcome::Ok(format!(
                "none saved or usable; the `grant: {}` of its `auth:` obtains a token on the next connection",
                grant.key()
            )),
            (saved, _) => saved,
        }
    };
    list.push("login", since, outcome)
}

/// The authorization server's metadata (RFC 8414, or OpenID discovery)
/// and how pipewright would register with it.
async fn authorization_server(
    issuer: &str,
    auth: Option<&AuthConfig>,
    client: &reqwest::Client,
    list: &mut Checklist,
) {
    let since = Instant::now();
    let candidates = metadata_urls(issuer);
    let metadata = first_json(client, &candidates, |v| {
        v.get("authorization_endpoint").is_some() && v.get("token_endpoint").is_some()
    })
    .await;
    let ok = list.push(
        "authorization-server",
        since,
        match &metadata {
            Some((at, _)) => Outcome::Ok(format!("metadata at {at}")),
            None => Outcome::Fail(
                format!(
                    "the authorization server `{issuer}` serves no metadata (tried {})",
                    candidates.join(", ")
                ),
                format!("publish RFC 8414 metadata at {} with its `authorization_endpoint` and `token_endpoint`", candidates.first().map(String::as_str).unwrap_or(issuer)),
            ),
        },
    );
    if !ok {
        list.skip(&OAUTH[2..3]);
        return;
    }
    let since = Instant::now();
    let m = metadata.map(|(_, v)| v).unwrap_or_default();
    let given = auth.and_then(|a| a.client_id.as_deref());
    let grant = auth.and_then(|a| a.assertion_grant.as_deref());
    let outcome = if let (Some(grant), None) = (grant, given) {
        Outcome::Ok(format!(
            "the server's `auth:` names `grant: {}`, which needs no registration",
            grant.key()
        ))
    } else if let Some(id) = given {
        Outcome::Ok(format!("the server's `auth:` gives the client id `{id}`"))
    } else if let Some(at) = m.get("registration_endpoint").and_then(Value::as_str) {
        Outcome::Ok(format!("dynamic client registration at {at}"))
    } else if m
        .get("client_id_metadata_document_supported")
        .and_then(Value::as_bool)
        == Some(true)
    {
        Outcome::Ok("Client ID Metadata Documents (a URL as the client id)".to_owned())
    } else {
        Outcome::Fail(
            "the authorization server offers neither dynamic client registration nor Client ID Metadata Documents".to_owned(),
            "register pipewright with the authorization server by hand and give its id in the server's `auth: {client_id: …}`".to_owned(),
        )
    };
    list.push("registration", since, outcome);
}

/// The saved login of `url` in the token store, and its expiry.
fn saved_login(url: &str, shown: &str, opts: &DoctorOptions) -> Outcome {
    let login = format!("run `pipewright auth login {shown}`");
    let store = match TokenStore::in_data_dir(opts.data_dir.as_deref()) {
        Ok(store) => store,
        Err(e) => return Outcome::Fail(e.to_string(), login),
    };
    let record = canonical_url(url).and_then(|canonical| store.load(&canonical));
    let record = match record {
        Ok(Some(record)) => record,
        Ok(None) => {
            return Outcome::Fail(
                format!("no saved login for {shown} in {}", store.dir().display()),
                login,
            );
        }
        Err(e) => return Outcome::Fail(e.to_string(), login),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match record.expires_at() {
        Some(at) if at <= now && !record.refreshable() => Outcome::Fail(
            format!(
                "the saved login expired {} ago (at {}) and has no refresh token",
                ago(now - at),
                date(at)
            ),
            format!("log in again: {login}"),
        ),
        Some(at) if at <= now => Outcome::Ok(format!(
            "the access token expired at {}; the refresh token renews it on the next connection",
            date(at)
        )),
        Some(at) => Outcome::Ok(format!("logged in until {}", date(at))),
        None => Outcome::Ok("logged in (the server gave no expiry)".to_owned()),
    }
}

/// `3 h 20 min`, `42 s`.
fn ago(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s if s < 86_400 => format!("{} h {} min", s / 3600, s % 3600 / 60),
        s => format!("{} days", s / 86_400),
    }
}

/// A Unix time as RFC 3339, UTC.
fn date(seconds: u64) -> String {
    i64::try_from(seconds)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| seconds.to_string())
}

/// Where an issuer's metadata may be (RFC 8414 §3, then OpenID).
fn metadata_urls(issuer: &str) -> Vec<String> {
    let Ok(u) = reqwest::Url::parse(issuer) else {
        return vec![format!("{issuer}/.well-known/oauth-authorization-server")];
    };
    let origin = u.origin().ascii_serialization();
    let path = u.path().trim_end_matches('/');
    let mut out = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        out.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    out
}

/// The first of `urls` that answers 200 with JSON `fits` accepts.
async fn first_json(
    client: &reqwest::Client,
    urls: &[String],
    fits: impl Fn(&Value) -> bool,
) -> Option<(String, Value)> {
    for url in urls {
        let Ok(response) = client.get(url).send().await else {
            continue;
        };
        if !response.status().is_success() {
            continue;
        }
        if let Ok(v) = response.json::<Value>().await
            && fits(&v)
        {
            return Some((url.clone(), v));
        }
    }
    None
}

/// `resource_metadata="…"` of a `WWW-Authenticate` challenge.
fn resource_metadata(challenge: &str) -> Option<String> {
    let at = challenge.find("resource_metadata=")? + "resource_metadata=".len();
    let rest = &challenge[at..];
    let value = match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next()?,
        None => rest.split([',', ' ']).next()?,
    };
    (!value.is_empty()).then(|| value.to_owned())
}

/// What the endpoint answered to one `initialize`.
struct Answer {
    status: u16,
    content_type: String,
    /// `WWW-Authenticate`, on a 401.
    challenge: Option<String>,
    /// The start of the body, for a JSON-RPC error.
    body: String,
    took: Duration,
}

/// POSTs a 2025-11-25 `initialize` to `url` (with `Origin` when given)
/// and ends the session it may open.
async fn post_initialize(
    client: &reqwest::Client,
    url: &str,
    headers: &HeaderMap,
    origin: Option<&str>,
) -> Result<Answer, reqwest::Error> {
    let start = Instant::now();
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "pipewright-doctor", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let mut request = client
        .post(url)
        .headers(headers.clone())
        .header(ACCEPT, "application/json, text/event-stream")
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string());
    if let Some(origin) = origin {
        request = request.header(reqwest::header::ORIGIN, origin);
    }
    let response = request.send().await?;
    let took = start.elapsed();
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let content_type = header("content-type").unwrap_or_default();
    let challenge = header("www-authenticate");
    let session = header("mcp-session-id");
    // An event stream stays open: read only a plain body.
    let body = if content_type.starts_with("application/json") || !(200..300).contains(&status) {
        let text = tokio::time::timeout(Duration::from_secs(2), response.text()).await;
        text.ok().and_then(Result::ok).unwrap_or_default()
    } else {
        drop(response);
        String::new()
    };
    if let Some(session) = session {
        let _ = client
            .delete(url)
            .headers(headers.clone())
            .header("mcp-session-id", session)
            .send()
            .await;
    }
    Ok(Answer {
        status,
        content_type,
        challenge,
        body: body.chars().take(300).collect(),
        took,
    })
}

/// The `endpoint` step from the answer to `initialize`.
fn endpoint_outcome(answer: &Answer, url: &reqwest::Url) -> Outcome {
    let status = answer.status;
    let json_rpc = answer.body.contains("\"jsonrpc\"");
    match status {
        200..=299 => Outcome::Ok(format!(
            "HTTP {status} ({}) to `initialize`",
            if answer.content_type.is_empty() {
                "no content type"
            } else {
                &answer.content_type
            }
        )),
        401 => Outcome::Ok("HTTP 401: it asks for a login".to_owned()),
        404 => Outcome::Fail(
            format!("HTTP 404 at {}", redact_url(url.as_str())),
            "wrong path? MCP endpoints are usually /mcp: check the path of the URL (e.g. http://127.0.0.1:8000/mcp)".to_owned(),
        ),
        405 => Outcome::Fail(
            "HTTP 405: the URL does not take POST".to_owned(),
            "this may be the SSE endpoint of the old HTTP+SSE transport (2024-11-05), which pipewright does not speak: use the server's Streamable HTTP endpoint (usually /mcp)".to_owned(),
        ),
        403 | 421 => Outcome::Fail(
            format!("HTTP {status}: it refuses the request"),
            format!("if the server checks the Host header (DNS-rebinding protection), add `{}` to its allowed hosts; else give the credential it wants in the server's `headers:`", host_header(url)),
        ),
        400..=499 if json_rpc => Outcome::Ok(format!(
            "HTTP {status} with a JSON-RPC error: it speaks JSON-RPC but refused this `initialize`"
        )),
        500..=599 => Outcome::Fail(
            format!("HTTP {status}: the server failed"),
            "read the server's own log for this request".to_owned(),
        ),
        _ => Outcome::Fail(
            format!("HTTP {status} to `initialize`"),
            "check that the URL is the server's MCP endpoint (usually /mcp)".to_owned(),
        ),
    }
}

/// `host:port` as a `Host` header names it.
fn host_header(url: &reqwest::Url) -> String {
    match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_owned(),
        _ => String::new(),
    }
}

/// The server's `headers:` as a header map (bad ones left out: the
/// handshake names them).
fn header_map(headers: &BTreeMap<String, String>) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let (Ok(name), Ok(mut value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            value.set_sensitive(true);
            map.insert(name, value);
        }
    }
    map
}

/// A certificate problem behind `e`, in words with its fix. The rustls
/// error is read by its name, wherever in the chain it shows (reqwest
/// and hyper wrap it in an I/O error, or only its text survives).
fn tls_problem(e: &reqwest::Error, host: &str) -> Option<(String, String)> {
    let mut names = String::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = current {
        if let Some(found) = err.downcast_ref::<rustls::Error>().or_else(|| {
            err.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        }) {
            names.push_str(&format!("{found:?} "));
        }
        names.push_str(&format!("{err} "));
        current = err.source();
    }
    certificate(&names, host).or_else(|| {
        let text = deepest(e);
        (text.contains("certificate") || text.contains("TLS") || text.contains("tls"))
            .then(|| (format!("TLS failed: {text}"), CHAIN.to_owned()))
    })
}

/// What to run to see a certificate chain.
const CHAIN: &str =
    "check the server's certificate chain (`openssl s_client -connect HOST:PORT -showcerts`)";

/// The certificate problem rustls's error names in `names` (its `Debug`
/// and the chain's messages), in words with its fix.
fn certificate(names: &str, host: &str) -> Option<(String, String)> {
    // webpki calls a self-signed certificate (its own CA) a CA used as an
    // end entity.
    let untrusted = names.contains("CaUsedAsEndEntity") || names.contains("UnknownIssuer");
    Some(if untrusted {
        (
            format!(
                "the certificate is not signed by a trusted authority ({})",
                if names.contains("CaUsedAsEndEntity") {
                    "self-signed: it is its own CA"
                } else {
                    "self-signed, or an unknown CA"
                }
            ),
            "give the server a certificate from a public CA, or add the CA that signed it to the system's trust store; for a local server use http:// on 127.0.0.1".to_owned(),
        )
    } else if names.contains("Expired") {
        (
            "the certificate has expired".to_owned(),
            "renew the server's certificate".to_owned(),
        )
    } else if names.contains("NotValidYet") {
        (
            "the certificate is not valid yet".to_owned(),
            "check the server's and this machine's clocks, or reissue the certificate".to_owned(),
        )
    } else if names.contains("NotValidForName") {
        (
            format!("the certificate is not valid for `{host}`"),
            format!(
                "use the host name the certificate names in the URL, or issue a certificate that names `{host}`"
            ),
        )
    } else if names.contains("InvalidCertificate") || names.contains("invalid peer certificate") {
        (
            format!("the certificate was refused: {}", names.trim()),
            CHAIN.to_owned(),
        )
    } else {
        return None;
    })
}

/// The innermost cause of `e`.
fn deepest(e: &(dyn std::error::Error + 'static)) -> String {
    let mut current = e;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_certificate_problem_has_its_fix() {
        use rustls::{CertificateError as C, Error};
        let named = |e: Error| certificate(&format!("{e:?} {e}"), "mcp.example.com");
        let expired = named(Error::InvalidCertificate(C::Expired)).unwrap();
        assert_eq!(expired.0, "the certificate has expired");
        assert!(expired.1.contains("renew"));
        let unknown = named(Error::InvalidCertificate(C::UnknownIssuer)).unwrap();
        assert!(
            unknown.0.contains("not signed by a trusted authority"),
            "{unknown:?}"
        );
        assert!(unknown.1.contains("trust store"));
        let name = named(Error::InvalidCertificate(C::NotValidForName)).unwrap();
        assert_eq!(name.0, "the certificate is not valid for `mcp.example.com`");
        assert!(
            name.1
                .contains("issue a certificate that names `mcp.example.com`")
        );
        assert!(
            named(Error::InvalidCertificate(C::NotValidYet))
                .unwrap()
                .1
                .contains("clocks")
        );
        assert_eq!(certificate("Connection refused", "h"), None);
    }

    #[test]
    fn a_challenge_names_its_metadata() {
        assert_eq!(
            resource_metadata(r#"Bearer error="invalid_token", resource_metadata="http://a/.well-known/oauth-protected-resource/mcp""#).as_deref(),
            Some("http://a/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(resource_metadata("Bearer realm=x"), None);
        assert_eq!(
            metadata_urls("http://a:1/tenant"),
            vec![
                "http://a:1/.well-known/oauth-authorization-server/tenant",
                "http://a:1/.well-known/openid-configuration/tenant",
                "http://a:1/tenant/.well-known/openid-configuration",
            ]
        );
    }
}
