//! pipewright's servers: `pipewright serve`, compositions as MCP tools for
//! agents (locally or with `--on restate://…`), and `pipewright worker`,
//! which runs durable runs for Restate (the `durable` feature, on by
//! default). Beside them, what every headless command shares with them:
//! its stop signals, how it reports a load and keeps a trace, and the
//! judge flags.

pub mod judge;
pub mod report;
pub mod serve;
pub mod signals;
#[cfg(feature = "durable")]
pub mod worker;
