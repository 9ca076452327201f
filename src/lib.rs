//! pipewright: a terminal workbench and headless CLI for MCP tool-call pipelines.
//!
//! The crate is split the way the product is: [`engine`] reads, validates and
//! runs pipeline files and knows nothing of terminals; `cli` and `ui` are two
//! drivers of it, and `lsp` serves editors from it; [`demo_server`] is the
//! built-in MCP server every example runs against.
#![forbid(unsafe_code)]

pub mod cli;
pub mod lsp;

pub use pipewright_demo as demo_server;
pub use pipewright_engine as engine;
pub use pipewright_workbench as ui;
