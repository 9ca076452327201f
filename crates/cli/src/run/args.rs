//! The flags of `run`, which `plan` takes too (it is `run --dry-run
//! --estimate-cost`).

use std::path::PathBuf;

use clap::Args;

use crate::flags::{ConnectFlags, FibeFlags, FileFlags, OnBudget};
use crate::output::Format;
use pipewright_engine::file::import::Dialect;

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The pipeline file (YAML or JSON).
    pub file: PathBuf,
    /// The pipeline file, as mcptest spells it (`run --config FILE`); the
    /// command line is read with `--config FILE` as FILE.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Also write the run(s) as OpenTelemetry traces (OTLP/JSON) to FILE
    /// (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub otlp: Option<PathBuf>,
    /// Also POST the OTLP/JSON export to a collector, e.g.
    /// `http://127.0.0.1:4318/v1/traces`.
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    #[command(flatten)]
    pub flags: FileFlags,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Aggregate USD ceiling across every call.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Aggregate token ceiling.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Wall-clock ceiling of each run (e.g. 2m).
    #[arg(long, value_name = "DURATION")]
    pub max_duration: Option<String>,
    /// What a tripped budget does.
    #[arg(long, value_enum, default_value_t = OnBudget::Stop)]
    pub on_budget_exceeded: OnBudget,
    /// Do not keep a copy of the trace in the user data directory.
    #[arg(long)]
    pub no_save: bool,
    // -- Stepping (see cli::step) --
    /// Pause after each node and read a line from stdin: Enter continues,
    /// `r` re-runs the node, `s` skips the next node, `q` cancels.
    #[arg(long)]
    pub step: bool,
    /// Pause before NODE (repeatable), then ask as `--step` does.
    #[arg(long = "break", value_name = "NODE")]
    pub breaks: Vec<String>,
    /// Read the file as this dialect instead of detecting it.
    #[arg(long, value_parser = crate::choice::choice::<Dialect>(), default_value = "auto")]
    pub dialect: Dialect,
    /// Also use every server of this client config file (Claude Desktop,
    /// Cursor, `.mcp.json`, VS Code `mcp.json`); the file's own win, then
    /// earlier files'. Repeatable. Nodes may name these servers.
    #[arg(long, value_name = "PATH")]
    pub servers_from: Vec<PathBuf>,
    /// Replies to the servers' questions (forms, URLs, sampling), per node
    /// id or `*`, in order (see the book's "Servers that ask questions"). Used before
    /// asking on the terminal; off a terminal, questions it does not answer
    /// are declined.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// Run durably on Restate: submit to its ingress at
    /// `restate://HOST:PORT`, where a `pipewright worker` holding the same
    /// file runs it; follow it here (see the book's "Durable runs").
    #[arg(long, value_name = "restate://HOST:PORT")]
    pub on: Option<String>,
    /// With --on: Restate's admin API, read to follow the run (default
    /// port 9070 of the --on host).
    #[arg(long, value_name = "URL", env = "PIPEWRIGHT_RESTATE_ADMIN")]
    pub restate_admin: Option<String>,
    /// Hold the file to its `pipewright.lock`: a server or tool changed
    /// since the lock is an error before any call (as `lock: strict`).
    #[arg(long)]
    pub locked: bool,
    #[command(flatten)]
    pub spend: crate::spend::SpendArgs,
    #[command(flatten)]
    pub judge: crate::judge::JudgeArgs,
    #[command(flatten)]
    pub fibe: FibeFlags,
    #[command(flatten)]
    pub connect: ConnectFlags,
}
