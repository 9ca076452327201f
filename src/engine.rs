//! The execution engine: pipeline model, loader, references, jq, graph,
//! sessions and the MCP client. No terminal code lives here.

pub mod budget;
pub mod cassette;
pub mod client_config;
pub mod cost;
pub mod diag;
pub mod exec;
pub mod graph;
pub mod import;
pub mod jq;
pub mod loader;
pub mod mcp;
pub mod model;
pub mod plan;
pub mod preflight;
pub mod pricing;
pub mod redact;
pub mod reference;
pub mod schema;
pub mod servers;
pub mod session;
pub mod tokens;
pub mod trace;
pub mod yaml;
