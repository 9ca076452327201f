//! The flags several commands share, declared once and flattened into
//! each: the servers a command talks to (`run`, `plan`, `edit`, `tools`)
//! and what a run of a file takes beside the file (`run`, `plan`,
//! `edit`).

use clap::Args;

use pipewright_engine::mcp::servers::ServerArg;

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
