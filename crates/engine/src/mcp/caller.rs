//! How a run reaches a tool: the one trait that the live server pool, a
//! cassette's recorder and replayer, and test doubles implement.

use std::time::Duration;

use futures::future::BoxFuture;
use indexmap::IndexMap;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::error::McpError;
use super::human::CallScope;
use super::{CallOutcome, ToolInfo};

/// One `tools/call` as a run asks for it: what to call, with what, and
/// for whom. It borrows what the caller's node holds (the names, the
/// cancellation token, the scope) and owns what the call sends.
#[derive(Debug)]
pub struct CallRequest<'a> {
    /// The server to call (`None`: the only server there is).
    pub server: Option<&'a str>,
    pub tool: &'a str,
    pub args: Map<String, Value>,
    /// `_meta` to send with the call (a task's, a log level's).
    pub meta: Option<Map<String, Value>>,
    /// How long to wait for the answer (`None`: as long as it takes).
    pub timeout: Option<Duration>,
    /// Cancelling it sends the server `notifications/cancelled`.
    pub cancel: &'a CancellationToken,
    /// The node the call is for, which answers the server's questions.
    pub scope: &'a CallScope,
}

/// Something that can make a `tools/call`: the live server pool, a cassette,
/// or a test double.
pub trait Caller: Send + Sync {
    /// Makes the call `request` asks for.
    fn call<'a>(&'a self, request: CallRequest<'a>)
    -> BoxFuture<'a, Result<CallOutcome, McpError>>;

    /// The caller this one wraps (a recorder, a journal), if any: the
    /// methods below ask it unless overridden.
    fn inner(&self) -> Option<&dyn Caller> {
        None
    }

    /// What the servers wrote to stderr (and logged), by server name.
    fn logs(&self) -> IndexMap<String, String> {
        self.inner().map(Caller::logs).unwrap_or_default()
    }

    /// The MCP revision each live server speaks (e.g. `2026-07-28`), by name.
    fn protocols(&self) -> IndexMap<String, String> {
        self.inner().map(Caller::protocols).unwrap_or_default()
    }

    /// Every server's tool list as last read, by name.
    fn tool_lists(&self) -> IndexMap<String, Vec<ToolInfo>> {
        self.inner().map(Caller::tool_lists).unwrap_or_default()
    }

    /// True when a server said its tool list changed since it was read.
    fn tools_changed(&self) -> bool {
        self.inner().is_some_and(Caller::tools_changed)
    }

    /// Reads changed tool lists again; every server's list (by name) when
    /// one changed, else `None`.
    fn reread_tools(&self) -> BoxFuture<'_, Option<IndexMap<String, Vec<ToolInfo>>>> {
        match self.inner() {
            Some(c) => c.reread_tools(),
            None => Box::pin(async { None }),
        }
    }
}
