//! A lock as a run holds a file to it: the lock, whether it is strict,
//! and the servers' handshakes met; and which tools a file's nodes use.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use serde_json::Value;

use super::file::Lock;
use crate::file::model::Composition;

/// The lock a preflight checks the live servers against.
#[derive(Debug, Clone, Default)]
pub struct Pinned {
    pub lock: Lock,
    /// `--locked` or the file's `lock: strict`: a change is an error.
    pub strict: bool,
    /// Each server's handshake result by name (`Connection::server_info`),
    /// for its version and revision; a server not here is checked by its
    /// tools only.
    pub handshakes: IndexMap<String, Value>,
}

/// The tools each server is called for by the nodes of `comps` (mocked
/// nodes call nothing), by server; `default_server` is the server of nodes
/// that name none.
pub fn uses(comps: &[&Composition], default_server: Option<&str>) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for node in comps.iter().flat_map(|c| &c.nodes) {
        if node.mock.is_some() {
            continue;
        }
        let Some(server) = node.server.as_deref().or(default_server) else {
            continue;
        };
        let tools = out.entry(server.to_owned()).or_default();
        if !tools.contains(&node.tool) {
            tools.push(node.tool.clone());
        }
    }
    out
}
