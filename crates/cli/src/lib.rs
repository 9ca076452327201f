//! The headless command line: one file per subcommand, all of them drivers
//! of the engine. Exit codes follow SPEC §4. `edit` hands over to the
//! workbench crate, `serve` and `worker` to the serve crate, `lsp` to the
//! language server's crate.
//!
//! Its API is [`main`], which the binary calls, and [`Cli`], the parser
//! (the tests walk its `--help`); every module is private.

mod ask;
mod auth;
mod check;
mod choice;
mod completions;
mod convert;
mod demo;
mod edit;
mod environment;
mod eval;
mod flags;
mod formats;
mod json;
mod judge;
mod lock;
mod log;
mod lsp;
mod man;
mod new;
mod output;
mod plan;
mod prepare;
mod progress;
mod record;
mod report;
mod run;
mod runs;
mod schema;
mod serve;
mod servers;
mod spend;
mod step;
mod tools;
#[cfg(feature = "durable")]
mod worker;

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
    command: Option<Command>,
    /// A pipeline file: `pipewright FILE` is `pipewright edit FILE`.
    #[arg(value_name = "FILE", required = true)]
    file: Option<std::path::PathBuf>,
    /// `pipewright FILE`'s: Fibe's caps.
    #[command(flatten)]
    fibe: flags::FibeFlags,
    /// `pipewright FILE`'s: how servers are spoken to.
    #[command(flatten)]
    connect: flags::ConnectFlags,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Open the workbench: editor, live DAG and trace inspector.
    Edit(edit::EditArgs),
    /// Write a new pipeline file from the servers' tools: one node per
    /// `--tool`, its required arguments as placeholders; or, with --from,
    /// from what an agent did in a recorded session.
    New(new::NewArgs),
    /// Run a pipeline file (every composition and case) and report.
    #[command(alias = "pipe")]
    Run(run::args::RunArgs),
    /// Show what a run would do and cost, calling nothing: order and waves,
    /// resolved arguments, projected cost and tokens, budget verdict and
    /// preflight checks (same as `run --dry-run --estimate-cost`).
    Plan(run::args::RunArgs),
    /// Validate pipeline files and print their diagnostics like a compiler
    /// (and, with a `pipewright.lock`, what changed in their servers).
    Check(check::CheckArgs),
    /// Pin what the files' servers and tools say in `pipewright.lock`
    /// beside them (`--update` accepts what changed).
    Lock(lock::LockArgs),
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
    Serve(serve::ServeArgs),
    /// Run compositions as durable Restate workflows (`run --on
    /// restate://…`): a service endpoint that registers with Restate.
    #[cfg(feature = "durable")]
    Worker(worker::WorkerArgs),
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

impl Command {
    /// This command's flags that join the settings: Fibe's caps (the
    /// commands that read pipeline files) and how servers are spoken to
    /// (the commands that connect them).
    fn settings_flags(&self) -> (Option<&flags::FibeFlags>, Option<&flags::ConnectFlags>) {
        use runs::RunsCommand;
        use tools::ToolsCommand;
        match self {
            Command::Edit(a) => (Some(&a.fibe), Some(&a.connect)),
            Command::New(a) => (None, Some(&a.connect)),
            Command::Run(a) | Command::Plan(a) => (Some(&a.fibe), Some(&a.connect)),
            Command::Check(a) => (Some(&a.fibe), Some(&a.connect)),
            Command::Lock(a) => (Some(&a.fibe), Some(&a.connect)),
            Command::Runs(RunsCommand::Show(a)) => (Some(&a.fibe), None),
            Command::Eval(a) => (Some(&a.fibe), None),
            Command::Tools(ToolsCommand::List(a)) => (Some(&a.fibe), Some(&a.connect)),
            Command::Tools(ToolsCommand::Call(a)) => (Some(&a.fibe), Some(&a.connect)),
            Command::Tools(ToolsCommand::Diff(a)) => (Some(&a.fibe), Some(&a.connect)),
            Command::Auth(a) => (Some(a.fibe()), None),
            Command::Serve(a) => (Some(&a.fibe), Some(&a.connect)),
            #[cfg(feature = "durable")]
            Command::Worker(a) => (Some(&a.fibe), Some(&a.connect)),
            Command::Lsp(a) => (Some(&a.fibe), Some(&a.connect)),
            Command::Convert(a) => (Some(&a.fibe), None),
            Command::Runs(_)
            | Command::DemoServer(_)
            | Command::Record(_)
            | Command::Servers(_)
            | Command::Schema
            | Command::Completions(_)
            | Command::Man(_) => (None, None),
        }
    }
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
    let mut settings =
        pipewright_engine::settings::Settings::from_environment(environment::of_process());
    let subcommands: Vec<String> = Cli::command()
        .get_subcommands()
        .flat_map(|c| std::iter::once(c.get_name()).chain(c.get_all_aliases()))
        .map(str::to_owned)
        .collect();
    let argv = flags::after_the_subcommand(std::env::args_os().collect(), &subcommands);
    let cli = Cli::parse_from(mcptest_argv(argv));
    let command = match (cli.command, cli.file) {
        (Some(c), _) => c,
        (None, Some(file)) => Command::Edit(edit::EditArgs::from_file(file, cli.fibe, cli.connect)),
        (None, None) => return ExitCode::from(exit::INVALID),
    };
    let (fibe, connect) = command.settings_flags();
    if let Some(fibe) = fibe {
        settings.fibe = fibe.limits();
    }
    if let Some(Err(e)) = connect.map(|c| c.apply(&mut settings)) {
        return ExitCode::from(crate::report::usage(e));
    }
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
        // The workbench owns the terminal: its events go to a file.
        log::install(
            if matches!(command, Command::Edit(_)) {
                log::Sink::WorkbenchFile
            } else {
                log::Sink::Stderr
            },
            settings.data_dir.as_deref(),
        );
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
            Command::Edit(args) => edit::edit(args, settings.clone()).await,
            Command::Run(args) => run::run(args, settings).await,
            Command::Plan(args) => plan::plan(args, settings).await,
            Command::New(args) => new::new(args, settings).await,
            Command::Check(args) => check::check(&args, settings).await,
            Command::Lock(args) => lock::lock(args, settings).await,
            Command::Tools(cmd) => tools::tools(cmd, settings).await,
            Command::Auth(cmd) => auth::auth(cmd, settings).await,
            Command::Runs(cmd) => runs::runs(cmd, settings).await,
            Command::Eval(args) => eval::eval(args, settings).await,
            Command::DemoServer(args) => demo::demo(args).await,
            Command::Record(args) => record::record(args, settings).await,
            Command::Lsp(args) => lsp::lsp(args, settings.clone()).await,
            Command::Serve(args) => serve::serve(args, settings.clone()).await,
            #[cfg(feature = "durable")]
            Command::Worker(args) => worker::worker(args, settings.clone()).await,
            Command::Convert(args) => convert::convert(&args, settings),
            Command::Servers(cmd) => servers::servers(&cmd, &settings.env),
            Command::Schema => schema::schema(),
            Command::Completions(args) => completions::completions(&args, Cli::command()),
            Command::Man(args) => man::man(&args, Cli::command()),
        }
    });
    // Servers we spawned are stopped by now; do not wait for stray tasks.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    ExitCode::from(code)
}
