//! The execution engine, one room per stage of the flow. No terminal code
//! lives here; the CLI and the workbench are two drivers of it.
//!
//! ```text
//! file ──▶ plan ──▶ run ──▶ events / trace ──▶ driver (cli, ui)
//!   │        │        │
//!  lang     cost     mcp
//! ```
//!
//! - [`file`]: bytes of a pipeline file (native, Fibe or Discord) in, the
//!   validated model and its diagnostics out.
//! - [`lang`]: the `${…}` reference language and jq, used by every stage.
//! - [`plan`]: the model in, the graph, the dry-run plan and the preflight
//!   verdict out; nothing is called.
//! - [`run`]: a session that a driver commands, events and the trace out.
//! - [`cost`]: what a call costs and how many tokens it uses.
//! - [`mcp`]: which servers a run talks to, and the MCP client that talks.

pub mod cost;
pub mod diag;
pub mod file;
pub mod lang;
pub mod mcp;
pub mod plan;
pub mod redact;
pub mod run;
