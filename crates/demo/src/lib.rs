//! The built-in MCP demo server (`pipewright demo-server`): a small,
//! deterministic server over stdio or Streamable HTTP that every example
//! pipeline runs against offline.
//!
//! # Tools
//!
//! | tool | arguments | result |
//! |---|---|---|
//! | `search_users` | `query`, `limit?` (10) | `{users: [{id, name, email}], count}` |
//! | `get_user_details` | `user_id` | `{id, name, email, plan, created, last_login, teams}` |
//! | `send_email` | `to`, `subject`, `body` | `{message_id: "msg-NNNNNN", status: "queued", to}` |
//! | `delete_user` | `user_id` | `{deleted}` (destructive; the directory is left as it is) |
//! | `search_packages` | `query` (or `q`), `limit?` (10) | `{result: {hits: [{name, score, version}]}, count, top_hit, hits}` |
//! | `get_readme` | `package` | `{package, body}` |
//! | `fetch_metadata` | `name` | `{name, meta: {version, description, license, stars, downloads, keywords, homepage}}` |
//! | `list_items` | `count?` (3), `prefix?` (`item-`) | text `[{"id", "index"}, ...]`, no structured content |
//! | `echo` | `message` | text `message`, no structured content |
//! | `add` | `a`, `b` | `{sum}` (with an output schema) |
//! | `flaky` | `key`, `failures?` (2) | tool error for the first `failures` calls per key, then `{key, attempts}` |
//! | `slow` | `ms` | `{slept_ms}` after sleeping; stops when the request is cancelled |
//! | `big_output` | `kb` | `{kb, count, records: [{index, id, payload}]}`, `kb` KiB of records |
//! | `fail` | `message?` | always a tool error with that text |
//! | `crash` | `exit_code?` (1) | exits the server process without replying (destructive) |
//! | `summarize` | `text` | `{summary}`, cost and tokens in the result's `_meta` |
//! | `confirm_send` | `to`, `subject?` | asks a form (`signature`, `tone`: brief/friendly/formal, `send`: yes/no); `{to, action, signature?, tone?, send?}` |
//! | `connect_account` | `service?` (`calendar`) | asks the user to open `https://example.org/pipewright-demo/connect?service=…`; `{service, action, connected}` |
//! | `draft_reply` | `to`, `topic` | asks the client's model (sampling); `{to, action, text?, model?}` |
//! | `call_counts` | none | `{counts: {tool: n}, in_flight}` |
//!
//! # Tools that ask
//!
//! `confirm_send`, `connect_account` and `draft_reply` ask the client
//! mid-call, the way the revision it negotiated allows: with 2026-07-28 the
//! call is answered with an input-required result and the client calls
//! again with the reply (`inputResponses`); with 2025-11-25 and older the
//! question is an `elicitation/create` or `sampling/createMessage` request
//! sent while the call is open. A declined or cancelled question is a
//! result (`{action: "decline"}`), not an error; see `asking.rs`.
//!
//! Structured results come both as `structuredContent` and as a text content
//! holding the same JSON. Bad arguments and unknown ids are tool errors
//! (`isError: true`) whose text names the tool and the problem; an unknown
//! tool name is a JSON-RPC invalid-params error.
//!
//! # Determinism
//!
//! The same call gives the same result: the data is fixed, timestamps in it
//! are constants and `send_email` derives its message id from its arguments.
//! The exceptions are deliberate and scoped to one server process (over HTTP,
//! shared by every session): `flaky` counts attempts per key and
//! `call_counts` reports calls made so far. `delete_user` does not delete.
//!
//! # `crash`
//!
//! `crash` calls [`std::process::exit`]: over stdio the client sees its
//! transport close; over HTTP the whole process stops, for every session. Do
//! not call it on a server started in-process with [`spawn_http`] unless the
//! test means to end.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context as _;
use axum::serve::ListenerExt as _;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt as _,
    model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
        CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
        Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
        ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse,
        ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
    },
    service::RequestContext,
    transport::streamable_http_server::{
        StreamableHttpService, session::local::LocalSessionManager,
    },
};
use tokio::{net::ToSocketAddrs, task::JoinHandle};
use tokio_util::sync::CancellationToken;

mod asking;
mod catalog;
mod conformance;
mod conformance_content;
mod conformance_mrtr;
mod conformance_parts;
mod conformance_schemas;
mod conformance_tasks;
mod data;
mod http;
mod tools;
mod written;

pub use http::{http_config, no_delay};

use catalog::DemoTool;

/// The server name reported in `initialize`.
pub const SERVER_NAME: &str = "pipewright-demo";
/// The path the Streamable HTTP endpoint is served at.
pub const HTTP_PATH: &str = "/mcp";
/// How long [`HttpServerHandle::shutdown`] waits for open connections.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

const INSTRUCTIONS: &str = "pipewright's built-in demo server. Everything is made up and \
    deterministic. Users: search_users, then get_user_details, send_email or delete_user \
    (destructive, changes nothing). Packages: search_packages, then get_readme or \
    fetch_metadata. Pipeline testing: list_items (a JSON array as text), echo (plain text), \
    add (output schema), flaky (fails n times per key), slow (cancellable sleep), big_output, \
    fail, crash (kills the server), summarize (reports cost in _meta) and call_counts. \
    Asking the client: confirm_send (a form), connect_account (a URL to open) and \
    draft_reply (a sampling request).";

/// Every tool's `tools/list` entry as JSON, without starting a server:
/// what the workbench writes a new file's scaffold from.
pub fn tool_definitions() -> Vec<serde_json::Value> {
    DemoTool::ALL
        .map(DemoTool::definition)
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect()
}

/// How a demo server behaves beyond its fixed tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DemoServerOptions {
    /// A pause before every tool call (except `call_counts`), so that a
    /// pipeline's progress can be watched; cancelling the request ends it.
    /// Zero (the default) for none.
    pub call_delay: Duration,
    /// The official conformance suite's fixtures besides the demo's own
    /// tools (`demo-server --conformance-fixtures`): its `test_*` tools,
    /// resources, prompts and completions. Off by default, so a pipeline's
    /// author sees only the demo's tools.
    pub fixtures: bool,
}

/// The demo server's MCP handler. Clones share one state (call counters and
/// `flaky` attempts), which is how every HTTP session of one server sees the
/// same counts.
///
/// Serve it on any rmcp transport, for example an in-memory
/// [`tokio::io::duplex`] pair in tests; [`serve_stdio`], [`serve_http`] and
/// [`spawn_http`] do it for the usual ones.
#[derive(Debug, Clone)]
pub struct DemoServer {
    state: Arc<tools::State>,
    fixtures: bool,
    /// The tasks the fixtures started (`conformance_tasks.rs`).
    tasks: conformance_tasks::Tasks,
}

impl DemoServer {
    /// A server with fresh counters.
    pub fn new(options: DemoServerOptions) -> Self {
        Self {
            state: Arc::new(tools::State::new(options.call_delay)),
            fixtures: options.fixtures,
            tasks: Default::default(),
        }
    }
}

impl Default for DemoServer {
    fn default() -> Self {
        Self::new(DemoServerOptions::default())
    }
}

impl ServerHandler for DemoServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_completions()
            .build();
        if self.fixtures {
            conformance_tasks::advertise(&mut capabilities);
        }
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
                    .with_title("pipewright demo server"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = DemoTool::ALL.map(DemoTool::definition).to_vec();
        if self.fixtures {
            tools.extend(conformance::definitions());
            tools.extend(conformance_tasks::definitions());
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        DemoTool::from_name(name)
            .map(DemoTool::definition)
            .or_else(|| {
                conformance::definitions()
                    .into_iter()
                    .chain(conformance_tasks::definitions())
                    .find(|t| self.fixtures && t.name == name)
            })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        if !self.fixtures {
            return Ok(ListResourcesResult::default());
        }
        conformance_content::resources()
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        if !self.fixtures {
            return Ok(ListResourceTemplatesResult::default());
        }
        conformance_content::templates()
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if !self.fixtures {
            return Err(no_such("resource", request.uri.as_str()));
        }
        conformance_content::read(request)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        if !self.fixtures {
            return Ok(ListPromptsResult::default());
        }
        conformance_content::prompts()
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if !self.fixtures {
            return Err(no_such("prompt", &request.name));
        }
        conformance_content::prompt(request)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        if !self.fixtures {
            return Ok(CompleteResult::default());
        }
        conformance_content::completions(request, context)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(tool) = DemoTool::from_name(&request.name).filter(|t| asking::asks(*t)) {
            let _running = tools::counted(&self.state, tool);
            return asking::call(tool, request, context).await;
        }
        if self.fixtures && conformance::is_fixture(&request.name) {
            return conformance::call(request, context).await;
        }
        if self.fixtures && conformance_tasks::is_fixture(&request.name) {
            return conformance_tasks::call(&self.tasks, request, context).await;
        }
        tools::call(&self.state, &request.name, request.arguments, &context.ct)
            .await
            .map(CallToolResponse::from)
    }

    // `tasks/*`: rmcp answers them only when the fixtures declared the
    // extension, and only to a client that declared it too.
    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.tasks.get(&request)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.update(request)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel(&request)
    }
}

/// A resource or prompt the demo server does not have (it has none without
/// its conformance fixtures): invalid params naming it.
fn no_such(what: &str, name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("the demo server has no {what} `{name}`"),
        Some(serde_json::json!({ if what == "resource" { "uri" } else { "name" }: name })),
    )
}

/// Serve one client on stdin/stdout until it disconnects.
///
/// Nothing but MCP messages is written to stdout; diagnostics go to stderr.
pub async fn serve_stdio(options: DemoServerOptions) -> anyhow::Result<()> {
    // Over stdio big results are written as the text they are.
    let written = written::Written::default();
    let server = DemoServer {
        state: Arc::new(tools::State::new(options.call_delay).writing(written.clone())),
        fixtures: options.fixtures,
        tasks: Default::default(),
    };
    let (stdin, stdout) = rmcp::transport::stdio();
    let running = server
        .serve(written::WrittenStdio::new(stdin, stdout, written))
        .await
        .context("the MCP handshake on stdin/stdout failed")?;
    running
        .waiting()
        .await
        .context("the demo server stopped abnormally")?;
    Ok(())
}

/// Serve Streamable HTTP at `http://ADDR/mcp` until Ctrl-C.
///
/// Port 0 picks a free port. Once listening, prints one line to stderr,
/// `pipewright demo-server listening on http://127.0.0.1:PORT/mcp`, for
/// scripts and tests to read the address from. Sessions are stateful
/// (`Mcp-Session-Id`) for clients that negotiate a protocol version with an
/// `initialize` handshake. Only loopback `Host` headers, and no `Origin`
/// but a loopback one, are accepted: the settings `serve --http` uses.
pub async fn serve_http(addr: SocketAddr, options: DemoServerOptions) -> anyhow::Result<()> {
    let (bound, handle) = spawn_http_with(addr, options).await?;
    eprintln!("pipewright demo-server listening on {}", http_url(bound));
    tokio::signal::ctrl_c()
        .await
        .context("could not listen for Ctrl-C")?;
    handle.shutdown().await
}

/// Start a Streamable HTTP demo server in the background (default options)
/// and return the address it is bound to; for tests. See [`spawn_http_with`].
pub async fn spawn_http(
    addr: impl ToSocketAddrs,
) -> anyhow::Result<(SocketAddr, HttpServerHandle)> {
    spawn_http_with(addr, DemoServerOptions::default()).await
}

/// Start a Streamable HTTP demo server in the background on `addr` (port 0
/// picks a free one) and return the bound address and a handle that stops
/// it. Prints nothing. Each call makes a server with its own counters.
pub async fn spawn_http_with(
    addr: impl ToSocketAddrs,
    options: DemoServerOptions,
) -> anyhow::Result<(SocketAddr, HttpServerHandle)> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .context("could not bind the demo server's HTTP address")?;
    let bound = listener
        .local_addr()
        .context("could not read the demo server's bound address")?;
    let cancel = CancellationToken::new();
    let server = DemoServer::new(options);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        // The settings `serve --http` uses (Origin and Host checks).
        crate::http::http_config(cancel.child_token(), false),
    );
    let router = axum::Router::new().nest_service(HTTP_PATH, service);
    let stop = cancel.clone();
    let task = tokio::spawn(async move {
        axum::serve(listener.tap_io(http::no_delay), router)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await
    });
    let handle = HttpServerHandle {
        addr: bound,
        cancel,
        task: Some(task),
    };
    Ok((bound, handle))
}

fn http_url(addr: SocketAddr) -> String {
    format!("http://{addr}{HTTP_PATH}")
}

/// A running background HTTP demo server. Dropping the handle stops the
/// server without waiting; [`HttpServerHandle::shutdown`] waits for it.
#[derive(Debug)]
pub struct HttpServerHandle {
    addr: SocketAddr,
    cancel: CancellationToken,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

impl HttpServerHandle {
    /// The address the server is bound to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint, `http://ADDR/mcp`.
    pub fn url(&self) -> String {
        http_url(self.addr)
    }

    /// Stop accepting connections, end every session and wait (up to five
    /// seconds, then abort) for the server to finish.
    pub async fn shutdown(mut self) -> anyhow::Result<()> {
        self.cancel.cancel();
        let Some(mut task) = self.task.take() else {
            return Ok(());
        };
        match tokio::time::timeout(SHUTDOWN_GRACE, &mut task).await {
            Ok(joined) => joined
                .context("the demo server task panicked")?
                .context("the demo server failed"),
            Err(_) => {
                task.abort();
                anyhow::bail!(
                    "the demo server did not stop within {} s",
                    SHUTDOWN_GRACE.as_secs()
                )
            }
        }
    }
}

impl Drop for HttpServerHandle {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}
