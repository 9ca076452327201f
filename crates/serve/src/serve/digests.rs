//! The digest of each upstream tool's definition, as a served answer's
//! provenance names it, computed once per tool list a server published
//! rather than on every call: a sorted copy of the definition and its
//! SHA-256 per node was a fifth of `serve`'s CPU time per call of a 2-node
//! chain (issue 45's profile).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use pipewright_engine::lock;
use pipewright_engine::mcp::{Connection, ToolInfo};

/// What was digested, by server and tool: the tool list it was read from
/// (a server's list is replaced whole when it changes, so a new list is a
/// new `Arc`) and the digest, `None` when the list has no such tool.
type Known = HashMap<String, HashMap<String, (Arc<Vec<ToolInfo>>, Option<String>)>>;

#[derive(Default)]
pub struct ToolDigests {
    known: Mutex<Known>,
}

impl ToolDigests {
    /// The digest of tool `tool` as server `server` (connected as `conn`)
    /// lists it now, as `lock::digest(&lock::definition(..))` gives it.
    pub fn of(&self, server: &str, conn: &Connection, tool: &str) -> Option<String> {
        let list = conn.tools();
        let mut known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((seen, digest)) = known.get(server).and_then(|tools| tools.get(tool))
            && Arc::ptr_eq(seen, &list)
        {
            return digest.clone();
        }
        let digest = list
            .iter()
            .find(|t| t.name == tool)
            .map(|t| lock::digest(&lock::definition(t)));
        known
            .entry(server.to_owned())
            .or_default()
            .insert(tool.to_owned(), (list, digest.clone()));
        digest
    }
}
