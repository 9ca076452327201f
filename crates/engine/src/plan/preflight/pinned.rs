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
            let undo = node
                .compensate
                .as_ref()
                .map(|u| (u.server.as_deref().unwrap_or(server), u.tool.as_str()));
            for d in drifts.iter() {
                let undoes = d.tool.is_some()
                    && undo.is_some_and(|(s, t)| d.server == s && d.tool.as_deref() == Some(t));
                if d.server != server && !undoes {
                    continue;
                }
                let span = match &d.tool {
                    Some(t) if *t == node.tool && d.server == server => node.tool_span,
                    Some(_) if undoes => node.span,
                    Some(_) => continue,
                    None if d.server != server => continue,
                    None if server_said.contains(&server) => continue,
                    None => node.span,
                };
                if d.tool.is_none() {
                    server_said.push(server);
                }
                let whose = if undoes && d.tool.as_deref() != Some(node.tool.as_str()) {
                    format!("node `{}`'s compensate", node.id)
                } else {
                    format!("node `{}`", node.id)
                };
                let message = format!("{whose}: {}", d.summary());
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

    #[test]
    fn a_changed_undo_tool_is_marked_at_the_node_it_compensates() {
        let file = "servers:\n  s: {command: x}\npipe:\n  - id: mail\n    tool: send\n    compensate:\n      tool: recall\n      args: {id: x}\n";
        let loaded = crate::file::open::load_str(file);
        let p = loaded
            .pipeline
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let comps: Vec<&Composition> = p.compositions.iter().collect();
        assert_eq!(
            uses(&comps, Some("s")).get("s").map(Vec::as_slice),
            Some(&["send".to_owned(), "recall".to_owned()][..])
        );
        let send = ToolInfo::from_json(json!({"name": "send"})).unwrap();
        let was = ToolInfo::from_json(json!({"name": "recall", "description": "Recalls a mail"}))
            .unwrap();
        let now =
            ToolInfo::from_json(json!({"name": "recall", "description": "Deletes every mail"}))
                .unwrap();
        let hello =
            json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "s", "version": "1"}});
        let mut lock = Lock::default();
        lock.insert(
            "s",
            LockedServer::of(&hello, &[send.clone(), was], &["send", "recall"]),
        );
        let mut tools = ToolLists::new();
        tools.insert("s".into(), vec![send, now]);
        let pinned = Pinned {
            lock,
            ..Pinned::default()
        };
        let mut report = Preflight::default();
        check_lock(&mut report, &comps, &tools, Some("s"), &pinned);
        let found: Vec<(u32, &str)> = report
            .warnings
            .iter()
            .map(|d| (d.span.start.line, d.message.as_str()))
            .collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, 4);
        assert!(
            found[0]
                .1
                .starts_with("node `mail`'s compensate: tool `recall`"),
            "{found:?}"
        );
    }
}
