//! The lock in the workbench: with a `pipewright.lock` beside the file,
//! preflight as you type marks a tool that changed since it at the node's
//! `tool:` line, with the diff (an error under `lock: strict`).

use serde_json::json;

use super::screens::app_on;
use crate::app::session_key;
use pipewright_engine::diag::Severity;
use pipewright_engine::lock::{Lock, LockedServer};
use pipewright_engine::mcp::ToolInfo;
use pipewright_engine::plan::preflight::ToolLists;

const FILE: &str = "servers:\n  users: {command: users-server}\npipe:\n  - id: find\n    tool: find_user\n    args: {query: ada}\n";

fn find_user(extra: serde_json::Value) -> ToolInfo {
    let mut raw = json!({"name": "find_user", "description": "Finds a user by name.",
        "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}});
    if let (Some(m), Some(more)) = (raw.as_object_mut(), extra.as_object()) {
        m.extend(more.clone());
    }
    ToolInfo::from_json(raw).expect("a tool")
}

/// Marks after the lists `tools` arrive for a file with a lock of the
/// unchanged `find_user` beside it.
fn marks(text: &str, now: ToolInfo) -> Vec<pipewright_engine::diag::Diagnostic> {
    let (_dir, mut app) = app_on(text);
    let hello =
        json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "users", "version": "1"}});
    let mut lock = Lock::default();
    lock.insert(
        "users",
        LockedServer::of(&hello, &[find_user(json!({}))], &["find_user"]),
    );
    let dir = app.editor.path().parent().expect("a folder").to_path_buf();
    lock.write(&dir).expect("the lock is written");
    let (p, c) = (
        app.pipeline.clone().expect("a plan"),
        app.comp.clone().expect("a plan"),
    );
    let mut lists = ToolLists::new();
    lists.insert("users".into(), vec![now]);
    app.on_tools(session_key(&p, &c), Ok(lists));
    app.editor
        .diagnostics()
        .iter()
        .filter(|d| d.message.contains("since the lock"))
        .cloned()
        .collect()
}

#[test]
fn a_tool_changed_since_the_lock_is_marked_at_its_node() {
    assert!(marks(FILE, find_user(json!({}))).is_empty());
    let found = marks(
        FILE,
        find_user(json!({"annotations": {"destructiveHint": true}})),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].span.start.line, found[0].span.start.col), (5, 11));
    assert_eq!(found[0].severity, Severity::Warning);
    assert!(
        found[0]
            .message
            .ends_with("annotation `destructiveHint` is now true"),
        "{}",
        found[0].message
    );
    let hint = found[0].hint.as_deref().unwrap_or_default();
    assert!(hint.contains("+ destructiveHint: true"), "{hint}");
    let strict = format!("lock: strict\n{FILE}");
    let found = marks(
        &strict,
        find_user(json!({"description": "Something else."})),
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].severity, Severity::Error);
    assert_eq!(found[0].span.start.line, 6);
}
