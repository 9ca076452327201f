//! pipewright's servers: `pipewright serve`, compositions as MCP tools for
//! agents (locally or with `--on restate://…`), and `pipewright worker`,
//! which runs durable runs for Restate (the `durable` feature, on by
//! default). Both take their options as values (the command line owns
//! the flags); what they share with the command line's own commands —
//! stop signals, reports on stderr, the judge — is `pipewright_headless`.

mod serve;
#[cfg(feature = "durable")]
mod worker;

pub use serve::{
    DEFAULT_DRAIN, DEFAULT_MAX_BODY, DEFAULT_MAX_CALLS, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE,
    ServeOptions, serve,
};
#[cfg(feature = "durable")]
pub use worker::{WorkerOptions, worker};
