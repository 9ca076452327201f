//! The flags several commands share, declared once and flattened into
//! each: the servers a command talks to (`run`, `plan`, `edit`, `tools`),
//! what a run of a file takes beside the file (`run`, `plan`, `edit`),
//! Fibe's caps (the commands that read files) and how servers are spoken
//! to (the commands that connect them). None is global: a command lists
//! only the flags it reads.

use std::ffi::OsString;

use clap::Args;

use pipewright_engine::file::import::FibeLimits;
use pipewright_engine::mcp::servers::ServerArg;
use pipewright_engine::mcp::{Choices, LogLevel, ProtocolArg};
use pipewright_engine::run::session::BudgetMode;
use pipewright_engine::settings::Settings;

/// The servers the command line adds to a file's, or names without one.
#[derive(Debug, Clone, Default, Args)]
pub struct ServerFlags {
    /// The server's Streamable HTTP URL when the file declares none (or
    /// exactly one, which it replaces).
    #[arg(long)]
    pub url: Option<String>,
    /// Add or override a server: NAME=URL or NAME='COMMAND ARGS'. Repeatable.
    #[arg(long = "server", value_name = "NAME=URL|CMD")]
    pub servers: Vec<ServerArg>,
}

/// What a run of a pipeline file takes beside the file: which of its
/// compositions and cases, with which vars, against which servers, with
/// which default timeout.
#[derive(Debug, Clone, Default, Args)]
pub struct FileFlags {
    /// A `${var.NAME}` value: NAME=VALUE (VALUE is JSON when it parses as
    /// JSON, else text). Repeatable; wins over `vars:` and case rows.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Run only this composition (`edit` shows it first; its palette
    /// switches).
    #[arg(long, value_name = "NAME")]
    pub composition: Option<String>,
    /// Run only this case row (`edit` runs with its vars; default: the
    /// first row).
    #[arg(long, value_name = "NAME")]
    pub case: Option<String>,
    #[command(flatten)]
    pub server: ServerFlags,
    /// Timeout for every call whose node sets none (e.g. 30s).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
}

/// What a tripped budget does (`--on-budget-exceeded` of `run`, `plan`
/// and `tools call`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnBudget {
    Stop,
    Continue,
    Warn,
}

impl OnBudget {
    /// The engine's budget mode for this choice.
    pub fn mode(self) -> BudgetMode {
        match self {
            OnBudget::Stop => BudgetMode::Stop,
            OnBudget::Continue => BudgetMode::Continue,
            OnBudget::Warn => BudgetMode::Warn,
        }
    }
}

/// Fibe's caps, for the commands that read pipeline files (a Fibe
/// pipeline is held to them as it is read).
#[derive(Debug, Clone, Args)]
pub struct FibeFlags {
    /// Most top-level steps a Fibe pipeline may have (Fibe's default: 25).
    #[arg(
        long,
        value_name = "N",
        env = "FIBE_MCP_PIPELINE_MAX_STEPS",
        default_value_t = 25
    )]
    pub fibe_max_steps: usize,
    /// Most `for_each` iterations a Fibe pipeline may make in one run,
    /// counted across the pipeline (Fibe's default: 50).
    #[arg(
        long,
        value_name = "N",
        env = "FIBE_MCP_PIPELINE_MAX_ITERATIONS",
        default_value_t = 50
    )]
    pub fibe_max_iterations: u64,
}

impl FibeFlags {
    /// The caps, as the engine takes them.
    pub fn limits(&self) -> FibeLimits {
        FibeLimits {
            max_steps: self.fibe_max_steps,
            max_iterations: self.fibe_max_iterations,
        }
    }
}

/// How the commands that talk to MCP servers speak to them and stop them.
#[derive(Debug, Clone, Args)]
pub struct ConnectFlags {
    /// How long a stdio server gets to exit after its stdin closes, and
    /// again after SIGTERM, before it is killed (e.g. `100ms`, `2s`).
    #[arg(
        long,
        value_name = "DURATION",
        env = "PIPEWRIGHT_SHUTDOWN_GRACE",
        default_value = "100ms"
    )]
    pub shutdown_grace: String,
    /// Ask servers to log at this level and above (`logging/setLevel`);
    /// their log lines are kept per node in the trace and shown in the
    /// workbench's Logs tab.
    #[arg(
        long,
        value_parser = crate::choice::choice::<LogLevel>(),
        value_name = "LEVEL",
        env = "PIPEWRIGHT_LOG_LEVEL"
    )]
    pub log_level: Option<LogLevel>,
    /// The MCP revision to speak to servers, or to one server (the help
    /// names the revisions: [`crate::choice::protocol_help`]).
    #[arg(
        long,
        help = crate::choice::protocol_help(),
        value_name = "[NAME=]REVISION",
        env = "PIPEWRIGHT_PROTOCOL",
        value_delimiter = ','
    )]
    pub protocol: Vec<ProtocolArg>,
}

impl ConnectFlags {
    /// Sets what the flags say in `settings`; `Err` is a usage mistake
    /// (a shutdown grace that is not a duration).
    pub fn apply(&self, settings: &mut Settings) -> Result<(), String> {
        settings.log_level = self.log_level;
        settings.protocol = Choices::of(&self.protocol);
        settings.shutdown_grace = pipewright_engine::options::duration_flag(
            "shutdown-grace",
            Some(&self.shutdown_grace),
        )?;
        Ok(())
    }
}

/// The flags that were global before they became the flags of the
/// commands that use them.
const MOVED: &[&str] = &[
    "--shutdown-grace",
    "--fibe-max-steps",
    "--fibe-max-iterations",
    "--log-level",
    "--protocol",
];

/// Moves the flags in [`MOVED`] given before a subcommand
/// (`pipewright --protocol 2025-11-25 tools list`) to after it, where the
/// subcommand reads them, as it did when they were global; the command
/// line is otherwise as given. `subcommands` are the names (and aliases)
/// of the top-level subcommands: before a FILE (`pipewright FILE`) the
/// flags stay, the workbench's own.
pub fn after_the_subcommand(args: Vec<OsString>, subcommands: &[String]) -> Vec<OsString> {
    let mut moved = Vec::new();
    let mut i = 1;
    while let Some(a) = args.get(i).and_then(|a| a.to_str()) {
        if MOVED.contains(&a) {
            moved.extend(args[i..].iter().take(2).cloned());
            i += 2;
        } else if MOVED
            .iter()
            .any(|f| a.strip_prefix(f).is_some_and(|rest| rest.starts_with('=')))
        {
            moved.push(args[i].clone());
            i += 1;
        } else {
            break;
        }
    }
    let is_subcommand = args
        .get(i)
        .and_then(|a| a.to_str())
        .is_some_and(|a| subcommands.iter().any(|s| s == a));
    if moved.is_empty() || !is_subcommand {
        return args;
    }
    // Before a `--`, if there is one: what follows it is not a flag.
    let rest = &args[i..];
    let end = rest.iter().position(|a| a == "--").unwrap_or(rest.len());
    let mut out = Vec::with_capacity(args.len());
    out.extend(args.first().cloned());
    out.extend(rest[..end].iter().cloned());
    out.extend(moved);
    out.extend(rest[end..].iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<OsString> {
        s.split(' ').map(OsString::from).collect()
    }

    #[test]
    fn moved_flags_before_a_subcommand_go_after_it() {
        let subs = vec!["run".to_owned(), "tools".to_owned()];
        let cases = [
            (
                "pw --protocol 2025-11-25 tools list --json",
                "pw tools list --json --protocol 2025-11-25",
            ),
            (
                "pw --shutdown-grace=2s --fibe-max-steps 9 run f.yml -- x",
                "pw run f.yml --shutdown-grace=2s --fibe-max-steps 9 -- x",
            ),
            // Before a FILE they are the workbench's own.
            ("pw --log-level info f.yml", "pw --log-level info f.yml"),
            // Other flags and the ones after a subcommand are left alone.
            ("pw --version", "pw --version"),
            (
                "pw run f.yml --protocol auto",
                "pw run f.yml --protocol auto",
            ),
        ];
        for (given, read) in cases {
            assert_eq!(
                after_the_subcommand(argv(given), &subs),
                argv(read),
                "{given}"
            );
        }
    }
}
