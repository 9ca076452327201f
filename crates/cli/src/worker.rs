//! `pipewright worker FILE…`: the flags of a durable runs' worker for
//! Restate; `pipewright_serve` runs it with these values.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Args;

use pipewright_engine::settings::Settings;
use pipewright_serve::WorkerOptions;

/// Arguments of `worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Pipeline files whose compositions this worker runs; a client names
    /// one by the tool name `serve` would give it, and must hold the same
    /// file (checked by hash).
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Where Restate reaches this worker (HTTP/2 without TLS).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9080")]
    pub listen: SocketAddr,
    /// Restate's admin API, where the worker registers itself.
    #[arg(
        long,
        value_name = "URL",
        env = "PIPEWRIGHT_RESTATE_ADMIN",
        default_value = "http://127.0.0.1:9070"
    )]
    pub restate: String,
    /// The URL to register instead of `http://ADDR` (a load balancer in
    /// front of several workers, say).
    #[arg(long, value_name = "URL")]
    pub advertise: Option<String>,
    /// Do not register; print the command that does.
    #[arg(long)]
    pub no_register: bool,
    /// This worker's name in traces and history (default `worker@ADDR`).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Also run compositions that call tools marked destructive.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Hold each file to the `pipewright.lock` beside it (as `lock:
    /// strict`): a server or tool changed since the lock stops the start,
    /// and a run whose tool changed since is refused.
    #[arg(long)]
    pub locked: bool,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
    #[command(flatten)]
    pub connect: crate::flags::ConnectFlags,
}

/// `worker`: returns the exit code.
pub async fn worker(args: WorkerArgs, settings: Settings) -> u8 {
    let options = WorkerOptions {
        files: args.files,
        listen: args.listen,
        restate: args.restate,
        advertise: args.advertise,
        no_register: args.no_register,
        name: args.name,
        yes: args.yes,
        locked: args.locked,
    };
    pipewright_serve::worker(options, settings).await
}
