//! `pipewright tools list` and `pipewright tools call TOOL … --then TOOL`:
//! look at a server's tools, or chain one extra call from the command line.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use indexmap::IndexMap;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::engine::file::model::Pipeline;
use crate::engine::file::open::load_file;
use crate::engine::lang::reference;
use crate::engine::mcp::servers::{self, ServerArg};
use crate::engine::mcp::{ConnectOptions, Connection, McpError, ServerSpec};
use crate::engine::redact::Redactor;
use crate::options::exit;

/// The `tools` subcommands.
#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// List every tool of the servers (with annotations).
    List(ListArgs),
    /// Call a tool, optionally chaining one more call with `--then`.
    Call(CallArgs),
}

/// Which servers to talk to.
#[derive(Debug, Args)]
pub struct ServerOpts {
    /// Take the servers from this pipeline file.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// A Streamable HTTP URL (or the only server of the file, replaced).
    #[arg(long)]
    pub url: Option<String>,
    /// NAME=URL or NAME='COMMAND ARGS'. Repeatable.
    #[arg(long = "server", value_name = "NAME=URL|CMD")]
    pub servers: Vec<ServerArg>,
}

/// Arguments of `tools list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub servers: ServerOpts,
    /// Print the tools as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `tools call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool to call.
    pub tool: String,
    #[command(flatten)]
    pub servers: ServerOpts,
    /// The server to call, when several are configured.
    #[arg(long = "on", value_name = "NAME")]
    pub on: Option<String>,
    /// The arguments object, as JSON.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// Capture a value of this call's output for the chained call:
    /// NAME=$.path. Repeatable.
    #[arg(long = "bind", value_name = "NAME=$.PATH")]
    pub binds: Vec<String>,
    /// Chain one more call.
    #[arg(long, value_name = "TOOL")]
    pub then: Option<String>,
    /// An argument of the `--then` call: NAME=VALUE, or NAME=:bound for a
    /// `--bind` capture. Repeatable.
    #[arg(long = "then-arg", value_name = "NAME=VALUE")]
    pub then_args: Vec<String>,
    /// Project the (last) output before printing: $.path.
    #[arg(long, value_name = "$.PATH")]
    pub select: Option<String>,
    /// Timeout of each call (e.g. 30s).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

/// Runs a `tools` subcommand; returns the exit code.
pub async fn tools(cmd: ToolsCommand) -> u8 {
    match cmd {
        ToolsCommand::List(a) => list(a).await,
        ToolsCommand::Call(a) => call(a).await,
    }
}

async fn connect_all(opts: &ServerOpts) -> Result<Vec<Connection>, u8> {
    let pipeline = match &opts.file {
        Some(path) => {
            let (source, loaded) = load_file(path);
            if super::report::report_diagnostics(&path.display().to_string(), &source, &loaded) {
                return Err(exit::INVALID);
            }
            loaded.pipeline.ok_or(exit::INVALID)?
        }
        None => Pipeline {
            version: None,
            servers: IndexMap::new(),
            vars: IndexMap::new(),
            budget: Default::default(),
            pricing: None,
            compositions: Vec::new(),
        },
    };
    let redactor = Redactor::default();
    let specs: IndexMap<String, ServerSpec> = servers::resolve(
        &pipeline,
        &opts.servers,
        opts.url.as_deref(),
        &pipeline.vars,
        &redactor,
    )
    .map_err(|e| {
        eprintln!("error: {e}");
        exit::INVALID
    })?;
    let mut conns = Vec::new();
    for (name, spec) in &specs {
        match Connection::connect(name, spec, &ConnectOptions::default()).await {
            Ok(c) => conns.push(c),
            Err(e) => {
                eprintln!("error: {}", redactor.text(&e.to_string()));
                for c in conns {
                    c.close().await;
                }
                return Err(if e.is_unreachable() {
                    exit::UNREACHABLE
                } else {
                    exit::INVALID
                });
            }
        }
    }
    Ok(conns)
}

async fn list(args: ListArgs) -> u8 {
    let conns = match connect_all(&args.servers).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    if args.json {
        let v: Map<String, Value> = conns
            .iter()
            .map(|c| {
                (
                    c.name().to_owned(),
                    Value::Array(c.tools().iter().map(|t| t.raw.clone()).collect()),
                )
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        for c in &conns {
            println!("{} ({} tools)", c.name(), c.tools().len());
            let width = c.tools().iter().map(|t| t.name.len()).max().unwrap_or(0);
            for t in c.tools() {
                let mut marks = String::new();
                if t.annotations.destructive == Some(true) {
                    marks.push_str(" [destructive]");
                }
                if t.annotations.read_only == Some(true) {
                    marks.push_str(" [read-only]");
                }
                let desc = t
                    .description
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("");
                println!("  {:width$}{marks}  {desc}", t.name);
            }
        }
    }
    for c in conns {
        c.close().await;
    }
    exit::OK
}

/// The value at a `$.a.b[0]` path (`$` alone is the whole value).
fn select(v: &Value, path: &str) -> Result<Value, String> {
    let rest = path
        .strip_prefix('$')
        .ok_or_else(|| format!("`{path}` must start with `$`"))?;
    if rest.is_empty() {
        return Ok(v.clone());
    }
    let t = reference::parse_template(&format!("${{v{rest}}}"))
        .map_err(|e| format!("`{path}`: {e}"))?;
    let r = t
        .single_ref()
        .ok_or_else(|| format!("`{path}` is not a path"))?;
    reference::resolve_path(v, &r.path).map_err(|e| format!("`{path}`: {}", e.describe("$")))
}

async fn call_one(
    conns: &[Connection],
    on: Option<&str>,
    tool: &str,
    args: Map<String, Value>,
    timeout: Option<std::time::Duration>,
) -> Result<Value, (u8, String)> {
    let conn = match on {
        Some(n) => conns.iter().find(|c| c.name() == n),
        None if conns.len() == 1 => conns.first(),
        None => conns.iter().find(|c| c.tool(tool).is_some()),
    }
    .ok_or_else(|| {
        (
            exit::INVALID,
            format!("no server offers `{tool}`; pick one with --on NAME"),
        )
    })?;
    let cancel = CancellationToken::new();
    match conn.call(tool, args, None, timeout, &cancel).await {
        Ok(out) if out.is_error => Err((exit::FAILED, crate::engine::mcp::error_text(&out.result))),
        Ok(out) => Ok(out.output()),
        Err(e @ McpError::Closed { .. }) => Err((exit::FAILED, e.to_string())),
        Err(e) => Err((exit::FAILED, e.to_string())),
    }
}

async fn call(a: CallArgs) -> u8 {
    let args: Map<String, Value> = match serde_json::from_str(&a.args) {
        Ok(Value::Object(m)) => m,
        _ => {
            eprintln!("error: --args must be a JSON object");
            return exit::INVALID;
        }
    };
    let timeout = match a.timeout.as_deref() {
        Some(t) => match crate::engine::file::loader::parse_duration(t) {
            Some(d) => Some(d),
            None => {
                eprintln!("error: invalid --timeout `{t}`");
                return exit::INVALID;
            }
        },
        None => None,
    };
    let conns = match connect_all(&a.servers).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let result = async {
        let mut out = call_one(&conns, a.on.as_deref(), &a.tool, args, timeout).await?;
        if let Some(then) = &a.then {
            let mut bound = Map::new();
            for b in &a.binds {
                let (name, path) = b
                    .split_once('=')
                    .ok_or_else(|| (exit::INVALID, format!("--bind `{b}` is not NAME=$.path")))?;
                bound.insert(
                    name.to_owned(),
                    select(&out, path).map_err(|e| (exit::FAILED, e))?,
                );
            }
            let mut then_args = Map::new();
            for ta in &a.then_args {
                let (name, value) = ta.split_once('=').ok_or_else(|| {
                    (
                        exit::INVALID,
                        format!("--then-arg `{ta}` is not NAME=VALUE"),
                    )
                })?;
                let v = match value.strip_prefix(':') {
                    Some(key) => bound.get(key).cloned().ok_or_else(|| {
                        (
                            exit::INVALID,
                            format!("--then-arg `{ta}`: nothing was bound as `{key}`"),
                        )
                    })?,
                    None => serde_json::from_str(value)
                        .unwrap_or_else(|_| Value::String(value.to_owned())),
                };
                then_args.insert(name.to_owned(), v);
            }
            out = call_one(&conns, a.on.as_deref(), then, then_args, timeout).await?;
        }
        if let Some(path) = &a.select {
            out = select(&out, path).map_err(|e| (exit::FAILED, e))?;
        }
        Ok::<Value, (u8, String)>(out)
    }
    .await;
    for c in conns {
        c.close().await;
    }
    match result {
        Ok(v) => {
            match v {
                Value::String(s) => println!("{s}"),
                other => println!(
                    "{}",
                    serde_json::to_string_pretty(&other).unwrap_or_default()
                ),
            }
            exit::OK
        }
        Err((code, msg)) => {
            eprintln!("error: {msg}");
            code
        }
    }
}
