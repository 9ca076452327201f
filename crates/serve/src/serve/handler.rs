//! The MCP side of `serve`: listing the served compositions, and running
//! one per `tools/call` in its own session.

use pipewright_engine::file::import::Dialect;
use pipewright_engine::settings::Settings;
use std::sync::Arc;

use anyhow::Context as _;
use axum::serve::ListenerExt as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, GetTaskParams,
    GetTaskResult, Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::{
    StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::exec::{Hooks, Job, run, wants_task};
use super::logging::SessionLevel;
use super::model::{Served, Upstream, json_type};
use pipewright_engine::options::exit;
use pipewright_engine::run::session::SessionConfig;
use pipewright_engine::run::trace::Trace;

const META_TOOL: &str = "run_pipeline";

/// The served tools, shared by every client.
#[derive(Clone)]
pub struct PipelineServer {
    tools: Arc<Vec<Served>>,
    upstreams: Arc<Vec<Arc<Upstream>>>,
    save: bool,
    meta_tool: bool,
    yes: bool,
    allow_env: Arc<Vec<String>>,
    /// The log level this client's session asked for.
    level: SessionLevel,
    /// The runs started as tasks, shared by every session (a task id is a
    /// random UUID: only the client that got it can name it).
    tasks: rmcp::task_manager::TaskManager,
    /// The ids of the tasks this session started (`tasks/list`).
    started: Arc<std::sync::Mutex<Vec<String>>>,
    /// How many task runs are going, over every session.
    pub(super) running_tasks: Arc<std::sync::atomic::AtomicUsize>,
    /// `--on restate://…`: calls run durably there.
    pub(super) remote: Option<Arc<super::exec::Remote>>,
    /// `--eval`: the served runs' `eval:`, graded after the answer.
    eval: Option<Arc<super::judged::Evaluator>>,
    /// Runs waiting for a 2026-07-28 agent's answers, over every session.
    pub(super) parked: Arc<super::parked::Parking>,
    /// The driver's settings (its flags and `PIPEWRIGHT_*`).
    pub(super) settings: Arc<Settings>,
}

/// What `serve`'s flags ask of the server.
pub struct Flags {
    pub save: bool,
    pub meta_tool: bool,
    pub yes: bool,
    /// The environment variables an inline pipeline may read as
    /// `${env.NAME}` (`--allow-env`); none by default.
    pub allow_env: Vec<String>,
    /// `--on restate://…`: where calls run, durably.
    pub remote: Option<super::exec::Remote>,
    /// The driver's settings (its flags and `PIPEWRIGHT_*`).
    pub settings: Settings,
}

impl PipelineServer {
    pub fn new(tools: Vec<Served>, upstreams: Vec<Arc<Upstream>>, flags: Flags) -> Self {
        PipelineServer {
            tools: Arc::new(tools),
            upstreams: Arc::new(upstreams),
            save: flags.save,
            meta_tool: flags.meta_tool,
            yes: flags.yes,
            allow_env: Arc::new(flags.allow_env),
            level: SessionLevel::default(),
            tasks: rmcp::task_manager::TaskManager::new(),
            started: Arc::default(),
            running_tasks: Arc::default(),
            remote: flags.remote.map(Arc::new),
            eval: None,
            parked: Arc::default(),
            settings: Arc::new(flags.settings),
        }
    }

    /// Grades each served run's `eval:` after answering (`serve --eval`).
    pub fn with_eval(mut self, eval: Arc<super::judged::Evaluator>) -> Self {
        self.eval = Some(eval);
        self
    }

    /// The server as one new session sees it: the tools and tasks shared,
    /// its own log level.
    fn for_session(&self) -> Self {
        PipelineServer {
            level: SessionLevel::default(),
            started: Arc::default(),
            ..self.clone()
        }
    }

    fn definitions(&self) -> Vec<Tool> {
        let mut out: Vec<Tool> = self
            .tools
            .iter()
            .filter_map(|s| serde_json::from_value(s.definition.clone()).ok())
            .collect();
        if self.meta_tool
            && let Ok(t) = serde_json::from_value(json!({
                "name": META_TOOL,
                "description": "Run an inline pipeline against this server's upstream servers: `pipeline` is a native file (YAML or JSON text with `pipe:` or `compositions:`), or Fibe or Discord pipeline JSON. Returns the run's output.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "pipeline": { "type": "string", "description": "The pipeline file's text." },
                        "vars": { "type": "object", "description": "Values for `${var.X}`." }
                    },
                    "required": ["pipeline"],
                    "additionalProperties": false
                },
                "annotations": { "destructiveHint": self.yes, "openWorldHint": true }
            }))
        {
            out.push(t);
        }
        out
    }
}

impl ServerHandler for PipelineServer {
    // `logging` is deprecated in 2026-07-28 (SEP-2577); older clients use it.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        // Prompts and resources: declared, as empty lists. rmcp answers
        // their list methods either way, and 2026-07-28 wants a server that
        // answers `prompts/list` to declare it (and caching hints on it).
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_logging()
                .enable_tools()
                .enable_tasks()
                .enable_prompts()
                .enable_resources()
                .build(),
        )
            .with_server_info(
                Implementation::new("pipewright", env!("CARGO_PKG_VERSION"))
                    .with_title("pipewright serve"),
            )
            .with_instructions(
                "Each tool runs a whole pipeline of MCP tool calls in one request and returns its combined output; intermediate results stay on this side.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.definitions()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.definitions().into_iter().find(|t| t.name == name)
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level.set(request.level);
        Ok(())
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        match self.legacy_request(&request, context).await {
            Some(answer) => answer,
            None => Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                request.method,
                None,
            )),
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.tasks
            .get_task(&request.task_id)
            .map(GetTaskResult::new)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks.cancel_task(&request.task_id)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        if self.meta_tool && request.name == META_TOOL {
            return self.meta_call(args, context).await;
        }
        if request.request_state.is_some() || request.input_responses.is_some() {
            let (state, responses) = (request.request_state, request.input_responses);
            return self.resume(&request.name, state, responses, &context).await;
        }
        let job = self.job(&request.name, &args)?;
        let level = self.level.for_request(&context);
        if wants_task(&context) {
            return Ok(self
                .spawn_task(&self.tasks, job, &context, level)?
                .into_response());
        }
        self.call_job(&request.name, job, &context, level).await
    }
}

impl PipelineServer {
    /// The run a call of the served tool `name` asks for: an unknown tool
    /// or a bad argument is an invalid-params error.
    pub(crate) fn job(&self, name: &str, args: &Map<String, Value>) -> Result<Job, ErrorData> {
        let Some(served) = self.tools.iter().find(|s| s.name == name) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        };
        let vars = arguments(served, args)?;
        if let Some(why) = super::locked::refusal(served) {
            return Err(ErrorData::internal_error(why, None));
        }
        let cfg = SessionConfig {
            file: served.file.clone(),
            vars,
            budget: served.comp.budget.or(served.pipeline.budget),
            pricing: served.pricing.clone(),
            expect: served.comp.expect.clone(),
            // The served file is the operator's: its `${env.X}` read the
            // server's environment.
            env: self.settings.env.clone(),
            pinned: served.pinned.clone(),
            ..SessionConfig::default()
        };
        let remote = self.remote.as_ref().map(|r| super::exec::RemoteJob {
            remote: r.clone(),
            request: r.request(name, args),
            agent: None,
        });
        Ok(Job {
            tool: served.name.clone(),
            comp: served.comp.clone(),
            caller: served.caller.clone(),
            cfg,
            redactor: served.redactor.clone(),
            remote,
        })
    }

    pub(super) fn tasks(&self) -> &rmcp::task_manager::TaskManager {
        &self.tasks
    }

    /// The served compositions' tool names (not `run_pipeline`).
    pub(super) fn tool_names(&self) -> Vec<String> {
        self.tools.iter().map(|s| s.name.clone()).collect()
    }

    /// The ids of the 2025-11-25 tasks this session started.
    pub(super) fn started_tasks(&self) -> Vec<String> {
        self.started.lock().map(|s| s.clone()).unwrap_or_default()
    }

    pub(super) fn note_started(&self, id: &str) {
        if let Ok(mut s) = self.started.lock() {
            s.push(id.to_owned());
        }
    }

    /// The log level for one request (its `_meta`, else its session's).
    pub(super) fn level_for(
        &self,
        context: &RequestContext<RoleServer>,
    ) -> Option<super::logging::Level> {
        self.level.for_request(context)
    }

    /// The upstream servers every served file calls.
    pub(crate) fn upstreams(&self) -> &Arc<Vec<Arc<Upstream>>> {
        &self.upstreams
    }

    pub(super) fn upstream(&self) -> Option<&Arc<Upstream>> {
        self.upstreams.first()
    }

    pub(super) fn allows_destructive(&self) -> bool {
        self.yes
    }

    /// The result of a call of the served tool `tool`, or why the run has
    /// none.
    pub(super) fn answer_run(&self, tool: &str, run: Result<Trace, String>) -> CallToolResult {
        match run {
            Ok(t) => {
                let from =
                    self.tools.iter().find(|s| s.name == tool).map(|s| {
                        super::provenance::of_served(&t, s, &self.settings.env, self.save)
                    });
                self.answer(Some(t), from)
            }
            Err(why) => super::answer::error_result(why, json!({})),
        }
    }

    /// The call's result, after saving the run; `from` is its provenance.
    pub(super) fn answer(&self, trace: Option<Trace>, from: Option<Value>) -> CallToolResult {
        let Some(mut trace) = trace else {
            return super::answer::error_result("the run ended without a trace".into(), json!({}));
        };
        let judged = self.eval.as_ref().filter(|e| self.save && e.wants(&trace));
        if judged.is_some() {
            super::judged::Evaluator::mark(&mut trace);
        }
        if self.save {
            pipewright_headless::keep(
                &trace,
                None,
                self.settings.data_dir.as_deref(),
                self.settings.max_runs,
            );
        }
        let answer = super::answer::result(&trace, from);
        if let Some(e) = judged {
            e.after_answer(trace);
        }
        answer
    }
}

/// The caller's arguments as the run's vars, over the file's defaults; a
/// missing required argument, an unknown one or a wrong type is an
/// invalid-params error naming it.
fn arguments(
    served: &Served,
    args: &Map<String, Value>,
) -> Result<indexmap::IndexMap<String, Value>, ErrorData> {
    let mut vars = served.pipeline.vars.clone();
    for (k, v) in args {
        let Some(p) = served.params.iter().find(|p| &p.name == k) else {
            let known: Vec<&str> = served.params.iter().map(|p| p.name.as_str()).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "`{}` takes no argument `{k}` (its arguments: {})",
                    served.name,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ),
                None,
            ));
        };
        let want = json_type(p.default.as_ref());
        let fits = match (want, v) {
            ("string", Value::String(_))
            | ("boolean", Value::Bool(_))
            | ("array", Value::Array(_))
            | ("object", Value::Object(_)) => true,
            ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
            ("number", Value::Number(_)) => true,
            _ => false,
        };
        if !fits {
            return Err(ErrorData::invalid_params(
                format!(
                    "argument `{k}` of `{}` must be {} {want}, got {}",
                    served.name,
                    if want == "integer" || want == "array" || want == "object" {
                        "an"
                    } else {
                        "a"
                    },
                    pipewright_engine::run::trace::type_name(v)
                ),
                None,
            ));
        }
        vars.insert(k.clone(), v.clone());
    }
    for p in served.params.iter().filter(|p| p.default.is_none()) {
        if !args.contains_key(&p.name) {
            return Err(ErrorData::invalid_params(
                format!("`{}` needs the argument `{}`", served.name, p.name),
                None,
            ));
        }
    }
    Ok(vars)
}

/// Why an inline pipeline from a caller reaches past what a caller may:
/// `${env.X}` (the server's environment), declared servers (processes to
/// start, files to import) or a sampling provider (keys). `None` when it
/// only uses the upstream servers and its own variables.
fn untrusted_reach(
    p: &pipewright_engine::file::model::Pipeline,
    allowed: &[String],
) -> Option<String> {
    use pipewright_engine::lang::reference::Root;
    if let Some(decl) = p.servers.values().next() {
        return Some(format!(
            "{}:{}: an inline pipeline may not declare servers (`{}`); it runs against this server's upstream servers",
            decl.span.start.line, decl.span.start.col, decl.name
        ));
    }
    if p.sampling.is_some() {
        return Some("an inline pipeline may not name a sampling provider".to_owned());
    }
    for comp in &p.compositions {
        for node in &comp.nodes {
            for site in node.refs() {
                if let Root::Env(name) = &site.reference.root
                    && !allowed.iter().any(|a| a == name)
                {
                    return Some(format!(
                        "node `{}`: an inline pipeline may not read the server's environment (`${{env.{name}}}`); pass values as `vars`",
                        node.id
                    ));
                }
            }
        }
    }
    None
}

/// Serves one client on stdin/stdout until it disconnects.
pub async fn serve_stdio(server: PipelineServer) -> anyhow::Result<u8> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP handshake on stdin/stdout failed")?;
    running
        .waiting()
        .await
        .context("the server stopped abnormally")?;
    Ok(exit::OK)
}

/// The largest request body `serve --http` takes by default (4 MiB).
pub const DEFAULT_MAX_BODY: usize = 4 * 1024 * 1024;

/// How `serve --http` guards its door.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Every request must carry `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Request bodies larger than this are answered 413 unread.
    pub max_body: usize,
    /// Sessions open at once; one more `initialize` is answered 503.
    pub max_sessions: usize,
    /// Requests in flight in one session; one more is answered 429.
    pub max_calls: usize,
    /// A session no request reached for this long is closed.
    pub session_idle: std::time::Duration,
    /// Once told to stop, how long calls in flight may take to finish.
    pub drain: std::time::Duration,
}

/// Whether `header` is `Bearer <token>`, compared in constant time.
fn bearer_matches(header: Option<&axum::http::HeaderValue>, token: &str) -> bool {
    let Some(given) = header
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
    else {
        return false;
    };
    let (a, b) = (given.trim().as_bytes(), token.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Serves Streamable HTTP at `http://ADDR/mcp` until Ctrl-C; prints the
/// address on stderr once listening.
pub async fn serve_http(
    server: PipelineServer,
    addr: &str,
    opts: HttpOptions,
) -> anyhow::Result<u8> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("could not listen on {addr}"))?;
    let bound = listener.local_addr()?;
    let cancel = CancellationToken::new();
    let sessions = Arc::new(LocalSessionManager::default());
    let limits = Arc::new(super::limits::Limits::new(
        sessions.clone(),
        opts.max_sessions,
        opts.max_calls,
        opts.session_idle,
    ));
    tokio::spawn(limits.clone().sweep(cancel.child_token()));
    let watched = super::health::Watched {
        upstreams: server.upstreams().clone(),
        restate: server.remote.as_ref().map(|r| r.restate.on.clone()),
    };
    let service = StreamableHttpService::new(
        move || Ok(server.for_session()),
        sessions,
        pipewright_demo::http_config(cancel.child_token(), opts.token.is_some()),
    );
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        // 2025-11-25 task requests, renamed for `on_custom_request`.
        .layer(axum::middleware::from_fn(super::rename::rename))
        .layer(axum::middleware::from_fn_with_state(
            limits.clone(),
            super::limits::guard,
        ))
        // A body over the limit is refused before it is read.
        .layer(tower_http::limit::RequestBodyLimitLayer::new(opts.max_body));
    let router = match opts.token {
        Some(token) => router.layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                let ok =
                    bearer_matches(req.headers().get(axum::http::header::AUTHORIZATION), &token);
                async move {
                    if ok {
                        next.run(req).await
                    } else {
                        axum::response::IntoResponse::into_response((
                            axum::http::StatusCode::UNAUTHORIZED,
                            [(axum::http::header::WWW_AUTHENTICATE, "Bearer")],
                            "a bearer token is required (serve --token-env)\n",
                        ))
                    }
                }
            },
        )),
        None => router,
    };
    // Off the MCP path, its Origin checks and the token: what a balancer
    // or an orchestrator asks.
    let router = router.merge(super::health::routes(limits.clone(), watched));
    eprintln!("pipewright serve listening on http://{bound}/mcp");
    let stop = cancel.clone();
    let draining = limits.clone();
    let drain = opts.drain;
    // Ctrl-C or SIGTERM: drain, then stop serving; the upstream servers
    // are stopped as the server is dropped.
    tokio::spawn(async move {
        stopped().await;
        super::limits::drain(&draining, drain).await;
        stop.cancel();
    });
    axum::serve(listener.tap_io(pipewright_demo::no_delay), router)
        .with_graceful_shutdown(cancel.cancelled_owned())
        .await?;
    // The sessions are over: a call still going was cancelled with them
    // and runs its compensations, then saves its run.
    super::limits::settle(&limits).await;
    Ok(exit::OK)
}

/// Waits for Ctrl-C or SIGTERM.
async fn stopped() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

impl PipelineServer {
    /// `run_pipeline` (`serve --meta-tool`): an inline pipeline, native or
    /// Fibe or Discord, run against the served files' upstream servers.
    /// Preflight runs first; destructive tools still need `serve --yes`.
    async fn meta_call(
        &self,
        args: Map<String, Value>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let server = self;
        let Some(Value::String(text)) = args.get("pipeline") else {
            return Err(ErrorData::invalid_params(
                "`run_pipeline` needs `pipeline`: the pipeline file's text",
                None,
            ));
        };
        let vars = match args.get("vars") {
            None => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    "`vars` must be an object of `${var.X}` values",
                    None,
                ));
            }
        };
        let Some(up) = server.upstream() else {
            return Err(ErrorData::invalid_params(
                "no upstream servers are connected",
                None,
            ));
        };
        // The caller is not trusted: its jq programs compile without `env`
        // and `halt`, and what it may refer to is checked below.
        let mut opts = server.settings.load_options(Vec::new());
        opts.jq.sandboxed = true;
        let loaded = pipewright_engine::file::open::load_str_with(text, Dialect::Auto, &opts);
        let errors: Vec<String> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .map(|d| format!("{}:{}: {}", d.span.start.line, d.span.start.col, d.message))
            .collect();
        let Some(pipeline) = loaded.pipeline.filter(|_| errors.is_empty()) else {
            return Err(ErrorData::invalid_params(
                format!("the pipeline has errors: {}", errors.join("; ")),
                None,
            ));
        };
        if let Some(why) = untrusted_reach(&pipeline, &self.allow_env) {
            return Err(ErrorData::invalid_params(why, None));
        }
        let Some(comp) = pipeline.compositions.first().cloned() else {
            return Err(ErrorData::invalid_params(
                "the pipeline has no composition",
                None,
            ));
        };
        let mut all = pipeline.vars.clone();
        all.extend(vars);
        // What the caller's `${env.X}` may read: the variables
        // `--allow-env` names and no other (the check above refused the
        // rest already).
        let env = self.settings.env.only(&self.allow_env);
        let default = up.pricing.default_server.clone();
        let report = pipewright_engine::plan::preflight::check(
            &[(&comp, all.clone())],
            &up.tools,
            default.as_deref(),
            &env,
        );
        if !report.ok() {
            let problems: Vec<String> = report.problems.iter().map(|d| d.message.clone()).collect();
            return Err(ErrorData::invalid_params(
                format!("preflight: {}", problems.join("; ")),
                None,
            ));
        }
        if !report.destructive.is_empty() && !server.allows_destructive() {
            let calls: Vec<String> = report.destructive.iter().map(|d| d.tool.clone()).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "the pipeline calls destructive tools ({}); this server was not started with --yes",
                    calls.join(", ")
                ),
                None,
            ));
        }
        let cfg = SessionConfig {
            file: "run_pipeline".into(),
            vars: all,
            budget: comp.budget.or(pipeline.budget),
            pricing: up.pricing.clone(),
            expect: comp.expect.clone(),
            env: env.clone(),
            ..SessionConfig::default()
        };
        let caller = up.pool.clone() as std::sync::Arc<dyn pipewright_engine::mcp::caller::Caller>;
        let level = self.level.for_request(&context);
        let comp = std::sync::Arc::new(comp);
        let trace = run(
            comp.clone(),
            caller,
            cfg,
            up.redactor.clone(),
            Hooks::of_request(&context, level),
        )
        .await;
        let from = trace
            .as_ref()
            .map(|t| super::provenance::of_inline(t, META_TOOL, &comp, text, up, &env, self.save));
        Ok(server.answer(trace, from).into())
    }
}
