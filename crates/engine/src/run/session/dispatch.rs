//! Choosing and starting ready nodes: which nodes a run targets, whether
//! a node's parents have settled, why it is skipped, what its references
//! see, its `when:`, and handing it to `exec` on its own task.

use super::*;

impl Actor {
    pub(super) fn in_targets(&self, i: usize) -> bool {
        self.targets.as_ref().is_none_or(|t| t.contains(&i))
    }

    /// Dispatches what can go, decides skips, and finishes the run when
    /// nothing is left.
    pub(super) async fn pump(&mut self) {
        self.dispatch_ready().await;
        // Whatever the pump did (sent a call, finished the run, found the
        // paused run with nothing left in flight), the pause clock follows.
        self.settle_pause().await;
    }

    async fn dispatch_ready(&mut self) {
        if self.pending_plan.is_some() && self.in_flight.is_empty() {
            self.apply_plan().await;
        }
        if self.mode != Mode::Running {
            // Paused (`p`) while the last calls were in flight: once they
            // have finished and nothing is left to run, the run is over. A
            // step's pause stays, so the last node can be re-run (`--step`).
            if self.mode == Mode::Paused
                && !self.step_pause
                && self.in_flight.is_empty()
                && self.nothing_left()
            {
                self.finish().await;
            }
            return;
        }
        let comp = self.comp.clone();
        self.advance_settled_prefix();
        while self.mode == Mode::Running && self.stopping.is_none() {
            let batch: Vec<usize> = if std::mem::take(&mut self.rescan) {
                self.candidates.clear();
                comp.order[self.settled_prefix..].to_vec()
            } else {
                let mut batch = std::mem::take(&mut self.candidates);
                batch.sort_unstable_by_key(|&i| self.rank[i]);
                batch.dedup();
                batch
            };
            if batch.is_empty() {
                break;
            }
            for i in batch {
                if self.mode != Mode::Running || self.stopping.is_some() {
                    break;
                }
                if !self.in_targets(i)
                    || self.records[i].status != NodeStatus::Pending
                    || self.in_flight.contains_key(&i)
                    || !self.parents_settled(i)
                {
                    continue;
                }
                self.dispatch_if_ready(i).await;
            }
        }
        // Every ready node has been dispatched (or the run is stopping, or
        // paused): with nothing in flight, the run is over.
        if self.mode == Mode::Running && self.in_flight.is_empty() {
            self.finish().await;
        }
    }

    /// The node the next dispatch would start: the first in order that
    /// this run targets, waits, and whose parents have settled without
    /// skipping it.
    pub(super) fn next_ready(&self) -> Option<usize> {
        self.comp.order[self.settled_prefix.min(self.comp.order.len())..]
            .iter()
            .copied()
            .find(|&i| {
                self.in_targets(i)
                    && self.records[i].status == NodeStatus::Pending
                    && !self.in_flight.contains_key(&i)
                    && self.parents_settled(i)
                    && self.skip_reason(i).is_none()
            })
    }

    /// Whether every node this run targets has settled (none waits to be
    /// called, none is at a breakpoint).
    fn nothing_left(&self) -> bool {
        self.paused_before.is_none()
            && (0..self.records.len())
                .all(|i| !self.in_targets(i) || self.records[i].status.is_terminal())
    }

    /// Moves `settled_prefix` past the nodes that have finished (or are not
    /// part of this run).
    pub(super) fn advance_settled_prefix(&mut self) {
        let order = &self.comp.order;
        while let Some(&i) = order.get(self.settled_prefix) {
            let done = !self.in_targets(i)
                || (self.records[i].status.is_terminal() && !self.in_flight.contains_key(&i));
            if !done {
                break;
            }
            self.settled_prefix += 1;
        }
    }

    pub(super) fn parents_settled(&self, i: usize) -> bool {
        self.comp.parents[i].iter().all(|&p| {
            let s = self.records[p].status;
            (s.is_terminal() || s == NodeStatus::Stale) && !self.in_flight.contains_key(&p)
        })
    }

    /// Decides node `i` (whose parents have settled): skip it, fail it, stop
    /// at its breakpoint, or dispatch it. True when its state changed.
    pub(super) async fn dispatch_if_ready(&mut self, i: usize) -> bool {
        if !self.parents_settled(i) {
            return false;
        }
        if let Some(reason) = self.skip_reason(i) {
            self.set_skipped(i, reason).await;
            return true;
        }
        let scope = self.snapshot(i);
        match self.eval_when(i, &scope) {
            Ok(true) => {}
            Ok(false) => {
                let source = self.comp.nodes[i]
                    .when
                    .as_ref()
                    .map(|w| w.source.clone())
                    .unwrap_or_default();
                self.set_skipped(i, format!("`when: {source}` was false"))
                    .await;
                return true;
            }
            Err(e) => {
                let rec = NodeRecord {
                    status: NodeStatus::Failed,
                    error: Some(format!("`when` could not be evaluated: {e}")),
                    ..NodeRecord::default()
                };
                let generation = self.gens[i];
                self.node_done(i, generation, rec).await;
                return true;
            }
        }
        if self.mode == Mode::Running
            && self.breakpoints.contains(&self.comp.nodes[i].id)
            && self.released != Some(i)
        {
            self.paused_before = Some(i);
            self.step_pause = false;
            self.set_mode(Mode::Paused);
            self.emit(Event::Paused {
                reason: PauseReason::Breakpoint,
                before: Some(self.comp.nodes[i].id.clone()),
            })
            .await;
            return false;
        }
        if self.released == Some(i) {
            self.released = None;
        }
        self.reread_tools().await;
        if let Some(problem) = self.tool_problem(i, &scope) {
            let rec = NodeRecord {
                status: NodeStatus::Failed,
                // Schema errors quote the resolved (possibly secret) values.
                error: Some(self.redactor.text(&problem)),
                error_code: Some("TOOL_CHANGED".into()),
                ..NodeRecord::default()
            };
            let generation = self.gens[i];
            self.node_done(i, generation, rec).await;
            return true;
        }
        self.lock_warning(i).await;
        if !self.within_budget(i, &scope).await {
            return true;
        }
        self.dispatch(i, scope).await;
        if self.step_pending && self.mode == Mode::Running {
            self.step_pending = false;
            self.step_pause = true;
            self.set_mode(Mode::Paused);
            self.emit(Event::Paused {
                reason: PauseReason::Step,
                before: None,
            })
            .await;
        }
        true
    }

    pub(super) fn skip_reason(&self, i: usize) -> Option<String> {
        if self.comp.kind == Kind::Pipe {
            return None;
        }
        self.comp.parents[i].iter().find_map(|&p| {
            let parent = &self.comp.nodes[p];
            match self.records[p].status {
                NodeStatus::Skipped => Some(format!("parent `{}` was skipped", parent.id)),
                NodeStatus::Cancelled => Some(format!("parent `{}` was cancelled", parent.id)),
                NodeStatus::Failed if parent.on_error != OnError::Continue => {
                    Some(format!("parent `{}` failed", parent.id))
                }
                _ => None,
            }
        })
    }

    pub(super) async fn set_skipped(&mut self, i: usize, reason: String) {
        self.candidates.extend_from_slice(&self.comp.children[i]);
        self.records[i].status = NodeStatus::Skipped;
        self.records[i].skip_reason = Some(reason.clone());
        self.made[i] = Some(self.made_now(i, NodeStatus::Skipped));
        self.emit(Event::NodeStatus {
            id: self.comp.nodes[i].id.clone(),
            status: NodeStatus::Skipped,
            reason: Some(reason),
        })
        .await;
    }

    /// What node `i`'s references may read: its parents (a pipe step: every
    /// earlier step).
    pub(super) fn snapshot(&self, i: usize) -> Snapshot {
        let visible = self.comp.visible(i, |id| self.index(id));
        let mut nodes = HashMap::with_capacity(visible.len());
        for p in visible {
            let rec = &self.records[p];
            let seen = match rec.status {
                NodeStatus::Ok => Seen::Output(rec.output.clone()),
                // A stale node keeps the output it recorded before the edit.
                NodeStatus::Stale if rec.attempts > 0 || rec.output != Value::Null => {
                    Seen::Output(rec.output.clone())
                }
                NodeStatus::Skipped => Seen::Skipped,
                // A failure let through (`on_error: continue`) reads as
                // its `{error}` output.
                NodeStatus::Failed
                    if self.comp.nodes[p].on_error == OnError::Continue
                        && !rec.output.is_null() =>
                {
                    Seen::Output(rec.output.clone())
                }
                NodeStatus::Failed | NodeStatus::Cancelled => Seen::Failed,
                _ => Seen::NotRun,
            };
            nodes.insert(self.comp.nodes[p].id.clone(), seen);
        }
        Snapshot {
            nodes,
            vars: self.vars.clone(),
            item: None,
            pass_vars: self.comp.passes_vars_through(),
            env: self.cfg.env.clone(),
        }
    }

    pub(super) fn eval_when(&self, i: usize, scope: &Snapshot) -> Result<bool, String> {
        let Some(when) = &self.comp.nodes[i].when else {
            return Ok(true);
        };
        let input = match &when.subject {
            Some(site) => {
                reference::resolve_reference(&site.reference, scope).map_err(|e| e.to_string())?
            }
            None => {
                let mut parents = Map::new();
                for (id, seen) in &scope.nodes {
                    if let Seen::Output(v) = seen {
                        parents.insert(id.clone(), v.tree().clone());
                    }
                }
                // Keep declaration order for readable jq output.
                let mut ordered = Map::new();
                for node in &self.comp.nodes {
                    if let Some(v) = parents.remove(&node.id) {
                        ordered.insert(node.id.clone(), v);
                    }
                }
                json!({ "parents": ordered })
            }
        };
        match &when.filter {
            Some(p) => p.test(&input).map_err(|e| e.to_string()),
            None => Ok(jq::truthy(&input)),
        }
    }

    pub(super) async fn dispatch(&mut self, i: usize, scope: Snapshot) {
        self.gens[i] += 1;
        let generation = self.gens[i];
        let token = self.run_cancel.child_token();
        self.records[i] = NodeRecord {
            status: NodeStatus::Running,
            ..NodeRecord::default()
        };
        self.made[i] = None;
        self.in_flight.insert(i, (generation, token.clone()));
        // A call went out since the session paused: a pause, if any, begins
        // when the calls in flight are done.
        self.idle_from = None;
        self.emit(Event::NodeStatus {
            id: self.comp.nodes[i].id.clone(),
            status: NodeStatus::Running,
            reason: None,
        })
        .await;
        let job = NodeJob {
            comp: self.comp.clone(),
            idx: i,
            scope,
            caller: self.caller.clone(),
            cancel: token,
            paused: self.paused_tx.subscribe(),
            events: self.events.clone(),
            redactor: self.redactor.clone(),
            default_timeout: self.cfg.default_timeout,
            pricing: self.cfg.pricing.clone(),
            iterations: self
                .cfg
                .budget
                .max_iterations
                .map(|max| (self.iterations.clone(), max)),
            responder: self.cfg.human.0.clone(),
        };
        let done = self.done_tx.clone();
        tokio::spawn(async move {
            let rec = AssertUnwindSafe(run_node(job))
                .catch_unwind()
                .await
                .unwrap_or_else(|_| NodeRecord {
                    status: NodeStatus::Failed,
                    error: Some(
                        "internal error while running this node (a bug in pipewright)".into(),
                    ),
                    ..NodeRecord::default()
                });
            let _ = done.send((i, generation, rec));
        });
    }
}
