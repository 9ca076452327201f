//! `pipewright serve FILE…`: every composition as one MCP tool, so an agent
//! calls a whole chain in one request (stdio, or Streamable HTTP with
//! `--http`).
//!
//! At start each file is loaded, its servers connected once (shared by
//! every call) and every node checked by preflight; any problem is reported
//! like `run` reports it and nothing is served (exit 2). A composition that
//! calls a destructive tool is served only with `--yes`. Each call runs the
//! composition in its own session with the caller's arguments as its vars,
//! sends `notifications/progress` as nodes end when asked to, is cancelled
//! with its upstream calls when the client cancels, and is saved like any
//! other run.

use std::path::PathBuf;
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use pipewright_engine::cost::pricing::{Pricing, PricingTable};
use pipewright_engine::eval::JudgeFlags;
use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::file::open::load_file_with;
use pipewright_engine::lang::reference::Root;
use pipewright_engine::mcp::caller::Caller;
use pipewright_engine::mcp::servers::{self, ServerPool};
use pipewright_engine::mcp::{ConnectOptions, ToolInfo};
use pipewright_engine::options::exit;
use pipewright_engine::plan::preflight;
use pipewright_engine::redact::Redactor;
use pipewright_engine::settings::Settings;

mod agent;
mod answer;
mod anywhere;
mod digests;
pub(crate) mod exec;
pub(crate) mod handler;
pub(crate) mod health;
mod judged;
mod limits;
mod locked;
mod logging;
pub(crate) mod model;
mod parked;
mod provenance;
mod questions;
mod rename;
mod seal;
mod state_key;
mod tasks_2025_11_25;
mod tasks_2026_07_28;

use model::{Param, Served, Upstream, json_type};

/// What `serve` serves and how: the command line's values.
#[derive(Debug)]
pub struct ServeOptions {
    /// Pipeline files; each composition is one tool (a `pipe:` file is one
    /// tool named after the file).
    pub files: Vec<PathBuf>,
    /// Serve Streamable HTTP at this address (path `/mcp`) instead of
    /// stdio.
    pub http: Option<String>,
    /// Also serve compositions that call tools marked destructive.
    pub yes: bool,
    /// Hold each file to its `pipewright.lock` (as `lock: strict`).
    pub locked: bool,
    /// Also serve `run_pipeline`, which runs an inline pipeline against
    /// the same servers.
    pub meta_tool: bool,
    /// Do not save the runs callers make.
    pub no_save: bool,
    /// The environment variables `run_pipeline`'s inline pipelines may
    /// read as `${env.NAME}`.
    pub allow_env: Vec<String>,
    /// With `http`: the environment variable whose value every request
    /// must carry as its bearer token.
    pub token_env: Option<String>,
    /// With `http`: the largest request body taken, in bytes
    /// ([`DEFAULT_MAX_BODY`]).
    pub max_body: usize,
    /// With `http`: the most sessions open at once
    /// ([`DEFAULT_MAX_SESSIONS`]).
    pub max_sessions: usize,
    /// With `http`: the most requests in flight in one session
    /// ([`DEFAULT_MAX_CALLS`]).
    pub max_calls_per_session: usize,
    /// With `http`: how long a session no request reached stays open
    /// (a duration as the file writes one, e.g. `90s`;
    /// [`DEFAULT_SESSION_IDLE`] when `None`).
    pub session_idle: Option<String>,
    /// With `http`: once told to stop (SIGTERM, Ctrl-C), how long calls in
    /// flight may take to finish before they are cancelled
    /// ([`DEFAULT_DRAIN`] when `None`).
    pub drain: Option<String>,
    /// The file holding the fleet's `requestState` keys (one per line, the
    /// first seals, every one opens), so any instance opens any
    /// instance's state.
    pub state_key_file: Option<PathBuf>,
    /// The environment variable holding the fleet's `requestState` keys
    /// (as the file would).
    pub state_key_env: Option<String>,
    /// Run each call durably on Restate, its ingress at
    /// `restate://HOST:PORT`.
    pub on: Option<String>,
    /// With `on`: Restate's admin API (default port 9070 of the `on` host).
    pub restate_admin: Option<String>,
    /// Grade each served composition's `eval:` after it answers.
    pub eval: bool,
    /// Who grades `eval:`, as the command line says.
    pub judge: JudgeFlags,
}

pub use handler::DEFAULT_MAX_BODY;
pub use limits::{DEFAULT_DRAIN, DEFAULT_MAX_CALLS, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE};

/// `serve`: returns the exit code.
pub async fn serve(args: ServeOptions, settings: Settings) -> u8 {
    // What --http needs is checked before any upstream server starts.
    let http = match &args.http {
        Some(addr) => match http_options(addr, &args).await {
            Ok(opts) => Some((addr.clone(), opts)),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::INVALID;
            }
        },
        None => {
            if args.token_env.is_some() {
                eprintln!(
                    "error: --token-env applies to --http only (stdio has one client: its parent)"
                );
                return exit::INVALID;
            }
            None
        }
    };
    let restate = match &args.on {
        Some(on) => {
            match pipewright_engine::run::durable::client::Restate::parse(
                on,
                args.restate_admin.as_deref(),
            ) {
                Ok(r) if !args.meta_tool => Some(r),
                Ok(_) => {
                    eprintln!(
                        "error: --meta-tool does not go with --on: a worker runs only the files it was given"
                    );
                    return exit::INVALID;
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return exit::INVALID;
                }
            }
        }
        None => None,
    };
    let keys = state_key::Source {
        file: args.state_key_file.as_deref(),
        env: args.state_key_env.as_deref(),
    };
    let sealer = match state_key::load(&keys, &settings.env) {
        Ok((sealer, warnings)) => {
            for w in warnings {
                eprintln!("warning: {w}");
            }
            sealer
        }
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    let (served, upstreams) = match load_all(&args.files, args.yes, args.locked, &settings).await {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    let hashes = served
        .iter()
        .map(|t| (t.name.clone(), t.file_sha256.clone()))
        .collect();
    if served.is_empty() && !args.meta_tool {
        eprintln!("error: nothing to serve");
        return exit::INVALID;
    }
    let names: Vec<&str> = served.iter().map(|s| s.name.as_str()).collect();
    eprintln!(
        "pipewright serve: {} tool(s): {}",
        names.len(),
        names.join(", ")
    );
    let evaluator = if args.eval {
        if args.no_save {
            eprintln!(
                "error: --eval writes the judged rows into the saved runs: it does not go with --no-save"
            );
            return exit::INVALID;
        }
        match judged::Evaluator::new(&args.judge, &served, &upstreams, &settings) {
            Ok(e) => Some(Arc::new(e)),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::INVALID;
            }
        }
    } else {
        None
    };
    let server = handler::PipelineServer::new(
        served,
        upstreams,
        handler::Flags {
            save: !args.no_save,
            meta_tool: args.meta_tool,
            yes: args.yes,
            allow_env: args.allow_env.clone(),
            remote: restate.map(|restate| exec::Remote { restate, hashes }),
            settings: settings.clone(),
        },
    );
    let server = match &evaluator {
        Some(e) => server.with_eval(e.clone()),
        None => server,
    };
    let server = match sealer {
        Some(s) => server.with_sealer(s),
        None => server,
    };
    let code = match http {
        Some((addr, opts)) => handler::serve_http(server, &addr, opts).await,
        None => handler::serve_stdio(server).await,
    };
    if let Some(e) = evaluator {
        e.finish().await;
    }
    code.unwrap_or_else(|e| {
        eprintln!("error: {e:#}");
        exit::FAILED
    })
}

/// The token (from `--token-env`), body, session and call limits for
/// `--http ADDR`; an address off loopback without a token is refused.
async fn http_options(addr: &str, args: &ServeOptions) -> Result<handler::HttpOptions, String> {
    let token = match &args.token_env {
        Some(name) => match std::env::var(name) {
            Ok(v) if !v.trim().is_empty() => Some(v.trim().to_owned()),
            _ => {
                return Err(format!(
                    "--token-env {name}: the environment variable `{name}` is not set (or empty)"
                ));
            }
        },
        None => None,
    };
    let resolved: Vec<std::net::SocketAddr> = tokio::net::lookup_host(addr)
        .await
        .map_err(|e| format!("--http {addr}: not an address to listen on ({e})"))?
        .collect();
    let loopback = !resolved.is_empty() && resolved.iter().all(|a| a.ip().is_loopback());
    if !loopback && token.is_none() {
        return Err(format!(
            "--http {addr} is not a loopback address: anyone who reaches it could call the served tools; give a token with --token-env NAME, or listen on 127.0.0.1"
        ));
    }
    if args.max_body == 0 {
        return Err("--max-body must be at least 1 byte".into());
    }
    if args.max_sessions == 0 || args.max_calls_per_session == 0 {
        return Err("--max-sessions and --max-calls-per-session must be at least 1".into());
    }
    let session_idle =
        pipewright_engine::options::duration_flag("session-idle", args.session_idle.as_deref())?
            .unwrap_or(limits::DEFAULT_SESSION_IDLE);
    if session_idle.is_zero() {
        return Err("--session-idle must be longer than 0s".into());
    }
    let drain = pipewright_engine::options::duration_flag("drain", args.drain.as_deref())?
        .unwrap_or(limits::DEFAULT_DRAIN);
    Ok(handler::HttpOptions {
        token,
        max_body: args.max_body,
        max_sessions: args.max_sessions,
        max_calls: args.max_calls_per_session,
        session_idle,
        drain,
    })
}

/// Loads and connects every file (see [`load_and_connect`]): the tools
/// they serve, two of one name being an error, and their upstreams.
pub(crate) async fn load_all(
    files: &[PathBuf],
    yes: bool,
    locked: bool,
    settings: &Settings,
) -> Result<(Vec<Served>, Vec<Arc<Upstream>>), u8> {
    let mut served: Vec<Served> = Vec::new();
    let mut upstreams: Vec<Arc<Upstream>> = Vec::new();
    for path in files {
        let (tools, up) = load_and_connect(path, yes, locked, settings).await?;
        for t in tools {
            if let Some(other) = served.iter().find(|s| s.name == t.name) {
                eprintln!(
                    "error: two tools would be named `{}`: one from {}, one from {}; rename a composition",
                    t.name, other.file, t.file
                );
                return Err(exit::INVALID);
            }
            served.push(t);
        }
        upstreams.push(up);
    }
    Ok((served, upstreams))
}

/// Loads one file, connects its servers and checks every composition,
/// against the lock beside the file too (`locked`: a change is an error):
/// the tools it serves (`yes`: also those calling destructive tools).
async fn load_and_connect(
    path: &std::path::Path,
    yes: bool,
    locked: bool,
    settings: &Settings,
) -> Result<(Vec<Served>, Arc<Upstream>), u8> {
    let name = path.display().to_string();
    let (source, loaded) = load_file_with(path, Dialect::Auto, &settings.load_options(Vec::new()));
    let file_sha256 = pipewright_engine::run::durable::client::file_hash(source.as_bytes());
    let file_digest = pipewright_engine::lock::digest_bytes(source.as_bytes());
    if pipewright_headless::report_diagnostics(&name, &source, &loaded) {
        eprintln!("{name}: not served: the file has errors");
        return Err(exit::INVALID);
    }
    let mut pipeline = loaded.pipeline.ok_or(exit::INVALID)?;
    let file_only = servers::only_declared(&pipeline);
    let redactor = Redactor::default();
    let specs = servers::resolve(
        &pipeline,
        &[],
        None,
        &pipeline.vars,
        &settings.env,
        &redactor,
    )
    .map_err(|e| {
        eprintln!("{name}: {e}");
        exit::INVALID
    })?;
    servers::assign_default(&mut pipeline, file_only, &specs);
    let mut needed: Vec<String> = Vec::new();
    for c in &pipeline.compositions {
        for n in servers::needed(c, &specs) {
            if !needed.contains(&n) {
                needed.push(n);
            }
        }
    }
    // `serve` and `worker` hold their upstreams: they listen for tool
    // changes.
    let opts = ConnectOptions {
        listen: true,
        ..pipewright_headless::connect_options(settings)
    };
    let pool = ServerPool::connect(&specs, &needed, &opts)
        .await
        .map_err(|e| {
            eprintln!("{name}: {}", redactor.text(&e.to_string()));
            if e.is_unreachable() {
                exit::UNREACHABLE
            } else {
                exit::INVALID
            }
        })?;
    let pinned = locked::pinned(path, &pipeline, locked, &pool)?;
    let lock_digest = pinned.as_ref().map(|p| p.lock.digest());
    let tools: IndexMap<String, Vec<ToolInfo>> = pool
        .connections()
        .map(|c| (c.name().to_owned(), c.tools().to_vec()))
        .collect();
    let table = match &pipeline.pricing {
        Some(v) => PricingTable::bundled().overlay(PricingTable::from_value(v).unwrap_or_default()),
        None => PricingTable::bundled(),
    };
    let default = (specs.len() == 1)
        .then(|| specs.keys().next().cloned())
        .flatten();
    let pricing = Arc::new(Pricing::new(table, default.clone()));
    let pipeline = Arc::new(pipeline);
    let pool = Arc::new(pool);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pipeline".into());
    let single = pipeline.compositions.len() == 1;
    let mut out = Vec::new();
    let mut problems = 0;
    for comp in &pipeline.compositions {
        let params = params_of(comp, &pipeline);
        // Arguments are not known at start: they stand in as "not known
        // yet", which preflight does not hold against a schema.
        let mut vars = pipeline.vars.clone();
        for p in params.iter().filter(|p| p.default.is_none()) {
            vars.insert(
                p.name.clone(),
                Value::String(format!("<from the caller's `{}`>", p.name)),
            );
        }
        let mut report =
            preflight::check(&[(comp, vars)], &tools, default.as_deref(), &settings.env);
        let checked = report.problems.len();
        if let Some(p) = &pinned {
            locked::at_start(&mut report, comp, &tools, default.as_deref(), p);
        }
        for d in report.problems.iter().chain(&report.warnings) {
            eprintln!("{}\n", d.render(&name, Some(&source)));
        }
        problems += report.problems.len();
        let tool_name = tool_name(comp, single, &stem);
        if report.problems.len() > checked {
            eprintln!(
                "{name}: `{tool_name}` is refused: a tool it calls changed since {} and the lock is strict (`pipewright lock --update` accepts the change)",
                pipewright_engine::lock::FILE_NAME
            );
        }
        if !report.destructive.is_empty() && !yes {
            let calls: Vec<String> = report
                .destructive
                .iter()
                .map(|d| format!("{} ({} on {})", d.node, d.tool, d.server))
                .collect();
            eprintln!(
                "{name}: `{tool_name}` is not served: it calls destructive tools ({}); pass --yes to serve it",
                calls.join(", ")
            );
            continue;
        }
        let definition = definition(&tool_name, comp, &params, &tools, default.as_deref());
        out.push(Served {
            name: tool_name,
            definition,
            file: name.clone(),
            file_sha256: file_sha256.clone(),
            file_digest: file_digest.clone(),
            lock_digest: lock_digest.clone(),
            pinned: pinned.clone(),
            pipeline: pipeline.clone(),
            comp: Arc::new(comp.clone()),
            params,
            caller: pool.clone() as Arc<dyn Caller>,
            pool: pool.clone(),
            pricing: pricing.clone(),
            redactor: redactor.clone(),
            digests: Default::default(),
        });
    }
    if problems > 0 {
        eprintln!("{name}: preflight failed: {problems} problem(s); nothing is served");
        return Err(exit::INVALID);
    }
    let up = Arc::new(Upstream {
        pool,
        tools,
        pricing,
        redactor,
    });
    Ok((out, up))
}

/// The tool name of a composition (see
/// [`durable::client::tool_name`](pipewright_engine::run::durable::client::tool_name)).
pub(crate) fn tool_name(comp: &Composition, single: bool, stem: &str) -> String {
    pipewright_engine::run::durable::client::tool_name(comp, single, stem)
}

/// Every `${var.X}` the composition reads, in order of first use.
fn params_of(comp: &Composition, pipeline: &Pipeline) -> Vec<Param> {
    let mut out: Vec<Param> = Vec::new();
    for site in comp.nodes.iter().flat_map(|n| n.refs()) {
        if let Root::Var(name) = &site.reference.root
            && !out.iter().any(|p| &p.name == name)
        {
            out.push(Param {
                name: name.clone(),
                default: pipeline.vars.get(name).cloned(),
            });
        }
    }
    out
}

/// The `tools/list` entry of a served composition.
fn definition(
    name: &str,
    comp: &Composition,
    params: &[Param],
    tools: &IndexMap<String, Vec<ToolInfo>>,
    default_server: Option<&str>,
) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for p in params {
        let mut prop = json!({ "type": json_type(p.default.as_ref()) });
        match &p.default {
            Some(d) => prop["default"] = d.clone(),
            None => required.push(Value::from(p.name.clone())),
        }
        props.insert(p.name.clone(), prop);
    }
    let called: Vec<&ToolInfo> = comp
        .nodes
        .iter()
        .filter(|n| n.mock.is_none())
        .filter_map(|n| {
            let server = n.server.as_deref().or(default_server)?;
            tools.get(server)?.iter().find(|t| t.name == n.tool)
        })
        .collect();
    let all = |f: fn(&ToolInfo) -> Option<bool>| called.iter().all(|t| f(t) == Some(true));
    let any = |f: fn(&ToolInfo) -> Option<bool>| called.iter().any(|t| f(t) == Some(true));
    let chain: Vec<&str> = comp.nodes.iter().map(|n| n.tool.as_str()).collect();
    let description = comp.description.clone().unwrap_or_else(|| {
        format!(
            "Runs the pipeline `{}` as one call: {}.",
            comp.name,
            chain.join(" → ")
        )
    });
    json!({
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": false,
        },
        "annotations": {
            "title": name,
            "readOnlyHint": all(|t| t.annotations.read_only),
            "destructiveHint": any(|t| t.annotations.destructive),
            "idempotentHint": all(|t| t.annotations.idempotent),
            "openWorldHint": any(|t| t.annotations.open_world),
        },
    })
}
