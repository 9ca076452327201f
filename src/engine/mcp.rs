//! The MCP client: one connection per declared server, over a spawned stdio
//! process or Streamable HTTP, built on the official `rmcp` SDK.

mod output;
mod tools;

pub use output::{error_text, output_of};
pub use tools::{ToolAnnotations, ToolInfo};
