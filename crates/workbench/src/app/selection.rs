//! The selected node: what the inspector shows of it (its record, a preview
//! of its args, its live call), the editor following it, and the DAG
//! following the editor's cursor.

use super::*;

impl App {
    pub fn selected_index(&self) -> Option<usize> {
        self.dag.selected()
    }

    /// Selects node `i`: the inspector shows it and, unless the editor
    /// caused it, the editor moves to its definition.
    pub fn select(&mut self, i: Option<usize>, move_editor: bool) {
        self.dag.select(i);
        // A saved run's nodes are not where the buffer's are.
        let move_editor = move_editor && self.viewing.is_none();
        if move_editor && let (Some(i), Some(comp)) = (i, &self.comp) {
            let span = comp.nodes[i].id_span;
            self.editor
                .goto(span.start.line as usize, span.start.col as usize);
            // Moved by the app: not a move to follow.
            let _ = self.editor.moved_to_line();
        }
        self.refresh_inspector();
    }

    pub(crate) fn refresh_inspector(&mut self) {
        let (Some(comp), Some(i)) = (self.comp.clone(), self.dag.selected()) else {
            self.inspector.clear();
            self.dag.remember(None);
            return;
        };
        let Some(node) = comp.nodes.get(i) else {
            return;
        };
        self.dag.remember(Some(node.id.clone()));
        // Shared, not copied: a record may hold megabytes of output.
        let record = self.visuals.get(i).and_then(|v| v.record.clone());
        // A call in flight shows the arguments it was really called with;
        // a node not run yet, a preview from this run's recorded parents.
        let live_args = self.visuals.get(i).and_then(|v| v.live_args.clone());
        let preview = match (&record, &live_args) {
            (Some(_), _) => None,
            (None, Some(args)) => Some(args.tree().clone()),
            (None, None) => Some(self.preview_args(&comp, i)),
        };
        self.inspector
            .set_node_shared(&node.id, Some(node), record, preview.as_ref());
        let doc = self.tool_doc(node);
        self.inspector.set_tool_doc(doc);
        if live_args.is_some() {
            self.inspector.mark_args_live();
        }
        self.sync_live();
    }

    /// Gives the inspector the selected node's live state (Logs tab).
    pub(crate) fn sync_live(&mut self) {
        let Some(v) = self.dag.selected().and_then(|i| self.visuals.get(i)) else {
            return;
        };
        let elapsed_ms = match (v.status, v.started_ms) {
            (NodeStatus::Running, Some(at)) => Some(self.now_ms().saturating_sub(at)),
            _ => None,
        };
        self.inspector.set_live(crate::inspector::Live {
            running: v.status == NodeStatus::Running,
            asking: v.asking,
            note: v.note.clone(),
            logs: v.logs.clone(),
            elapsed_ms,
            stale: v.status == NodeStatus::Stale,
            start_error: self.start_error.clone(),
            not_started: self
                .not_started
                .clone()
                .filter(|_| v.record.is_none() && v.status == NodeStatus::Failed),
            task: v.task.clone(),
            protocol: self.server_protocol(),
            iterations: crate::state::live_iterations(v, self.now_ms()),
            tick: self.tick,
        });
    }

    /// The MCP revision the selected node's server spoke in the run on
    /// screen.
    fn server_protocol(&self) -> Option<String> {
        let comp = self.comp.as_ref()?;
        let server = comp.nodes.get(self.dag.selected()?)?.server.as_ref()?;
        let trace = self.viewing.as_ref().map(|v| &v.trace);
        let trace = trace.or(self.trace.as_ref())?;
        trace.server_protocols.get(server).cloned()
    }

    /// Milliseconds since the current run started (the frozen time in
    /// screenshots).
    pub(crate) fn now_ms(&self) -> u64 {
        self.timeline.now_ms()
    }

    /// Re-syncs the inspector when node `i` is the selected one.
    pub(crate) fn sync_live_of(&mut self, i: usize) {
        if self.dag.selected() == Some(i) {
            self.sync_live();
        }
    }

    /// A node's args resolved as far as the outputs recorded so far allow
    /// (a fan-out's: each iteration's); the rest reads `<from node.path>`.
    pub fn preview_args(&self, comp: &Composition, i: usize) -> Value {
        // Only the outputs this node refers to are copied into the scope.
        let node = &comp.nodes[i];
        let for_each = node.for_each.iter().map(|f| &f.site);
        let wanted: Vec<&str> = (node.arg_refs.iter().chain(for_each))
            .filter_map(|r| r.reference.root.node_id())
            .collect();
        let scope = self.scope(comp, Some(&wanted));
        pipewright_engine::run::exec::preview_args(node, &scope)
    }

    /// What references see now: the recorded outputs of the nodes in
    /// `only` (all nodes when `None`), and the run's variables.
    fn scope(&self, comp: &Composition, only: Option<&[&str]>) -> Snapshot {
        let vars = match &self.pipeline {
            Some(p) => self.vars(p, comp),
            None => IndexMap::new(),
        };
        let nodes = comp
            .nodes
            .iter()
            .zip(&self.visuals)
            .filter(|(n, _)| only.is_none_or(|ids| ids.contains(&n.id.as_str())))
            .map(|(n, v)| {
                let seen = match (&v.record, v.status) {
                    (Some(r), NodeStatus::Ok | NodeStatus::Stale) => Seen::Output(r.output.clone()),
                    (_, NodeStatus::Skipped) => Seen::Skipped,
                    (_, NodeStatus::Failed) => Seen::Failed,
                    _ => Seen::NotRun,
                };
                (n.id.clone(), seen)
            })
            .collect();
        Snapshot {
            nodes,
            vars: Arc::new(vars),
            item: None,
            pass_vars: comp.passes_vars_through(),
            env: self.opts.settings.env.clone(),
        }
    }

    /// The node whose definition holds the editor's cursor line.
    fn node_at_line(&self, line: usize) -> Option<usize> {
        let comp = self.comp.as_ref()?;
        comp.nodes.iter().position(|n| {
            (n.span.start.line as usize) <= line
                && line <= (n.span.end.line as usize).max(n.span.start.line as usize)
        })
    }

    /// The cursor moved in the editor: the node it is in is selected, and
    /// moving into another composition switches to it.
    pub(crate) fn follow_editor_cursor(&mut self) -> Vec<Effect> {
        let Some(line) = self.editor.moved_to_line() else {
            return Vec::new();
        };
        let effects = self.follow_composition(line);
        if let Some(i) = self.node_at_line(line)
            && self.dag.selected() != Some(i)
        {
            self.select(Some(i), false);
        }
        effects
    }
    /// Totals of what has run: (ok, failed, cost, tokens).
    pub fn totals(&self) -> (usize, usize, f64, u64) {
        let mut ok = 0;
        let mut failed = 0;
        let mut cost = 0.0;
        let mut tokens = 0;
        for v in &self.visuals {
            match v.status {
                NodeStatus::Ok => ok += 1,
                NodeStatus::Failed => failed += 1,
                _ => {}
            }
            if let Some(r) = &v.record {
                cost += r.cost_usd;
                tokens += r.tokens;
            }
        }
        (ok, failed, cost, tokens)
    }

    /// The ids of the nodes running now.
    pub fn running(&self) -> Vec<&str> {
        match &self.comp {
            Some(c) => c
                .nodes
                .iter()
                .zip(&self.visuals)
                .filter(|(_, v)| v.status == NodeStatus::Running)
                .map(|(n, _)| n.id.as_str())
                .collect(),
            None => Vec::new(),
        }
    }
}
