//! How a run reaches a tool: the one trait that the live server pool, a
//! cassette's recorder and replayer, and test doubles implement.

use std::time::Duration;

use futures::future::BoxFuture;
use indexmap::IndexMap;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::CallOutcome;
use super::error::McpError;

/// Something that can make a `tools/call`: the live server pool, a cassette,
/// or a test double.
pub trait Caller: Send + Sync {
    /// Calls `tool` on `server` (`None`: the only server there is).
    fn call<'a>(
        &'a self,
        server: Option<&'a str>,
        tool: &'a str,
        args: Map<String, Value>,
        meta: Option<Map<String, Value>>,
        timeout: Option<Duration>,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>>;

    /// What the servers wrote to stderr (and logged), by server name.
    fn logs(&self) -> IndexMap<String, String> {
        IndexMap::new()
    }
}
