//! Reaching a server: spawning a stdio child, building the Streamable HTTP
//! transport, and saying in words why either failed.

use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
    process::Stdio,
    time::Duration,
};

use rmcp::{
    service::ClientInitializeError,
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};

use super::auth::{AuthConfig, BearerClient, Logins};
use super::child::StdioChild;
use super::error::{McpError, chain_message};
use super::log::ServerLog;
use super::reply::Replies;
use super::revision::{self, Protocol};

/// Ordinary HTTP POSTs in flight at once on one HTTP connection.
const HTTP_CONCURRENCY: usize = 64;
/// Header names the Streamable HTTP transport sets itself (the `Mcp-*`
/// ones from the negotiated revision and each request).
const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "mcp-session-id",
    "last-event-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
];

/// Starts a stdio server with a piped stderr, in its own process group so a
/// Ctrl-C in the terminal reaches pipewright (which cancels calls and shuts
/// the server down) rather than killing the server mid-call. `grace` is how
/// long it gets to exit when the connection closes; what its stdout shows
/// that rmcp skips goes to `log` (and [`StdioChild::notes`]).
pub(super) fn spawn_stdio(
    server: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
    grace: Duration,
    (log, replies): (&ServerLog, &Replies),
) -> Result<(StdioChild, Option<tokio::process::ChildStderr>), McpError> {
    let spawn_error = |reason: String| McpError::Spawn {
        server: server.to_owned(),
        command: command.to_owned(),
        reason,
    };
    if command.trim().is_empty() {
        return Err(spawn_error("no command given".to_owned()));
    }
    if let Some(dir) = cwd
        && !dir.is_dir()
    {
        return Err(spawn_error(format!(
            "working directory `{}` does not exist",
            dir.display()
        )));
    }
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args).envs(env);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn()
        .and_then(|mut child| {
            let stderr = child.stderr.take();
            Ok((
                StdioChild::new(child, grace, log.clone(), replies.clone())?,
                stderr,
            ))
        })
        .map_err(|e| {
            spawn_error(match e.kind() {
                std::io::ErrorKind::NotFound if command.contains(std::path::MAIN_SEPARATOR) => {
                    format!("`{command}` does not exist")
                }
                std::io::ErrorKind::NotFound => format!("`{command}` not found on PATH"),
                std::io::ErrorKind::PermissionDenied => {
                    format!("`{command}` is not executable (permission denied)")
                }
                _ => format!("`{command}`: {e}"),
            })
        })
}

/// The Streamable HTTP transport for `url`, with `headers` on every request
/// and, unless they carry their own `Authorization`, the stored OAuth token
/// (see [`BearerClient`]), got as the server's `auth:` block says.
pub(super) fn http_transport(
    server: &str,
    url: &str,
    headers: &BTreeMap<String, String>,
    (auth, logins): (Option<&AuthConfig>, &Logins),
    replies: &Replies,
) -> Result<StreamableHttpClientTransport<BearerClient>, McpError> {
    let invalid = |reason: String| McpError::InvalidSpec {
        server: server.to_owned(),
        reason,
    };
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| invalid(format!("`{}` is not a valid URL: {e}", redact_url(url))))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid(format!(
            "`{}` is not an http:// or https:// URL",
            redact_url(url)
        )));
    }
    let mut custom = HashMap::new();
    for (name, value) in headers {
        let header = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| invalid(format!("`{name}` is not a valid HTTP header name")))?;
        if RESERVED_HEADERS.contains(&header.as_str()) {
            return Err(invalid(format!(
                "header `{name}` is set by the MCP transport and cannot be overridden"
            )));
        }
        let mut value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| invalid(format!("the value of header `{name}` is not valid in HTTP")))?;
        value.set_sensitive(true);
        custom.insert(header, value);
    }
    // reqwest is built without a default TLS provider; `ring` is ours.
    // Installing twice is harmless: the second attempt reports an error we ignore.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let oauth = !custom.contains_key(&reqwest::header::AUTHORIZATION);
    let config = StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(custom)
        .max_concurrent_requests(HTTP_CONCURRENCY)
        .max_sse_event_size(replies.limits().max_message_bytes());
    Ok(StreamableHttpClientTransport::with_client(
        BearerClient::new(url, oauth, (auth.cloned(), logins.clone()))
            .with_replies(replies.clone()),
        config,
    ))
}

/// Why the handshake with a stdio server failed, in words.
pub(super) fn describe_stdio_init_error(e: &ClientInitializeError, protocol: Protocol) -> String {
    if let Some(reason) = revision::describe(e, protocol) {
        return reason;
    }
    match revision::telling(e) {
        ClientInitializeError::ConnectionClosed(_) => {
            "it exited (or closed its stdout) before answering `initialize`".to_owned()
        }
        ClientInitializeError::TransportError { error, .. }
            if error
                .error
                .downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            "it exited before reading `initialize`".to_owned()
        }
        ClientInitializeError::JsonRpcError(data) => format!(
            "it rejected `initialize` with error {}: {}",
            data.code.0, data.message
        ),
        other => chain_message(other),
    }
}

/// Sorts a failed HTTP handshake into "could not connect" and "connected,
/// but the handshake failed".
pub(super) fn http_init_error(
    server: &str,
    url: &str,
    e: &ClientInitializeError,
    protocol: Protocol,
) -> McpError {
    if let Some(reason) = revision::describe(e, protocol) {
        return McpError::Handshake {
            server: server.to_owned(),
            reason,
            stderr_tail: String::new(),
        };
    }
    let e = revision::telling(e);
    let transport_error = match e {
        ClientInitializeError::TransportError { error, .. } => Some(&*error.error),
        _ => None,
    };
    if let Some(error) = transport_error
        && let Some(reqwest_error) = find_reqwest(error)
        && (reqwest_error.is_connect() || reqwest_error.is_timeout())
    {
        return McpError::Connect {
            server: server.to_owned(),
            url: redact_url(url),
            reason: deepest_message(reqwest_error),
        };
    }
    let reason = match (e, transport_error) {
        (_, Some(error)) => format!(
            "`initialize` to {} failed: {}",
            redact_url(url),
            describe_http_error(error)
        ),
        (ClientInitializeError::JsonRpcError(data), None) => format!(
            "it rejected `initialize` with error {}: {}",
            data.code.0, data.message
        ),
        (other, None) => chain_message(other),
    };
    McpError::Handshake {
        server: server.to_owned(),
        reason,
        stderr_tail: String::new(),
    }
}

/// An HTTP transport error in words, without URLs (they may carry tokens).
pub(super) fn describe_http_error(error: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::transport::streamable_http_client::StreamableHttpError as E;
    match find_source::<E<reqwest::Error>>(error) {
        Some(E::HttpStatus(status)) => {
            return format!("the server answered HTTP {}", status.status);
        }
        Some(E::AuthRequired(_)) => {
            return "the server requires authorization (HTTP 401)".to_owned();
        }
        Some(E::InsufficientScope(_)) => {
            return "the credentials lack a required scope (HTTP 403)".to_owned();
        }
        Some(E::UnexpectedContentType(content_type)) => {
            return format!(
                "the server answered with content type {} instead of JSON or an event stream",
                content_type.as_deref().unwrap_or("(none)")
            );
        }
        _ => {}
    }
    if let Some(status) =
        find_source::<rmcp::transport::streamable_http_client::HttpStatusError>(error)
    {
        return format!("the server answered HTTP {}", status.status);
    }
    if let Some(reqwest_error) = find_reqwest(error) {
        if let Some(status) = reqwest_error.status() {
            return format!("the server answered HTTP {}", status.as_u16());
        }
        return deepest_message(reqwest_error);
    }
    chain_message(error)
}

/// The first error of type `E` in `error`'s source chain.
fn find_source<'a, E: std::error::Error + 'static>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a E> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<E>() {
            return Some(found);
        }
        current = e.source();
    }
    None
}

/// The reqwest error behind a transport error. rmcp wraps it in
/// `StreamableHttpError::Client`, which does not expose it as a source.
fn find_reqwest<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a reqwest::Error> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<reqwest::Error>() {
            return Some(found);
        }
        if let Some(StreamableHttpError::Client(found)) =
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return Some(found);
        }
        current = e.source();
    }
    None
}

/// The innermost cause, e.g. "Connection refused (os error 111)".
fn deepest_message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(next) = current.source() {
        current = next;
    }
    current.to_string()
}

/// `url` without user info or query string, fit for messages.
pub(crate) fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.has_host() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        _ => {
            let before_query = url.split(['?', '#']).next().unwrap_or_default();
            let after_userinfo = before_query.rsplit('@').next().unwrap_or_default();
            after_userinfo.to_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_messages_lose_credentials_and_queries() {
        assert_eq!(
            redact_url("https://user:pw@example.com/mcp?token=abc#x"),
            "https://example.com/mcp"
        );
        assert_eq!(redact_url("user:pw@not a url?token=abc"), "not a url");
        assert_eq!(
            redact_url("http://127.0.0.1:8000/mcp"),
            "http://127.0.0.1:8000/mcp"
        );
    }

    #[test]
    fn bad_headers_are_refused_without_their_values() {
        let headers = BTreeMap::from([("X-Key".into(), "line\nbreak-s3cret".into())]);
        let Err(e) = http_transport(
            "s",
            "http://127.0.0.1:1/mcp",
            &headers,
            (None, &Logins::default()),
            &Replies::default(),
        ) else {
            panic!("a header value with a newline must be refused");
        };
        assert!(!e.to_string().contains("s3cret"), "{e}");
        let headers = BTreeMap::from([("Mcp-Session-Id".into(), "x".into())]);
        assert!(matches!(
            http_transport(
                "s",
                "http://127.0.0.1:1/mcp",
                &headers,
                (None, &Logins::default()),
                &Replies::default()
            ),
            Err(McpError::InvalidSpec { .. })
        ));
        assert!(matches!(
            http_transport(
                "s",
                "ftp://example.com",
                &BTreeMap::new(),
                (None, &Logins::default()),
                &Replies::default()
            ),
            Err(McpError::InvalidSpec { .. })
        ));
    }
}
