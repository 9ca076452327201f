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
//!   validated model with its graph, and its diagnostics out.
//! - [`lang`]: the `${…}` reference language and jq, used by every stage.
//! - [`plan`]: the model in, the dry-run plan and the preflight verdict
//!   out; nothing is called.
//! - [`author`]: a file's text as typed (parsed or not) in, completion,
//!   definitions, references and hover out, for the workbench editor and
//!   `pipewright lsp` alike.
//! - [`eval`]: a finished trace in, its judged `eval:` rows out (an LLM
//!   judge grades the run; no tool is called).
//! - [`record`]: a live MCP session between an agent and a server, as
//!   `pipewright record` keeps it, in; the calls it made, and the proved
//!   pipeline they make (`new --from`), out.
//! - [`run`]: a session that a driver commands, events and the trace out.
//! - [`cost`]: what a call costs and how many tokens it uses.
//! - [`mcp`]: which servers a run talks to, and the MCP client that talks.
//! - [`doctor`]: one server's ordered checklist, from its command or host
//!   to its tool list, with the lint of its tool definitions
//!   (`pipewright doctor`, the workbench's doctor pane).
//! - [`lock`]: what each server and the tools a file uses said when it
//!   was pinned (`pipewright.lock`), and the digests that name them.
//! - [`diag`] and [`redact`]: positions and diagnostics, and the masking of
//!   secrets, which every stage uses; [`environment`]: the process's
//!   variables, directories and program, as a value the driver builds (the
//!   engine reads nothing from its process); [`settings`]: the limits the
//!   environment and the flags set and where data and config live, one
//!   value a driver builds and hands in; [`json`]: a JSON value held once
//!   and shared by every stage;
//!   [`options`]: what every driver reads from a user (`--var` values,
//!   durations) and the exit codes; [`mac`] and [`random`]: sealing state
//!   handed to a client, and random ids and keys.
//!
//! A driver starts by building the two values at the root: the
//! [`Environment`] it read from its process and the [`Settings`] over it;
//! inside each room, the modules the drivers use are public and the rest
//! private to the engine.
//!
//! Dependencies run one way: `record → author → plan → eval → run → lock →
//! mcp → file → lang`, with `doctor` over `mcp` and `cost`, with `cost`, `diag`, `environment`, `json`, `mac`,
//! `random` and `redact` as leaves, `options` over `file` and `settings`
//! above the rooms
//! (`tests/architecture.rs` checks that no two import each other).

pub mod author;
pub mod cost;
pub mod diag;
pub mod doctor;
pub mod environment;
pub mod eval;
pub mod file;
pub mod json;
pub mod lang;
pub mod lock;
pub mod mac;
pub mod mcp;
pub mod options;
pub mod plan;
pub mod random;
pub mod record;
pub mod redact;
pub mod run;
pub mod settings;

// What every driver builds first and hands to the rooms below.
pub use environment::{Environment, PlatformDirs};
pub use settings::Settings;
