//! What a connection knows of its server after the handshake: the MCP
//! revision they settled on, and a tool list kept fresh — read again when
//! the server says it changed (`list_changed`) or its `ttlMs` passed.

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use serde_json::Value;

use super::Connection;
use super::tools::ToolInfo;
use super::wire::{ListError, list_tools};

/// How long a changed tool list may take to read again; past it the old
/// list stays (and the session goes on).
const REREAD_WAIT: Duration = Duration::from_secs(5);

impl Connection {
    /// The MCP revision negotiated with the server, e.g. `2026-07-28`.
    pub fn protocol_version(&self) -> &str {
        let version = self.inner.server_info.get("protocolVersion");
        version.and_then(Value::as_str).unwrap_or("unknown")
    }

    /// True once the server said its tool list changed
    /// (`notifications/tools/list_changed`), or the list's `ttlMs` passed,
    /// and it was not read again yet.
    pub fn tools_changed(&self) -> bool {
        self.inner.tools_changed.load(Ordering::SeqCst) || self.inner.fresh.expired()
    }

    /// Reads the tool list again if the server said it changed; the new
    /// list, or `None` when nothing changed (or the read failed, which is
    /// noted in the server log).
    pub async fn reread_tools(&self) -> Option<Arc<Vec<ToolInfo>>> {
        let changed = self.inner.tools_changed.swap(false, Ordering::SeqCst);
        if !changed && !self.inner.fresh.expired() {
            return None;
        }
        let read = list_tools(&self.inner.peer, &self.inner.fresh, &self.inner.replies);
        let read = tokio::time::timeout(REREAD_WAIT, read).await;
        match read.unwrap_or(Err(ListError::TooSlow(REREAD_WAIT))) {
            Ok(tools) => {
                let tools = Arc::new(tools);
                *self
                    .inner
                    .tools
                    .write()
                    .unwrap_or_else(PoisonError::into_inner) = tools.clone();
                Some(tools)
            }
            Err(e) => {
                self.inner.log.push(&format!(
                    "[pipewright] reading the changed tool list failed: {e}"
                ));
                None
            }
        }
    }
}
