//! What a driver asks, carried out: run, step, pause, resume, breakpoints,
//! re-run one node or from a node, skip, cancel, pin, and adopting an edited
//! plan while keeping every output that is still valid.

use super::*;

impl Actor {
    pub(super) async fn command(&mut self, c: Command) {
        // Commands are rare and may change anything: look at every node.
        self.rescan = true;
        match c {
            Command::Run => self.begin(None, false).await,
            Command::Step => match self.mode {
                Mode::Idle | Mode::Finished => self.begin(None, true).await,
                Mode::Paused => {
                    self.step_pending = true;
                    self.released = self.paused_before.take();
                    self.set_mode(Mode::Running);
                    self.emit(Event::Resumed).await;
                }
                Mode::Running => self.step_pending = true,
            },
            Command::Pause => {
                if self.mode == Mode::Running {
                    self.step_pause = false;
                    self.set_mode(Mode::Paused);
                    self.emit(Event::Paused {
                        reason: PauseReason::User,
                        before: None,
                    })
                    .await;
                } else {
                    self.reject("pause", "no run is in progress").await;
                }
            }
            Command::Resume => {
                if self.mode == Mode::Paused {
                    self.released = self.paused_before.take();
                    self.set_mode(Mode::Running);
                    self.emit(Event::Resumed).await;
                } else {
                    self.reject("resume", "the session is not paused").await;
                }
            }
            Command::ToggleBreakpoint(id) => {
                if self.index(&id).is_none() {
                    return self
                        .reject("breakpoint", format!("there is no node `{id}`"))
                        .await;
                }
                let on = !self.breakpoints.remove(&id);
                if on {
                    self.breakpoints.insert(id.clone());
                }
                self.emit(Event::Breakpoint { id, on }).await;
            }
            Command::Rerun(id) => self.rerun(&id, false).await,
            Command::RerunFrom(id) => self.rerun(&id, true).await,
            Command::Skip(id) => {
                let Some(i) = self.index(&id) else {
                    return self
                        .reject("skip", format!("there is no node `{id}`"))
                        .await;
                };
                if !matches!(
                    self.records[i].status,
                    NodeStatus::Pending | NodeStatus::Stale
                ) {
                    let status = self.records[i].status.as_str();
                    return self.reject("skip", format!("node `{id}` is {status}; only a pending or stale node can be skipped")).await;
                }
                self.set_skipped(i, "skipped by the user".into()).await;
            }
            Command::Cancel => {
                if self.in_flight.is_empty() && !matches!(self.mode, Mode::Running | Mode::Paused) {
                    return self.reject("cancel", "nothing is running").await;
                }
                self.stop(Stop::Cancel);
                self.set_mode(Mode::Running);
            }
            Command::RunTo(id) => self.run_to(&id).await,
            Command::ReplacePlan(plan) => {
                self.pending_plan = Some(plan);
            }
            Command::SetVars(vars) => {
                if *self.vars != vars {
                    self.pending_vars = Some(vars);
                    // Adopted like an edit: now when idle, else at the next
                    // run (a run in progress keeps the values it started
                    // with).
                    if self.pending_plan.is_none() {
                        self.pending_plan = Some(self.comp.clone());
                    }
                }
            }
            Command::Pin(id) => self.pin(&id).await,
        }
    }

    pub(super) fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        // Fan-outs in flight start no new iteration while the session is
        // paused by the user or a breakpoint (a step's own node runs on).
        let _ = self
            .paused_tx
            .send(mode == Mode::Paused && !self.step_pause);
    }

    /// Starts a run of `targets` (all nodes when `None`); a full run resets
    /// every record first.
    pub(super) async fn begin(&mut self, targets: Option<HashSet<usize>>, step: bool) {
        if !self.in_flight.is_empty() || matches!(self.mode, Mode::Running) {
            return self.reject("run", "a run is already in progress").await;
        }
        if self.pending_plan.is_some() {
            self.apply_plan().await;
        }
        let count = match &targets {
            None => {
                self.clean_slate().await;
                self.comp.nodes.len()
            }
            Some(t) => t.len(),
        };
        self.targets = targets;
        self.settled_prefix = 0;
        self.stopping = None;
        self.budget_tripped = None;
        self.budget_blocked = None;
        self.run_cancel = CancellationToken::new();
        self.started = Some(Instant::now());
        self.paused_total = Duration::ZERO;
        self.pauses.clear();
        self.paused_since = None;
        self.run_id = crate::run::trace::new_run_id();
        self.started_at = Some(crate::run::exec::now_rfc3339());
        self.step_pending = step;
        self.released = None;
        self.paused_before = None;
        self.step_pause = false;
        self.set_mode(Mode::Running);
        self.emit(Event::RunStarted {
            composition: self.comp.name.clone(),
            case: self.cfg.case.clone(),
            nodes: count,
        })
        .await;
    }

    pub(super) fn reset(&mut self, i: usize) {
        self.gens[i] += 1;
        // A re-run fan-out's iterations count again, not twice.
        let made = self.records[i].iterations.len() as u64;
        let _ = self.iterations.fetch_update(
            std::sync::atomic::Ordering::Relaxed,
            std::sync::atomic::Ordering::Relaxed,
            |n| Some(n.saturating_sub(made)),
        );
        self.records[i] = NodeRecord::default();
        self.made[i] = None;
    }

    /// What node `i`'s record, ending as `status`, is made with now.
    pub(super) fn made_now(&mut self, i: usize, status: NodeStatus) -> Made {
        self.made_seq += 1;
        Made {
            seq: self.made_seq,
            hash: self.comp.nodes[i].hash.clone(),
            vars: self.vars.clone(),
            parents: self.comp.parents[i]
                .iter()
                .map(|&p| {
                    let seq = self.made[p].as_ref().map_or(0, |m| m.seq);
                    (self.comp.nodes[p].id.clone(), seq)
                })
                .collect(),
            status,
            pinned: None,
        }
    }

    pub(super) async fn rerun(&mut self, id: &str, from: bool) {
        let what = if from { "rerun-from" } else { "rerun" };
        let Some(i) = self.index(id) else {
            return self.reject(what, format!("there is no node `{id}`")).await;
        };
        if self.in_flight.contains_key(&i) {
            return self.reject(what, format!("node `{id}` is running")).await;
        }
        for &p in &self.comp.parents[i] {
            let rec = &self.records[p];
            if !(rec.status.is_terminal() || rec.status == NodeStatus::Stale) {
                let parent = &self.comp.nodes[p].id;
                return self
                    .reject(
                        what,
                        format!("parent `{parent}` of `{id}` has not run yet; run it first"),
                    )
                    .await;
            }
        }
        let mut set: Vec<usize> = vec![i];
        if from {
            set.extend(self.comp.descendants(i));
        }
        if set.iter().any(|n| self.in_flight.contains_key(n)) {
            return self
                .reject(what, "a descendant is running; wait for it or cancel")
                .await;
        }
        for &n in &set {
            self.reset(n);
            self.completed.retain(|c| *c != self.comp.nodes[n].id);
            if self.failed_step.as_deref() == Some(self.comp.nodes[n].id.as_str()) {
                self.failed_step = None;
            }
            // A paused run that stopped because this node failed may go on
            // once the node is fixed.
            if self.stopping == Some(Stop::Failure(self.comp.nodes[n].id.clone())) {
                self.stopping = None;
            }
            self.emit(Event::NodeStatus {
                id: self.comp.nodes[n].id.clone(),
                status: NodeStatus::Pending,
                reason: None,
            })
            .await;
        }
        self.settled_prefix = 0;
        match self.mode {
            Mode::Paused => {
                // Part of the paused run: the re-run node goes now, its
                // descendants when the run resumes.
                if let Some(t) = &mut self.targets {
                    t.extend(set.iter().copied());
                }
                self.dispatch_if_ready(i).await;
            }
            _ => self.begin(Some(set.into_iter().collect()), false).await,
        }
    }

    /// A fresh run of node `id` and its ancestors: every record is reset
    /// (like `Run`), and only those nodes are dispatched.
    pub(super) async fn run_to(&mut self, id: &str) {
        if self.index(id).is_none() {
            return self
                .reject("run-to", format!("there is no node `{id}`"))
                .await;
        }
        if !self.in_flight.is_empty() || matches!(self.mode, Mode::Running) {
            return self.reject("run-to", "a run is already in progress").await;
        }
        if self.pending_plan.is_some() {
            self.apply_plan().await;
        }
        let Some(i) = self.index(id) else {
            return self
                .reject("run-to", format!("there is no node `{id}` any more"))
                .await;
        };
        let mut set: HashSet<usize> = self.comp.ancestors(i).into_iter().collect();
        set.insert(i);
        self.clean_slate().await;
        self.begin(Some(set), false).await;
    }

    /// Every record reset, and the run's totals: a fresh run starts from a
    /// clean slate, and the driver hears that every node that had a record
    /// is pending again.
    async fn clean_slate(&mut self) {
        for i in 0..self.records.len() {
            let had = self.records[i].status != NodeStatus::Pending;
            self.reset(i);
            if had {
                self.emit(Event::NodeStatus {
                    id: self.comp.nodes[i].id.clone(),
                    status: NodeStatus::Pending,
                    reason: None,
                })
                .await;
            }
        }
        self.completed.clear();
        self.compensations.clear();
        self.iterations
            .store(0, std::sync::atomic::Ordering::Relaxed);
        self.failed_step = None;
        self.cost_total = 0.0;
        self.tokens_total = 0;
    }

    pub(super) async fn pin(&mut self, id: &str) {
        let Some(i) = self.index(id) else {
            return self.reject("pin", format!("there is no node `{id}`")).await;
        };
        let node = &self.comp.nodes[i];
        let rec = &self.records[i];
        if node.for_each.is_some() {
            return self
                .reject(
                    "pin",
                    format!(
                        "node `{id}` fans out; a single `mock:` cannot stand for its iterations"
                    ),
                )
                .await;
        }
        if rec.status != NodeStatus::Ok {
            return self
                .reject("pin", format!("node `{id}` has no recorded output to pin"))
                .await;
        }
        // The fixture is what the tool returned, before `transform`, since a
        // mock is reshaped by the node's transform too.
        let result = match &node.mock {
            Some(Mock::Result(v)) => v.clone(),
            _ if rec.raw.is_null() => self.redactor.value(rec.output.tree()),
            _ => crate::mcp::output_of(&rec.raw).tree().clone(),
        };
        // The file with this mock written in is the node that ran: its
        // record does not go stale for it.
        if let Some(made) = self.made[i].as_mut() {
            made.pinned = Some(result.clone());
        }
        let mock = json!({ "result": result });
        let yaml = format!("mock:\n{}", indent_yaml(&mock["result"], "result"));
        self.emit(Event::Pinned {
            id: id.to_owned(),
            mock,
            yaml,
        })
        .await;
    }

    /// Marks every in-flight call cancelled (for `Cancel` and budget stops)
    /// and records why the run stops.
    pub(super) fn stop(&mut self, why: Stop) {
        if matches!(why, Stop::Cancel | Stop::Budget(_)) {
            self.run_cancel.cancel();
            for (_, token) in self.in_flight.values() {
                token.cancel();
            }
        }
        if self.stopping.is_none() || why == Stop::Cancel {
            self.stopping = Some(why);
        }
    }

    /// Adopts the pending plan. A node's record is stale when the node,
    /// or a `${var.X}` it reads, differs from what the record was made
    /// with, or a parent's record is stale or not the one it read; a stale
    /// record whose node is back to what it ran with (an edit undone) is
    /// fresh again, with its status. New nodes are pending.
    pub(super) async fn apply_plan(&mut self) {
        let Some(new) = self.pending_plan.take() else {
            return;
        };
        if let Some(vars) = self.pending_vars.take() {
            self.vars = Arc::new(vars.clone());
            self.cfg.vars = vars;
        }
        let old: HashMap<&str, usize> = self
            .comp
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.id.as_str(), i))
            .collect();
        let n = new.nodes.len();
        let mut records = vec![NodeRecord::default(); n];
        let mut made: Vec<Option<Made>> = vec![None; n];
        let mut gens = vec![0u64; n];
        let mut added = Vec::new();
        for (j, node) in new.nodes.iter().enumerate() {
            match old.get(node.id.as_str()) {
                Some(&i) => {
                    records[j] = self.records[i].clone();
                    made[j] = self.made[i].clone();
                    gens[j] = self.gens[i] + 1;
                }
                None => added.push(node.id.clone()),
            }
        }
        // In order, so each node's parents are decided first.
        let mut stale_set = vec![false; n];
        for &j in &new.order {
            let Some(m) = &made[j] else {
                continue;
            };
            let parent_moved = new.parents[j].iter().any(|&p| {
                let now = made[p].as_ref().map_or(0, |pm| pm.seq);
                let read = m
                    .parents
                    .iter()
                    .find(|(id, _)| *id == new.nodes[p].id)
                    .map_or(0, |(_, seq)| *seq);
                stale_set[p] || now != read
            });
            stale_set[j] = parent_moved || !ran_as(m, &new.nodes[j], &self.vars);
        }
        let mut stale = Vec::new();
        let mut fresh = Vec::new();
        for j in 0..n {
            let Some(m) = &made[j] else {
                continue;
            };
            if stale_set[j] {
                records[j].status = NodeStatus::Stale;
                stale.push(new.nodes[j].id.clone());
            } else if records[j].status == NodeStatus::Stale {
                records[j].status = m.status;
                fresh.push(new.nodes[j].id.clone());
            }
        }
        let removed: Vec<String> = self
            .comp
            .nodes
            .iter()
            .filter(|o| new.index_of(&o.id).is_none())
            .map(|o| o.id.clone())
            .collect();
        self.breakpoints.retain(|b| new.index_of(b).is_some());
        // The nodes that completed, in the order they did: a node fresh
        // again counts again.
        let mut completed: Vec<(u64, String)> = (0..n)
            .filter(|&j| records[j].status == NodeStatus::Ok)
            .filter_map(|j| Some((made[j].as_ref()?.seq, new.nodes[j].id.clone())))
            .collect();
        completed.sort_unstable();
        self.completed = completed.into_iter().map(|(_, id)| id).collect();
        self.records = records;
        self.made = made;
        self.gens = gens;
        self.ids = ids_of(&new);
        self.rank = rank_of(&new);
        self.rescan = true;
        self.comp = new;
        self.settled_prefix = 0;
        self.targets = None;
        self.released = None;
        self.paused_before = None;
        self.emit(Event::PlanReplaced {
            stale,
            fresh,
            added,
            removed,
        })
        .await;
    }
}

/// Whether `node`, reading `vars`, is what record `m` was made with: the
/// same definition (or the same with the `mock:` pinned from the record
/// written in) and the same value of every `${var.X}` it reads.
fn ran_as(m: &Made, node: &crate::file::model::Node, vars: &IndexMap<String, Value>) -> bool {
    let same = m.hash == node.hash
        || match (&m.pinned, &node.mock) {
            (Some(pin), Some(Mock::Result(mock))) if pin == mock => {
                let mut unpinned = node.clone();
                unpinned.mock = None;
                crate::file::loader::definition_hash(&unpinned) == m.hash
            }
            _ => false,
        };
    same && node.refs().all(|site| match &site.reference.root {
        reference::Root::Var(name) => m.vars.get(name) == vars.get(name),
        _ => true,
    })
}

/// A JSON value as the YAML block under `mock:` (JSON is valid YAML; the
/// value is written as an indented flow document).
pub(super) fn indent_yaml(v: &Value, key: &str) -> String {
    crate::file::write::block::entry(key, v, 2)
}
