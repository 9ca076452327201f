//! `pipewright tools list` and `pipewright tools call TOOL … --then TOOL`:
//! look at a server's tools, or chain one extra call from the command line
//! (`tools diff`, against the lock, lives in `lock`).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use indexmap::IndexMap;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::flags::ServerFlags;
use pipewright_engine::cost::pricing::PricingTable;
use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::file::open::load_file_with;
use pipewright_engine::json::Json;
use pipewright_engine::lang::reference;
use pipewright_engine::mcp::servers;
use pipewright_engine::mcp::{Connection, ServerSpec, TaskSupport};
use pipewright_engine::options::exit;
use pipewright_engine::redact::Redactor;
use pipewright_engine::settings::Settings;

/// The `tools` subcommands.
#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// List every tool of the servers (with annotations).
    List(ListArgs),
    /// Call a tool, optionally chaining one more call with `--then`.
    Call(Box<CallArgs>),
    /// Print what changed in the file's servers and tools since its
    /// `pipewright.lock` (exit 1 when anything did).
    Diff(super::lock::DiffArgs),
}

/// Which servers to talk to.
#[derive(Debug, Args)]
pub struct ServerOpts {
    /// Take the servers from this pipeline file.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerFlags,
}

/// Arguments of `tools list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub servers: ServerOpts,
    /// Print the tools as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
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
    #[arg(long, value_name = "JSON", conflicts_with = "args_from_stdin")]
    pub args: Option<String>,
    /// Read the whole arguments object from stdin (JSON).
    #[arg(long)]
    pub args_from_stdin: bool,
    /// Take one argument from the JSON on stdin: NAME=$.path. Repeatable;
    /// these win over `--args`.
    #[arg(long = "arg", value_name = "NAME=$.PATH")]
    pub arg_paths: Vec<String>,
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
    /// Aggregate USD ceiling across both calls: a call whose projected cost
    /// would take the total past it is not made.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Aggregate ceiling on LLM tokens across both calls.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Per-call USD ceiling.
    #[arg(long, value_name = "USD")]
    pub max_cost_per_call: Option<f64>,
    /// `stop` (default) makes no call past a cap; `continue` makes the
    /// calls and exits 3; `warn` makes them and exits 0 with a warning.
    #[arg(long, value_enum, default_value_t = super::flags::OnBudget::Stop)]
    pub on_budget_exceeded: super::flags::OnBudget,
    /// Replace the bundled pricing.yaml with this table.
    #[arg(long, value_name = "PATH")]
    pub pricing_table: Option<PathBuf>,
    /// Allow calling tools annotated `destructiveHint: true`.
    #[arg(long, short = 'y')]
    pub yes: bool,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

/// Runs a `tools` subcommand; returns the exit code.
pub async fn tools(cmd: ToolsCommand, settings: &Settings) -> u8 {
    match cmd {
        ToolsCommand::List(a) => list(a, settings).await,
        ToolsCommand::Call(a) => call(*a, settings).await,
        ToolsCommand::Diff(a) => super::lock::diff(a, settings).await,
    }
}

/// Connects every server; the redactor holds their secrets (header values,
/// `${env.X}` values), to mask what the servers send back before it is
/// printed.
async fn connect_all(
    opts: &ServerOpts,
    settings: &Settings,
) -> Result<(Vec<Connection>, Redactor), u8> {
    let pipeline = match &opts.file {
        Some(path) => {
            let (source, loaded) =
                load_file_with(path, Dialect::Auto, &settings.load_options(Vec::new()));
            if pipewright_headless::report_diagnostics(
                &path.display().to_string(),
                &source,
                &loaded,
            ) {
                return Err(exit::INVALID);
            }
            loaded.pipeline.ok_or(exit::INVALID)?
        }
        None => Pipeline::default(),
    };
    let redactor = Redactor::default();
    let specs: IndexMap<String, ServerSpec> = servers::resolve(
        &pipeline,
        &opts.server.servers,
        opts.server.url.as_deref(),
        &pipeline.vars,
        &settings.env,
        &redactor,
    )
    .map_err(|e| {
        eprintln!("error: {e}");
        exit::INVALID
    })?;
    let connect = pipewright_headless::connect_options(settings);
    let conns = super::servers::connect_each(&specs, &redactor, &connect).await?;
    Ok((conns, redactor))
}

async fn list(args: ListArgs, settings: &Settings) -> u8 {
    let (conns, redactor) = match connect_all(&args.servers, settings).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    if args.json {
        let v: Map<String, Value> = conns
            .iter()
            .map(|c| {
                let tools: Vec<Value> = c.tools().iter().map(|t| redactor.value(&t.raw)).collect();
                let server = serde_json::json!({
                    "protocolVersion": c.protocol_version(),
                    "tools": tools,
                });
                (c.name().to_owned(), server)
            })
            .collect();
        println!("{}", crate::json::pretty(&v));
    } else {
        for c in &conns {
            println!(
                "{} ({} tools, MCP {})",
                c.name(),
                c.tools().len(),
                super::output::printable(c.protocol_version())
            );
            let width = c.tools().iter().map(|t| t.name.len()).max().unwrap_or(0);
            for t in c.tools().iter() {
                let mut marks = String::new();
                if t.annotations.destructive == Some(true) {
                    marks.push_str(" [destructive]");
                }
                if t.annotations.read_only == Some(true) {
                    marks.push_str(" [read-only]");
                }
                match t.task_support {
                    TaskSupport::Required => marks.push_str(" [task only]"),
                    TaskSupport::Optional => marks.push_str(" [task optional]"),
                    TaskSupport::Forbidden | TaskSupport::Unstated => {}
                }
                let desc = t
                    .description
                    .as_deref()
                    .unwrap_or("")
                    .lines()
                    .next()
                    .unwrap_or("");
                let name = super::output::printable(&t.name);
                let desc = redactor.text(desc);
                println!(
                    "  {name:width$}{marks}  {}",
                    super::output::printable(&desc)
                );
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

/// Budget state of `tools call` across its (at most two) calls.
struct Spend {
    table: PricingTable,
    max_cost: Option<f64>,
    max_tokens: Option<u64>,
    max_cost_per_call: Option<f64>,
    mode: super::flags::OnBudget,
    cost: f64,
    tokens: u64,
    /// The first cap that fired, with why.
    tripped: Option<String>,
}

impl Spend {
    /// Notes a cap that fired; true when the call must not be made.
    fn breach(&mut self, why: String) -> bool {
        if self.tripped.is_none() {
            self.tripped = Some(why);
        }
        self.mode == super::flags::OnBudget::Stop
    }

    /// Checks a call's projected figures against the caps before it is made.
    fn allows(&mut self, server: &str, tool: &str, args: &Map<String, Value>) -> bool {
        let p = self
            .table
            .project(Some(server), tool, &Value::Object(args.clone()));
        if let Some(cap) = self.max_cost_per_call.filter(|c| p.cost_usd > *c) {
            return !self.breach(format!(
                "`{tool}` would cost ${:.4}, over --max-cost-per-call ${cap:.4}",
                p.cost_usd
            ));
        }
        if let Some(cap) = self.max_cost.filter(|c| self.cost + p.cost_usd > *c) {
            return !self.breach(format!(
                "`{tool}` would take the cost to ${:.4}, over --max-cost ${cap:.4}",
                self.cost + p.cost_usd
            ));
        }
        if let Some(cap) = self.max_tokens.filter(|c| self.tokens + p.tokens > *c) {
            return !self.breach(format!(
                "`{tool}` would take the tokens to {}, over --max-tokens {cap}",
                self.tokens + p.tokens
            ));
        }
        true
    }

    /// Adds a made call's actual figures and checks the caps again.
    fn spent(
        &mut self,
        server: &str,
        tool: &str,
        args: &Map<String, Value>,
        meta: Option<&Value>,
        output: &Json,
    ) {
        let f = self.table.actual(Some(server), tool, args, meta, output);
        self.cost += f.cost_usd;
        self.tokens += f.tokens;
        if let Some(cap) = self.max_cost_per_call.filter(|c| f.cost_usd > *c) {
            self.breach(format!(
                "`{tool}` cost ${:.4}, over --max-cost-per-call ${cap:.4}",
                f.cost_usd
            ));
        }
        if let Some(cap) = self.max_cost.filter(|c| self.cost > *c) {
            self.breach(format!(
                "the calls cost ${:.4}, over --max-cost ${cap:.4}",
                self.cost
            ));
        }
        if let Some(cap) = self.max_tokens.filter(|c| self.tokens > *c) {
            self.breach(format!(
                "the calls used {} tokens, over --max-tokens {cap}",
                self.tokens
            ));
        }
    }
}

struct CallCx<'a> {
    conns: &'a [Connection],
    on: Option<&'a str>,
    timeout: Option<std::time::Duration>,
    yes: bool,
    spend: Spend,
    /// Answers the server's questions during the call.
    scope: pipewright_engine::mcp::human::CallScope,
}

impl CallCx<'_> {
    async fn call(&mut self, tool: &str, args: Map<String, Value>) -> Result<Value, (u8, String)> {
        let conn = match self.on {
            Some(n) => self.conns.iter().find(|c| c.name() == n),
            None if self.conns.len() == 1 => self.conns.first(),
            None => self.conns.iter().find(|c| c.tool(tool).is_some()),
        }
        .ok_or_else(|| {
            (
                exit::INVALID,
                format!("no server offers `{tool}`; pick one with --on NAME"),
            )
        })?;
        if !self.yes
            && conn
                .tool(tool)
                .is_some_and(|t| t.annotations.destructive == Some(true))
        {
            return Err((
                exit::INVALID,
                format!(
                    "`{tool}` on server `{}` is marked destructive; pass --yes to call it (nothing was called)",
                    conn.name()
                ),
            ));
        }
        if !self.spend.allows(conn.name(), tool, &args) {
            let why = self.spend.tripped.clone().unwrap_or_default();
            return Err((
                exit::BUDGET,
                format!("budget exceeded: {why}; `{tool}` was not called"),
            ));
        }
        let cancel = CancellationToken::new();
        match conn
            .call_scoped(tool, args.clone(), None, self.timeout, &cancel, &self.scope)
            .await
        {
            Ok(out) => {
                let output = out.output();
                let meta = pipewright_engine::mcp::meta_of(&out.result);
                self.spend
                    .spent(conn.name(), tool, &args, meta.as_ref(), &output);
                if out.is_error {
                    Err((
                        exit::FAILED,
                        pipewright_engine::mcp::error_text(&out.result),
                    ))
                } else {
                    Ok(output.into_value())
                }
            }
            Err(e) => Err((exit::FAILED, e.to_string())),
        }
    }
}

/// The first call's arguments: `--args`, or stdin with `--args-from-stdin`,
/// then every `--arg NAME=$.path` taken from the JSON on stdin.
fn call_args(
    a: &CallArgs,
    stdin: impl FnOnce() -> std::io::Result<String>,
) -> Result<Map<String, Value>, String> {
    let needs_stdin = a.args_from_stdin || !a.arg_paths.is_empty();
    let input: Option<Value> = if needs_stdin {
        let text = stdin().map_err(|e| format!("cannot read stdin: {e}"))?;
        Some(serde_json::from_str(&text).map_err(|e| {
            format!(
                "stdin is not JSON: {e} (line {}, column {})",
                e.line(),
                e.column()
            )
        })?)
    } else {
        None
    };
    let mut args = match (&a.args, a.args_from_stdin) {
        (_, true) => match &input {
            Some(Value::Object(m)) => m.clone(),
            _ => return Err("--args-from-stdin needs a JSON object on stdin".into()),
        },
        (Some(text), false) => match serde_json::from_str(text) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err("--args must be a JSON object".into()),
            Err(e) => return Err(format!("--args is not JSON: {e} (column {})", e.column())),
        },
        (None, false) => Map::new(),
    };
    for spec in &a.arg_paths {
        let (name, path) = spec
            .split_once('=')
            .filter(|(n, p)| !n.is_empty() && p.starts_with('$'))
            .ok_or_else(|| format!("--arg `{spec}` is not NAME=$.path"))?;
        let v = select(input.as_ref().unwrap_or(&Value::Null), path)
            .map_err(|e| format!("--arg {name}: {e} in the JSON on stdin"))?;
        args.insert(name.to_owned(), v);
    }
    Ok(args)
}

async fn call(a: CallArgs, settings: &Settings) -> u8 {
    let args = match call_args(&a, || std::io::read_to_string(std::io::stdin())) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    let timeout = match pipewright_engine::options::duration_flag("timeout", a.timeout.as_deref()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    let table = match &a.pricing_table {
        Some(p) => match PricingTable::load(p) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::INVALID;
            }
        },
        None => PricingTable::bundled(),
    };
    let (conns, redactor) = match connect_all(&a.servers, settings).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut cx = CallCx {
        conns: &conns,
        on: a.on.as_deref(),
        timeout,
        yes: a.yes,
        // On a terminal, a server's question is asked there; off one, it
        // is declined.
        scope: pipewright_engine::mcp::human::CallScope {
            responder: {
                use std::io::IsTerminal;
                (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()).then(|| {
                    super::ask::Terminal::new(None)
                        as std::sync::Arc<dyn pipewright_engine::mcp::human::Responder>
                })
            },
            ..Default::default()
        },
        spend: Spend {
            table,
            max_cost: a.max_cost,
            max_tokens: a.max_tokens,
            max_cost_per_call: a.max_cost_per_call,
            mode: a.on_budget_exceeded,
            cost: 0.0,
            tokens: 0,
            tripped: None,
        },
    };
    let result = async {
        let mut out = cx.call(&a.tool, args).await?;
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
            out = cx.call(then, then_args).await?;
        }
        if let Some(path) = &a.select {
            out = select(&out, path).map_err(|e| (exit::FAILED, e))?;
        }
        Ok::<Value, (u8, String)>(out)
    }
    .await;
    let tripped = cx.spend.tripped.take();
    let mode = cx.spend.mode;
    for c in conns {
        c.close().await;
    }
    match result {
        Ok(v) => {
            match redactor.value(&v) {
                Value::String(s) => println!("{}", super::output::printable(&s)),
                other => println!("{}", crate::json::pretty(&other)),
            }
            match (tripped, mode) {
                (Some(why), super::flags::OnBudget::Warn) => {
                    eprintln!("warning: budget exceeded: {why}");
                    exit::OK
                }
                (Some(why), _) => {
                    eprintln!("error: budget exceeded: {why}");
                    exit::BUDGET
                }
                (None, _) => exit::OK,
            }
        }
        Err((code, msg)) => {
            eprintln!("error: {}", super::output::printable(&redactor.text(&msg)));
            code
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        a: CallArgs,
    }

    fn args(argv: &[&str], stdin: &str) -> Result<Map<String, Value>, String> {
        let t = T::try_parse_from(std::iter::once("t").chain(argv.iter().copied()))
            .map_err(|e| e.to_string())?;
        let input = stdin.to_owned();
        call_args(&t.a, move || Ok(input))
    }

    #[test]
    fn arguments_come_from_args_stdin_or_paths_into_stdin() {
        assert_eq!(
            args(&["echo", "--args", r#"{"a":1}"#], "").unwrap(),
            serde_json::json!({"a": 1}).as_object().cloned().unwrap()
        );
        assert_eq!(
            args(&["echo", "--args-from-stdin"], r#"{"q":"x"}"#).unwrap(),
            serde_json::json!({"q": "x"}).as_object().cloned().unwrap()
        );
        assert_eq!(
            args(
                &[
                    "echo",
                    "--args",
                    r#"{"limit":2}"#,
                    "--arg",
                    "query=$.users[0].name"
                ],
                r#"{"users":[{"name":"alice"}]}"#
            )
            .unwrap(),
            serde_json::json!({"limit": 2, "query": "alice"})
                .as_object()
                .cloned()
                .unwrap()
        );
        let e = args(&["echo", "--arg", "q=$.missing"], "{}").unwrap_err();
        assert!(e.contains("--arg q"), "{e}");
        let e = args(&["echo", "--args-from-stdin"], "[1]").unwrap_err();
        assert!(e.contains("JSON object"), "{e}");
        let e = args(&["echo", "--args-from-stdin"], "{oops").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
    }
}
