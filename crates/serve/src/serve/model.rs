//! What `serve` serves: each tool with the composition it runs, and the
//! upstream servers of each file.

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use pipewright_engine::cost::pricing::Pricing;
use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::mcp::ToolInfo;
use pipewright_engine::mcp::caller::Caller;
use pipewright_engine::mcp::servers::ServerPool;
use pipewright_engine::redact::Redactor;

/// A variable a served tool takes as an argument.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    /// The default under `vars:`, if any (the argument is then optional).
    pub default: Option<Value>,
}

/// One served tool: a composition and what it runs with.
pub struct Served {
    pub name: String,
    pub definition: Value,
    pub file: String,
    /// The SHA-256 of the file's text: a durable run names its file by it.
    pub file_sha256: String,
    /// `sha256:` digest of the file's bytes, as provenance names it.
    pub file_digest: String,
    /// `sha256:` digest of the `pipewright.lock` beside the file, read at
    /// start; `None` when there is none.
    pub lock_digest: Option<String>,
    /// The lock the file is held to, if it has one: each call is checked
    /// against it (refused when it is strict and a tool changed).
    pub pinned: Option<Arc<pipewright_engine::lock::Pinned>>,
    pub pipeline: Arc<Pipeline>,
    pub comp: Arc<Composition>,
    pub params: Vec<Param>,
    pub caller: Arc<dyn Caller>,
    /// The same servers as `caller`: their handshakes and live tool lists
    /// name what answered, in provenance.
    pub pool: Arc<ServerPool>,
    pub pricing: Arc<Pricing>,
    /// The file's secrets (header values, `${env.X}` in server settings):
    /// masked in every answer, as `run` masks them.
    pub redactor: Redactor,
    /// Its upstream tools' digests, for provenance, once per tool list.
    pub digests: super::digests::ToolDigests,
}

/// A file's servers, connected once for every call.
pub struct Upstream {
    pub pool: Arc<ServerPool>,
    pub tools: IndexMap<String, Vec<ToolInfo>>,
    pub pricing: Arc<Pricing>,
    /// The servers' secrets, masked in every answer.
    pub redactor: Redactor,
}

/// The JSON type of a default, for the argument's schema.
pub fn json_type(v: Option<&Value>) -> &'static str {
    match v {
        Some(Value::Bool(_)) => "boolean",
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => "integer",
        Some(Value::Number(_)) => "number",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "object",
        _ => "string",
    }
}
