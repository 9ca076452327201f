//! pipewright: a terminal workbench and headless CLI for MCP tool-call
//! pipelines.
//!
//! The workspace is split the way the product is (ARCHITECTURE.md draws
//! it): [`engine`] reads, validates and runs pipeline files and knows
//! nothing of terminals; [`cli`] and [`ui`] (the workbench) are two
//! drivers of it, [`lsp`] serves editors from it, [`serve`] serves
//! compositions to agents and runs durable workers, [`headless`] is what
//! the command line and `serve` share, [`record`] keeps an agent's live
//! MCP session; [`demo_server`] is the
//! built-in MCP server every example runs against. This crate is the
//! binary; its library only names those crates for the tests and benches.

pub use pipewright_cli as cli;
pub use pipewright_demo as demo_server;
pub use pipewright_engine as engine;
pub use pipewright_headless as headless;
pub use pipewright_lsp as lsp;
pub use pipewright_record as record;
pub use pipewright_serve as serve;
pub use pipewright_workbench as ui;
