//! The MCP client: one [`Connection`] per declared server, over a spawned
//! stdio process or Streamable HTTP, built on the official `rmcp` SDK;
//! [`servers`] decides which servers a run talks to, and [`caller`] is the
//! one way a run calls a tool (live, recorded or replayed).
//!
//! A connection does the handshake and `tools/list` once, then serves any
//! number of concurrent `tools/call`s. Timeouts and cancellation tell the
//! server with `notifications/cancelled`. What a server writes to stderr and
//! sends as log notifications goes to a bounded [`ServerLog`], never to the
//! terminal.

pub mod auth;
mod call;
pub mod caller;
mod child;
pub mod client_config;
mod endpoint;
mod error;
mod failure;
mod handler;
mod handshake;
pub mod human;
mod inflight;
mod input_required;
mod lent;
mod level;
mod listen;
mod listing;
mod log;
mod output;
pub mod probe;
mod reply;
mod revision;
pub mod roots;
pub mod servers;
mod stdout;
pub mod task;
mod tools;
mod transport;
mod wire;

use std::{
    collections::BTreeMap,
    fmt,
    path::PathBuf,
    sync::{
        Arc, Mutex, PoisonError, RwLock,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use rmcp::{
    Peer, RoleClient, ServiceError,
    model::{
        CallToolRequestParams, CustomResult, ErrorCode, MetaObject, RequestMetaObject, ServerResult,
    },
    service::{PeerRequestOptions, RunningService},
};
use serde_json::{Map, Value};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub use child::{DEFAULT_SHUTDOWN_GRACE, kill_all_servers};
use endpoint::Endpoint;
use error::HumanDuration;
pub use error::McpError;
use handler::Client;
use human::{CallExtras, CallScope};
use inflight::{InFlight, Registered};
pub use level::LogLevel;
use level::set_level;
pub use log::ServerLog;
pub use output::{REPEATED, error_text, grown, is_error, kept, meta_of, output_of};
pub use reply::MessageLimits;
use reply::Replies;
pub use revision::{Choices, Protocol, ProtocolArg};
use roots::Root;
pub use stdout::DEFAULT_MAX_MESSAGE_MB;
pub use tools::{TaskSupport, ToolAnnotations, ToolInfo};
pub(crate) use transport::redact_url;
use transport::{describe_stdio_init_error, http_init_error, http_transport, spawn_stdio};
use wire::{AbandonGuard, Freshness, ListError, excerpt, list_tools, request_json};

use crate::json::Json;

/// How long a cancelled or timed-out call waits for its
/// `notifications/cancelled` to be handed to the transport.
const CANCEL_NOTICE_WAIT: Duration = Duration::from_millis(500);
/// How long [`Connection::close`] waits for the server to shut down.
const CLOSE_WAIT: Duration = Duration::from_secs(10);

/// How to reach one MCP server. `protocol` is the file's `protocol:` for
/// it (`None`: the command line's choice, else `auto`).
#[derive(Clone, PartialEq, Eq)]
pub enum ServerSpec {
    /// A child process spoken to over its stdin/stdout. `args` are passed as
    /// they are, without a shell; `env` is added to pipewright's environment.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
        protocol: Option<Protocol>,
    },
    /// A Streamable HTTP endpoint. `headers` (e.g. `Authorization`) go with
    /// every request; their values are secrets and never appear in errors,
    /// logs or `Debug` output. `auth` is the `auth:` block of the file that
    /// declares the server: how its logins identify pipewright.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        auth: Option<auth::AuthConfig>,
        protocol: Option<Protocol>,
    },
}

impl ServerSpec {
    /// The revision the file chose for this server, if it did.
    pub fn protocol(&self) -> Option<Protocol> {
        match self {
            ServerSpec::Stdio { protocol, .. } | ServerSpec::Http { protocol, .. } => *protocol,
        }
    }
}

impl fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerSpec::Stdio {
                command,
                args,
                env,
                cwd,
                protocol,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .field("protocol", protocol)
                .finish(),
            ServerSpec::Http {
                url,
                headers,
                auth,
                protocol,
            } => f
                .debug_struct("Http")
                .field("url", &redact_url(url))
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .field("auth", auth)
                .field("protocol", protocol)
                .finish(),
        }
    }
}

/// Settings for [`Connection::connect`].
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Limit for starting the server, the handshake and `tools/list` together.
    pub connect_timeout: Duration,
    /// The `clientInfo` pipewright sends in `initialize`.
    pub client_name: String,
    pub client_version: String,
    /// The answer to `roots/list`.
    pub roots: Vec<Root>,
    /// How long a stdio server gets to exit once its stdin is closed, and
    /// again after SIGTERM, before it is killed.
    pub shutdown_grace: Duration,
    /// `--log-level`: sent as `logging/setLevel` to servers that log.
    pub log_level: Option<LogLevel>,
    /// `--protocol`: the MCP revision to negotiate with every server, and
    /// with the servers it names (`--protocol NAME=REVISION`).
    pub protocol: Choices,
    /// A long-lived session (the workbench, `serve`, `worker`, `lsp`): keep
    /// a `subscriptions/listen` stream open for tool-list changes.
    pub listen: bool,
    /// What a connection does when a server wants a login, and where it
    /// tells the user; shared by the clones of these options.
    pub logins: auth::Logins,
    /// How much a server may send (`PIPEWRIGHT_MAX_MESSAGE_MB`,
    /// `PIPEWRIGHT_MAX_TOOL_LIST_MB`).
    pub limits: MessageLimits,
}

impl ConnectOptions {
    /// The revision to negotiate with the server `name`: the command
    /// line's choice for it, else the file's `protocol:`, else the command
    /// line's choice for every server (`auto` unless given).
    pub fn protocol_for(&self, name: &str, spec: &ServerSpec) -> Protocol {
        self.protocol
            .servers
            .get(name)
            .copied()
            .or(spec.protocol())
            .unwrap_or(self.protocol.all)
    }
}

impl Default for ConnectOptions {
    /// 30 s to connect, `pipewright` and its version, no roots, the default
    /// shutdown grace, no log level, `auto` for every server, no login
    /// prompt and no tokens. A driver sets its working directory as the
    /// root and its flags' values (`Settings::connect_options`).
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(30),
            client_name: "pipewright".to_owned(),
            client_version: env!("CARGO_PKG_VERSION").to_owned(),
            roots: Vec::new(),
            shutdown_grace: DEFAULT_SHUTDOWN_GRACE,
            log_level: None,
            protocol: Choices::default(),
            listen: false,
            logins: auth::Logins::default(),
            limits: MessageLimits::default(),
        }
    }
}

/// The result of one `tools/call` that got an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutcome {
    /// The JSON-RPC request as sent:
    /// `{"jsonrpc":"2.0","id":…,"method":"tools/call","params":{…}}`.
    pub request: Json,
    /// The `CallToolResult` as received: for a stdio server the very text
    /// it sent, shared (see [`Json`]).
    pub result: Json,
    /// The result's `isError`: the tool ran and reported a failure.
    pub is_error: bool,
    pub duration: Duration,
    /// Answered from a cassette, not by a server: the call is free.
    pub replayed: bool,
    /// The questions the server asked during the call, with their replies,
    /// and its log lines and progress.
    pub extras: CallExtras,
}

impl CallOutcome {
    /// The node output of this result; see [`output_of`].
    pub fn output(&self) -> Json {
        output_of(&self.result)
    }
}

/// A live connection to one MCP server. Cloning is cheap and every clone
/// talks to the same server; calls from many tasks run concurrently.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

struct Inner {
    name: String,
    peer: Peer<RoleClient>,
    service: Mutex<Option<RunningService<RoleClient, Client>>>,
    server_info: Value,
    tools: RwLock<Arc<Vec<ToolInfo>>>,
    log: ServerLog,
    endpoint: Endpoint,
    closed: AtomicBool,
    calls: InFlight,
    tools_changed: Arc<AtomicBool>,
    /// The answer to `roots/list` in an input-required result.
    roots: Vec<Root>,
    /// `--log-level`, asked of a 2026-07-28 server with every call.
    log_level: Option<LogLevel>,
    /// When the tool list goes stale (its `ttlMs`).
    fresh: Freshness,
    /// The answers to `tools/call`s, read and kept by the transport.
    replies: Replies,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.inner.name)
            .field("pid", &self.pid())
            .field("tools", &self.tools().len())
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl Connection {
    /// Starts or reaches the server, does the MCP handshake and reads the
    /// whole `tools/list` (following `nextCursor`), all within
    /// `opts.connect_timeout`.
    pub async fn connect(
        name: &str,
        spec: &ServerSpec,
        opts: &ConnectOptions,
    ) -> Result<Connection, McpError> {
        let log = ServerLog::default();
        let calls = InFlight::default();
        let tools_changed = Arc::new(AtomicBool::new(false));
        let for_client = (log.clone(), calls.clone(), tools_changed.clone());
        let client = || {
            Client::new(
                name,
                (&opts.client_name, &opts.client_version),
                opts.roots.clone(),
                for_client.0.clone(),
                for_client.1.clone(),
                for_client.2.clone(),
            )
        };
        let protocol = opts.protocol_for(name, spec);
        let replies = Replies::within(opts.limits);
        let shared = (log, calls, tools_changed, replies);
        let deadline = Instant::now() + opts.connect_timeout;
        let within = HumanDuration(opts.connect_timeout);
        match spec {
            ServerSpec::Stdio {
                command,
                args,
                env,
                cwd,
                ..
            } => {
                let (transport, stderr) = spawn_stdio(
                    name,
                    command,
                    args,
                    env,
                    cwd.as_deref(),
                    opts.shutdown_grace,
                    (&shared.0, &shared.3),
                )?;
                let pid = transport.id();
                let notes = transport.notes();
                let stderr_done = CancellationToken::new();
                match stderr {
                    Some(stderr) => {
                        tokio::spawn(log::pump(stderr, shared.0.clone(), stderr_done.clone()));
                    }
                    None => stderr_done.cancel(),
                }
                let endpoint = Endpoint::Stdio {
                    pid,
                    stderr_done,
                    notes,
                };
                let handshake = handshake::stdio(transport, client, protocol);
                let service = match tokio::time::timeout_at(deadline, handshake).await {
                    Ok(Ok(service)) => service,
                    Ok(Err(e)) => {
                        return Err(McpError::Handshake {
                            server: name.to_owned(),
                            reason: endpoint
                                .handshake_reason(describe_stdio_init_error(&e, protocol)),
                            stderr_tail: endpoint.stderr_tail(&shared.0).await,
                        });
                    }
                    Err(_) => {
                        return Err(McpError::Handshake {
                            server: name.to_owned(),
                            reason: endpoint.handshake_reason(protocol.no_answer(within)),
                            stderr_tail: endpoint.stderr_tail(&shared.0).await,
                        });
                    }
                };
                Self::finish(name, service, endpoint, shared, deadline, opts).await
            }
            ServerSpec::Http {
                url, headers, auth, ..
            } => {
                let transport =
                    http_transport(name, url, headers, (auth.as_ref(), &opts.logins), &shared.3)?;
                // Checked above: a second handshake builds the same again.
                let again = || {
                    http_transport(name, url, headers, (auth.as_ref(), &opts.logins), &shared.3)
                        .ok()
                };
                let handshake = handshake::http(transport, again, client, protocol);
                let service = match tokio::time::timeout_at(deadline, handshake).await {
                    Ok(Ok(service)) => service,
                    Ok(Err(e)) if auth::wants_login(revision::telling(&e)) => {
                        auth::login_for_connect(name, url, auth.as_ref(), &opts.logins).await?;
                        return Box::pin(Self::connect(name, spec, opts)).await;
                    }
                    Ok(Err(e)) => return Err(http_init_error(name, url, &e, protocol)),
                    Err(_) => {
                        return Err(McpError::Connect {
                            server: name.to_owned(),
                            url: redact_url(url),
                            reason: protocol.no_answer(within),
                        });
                    }
                };
                Self::finish(name, service, Endpoint::Http, shared, deadline, opts).await
            }
        }
    }

    /// After the handshake: read the tools and assemble the connection.
    async fn finish(
        name: &str,
        service: RunningService<RoleClient, Client>,
        endpoint: Endpoint,
        (log, calls, tools_changed, replies): (ServerLog, InFlight, Arc<AtomicBool>, Replies),
        deadline: Instant,
        opts: &ConnectOptions,
    ) -> Result<Connection, McpError> {
        let peer = service.peer().clone();
        let peer_info = peer.peer_info();
        let server_info = peer_info
            .as_deref()
            .and_then(|info| serde_json::to_value(info).ok())
            .unwrap_or(Value::Null);
        let has_tools = peer_info
            .as_deref()
            .is_some_and(|info| info.capabilities.tools.is_some());
        let logs = peer_info
            .as_deref()
            .is_some_and(|info| info.capabilities.logging.is_some());
        if let (Some(level), true) = (opts.log_level, logs) {
            set_level(&peer, level, &log, deadline).await;
        }
        let fresh = Freshness::default();
        let listed = tokio::time::timeout_at(deadline, list_tools(&peer, &fresh, &replies)).await;
        let tools = match listed {
            Ok(Ok(tools)) => Ok(tools),
            // A server without tools: nothing to call, but reachable.
            Ok(Err(ListError::Service(ServiceError::McpError(e))))
                if e.code == ErrorCode::METHOD_NOT_FOUND && !has_tools =>
            {
                Ok(Vec::new())
            }
            Ok(Err(e)) => Err(format!("`tools/list` failed: {e}")),
            Err(_) => Err(format!(
                "no complete answer to `tools/list` within {}",
                HumanDuration(opts.connect_timeout)
            )),
        };
        let failure = match tools {
            Ok(tools) => {
                let conn = Connection {
                    inner: Arc::new(Inner {
                        name: name.to_owned(),
                        peer,
                        service: Mutex::new(Some(service)),
                        server_info,
                        tools: RwLock::new(Arc::new(tools)),
                        log,
                        endpoint,
                        closed: AtomicBool::new(false),
                        calls,
                        tools_changed,
                        roots: opts.roots.clone(),
                        log_level: opts.log_level,
                        fresh,
                        replies,
                    }),
                };
                if opts.listen {
                    conn.listen_for_changes();
                }
                return Ok(conn);
            }
            Err(failure) => failure,
        };
        // Dropping the service shuts the transport down in the background.
        drop(service);
        Err(McpError::Handshake {
            server: name.to_owned(),
            reason: endpoint.handshake_reason(failure),
            stderr_tail: endpoint.stderr_tail(&log).await,
        })
    }

    /// The server's name as declared in the pipeline file.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// What the server said about itself in the handshake:
    /// `{"protocolVersion", "capabilities", "serverInfo", "instructions"}`.
    pub fn server_info(&self) -> Value {
        self.inner.server_info.clone()
    }

    /// Every tool of the server, in listed order (as last read).
    pub fn tools(&self) -> Arc<Vec<ToolInfo>> {
        self.inner
            .tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The tool called `name`, if the server has one.
    pub fn tool(&self, name: &str) -> Option<ToolInfo> {
        self.tools().iter().find(|t| t.name == name).cloned()
    }

    /// The server's stderr (stdio servers) and log notifications, last 64 KiB.
    pub fn log(&self) -> &ServerLog {
        &self.inner.log
    }

    /// The process id of a stdio server.
    pub fn pid(&self) -> Option<u32> {
        match &self.inner.endpoint {
            Endpoint::Stdio { pid, .. } => *pid,
            Endpoint::Http => None,
        }
    }

    /// True once the connection was closed or the server went away.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst) || self.inner.peer.is_transport_closed()
    }

    /// Shuts the connection down for every clone: ends the session, closes
    /// the server's stdin, then terminates it if it lingers past the grace
    /// (see [`ConnectOptions::shutdown_grace`]).
    pub async fn close(self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        let service = self
            .inner
            .service
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut service) = service {
            let _ = service.close_with_timeout(CLOSE_WAIT).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_of_a_spec_hides_secrets() {
        let spec = ServerSpec::Http {
            url: "https://user:pw@example.com/mcp?token=abc".into(),
            headers: BTreeMap::from([("Authorization".into(), "Bearer s3cret".into())]),
            auth: Some(auth::AuthConfig {
                client_secret: Some("cs-s3cret".into()),
                ..auth::AuthConfig::default()
            }),
            protocol: None,
        };
        let shown = format!("{spec:?}");
        assert!(shown.contains("Authorization"), "{shown}");
        assert!(!shown.contains("s3cret") && !shown.contains("pw") && !shown.contains("abc"));
        let spec = ServerSpec::Stdio {
            command: "srv".into(),
            args: vec![],
            env: BTreeMap::from([("TOKEN".into(), "s3cret".into())]),
            cwd: None,
            protocol: None,
        };
        let shown = format!("{spec:?}");
        assert!(
            shown.contains("TOKEN") && !shown.contains("s3cret"),
            "{shown}"
        );
    }
}
