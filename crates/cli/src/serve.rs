//! `pipewright serve FILE…`: the flags of serving compositions as MCP
//! tools; `pipewright_serve` serves them with these values.

use std::path::PathBuf;

use clap::Args;

use pipewright_engine::settings::Settings;
use pipewright_serve::ServeOptions;

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Pipeline files; each composition is one tool (a `pipe:` file is one
    /// tool named after the file).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Serve Streamable HTTP at ADDR (e.g. `127.0.0.1:8808`; path `/mcp`)
    /// instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Also serve compositions that call tools marked destructive.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Hold each file to the `pipewright.lock` beside it (as `lock:
    /// strict`): a server or tool changed since the lock stops the start,
    /// and a call whose tool changed since is refused.
    #[arg(long)]
    pub locked: bool,
    /// Also serve `run_pipeline`, which runs an inline pipeline (native,
    /// Fibe or Discord) against the same servers. Off by default: it lets
    /// the caller call any upstream tool.
    #[arg(long)]
    pub meta_tool: bool,
    /// Do not save the runs callers make.
    #[arg(long)]
    pub no_save: bool,
    /// Let `run_pipeline`'s inline pipelines read this environment variable
    /// as `${env.NAME}` (repeatable). None by default: a caller reads
    /// nothing of the server's environment. jq's `env` stays off.
    #[arg(long, value_name = "NAME")]
    pub allow_env: Vec<String>,
    /// With --http: every request must carry `Authorization: Bearer TOKEN`,
    /// TOKEN being the value of the environment variable NAME. Required to
    /// listen on an address other than loopback.
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,
    /// With --http: the largest request body taken, in bytes (a larger one
    /// is answered 413 unread).
    #[arg(long, value_name = "BYTES", default_value_t = pipewright_serve::DEFAULT_MAX_BODY)]
    pub max_body: usize,
    /// With --http: the most sessions open at once (one more `initialize`
    /// is answered 503 until a client closes its session).
    #[arg(long, value_name = "N", default_value_t = pipewright_serve::DEFAULT_MAX_SESSIONS)]
    pub max_sessions: usize,
    /// With --http: the most requests in flight in one session (one more is
    /// answered 429 until one ends).
    #[arg(long, value_name = "N", default_value_t = pipewright_serve::DEFAULT_MAX_CALLS)]
    pub max_calls_per_session: usize,
    /// With --http: a session no request reached for this long is closed
    /// and its slot freed (e.g. `90s`, `10m`; default 5m), also when its
    /// agent went away without closing it. When every slot is taken, a new
    /// agent takes the slot of the session idle longest.
    #[arg(long, value_name = "DURATION")]
    pub session_idle: Option<String>,
    /// With --http: on SIGTERM or Ctrl-C, `/readyz` fails and no new
    /// session or call is taken (503, Retry-After); calls in flight get this
    /// long to finish (default 5s), then are cancelled as an agent's cancel
    /// does, compensations included; every run is saved before the exit.
    #[arg(long, value_name = "DURATION")]
    pub drain: Option<String>,
    /// The `requestState` keys shared by a fleet of `serve` instances, so
    /// that any instance checks the state any instance sealed: one key per
    /// line (64 or more hex digits, e.g. `openssl rand -hex 32`), the
    /// first seals and every one opens (rotation). Default: a random key
    /// of this process.
    #[arg(long, value_name = "PATH", conflicts_with = "state_key_env")]
    pub state_key_file: Option<PathBuf>,
    /// The `requestState` keys, as --state-key-file holds them, in the
    /// environment variable NAME.
    #[arg(long, value_name = "NAME")]
    pub state_key_env: Option<String>,
    /// Run each call durably on Restate (its ingress at
    /// `restate://HOST:PORT`), where `pipewright worker` runs the same
    /// files: a call survives the worker dying mid-run.
    #[arg(long, value_name = "restate://HOST:PORT")]
    pub on: Option<String>,
    /// With --on: Restate's admin API (default port 9070 of the --on host).
    #[arg(long, value_name = "URL", env = "PIPEWRIGHT_RESTATE_ADMIN")]
    pub restate_admin: Option<String>,
    /// Grade each served composition's `eval:` after it answers (off the
    /// agent's path) and write the judged rows into its saved run.
    #[arg(long)]
    pub eval: bool,
    #[command(flatten)]
    pub judge: super::judge::JudgeArgs,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

/// `serve`: returns the exit code.
pub async fn serve(args: ServeArgs, settings: Settings) -> u8 {
    let options = ServeOptions {
        files: args.files,
        http: args.http,
        yes: args.yes,
        locked: args.locked,
        meta_tool: args.meta_tool,
        no_save: args.no_save,
        allow_env: args.allow_env,
        token_env: args.token_env,
        max_body: args.max_body,
        max_sessions: args.max_sessions,
        max_calls_per_session: args.max_calls_per_session,
        session_idle: args.session_idle,
        drain: args.drain,
        state_key_file: args.state_key_file,
        state_key_env: args.state_key_env,
        on: args.on,
        restate_admin: args.restate_admin,
        eval: args.eval,
        judge: args.judge.flags(),
    };
    pipewright_serve::serve(options, settings).await
}
