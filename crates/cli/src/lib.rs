//! The headless command line: one file per subcommand, all of them drivers
//! of the engine. Exit codes follow SPEC §4. `edit` hands over to the
//! workbench crate, `serve` and `worker` to the serve crate, `lsp` to the
//! language server's crate.

pub mod ask;
pub mod auth;
pub mod check;
pub mod choice;
pub mod completions;
pub mod convert;
pub mod demo;
pub mod eval;
pub mod formats;
pub mod json;
pub mod log;
pub mod lsp;
pub mod man;
pub mod new;
pub mod output;
pub mod plan;
pub mod progress;
pub mod record;
pub mod report;
pub mod run;
pub mod runs;
pub mod schema;
pub mod servers;
pub mod spend;
pub mod step;
pub mod tools;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use pipewright_engine::options::exit;

/// A terminal workbench and CLI for MCP tool-call pipelines.
#[derive(Debug, Parser)]
#[command(name = "pipewright", version, about, long_about = None)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    arg_required_else_help = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// A pipeline file: `pipewright FILE` is `pipewright edit FILE`.
    #[arg(value_name = "FILE", required = true)]
    pub file: Option<std::path::PathBuf>,
    /// How long a stdio server gets to exit after its stdin closes, and
    /// again after SIGTERM, before it is killed (e.g. `100ms`, `2s`).
    #[arg(
        long,
        global = true,
        value_name = "DURATION",
        env = "PIPEWRIGHT_SHUTDOWN_GRACE",
        default_value = "100ms"
    )]
    pub shutdown_grace: String,
    /// Most top-level steps a Fibe pipeline may have (Fibe's default: 25).
    #[arg(
        long,
        global = true,
        value_name = "N",
        env = "FIBE_MCP_PIPELINE_MAX_STEPS",
        default_value_t = 25
    )]
    pub fibe_max_steps: usize,
    /// Most `for_each` iterations a Fibe pipeline may make in one run,
    /// counted across the pipeline (Fibe's default: 50).
    #[arg(
        long,
        global = true,
        value_name = "N",
        env = "FIBE_MCP_PIPELINE_MAX_ITERATIONS",
        default_value_t = 50
    )]
    pub fibe_max_iterations: u64,
    /// Ask servers to log at this level and above (`logging/setLevel`);
    /// their log lines are kept per node in the trace and shown in the
    /// workbench's Logs tab.
    #[arg(
        long,
        global = true,
        value_parser = crate::choice::choice::<pipewright_engine::mcp::LogLevel>(),
        value_name = "LEVEL",
        env = "PIPEWRIGHT_LOG_LEVEL"
    )]
    pub log_level: Option<pipewright_engine::mcp::LogLevel>,
    /// The MCP revision to speak to servers (auto, 2026-07-28,
    /// 2025-11-25), or to one server: NAME=REVISION (repeatable,
    /// comma-separated in the variable). `auto` sends `initialize`
    /// (2025-11-25) and `server/discover` (2026-07-28) only to a server
    /// that refuses it. A server's `protocol:` in the file wins over a
    /// REVISION for every server; NAME=REVISION wins over both.
    #[arg(
        long,
        global = true,
        value_name = "[NAME=]REVISION",
        env = "PIPEWRIGHT_PROTOCOL",
        value_delimiter = ','
    )]
    pub protocol: Vec<pipewright_engine::mcp::ProtocolArg>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Open the workbench: editor, live DAG and trace inspector.
    Edit(pipewright_workbench::EditArgs),
    /// Write a new pipeline file from the servers' tools: one node per
    /// `--tool`, its required arguments as placeholders.
    New(new::NewArgs),
    /// Run a pipeline file (every composition and case) and report.
    #[command(alias = "pipe")]
    Run(run::RunArgs),
    /// Show what a run would do and cost, calling nothing: order and waves,
    /// resolved arguments, projected cost and tokens, budget verdict and
    /// preflight checks (same as `run --dry-run --estimate-cost`).
    Plan(run::RunArgs),
    /// Validate pipeline files and print their diagnostics like a compiler.
    Check(check::CheckArgs),
    /// List, show, compare, export and prune saved runs.
    #[command(subcommand)]
    Runs(runs::RunsCommand),
    /// Judge a saved run again with its file's `eval:` as the file says
    /// now: no tool is called; the result is saved as a new run.
    Eval(eval::EvalArgs),
    /// List or call the tools of a server.
    #[command(subcommand)]
    Tools(tools::ToolsCommand),
    /// Log in to OAuth-protected HTTP servers, or see and forget logins.
    #[command(subcommand)]
    Auth(auth::AuthCommand),
    /// Serve pipelines to agents: each composition of each FILE is one MCP
    /// tool (stdio, or Streamable HTTP with --http).
    Serve(pipewright_serve::serve::ServeArgs),
    /// Run compositions as durable Restate workflows (`run --on
    /// restate://…`): a service endpoint that registers with Restate.
    #[cfg(feature = "durable")]
    Worker(pipewright_serve::worker::WorkerArgs),
    /// Serve the built-in demo MCP server (stdio, or Streamable HTTP).
    DemoServer(demo::DemoArgs),
    /// Record an agent's session with a server as it happens (stdio:
    /// `record -- COMMAND ARGS…`; HTTP: `record --http ADDR --to URL`),
    /// for `new --from`; `record wrap CONFIG` puts a client's servers
    /// behind the recorder.
    Record(record::RecordArgs),
    /// Serve the language server over stdio, for editors: diagnostics with
    /// preflight, completion, hover, go to definition, references, rename,
    /// quick fixes and the outline.
    Lsp(lsp::LspArgs),
    /// Print the native YAML of a Fibe or Discord pipeline file.
    Convert(convert::ConvertArgs),
    /// Show the MCP servers declared in other clients' config files.
    #[command(subcommand)]
    Servers(servers::ServersCommand),
    /// Print the JSON Schema of the pipeline file.
    Schema,
    /// Print a shell completion script.
    Completions(completions::CompletionsArgs),
    /// Print the manual pages (roff), or write them to a directory.
    Man(man::ManArgs),
}

/// mcptest names the file of `run` with `--config FILE`: the same command
/// line works here, the flag read as the file.
fn mcptest_argv(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let is_run = args
        .get(1)
        .is_some_and(|a| matches!(a.to_str(), Some("run" | "pipe" | "plan")));
    if !is_run {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        match a.to_str() {
            Some("--config") => out.extend(it.next()),
            Some(s) if s.starts_with("--config=") => out.push(s["--config=".len()..].into()),
            _ => out.push(a),
        }
    }
    out
}

/// Parses the command line and runs it; the binary's `main` is this.
pub fn main() -> ExitCode {
    // Output piped into a reader that stops early (`| head`) ends the
    // process quietly, as SIGPIPE would, instead of panicking.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if text.contains("Broken pipe") {
            std::process::exit(141);
        }
        default_hook(info);
    }));
    // The limits the environment sets are read here, once, and the flags'
    // values join them: this one value is what every command hands the
    // engine (which keeps no settings of its own).
    let mut settings = pipewright_engine::settings::Settings::from_env();
    let cli = Cli::parse_from(mcptest_argv(std::env::args_os().collect()));
    settings.log_level = cli.log_level;
    settings.protocol = pipewright_engine::mcp::Choices::of(&cli.protocol);
    match pipewright_engine::options::duration_flag("shutdown-grace", Some(&cli.shutdown_grace)) {
        Ok(grace) => settings.shutdown_grace = grace,
        Err(e) => return ExitCode::from(crate::report::usage(e)),
    }
    settings.fibe = pipewright_engine::file::import::FibeLimits {
        max_steps: cli.fibe_max_steps,
        max_iterations: cli.fibe_max_iterations,
    };
    // reqwest is built without a default TLS provider; ring serves https.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("pipewright: cannot start the async runtime: {e}");
            return ExitCode::from(exit::FAILED);
        }
    };
    let code = runtime.block_on(async {
        let command = match (cli.command, cli.file) {
            (Some(c), _) => c,
            (None, Some(file)) => Command::Edit(pipewright_workbench::EditArgs::from_file(file)),
            (None, None) => return exit::INVALID,
        };
        // The workbench owns the terminal: its events go to a file.
        log::install(if matches!(command, Command::Edit(_)) {
            log::Sink::WorkbenchFile
        } else {
            log::Sink::Stderr
        });
        {
            use pipewright_engine::mcp::auth::Prompt;
            use std::io::IsTerminal;
            settings.prompt = Some(if matches!(command, Command::Edit(_)) {
                // The workbench owns the screen: a login opens a browser only.
                Prompt::BrowserOnly
            } else if matches!(command, Command::Lsp(_)) {
                // A language server never opens a browser or prints a
                // login prompt.
                Prompt::Never
            } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
                Prompt::Terminal
            } else {
                Prompt::Never
            });
        }
        let settings = &settings;
        match command {
            Command::Edit(args) => pipewright_workbench::edit(args, settings.clone()).await,
            Command::Run(args) if run::plans_only(&args) => plan::plan(args, settings).await,
            Command::Run(args) => match run::load(&args, settings) {
                Err(code) => code,
                Ok((source, loaded)) if run::file_plans_only(&loaded) => {
                    eprintln!(
                        "{}: `dry_run: true`: planning only, nothing is called (remove it to run)",
                        args.file.display()
                    );
                    plan::plan_loaded(args, source, loaded, settings).await
                }
                Ok((source, loaded)) => run::run(args, source, loaded, settings).await,
            },
            Command::Plan(args) => plan::plan(args, settings).await,
            Command::New(args) => new::new(args, settings).await,
            Command::Check(args) => check::check(&args, settings),
            Command::Tools(cmd) => tools::tools(cmd, settings).await,
            Command::Auth(cmd) => auth::auth(cmd, settings).await,
            Command::Runs(cmd) => runs::runs(cmd, settings).await,
            Command::Eval(args) => eval::eval(args, settings).await,
            Command::DemoServer(args) => demo::demo(args).await,
            Command::Record(args) => record::record(args, settings).await,
            Command::Lsp(args) => lsp::lsp(args, settings.clone()).await,
            Command::Serve(args) => pipewright_serve::serve::serve(args, settings.clone()).await,
            #[cfg(feature = "durable")]
            Command::Worker(args) => pipewright_serve::worker::worker(args, settings.clone()).await,
            Command::Convert(args) => convert::convert(&args, settings),
            Command::Servers(cmd) => servers::servers(&cmd),
            Command::Schema => schema::schema(),
            Command::Completions(args) => completions::completions(&args, Cli::command()),
            Command::Man(args) => man::man(&args, Cli::command()),
        }
    });
    // Servers we spawned are stopped by now; do not wait for stray tasks.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(code)
}
