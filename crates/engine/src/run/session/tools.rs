//! A server said its tool list changed mid-run
//! (`notifications/tools/list_changed`): the list is read again before the
//! next dispatch, and each node is checked against the new list as it is
//! dispatched — the tool still exists, and its resolved arguments still fit
//! the tool's `inputSchema` — so a node fails with a clear reason instead
//! of a server error. A tool that changed against the file's lock
//! (`pipewright.lock`) fails its node under a strict lock, before the
//! call, and is a warning in the node's log otherwise.

use super::*;
use crate::diag::suggest;
use crate::lang::snapshot::resolve_args;
use crate::mcp::ToolInfo;

impl Actor {
    /// Reads changed tool lists again (when a server said they changed) and
    /// tells the driver what changed.
    pub(super) async fn reread_tools(&mut self) {
        if !self.caller.tools_changed() {
            return;
        }
        if self.tools.is_none() {
            let lists = self.caller.tool_lists();
            self.tools_at_start = Some(lists.clone());
            self.tools = Some(lists);
        }
        let Some(lists) = self.caller.reread_tools().await else {
            return;
        };
        let before: HashSet<(String, String)> = self.tool_names();
        self.tools = Some(lists);
        let after = self.tool_names();
        let show = |set: &HashSet<(String, String)>, other: &HashSet<(String, String)>| {
            let mut v: Vec<String> = set
                .difference(other)
                .map(|(s, t)| format!("{s}/{t}"))
                .collect();
            v.sort();
            v
        };
        let (added, removed) = (show(&after, &before), show(&before, &after));
        // A list read again with the same names (a server that says
        // `list_changed` at start-up, or changed a description) is no news.
        if added.is_empty() && removed.is_empty() {
            return;
        }
        self.emit(Event::ToolsChanged { added, removed }).await;
    }

    fn tool_names(&self) -> HashSet<(String, String)> {
        self.tools
            .iter()
            .flat_map(|lists| lists.iter())
            .flat_map(|(s, tools)| tools.iter().map(move |t| (s.clone(), t.name.clone())))
            .collect()
    }

    /// Why node `i` cannot be called under the re-read tool lists, if it
    /// cannot (nothing is checked before a list changed).
    pub(super) fn tool_problem(&self, i: usize, scope: &Snapshot) -> Option<String> {
        let lists = self.tools.as_ref()?;
        let node = &self.comp.nodes[i];
        if node.mock.is_some() {
            return None;
        }
        let server = match &node.server {
            Some(s) => s.clone(),
            None if lists.len() == 1 => lists.keys().next()?.clone(),
            None => return None,
        };
        let tools = lists.get(&server)?;
        if let Some(drift) = self.lock_drift(i).filter(|_| self.strict()) {
            return Some(format!(
                "{} (its tool list changed during the run; the lock is strict, so it was not called):\n{}",
                drift.summary(),
                drift.diff_text()
            ));
        }
        let Some(tool) = tools.iter().find(|t| t.name == node.tool) else {
            let hint = suggest(&node.tool, tools.iter().map(|t| t.name.as_str()))
                .map(|s| format!("; did you mean `{s}`?"))
                .unwrap_or_default();
            return Some(format!(
                "server `{server}` no longer offers `{}` (its tool list changed during the run){hint}",
                node.tool
            ));
        };
        // Arguments are checked again only against a schema that changed:
        // a tool that did not change keeps the leniency it had.
        let before = self
            .tools_at_start
            .as_ref()
            .and_then(|l| l.get(&server))
            .and_then(|tools| tools.iter().find(|t| t.name == node.tool));
        if node.for_each.is_some() || before.is_some_and(|b| b.input_schema == tool.input_schema) {
            return None;
        }
        let args = resolve_args(&node.args, scope).ok()?;
        let errors = arg_errors(tool, &Value::Object(args));
        (!errors.is_empty()).then(|| {
            format!(
                "the arguments no longer fit `{}` (its tool list changed during the run): {}",
                node.tool,
                errors.join("; ")
            )
        })
    }
}

impl Actor {
    fn strict(&self) -> bool {
        self.cfg.pinned.as_ref().is_some_and(|p| p.strict)
    }

    /// What changed since the lock in the tool node `i` calls, when its
    /// list was read again mid-run and the tool is not what it was at the
    /// start (a change at the start is preflight's to report).
    pub(super) fn lock_drift(&self, i: usize) -> Option<crate::lock::Drift> {
        let pinned = self.cfg.pinned.as_ref()?;
        let lists = self.tools.as_ref()?;
        let node = &self.comp.nodes[i];
        if node.mock.is_some() {
            return None;
        }
        let server = match &node.server {
            Some(s) => s.clone(),
            None if lists.len() == 1 => lists.keys().next()?.clone(),
            None => return None,
        };
        pinned.lock.server(&server)?.tools.get(&node.tool)?;
        let now = lists.get(&server)?.iter().find(|t| t.name == node.tool);
        let before = self
            .tools_at_start
            .as_ref()
            .and_then(|l| l.get(&server))
            .and_then(|tools| tools.iter().find(|t| t.name == node.tool));
        let same = match (before, now) {
            (Some(b), Some(n)) => crate::lock::definition(b) == crate::lock::definition(n),
            (None, None) => true,
            _ => false,
        };
        if same {
            return None;
        }
        let drift = match now {
            Some(tool) => crate::lock::tool_drift(&pinned.lock, &server, tool)?,
            None => crate::lock::Drift {
                server,
                tool: Some(node.tool.clone()),
                changes: vec![crate::lock::Change::ToolGone],
            },
        };
        Some(drift)
    }

    /// Under a lock that is not strict: a line in node `i`'s log when its
    /// tool changed since the lock during the run.
    pub(super) async fn lock_warning(&mut self, i: usize) {
        if self.strict() {
            return;
        }
        if let Some(drift) = self.lock_drift(i) {
            let id = self.comp.nodes[i].id.clone();
            let line = format!(
                "[pipewright] warning: {} (its tool list changed during the run)\n{}",
                drift.summary(),
                drift.diff_text()
            );
            self.emit(Event::ServerLog { id, line }).await;
        }
    }
}

fn arg_errors(tool: &ToolInfo, args: &Value) -> Vec<String> {
    let Ok(validator) = jsonschema::validator_for(&tool.input_schema) else {
        return Vec::new();
    };
    validator
        .iter_errors(args)
        .map(|e| {
            let path = e.instance_path().as_str().to_owned();
            if path.is_empty() {
                e.to_string()
            } else {
                format!("at {path}: {e}")
            }
        })
        .collect()
}
