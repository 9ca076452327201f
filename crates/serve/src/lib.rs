//! pipewright's servers: `pipewright serve`, compositions as MCP tools for
//! agents (locally or with `--on restate://…`), and `pipewright worker`,
//! which runs durable runs for Restate (the `durable` feature, on by
//! default). Beside them, what every headless command shares with them:
//! its stop signals, how it reports a load and keeps a trace, and the
//! judge flags.

#![forbid(unsafe_code)]

pub mod judge;
pub mod report;
pub mod serve;
pub mod signals;
#[cfg(feature = "durable")]
pub mod worker;

// The crates this one reads, by the names every crate of the workspace
// reads them by.
use pipewright_demo as demo_server;
use pipewright_engine as engine;
