//! `pipewright record --http LISTEN --to URL`: a reverse proxy in front of
//! a Streamable HTTP server. Every request is passed on to the same path
//! of the upstream (so OAuth's `/.well-known/…` documents pass too), with
//! its headers but the hop-by-hop ones (`Host` becomes the upstream's, the
//! client's kept in `X-Forwarded-Host`; `Accept-Encoding` is dropped so
//! answers come readable); every answer comes back as the upstream sent
//! it, its body streamed through chunk by chunk as it arrives (a POST's
//! JSON or SSE answer, a GET stream), redirects and errors included.
//!
//! What crosses the MCP endpoint (the path of `URL`) is kept: one session
//! file per `Mcp-Session-Id`, started when the server hands one out, and
//! one for the messages of clients that have none (a stateless server).
//! A DELETE ends its session's file. Credential headers are never written
//! and their values are masked wherever they would appear
//! ([`crate::secrets`]). Accepted sockets send at once (`TCP_NODELAY`):
//! small answers must not wait for a delayed acknowledgement.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use futures::{Stream, StreamExt};
use pipewright_engine::record::session::{End, Header, Server, Side, VERSION, Via};
use tokio_util::sync::CancellationToken;

use crate::frame::Framing;
use crate::secrets::Secrets;
use crate::sink::{self, Event, FileId, Finished, Kind, Report, Sink, StreamId, Written};

/// How long open requests get to finish once the recorder is stopped.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How long reaching the upstream may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Headers that belong to one connection, not to the message (RFC 9110
/// §7.6.1), and are never passed on.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// An HTTP recording: where to listen, where to pass on, where the
/// sessions go.
pub struct Http {
    pub listen: SocketAddr,
    /// The upstream's MCP endpoint (`http://host:port/mcp`).
    pub to: String,
    /// The server's name in the sessions (else the upstream's host).
    pub name: Option<String>,
    pub out: PathBuf,
    pub secrets: Secrets,
    /// The largest message kept, in bytes (and the largest request body
    /// taken).
    pub limit: usize,
    pub report: Report,
    /// Whether a line is reported per call.
    pub lines: bool,
}

/// A recorder bound to its address, not serving yet.
pub struct Proxy {
    listener: tokio::net::TcpListener,
    addr: SocketAddr,
    state: Arc<Shared>,
    finished: Finished,
}

/// What every request handler shares.
struct Shared {
    /// `scheme://host[:port]` of the upstream.
    origin: String,
    /// The path of the MCP endpoint, without a trailing `/`.
    endpoint: String,
    /// The upstream URL, as the session files name it.
    url: String,
    name: String,
    client: reqwest::Client,
    sink: Sink,
    secrets: Secrets,
    limit: usize,
    files: Mutex<Files>,
    streams: AtomicU64,
    /// Ends the streams still open when the recorder stops.
    cancel: CancellationToken,
}

/// Which session file a session goes to.
#[derive(Default)]
struct Files {
    by_session: HashMap<String, FileId>,
    /// The file of the messages that carry no session id.
    stateless: Option<FileId>,
    next: FileId,
}

impl Http {
    /// Checks the upstream URL, makes the recordings folder and binds the
    /// address; an error is a sentence.
    pub async fn bind(self) -> Result<Proxy, String> {
        let upstream = reqwest::Url::parse(&self.to)
            .map_err(|e| format!("`{}` is not a URL: {e}", self.to))?;
        if !matches!(upstream.scheme(), "http" | "https") || upstream.host_str().is_none() {
            return Err(format!("`{}` is not an http:// or https:// URL", self.to));
        }
        let origin = upstream.origin().ascii_serialization();
        let endpoint = upstream.path().trim_end_matches('/').to_owned();
        let name = self.name.clone().unwrap_or_else(|| {
            let host = upstream.host_str().unwrap_or("server");
            match upstream.port() {
                Some(p) => format!("{host}-{p}"),
                None => host.to_owned(),
            }
        });
        std::fs::create_dir_all(&self.out).map_err(|e| {
            format!(
                "cannot make the recordings folder `{}`: {e}",
                self.out.display()
            )
        })?;
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| format!("cannot make the HTTP client: {e}"))?;
        let listener = tokio::net::TcpListener::bind(self.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", self.listen))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot read the address listened on: {e}"))?;
        let (sink, finished) = sink::start(sink::Config {
            dir: self.out.clone(),
            redactor: self.secrets.redactor().clone(),
            limit: self.limit,
            report: self.report.clone(),
            lines: self.lines,
        })
        .map_err(|e| format!("cannot start the recorder's writer: {e}"))?;
        let url = self.secrets.redactor().text(upstream.as_str());
        Ok(Proxy {
            listener,
            addr,
            finished,
            state: Arc::new(Shared {
                origin,
                endpoint,
                url,
                name,
                client,
                sink,
                secrets: self.secrets,
                limit: self.limit,
                files: Mutex::new(Files::default()),
                streams: AtomicU64::new(0),
                cancel: CancellationToken::new(),
            }),
        })
    }
}

impl Proxy {
    /// The address listened on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL a client uses: the recorder's address and the upstream's
    /// endpoint path.
    pub fn url(&self) -> String {
        let path = if self.state.endpoint.is_empty() {
            "/"
        } else {
            &self.state.endpoint
        };
        format!("http://{}{path}", self.addr)
    }

    /// Serves until `stop` resolves; then open streams end, requests in
    /// flight get a moment to finish, and every session file is ended.
    pub async fn serve(self, stop: impl Future<Output = ()> + Send) -> Result<Written, String> {
        let state = Arc::clone(&self.state);
        let cancel = state.cancel.clone();
        let router = axum::Router::new()
            .fallback(forward)
            .with_state(Arc::clone(&state));
        let listener = self.listener.tap_io(|tcp| {
            // Small answers go at once: no wait for a delayed ack.
            let _ = tcp.set_nodelay(true);
        });
        let server = axum::serve(listener, router)
            .with_graceful_shutdown(cancel.clone().cancelled_owned())
            .into_future();
        tokio::pin!(server);
        let served = tokio::select! {
            r = &mut server => r,
            () = stop => {
                cancel.cancel();
                tokio::time::timeout(STOP_GRACE, &mut server).await.unwrap_or(Ok(()))
            }
        };
        cancel.cancel();
        state
            .sink
            .send(Event::Finish {
                reason: "the recorder stopped".into(),
            })
            .await;
        let written = self.finished.wait().await;
        served.map_err(|e| format!("the recorder's server failed: {e}"))?;
        Ok(written)
    }
}

impl Shared {
    fn stream_id(&self) -> StreamId {
        self.streams.fetch_add(1, Ordering::Relaxed)
    }

    /// The file of session `sid` (or of the session-less messages), started
    /// if it is new and `create`; `None` for a session not known and not
    /// to be started.
    async fn file(&self, sid: Option<&str>, create: bool) -> Option<FileId> {
        let (file, header) = {
            let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
            let known = match sid {
                Some(s) => files.by_session.get(s).copied(),
                None => files.stateless,
            };
            if let Some(f) = known {
                return Some(f);
            }
            if !create {
                return None;
            }
            let f = files.next;
            files.next += 1;
            match sid {
                Some(s) => {
                    files.by_session.insert(s.to_owned(), f);
                }
                None => files.stateless = Some(f),
            }
            (
                f,
                Header {
                    version: VERSION,
                    started: crate::now_rfc3339(),
                    recorder: crate::RECORDER.to_owned(),
                    server: Server::Http {
                        name: self.name.clone(),
                        url: self.url.clone(),
                    },
                    session_id: sid.map(str::to_owned),
                },
            )
        };
        self.sink
            .send(Event::Open {
                file,
                header: Box::new(header),
            })
            .await;
        Some(file)
    }

    /// Keeps a message the client POSTed.
    async fn client_message(&self, file: FileId, at: Instant, body: Bytes) {
        let stream = self.stream_id();
        self.sink
            .send(Event::Chunk {
                file,
                stream,
                kind: Kind::Messages {
                    from: Side::Client,
                    via: Some(Via::Post),
                    framing: Framing::Whole,
                    resumed: false,
                },
                at,
                bytes: body,
            })
            .await;
        self.sink.send(Event::Done { stream, at }).await;
    }

    /// Ends session `sid`'s file (after its DELETE).
    async fn end(&self, sid: &str) {
        let file = self
            .files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_session
            .remove(sid);
        if let Some(file) = file {
            self.sink
                .send(Event::End {
                    file,
                    end: End {
                        reason: "the client ended the session (DELETE)".into(),
                        exit_code: None,
                        signal: None,
                    },
                })
                .await;
        }
    }
}

/// One request, passed on and its answer passed back.
async fn forward(State(state): State<Arc<Shared>>, request: Request) -> Response {
    let at = Instant::now();
    let (parts, body) = request.into_parts();
    for (name, value) in &parts.headers {
        state.secrets.header(name.as_str(), value.as_bytes());
    }
    let body = match axum::body::to_bytes(body, state.limit).await {
        Ok(b) => b,
        Err(e) => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "pipewright record: the request body could not be read whole within the message limit ({} bytes): {e}",
                    state.limit
                ),
            );
        }
    };
    let path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mcp = parts.uri.path().trim_end_matches('/') == state.endpoint;
    // A message of a session already known is kept before it is passed on,
    // so that nothing the server sends in answer can be kept before it.
    let early = match session_of(&parts.headers) {
        Some(sid) if mcp && parts.method == Method::POST && !body.is_empty() => {
            state.file(Some(&sid), false).await
        }
        _ => None,
    };
    if let Some(file) = early {
        state.client_message(file, at, body.clone()).await;
    }
    let mut headers = passed_on(&parts.headers);
    headers.remove(header::HOST);
    headers.remove(header::CONTENT_LENGTH);
    headers.remove(header::ACCEPT_ENCODING);
    if let Some(host) = parts.headers.get(header::HOST) {
        headers.insert(HeaderName::from_static("x-forwarded-host"), host.clone());
    }
    let sent = state
        .client
        .request(parts.method.clone(), format!("{}{path}", state.origin))
        .headers(headers)
        .body(body.clone())
        .send()
        .await;
    let upstream = match sent {
        Ok(r) => r,
        Err(e) => {
            return plain(
                StatusCode::BAD_GATEWAY,
                format!(
                    "pipewright record: cannot reach {}: {}",
                    state.url,
                    state.secrets.redactor().text(&error_chain(&e))
                ),
            );
        }
    };
    for value in upstream.headers().get_all(header::SET_COOKIE) {
        state.secrets.header("set-cookie", value.as_bytes());
    }
    let status = upstream.status();
    let mut out = Response::builder().status(status);
    if let Some(h) = out.headers_mut() {
        *h = passed_on(upstream.headers());
    }
    let tee = if mcp {
        let body = if early.is_some() { Bytes::new() } else { body };
        record(&state, &parts, at, body, &upstream).await
    } else {
        None
    };
    let cancel = state.cancel.clone();
    let stream = Box::pin(upstream.bytes_stream().take_until(cancel.cancelled_owned()));
    let body = match tee {
        Some(tee) => Body::from_stream(tee.around(stream)),
        None => Body::from_stream(stream),
    };
    out.body(body)
        .unwrap_or_else(|e| plain(StatusCode::BAD_GATEWAY, format!("pipewright record: {e}")))
}

/// The `Mcp-Session-Id` of a request or an answer.
fn session_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Keeps what crossed the MCP endpoint: the client's message (`body`,
/// empty when it was kept already) once the session it belongs to is
/// known, and what the answer's body carries as it streams (the [`Tee`]).
async fn record(
    state: &Arc<Shared>,
    parts: &axum::http::request::Parts,
    at: Instant,
    body: Bytes,
    upstream: &reqwest::Response,
) -> Option<Tee> {
    let asked = session_of(&parts.headers);
    let given = session_of(upstream.headers());
    let sid = given.or(asked);
    let ok = upstream.status().is_success();
    if parts.method == Method::DELETE {
        if ok && let Some(sid) = &sid {
            state.end(sid).await;
        }
        return None;
    }
    let file = state.file(sid.as_deref(), ok).await?;
    let via = if parts.method == Method::GET {
        Via::GetStream
    } else {
        Via::Post
    };
    if parts.method == Method::POST && !body.is_empty() {
        state.client_message(file, at, body).await;
    }
    let content_type = upstream
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let (framing, via) = if content_type.starts_with("text/event-stream") {
        let via = if via == Via::GetStream {
            Via::GetStream
        } else {
            Via::PostStream
        };
        (Framing::Sse, via)
    } else if content_type.starts_with("application/json") {
        (Framing::Whole, Via::Post)
    } else {
        return None;
    };
    Some(Tee {
        sink: state.sink.clone(),
        file,
        stream: state.stream_id(),
        kind: Kind::Messages {
            from: Side::Server,
            via: Some(via),
            framing,
            resumed: parts.headers.contains_key("last-event-id"),
        },
        done: false,
    })
}

/// Copies an answer's chunks to the writer as they pass.
struct Tee {
    sink: Sink,
    file: FileId,
    stream: StreamId,
    kind: Kind,
    done: bool,
}

impl Tee {
    /// The answer's body, each chunk handed to the writer on its way.
    fn around<S, E>(self, inner: S) -> impl Stream<Item = Result<Bytes, E>> + Send + 'static
    where
        S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
        E: Send + 'static,
    {
        futures::stream::unfold((inner, Some(self)), |(mut inner, tee)| async move {
            let mut tee = tee?;
            match inner.next().await {
                Some(Ok(bytes)) => {
                    tee.sink
                        .send(Event::Chunk {
                            file: tee.file,
                            stream: tee.stream,
                            kind: tee.kind,
                            at: Instant::now(),
                            bytes: bytes.clone(),
                        })
                        .await;
                    Some((Ok(bytes), (inner, Some(tee))))
                }
                Some(Err(e)) => {
                    tee.finish().await;
                    Some((Err(e), (inner, None)))
                }
                None => {
                    tee.finish().await;
                    None
                }
            }
        })
    }

    async fn finish(&mut self) {
        self.done = true;
        self.sink
            .send(Event::Done {
                stream: self.stream,
                at: Instant::now(),
            })
            .await;
    }
}

impl Drop for Tee {
    /// A body dropped before its end (the client went away): the writer
    /// forgets the stream all the same.
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let (sink, stream) = (self.sink.clone(), self.stream);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                sink.send(Event::Done {
                    stream,
                    at: Instant::now(),
                })
                .await;
            });
        }
    }
}

/// `headers` without the hop-by-hop ones (and those `Connection` names).
fn passed_on(headers: &HeaderMap) -> HeaderMap {
    let named: Vec<String> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|n| n.trim().to_ascii_lowercase())
        .collect();
    let mut out = HeaderMap::with_capacity(headers.len());
    for (name, value) in headers {
        let n = name.as_str();
        if HOP_BY_HOP.contains(&n) || named.iter().any(|c| c == n) {
            continue;
        }
        out.append(name.clone(), value.clone());
    }
    out
}

/// A plain-text answer of the recorder's own.
fn plain(status: StatusCode, text: String) -> Response {
    let mut r = (status, text).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// An error and its causes, in one sentence.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_stay_behind() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, x-private"),
        );
        h.insert("x-private", HeaderValue::from_static("1"));
        h.insert(
            header::TRANSFER_ENCODING,
            HeaderValue::from_static("chunked"),
        );
        h.insert("mcp-session-id", HeaderValue::from_static("abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer x"));
        let out = passed_on(&h);
        let names: Vec<&str> = out.keys().map(HeaderName::as_str).collect();
        assert_eq!(names, ["mcp-session-id", "authorization"]);
    }
}
