//! Preflight against the lock: what changed in a pinned server or tool
//! since `pipewright lock`, as a diagnostic at the line of each node that
//! uses it, with the diff in its hint. A warning, or an error under
//! `--locked` / `lock: strict` (then nothing is called).

use super::{Preflight, ToolLists};
use crate::diag::Diagnostic;
use crate::file::model::Composition;
use crate::lock::{self, Drift, Pinned, uses};

/// What changed since the lock for the servers `comps` call, as the lock
/// check reports it (only servers whose lists are known are checked).
pub fn drift(
    comps: &[&Composition],
    tools: &ToolLists,
    default_server: Option<&str>,
    pinned: &Pinned,
) -> Vec<Drift> {
    let mut out = Vec::new();
    for (server, used) in uses(comps, default_server) {
        let Some(list) = tools.get(&server) else {
            continue;
        };
        let used: Vec<&str> = used.iter().map(String::as_str).collect();
        out.extend(lock::check(
            &pinned.lock,
            &server,
            list,
            pinned.handshakes.get(&server),
            &used,
        ));
    }
    out
}

/// Adds to `report` each change since the lock, at the nodes of `comps`
/// that use the changed tool (a server's own change at the first node of
/// each composition that calls it): an error under `strict`, else a
/// warning.
pub fn check_lock(
    report: &mut Preflight,
    comps: &[&Composition],
    tools: &ToolLists,
    default_server: Option<&str>,
    pinned: &Pinned,
) {
    let drifts = drift(comps, tools, default_server, pinned);
    for comp in comps {
        let mut server_said: Vec<&str> = Vec::new();
        for node in &comp.nodes {
            if node.mock.is_some() {
                continue;
            }
            let Some(server) = node.server.as_deref().or(default_server) else {
                continue;
            };
            for d in drifts.iter().filter(|d| d.server == server) {
                let span = match &d.tool {
                    Some(t) if *t == node.tool => node.tool_span,
                    Some(_) => continue,
                    None if server_said.contains(&server) => continue,
                    None => node.span,
                };
                if d.tool.is_none() {
                    server_said.push(server);
                }
                let message = format!("node `{}`: {}", node.id, d.summary());
                let hint = format!(
                    "`pipewright lock --update` accepts it{}; the diff:\n{}",
                    if pinned.strict {
                        ""
                    } else {
                        " (an error with `--locked` or `lock: strict`)"
                    },
                    d.diff_text()
                );
                let diag = if pinned.strict {
                    Diagnostic::error(span, message)
                } else {
                    Diagnostic::warning(span, message)
                }
                .with_hint(hint);
                let into = if pinned.strict {
                    &mut report.problems
                } else {
                    &mut report.warnings
                };
                if !into.contains(&diag) {
                    into.push(diag);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::lock::{Lock, LockedServer};
    use crate::mcp::ToolInfo;

    #[test]
    fn a_changed_tool_is_marked_at_each_node_that_uses_it() {
        let file = "servers:\n  s: {command: x}\npipe:\n  - id: find\n    tool: search\n    args: {q: a}\n  - id: other\n    tool: echo\n  - id: again\n    tool: search\n    mock: {result: 1}\n";
        let loaded = crate::file::open::load_str(file);
        let p = loaded
            .pipeline
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let comps: Vec<&Composition> = p.compositions.iter().collect();
        let was = ToolInfo::from_json(json!({"name": "search", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}})).unwrap();
        let echo = ToolInfo::from_json(json!({"name": "echo"})).unwrap();
        let now = ToolInfo::from_json(json!({"name": "search", "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}})).unwrap();
        let hello =
            json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"}});
        let mut lock = Lock::default();
        lock.insert(
            "s",
            LockedServer::of(&hello, &[was, echo.clone()], &["search", "echo"]),
        );
        let mut tools = ToolLists::new();
        tools.insert("s".into(), vec![now, echo]);
        let mut pinned = Pinned {
            lock,
            ..Pinned::default()
        };
        let mut report = Preflight::default();
        check_lock(&mut report, &comps, &tools, Some("s"), &pinned);
        assert!(report.problems.is_empty());
        let found: Vec<(u32, &str)> = report
            .warnings
            .iter()
            .map(|d| (d.span.start.line, d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [(
                5,
                "node `find`: tool `search` on server `s` changed since the lock: argument `q` was removed; argument `query` was added"
            )]
        );
        assert!(
            report.warnings[0]
                .hint
                .as_deref()
                .unwrap()
                .contains("- q: string\n"),
            "{:?}",
            report.warnings[0].hint
        );
        pinned.strict = true;
        let mut report = Preflight::default();
        check_lock(&mut report, &comps, &tools, Some("s"), &pinned);
        assert_eq!(report.problems.len(), 1);
        assert!(!report.ok());
    }
}
