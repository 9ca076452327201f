//! What a pipeline was written against, pinned: each server's name,
//! version and MCP revision, and each tool the file uses as a normalised
//! definition with its digest (`pipewright.lock`). A tool definition in,
//! its canonical form and `sha256:` digest out; the same digest names a
//! tool in a served result's provenance.

mod definition;

pub use definition::{canonical, definition, digest, digest_bytes};
