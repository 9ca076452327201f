//! What a finished call changes: the node's record, the run's totals,
//! budget trips after the fact, and the trace and output when the run ends.

use super::*;

impl Actor {
    /// The time this run has spent paused, a pause under way included.
    fn paused(&self) -> Duration {
        self.paused_total + self.paused_since.map_or(Duration::ZERO, |at| at.elapsed())
    }

    /// The run's pauses so far, one still going counted up to now.
    fn pause_spans(&self) -> Vec<crate::run::trace::PauseSpan> {
        let mut out = self.pauses.clone();
        if let (Some(start), Some(at)) = (self.started, self.paused_since) {
            out.push(crate::run::trace::PauseSpan {
                at_ms: at.saturating_duration_since(start).as_millis() as u64,
                ms: at.elapsed().as_millis() as u64,
            });
        }
        out
    }

    /// Starts or stops the pause clock to match the run. Time paused is a
    /// person's, not the run's, and is kept out of its duration; but only
    /// time with nothing in flight is a pause: calls that go on after `p`,
    /// and the call a step makes, are the run's.
    pub(super) async fn settle_pause(&mut self) {
        let idle = self.mode == Mode::Paused && self.in_flight.is_empty();
        match (idle, self.paused_since, self.started) {
            (true, None, Some(start)) => {
                // Paused with nothing in flight: from the moment it paused
                // (what was said then); else from the last call's end, now.
                let now = self.idle_from.take().unwrap_or_else(Instant::now);
                self.paused_since = Some(now);
                let at_ms = now.saturating_duration_since(start).as_millis() as u64;
                self.emit(Event::Idle { at_ms }).await;
            }
            (false, Some(at), _) => {
                self.paused_since = None;
                self.paused_total += at.elapsed();
                let pause = crate::run::trace::PauseSpan {
                    at_ms: self.started.map_or(0, |start| {
                        at.saturating_duration_since(start).as_millis() as u64
                    }),
                    ms: at.elapsed().as_millis() as u64,
                };
                self.pauses.push(pause);
                self.emit(Event::Busy { pause }).await;
            }
            _ => {}
        }
    }

    pub(super) async fn trip(&mut self, cap: &str, detail: String) {
        if self.budget_tripped.is_some() {
            return;
        }
        self.budget_tripped = Some(cap.to_owned());
        self.emit(Event::BudgetTripped {
            cap: cap.to_owned(),
            detail,
        })
        .await;
        if self.cfg.on_budget == BudgetMode::Stop {
            self.stop(Stop::Budget(cap.to_owned()));
        }
    }

    /// Checks node `i`'s projected figures against every cap before it is
    /// dispatched; false when a cap fired and the run stops.
    pub(super) async fn within_budget(&mut self, i: usize, scope: &Snapshot) -> bool {
        let node = &self.comp.nodes[i];
        let projection = budget::project_node(
            &self.cfg.pricing,
            node,
            scope,
            budget::max_items(self.cfg.budget),
        );
        let caps = budget::Caps::of(node, self.cfg.budget, self.cfg.max_cost_per_call_usd);
        let spent = budget::Spent {
            cost_usd: self.cost_total,
            tokens: self.tokens_total,
            elapsed: self.started.map_or(Duration::ZERO, |s| s.elapsed()),
        };
        let id = node.id.clone();
        if let Some(b) = budget::breaches(&id, caps, spent, &projection)
            .into_iter()
            .next()
        {
            self.trip(&b.cap, b.detail.clone()).await;
            if self.stopping.is_some() && self.budget_blocked.is_none() {
                self.budget_blocked = Some((i, format!("budget cap `{}`: {}", b.cap, b.detail)));
            }
        }
        self.stopping.is_none()
    }

    pub(super) async fn node_done(&mut self, idx: usize, generation: u64, mut rec: NodeRecord) {
        if self.gens.get(idx) != Some(&generation) {
            return;
        }
        self.in_flight.remove(&idx);
        let node = &self.comp.nodes[idx];
        let id = node.id.clone();
        self.cost_total += rec.cost_usd;
        self.tokens_total += rec.tokens;
        let status = rec.status;
        // Per-call caps compare one call: a fan-out's figures are shared
        // out over its iterations.
        let calls = rec.iterations.len().max(1);
        let (cost, tokens) = (rec.cost_usd / calls as f64, rec.tokens / calls as u64);
        let on_error = node.on_error;
        // A failure the node lets pass is its output, so later nodes can
        // read `${id.error}` (Fibe binds `{error}` the same way).
        if status == NodeStatus::Failed && on_error == OnError::Continue && rec.output.is_null() {
            rec.output =
                Json::from_value(json!({ "error": rec.error.clone().unwrap_or_default() }));
        }
        let caps = (
            node.max_cost_per_call_usd
                .or(self.cfg.max_cost_per_call_usd),
            node.max_tokens_per_call,
        );
        // The record names what it called when it is made: an edit that
        // changes the node later leaves it saying what ran.
        stamp(&mut rec, node);
        self.records[idx] = rec;
        self.made[idx] = Some(self.made_now(idx, status));
        self.candidates.extend_from_slice(&self.comp.children[idx]);
        if status == NodeStatus::Ok {
            self.completed.push(id.clone());
        }
        self.emit(Event::NodeFinished {
            id: id.clone(),
            record: Box::new(self.shown(&self.records[idx])),
        })
        .await;
        // A step's call ended and the run stays paused: the driver hears
        // which node the next step runs.
        if self.mode == Mode::Paused
            && self.step_pause
            && self.in_flight.is_empty()
            && self.stopping.is_none()
            && let Some(next) = self.next_ready()
        {
            self.emit(Event::Paused {
                reason: PauseReason::Step,
                before: Some(self.comp.nodes[next].id.clone()),
            })
            .await;
        }
        if status == NodeStatus::Failed && on_error != OnError::Continue {
            if self.failed_step.is_none() {
                self.failed_step = Some(id.clone());
            }
            // A pipe stops at its first failure. In a DAG only the failed
            // node's descendants are skipped: independent branches run on.
            if self.comp.kind == Kind::Pipe {
                self.stop(Stop::Failure(id.clone()));
            }
        }
        if let Some(cap) = caps.0.filter(|c| cost > *c) {
            self.trip(
                "max_cost_per_call_usd",
                format!("a call of `{id}` cost ${cost:.4}, over its cap of ${cap:.4}"),
            )
            .await;
        }
        if let Some(cap) = caps.1.filter(|c| tokens > *c) {
            self.trip(
                "max_tokens_per_call",
                format!("a call of `{id}` used {tokens} tokens, over its cap of {cap}"),
            )
            .await;
        }
        let budget = self.cfg.budget;
        if let Some(max) = budget.max_cost_usd.filter(|m| self.cost_total > *m) {
            let total = self.cost_total;
            self.trip(
                "max_cost_usd",
                format!("the run cost ${total:.4}, over the cap of ${max:.4}"),
            )
            .await;
        }
        if let Some(max) = budget.max_tokens.filter(|m| self.tokens_total > *m) {
            let total = self.tokens_total;
            self.trip(
                "max_tokens",
                format!("the run used {total} tokens, over the cap of {max}"),
            )
            .await;
        }
    }

    pub(super) async fn finish(&mut self) {
        let blocked = self.budget_blocked.clone();
        let reason = match (&self.stopping, &blocked) {
            (Some(Stop::Cancel), _) => "the run was cancelled".to_owned(),
            // The gate stopped the run before a call: nothing was spent
            // over the cap, a projection would have been.
            (Some(Stop::Budget(cap)), Some((b, _))) => format!(
                "the run stopped before `{}`: budget cap `{cap}` would have been exceeded",
                self.comp.nodes[*b].id
            ),
            (Some(Stop::Budget(cap)), None) => format!("budget cap `{cap}` was exceeded"),
            (Some(Stop::Failure(id)), _) => format!("the run stopped after `{id}` failed"),
            (None, _) => "it was not reachable".to_owned(),
        };
        for i in 0..self.records.len() {
            if self.in_targets(i) && self.records[i].status == NodeStatus::Pending {
                // The blocked node says the sentence that decided it.
                let why = match &blocked {
                    Some((b, sentence)) if *b == i => format!("not called: {sentence}"),
                    _ => format!("not run: {reason}"),
                };
                self.set_skipped(i, why).await;
            }
        }
        let status = match (&self.stopping, &self.budget_tripped) {
            (Some(Stop::Cancel), _) => RunStatus::Cancelled,
            (_, Some(_)) if self.cfg.on_budget != BudgetMode::Warn => RunStatus::BudgetExceeded,
            _ => {
                let failed = self.comp.nodes.iter().zip(&self.records).any(|(n, r)| {
                    r.status == NodeStatus::Failed && n.on_error != OnError::Continue
                });
                if !failed {
                    RunStatus::Completed
                } else if self.records.iter().any(|r| r.status == NodeStatus::Ok) {
                    RunStatus::Partial
                } else {
                    RunStatus::Failed
                }
            }
        };
        // A failed or cancelled run undoes what completed (a saga), newest
        // first.
        if matches!(
            status,
            RunStatus::Failed | RunStatus::Partial | RunStatus::Cancelled
        ) {
            self.compensate().await;
        }
        // A pause under way ends with the run.
        self.set_mode(Mode::Finished);
        self.settle_pause().await;
        let trace = self.trace(status);
        self.last_trace = Some(trace.clone());
        self.targets = None;
        self.stopping = None;
        self.step_pending = false;
        self.emit(Event::RunFinished {
            status,
            trace: Box::new(trace),
        })
        .await;
    }

    /// The trace of the session as it stands.
    pub(super) fn trace(&self, status: RunStatus) -> Trace {
        let mut nodes = IndexMap::with_capacity(self.records.len());
        for (node, rec) in self.comp.nodes.iter().zip(&self.records) {
            let mut rec = rec.clone();
            // A node that ran keeps the tool its record names (the file
            // may call another one since); the others are named now.
            if rec.id.is_empty() {
                stamp(&mut rec, node);
            }
            nodes.insert(node.id.clone(), rec);
        }
        let output = self.output();
        let output_tokens = crate::cost::tokens::count_json(&output);
        let ran = self
            .records
            .iter()
            .any(|r| r.attempts > 0 || r.status == NodeStatus::Ok);
        let mut trace = Trace {
            run_id: self.run_id.clone(),
            file: self.cfg.file.clone(),
            composition: RunSummary {
                name: self.comp.name.clone(),
                started_at: self.started_at.clone(),
                case: self.cfg.case.clone(),
                ran,
                status,
                budget_tripped: self.budget_tripped.clone(),
                cost_total: self.cost_total,
                tokens_total: self.tokens_total,
                duration_ms: self.started.map_or(0, |s| {
                    s.elapsed().saturating_sub(self.paused()).as_millis() as u64
                }),
                paused_ms: self.paused().as_millis() as u64,
                pauses: self.pause_spans(),
                output_tokens,
                output_tokens_all: self.records.iter().map(|r| r.output_tokens).sum(),
            },
            vars: self
                .vars
                .iter()
                .map(|(k, v)| (k.clone(), self.redactor.value(v)))
                .collect(),
            nodes,
            completed_step_ids: self.completed.clone(),
            failed_step: self.failed_step.clone(),
            output,
            expect: Vec::new(),
            compensations: self.compensations.clone(),
            eval: self
                .comp
                .eval
                .names()
                .map(crate::run::trace::EvalRow::deferred)
                .collect(),
            eval_aggregate: Vec::new(),
            judged_from: None,
            eval_tools: IndexMap::new(),
            server_logs: self
                .caller
                .logs()
                .into_iter()
                .map(|(k, v)| (k, self.redactor.text(&v)))
                .collect(),
            server_protocols: self.caller.protocols(),
            durable: None,
        };
        // Assertions see what the servers really returned; only what is
        // shown or written out is masked.
        trace.check(&self.cfg.expect);
        if !self.redactor.is_empty() {
            for rec in trace.nodes.values_mut() {
                self.mask(rec);
            }
            trace.output = self.redactor.json(&trace.output);
            for row in &mut trace.expect {
                row.actual = self.redactor.value(&row.actual);
                row.matcher = self.redactor.value(&row.matcher);
                row.message = row.message.as_deref().map(|m| self.redactor.text(m));
            }
        }
        trace
    }

    /// `rec` as it may be shown or written out: outputs hold real values
    /// (later nodes read them), so secrets in them are masked here.
    pub(super) fn shown(&self, rec: &NodeRecord) -> NodeRecord {
        let mut rec = rec.clone();
        self.mask(&mut rec);
        rec
    }

    /// Masks the secrets in a record's outputs, in place.
    fn mask(&self, rec: &mut NodeRecord) {
        if self.redactor.is_empty() {
            return;
        }
        rec.output = self.redactor.json(&rec.output);
        for it in rec.iterations.iter_mut() {
            it.output = self.redactor.json(&it.output);
        }
    }

    pub(super) fn output(&self) -> Json {
        match &self.comp.output {
            Some(OutputSpec::Node { id, .. }) => self
                .index(id)
                .map_or_else(Json::null, |i| self.records[i].output.clone()),
            Some(OutputSpec::Assemble(p)) => {
                let mut nodes = Map::new();
                for (node, rec) in self.comp.nodes.iter().zip(&self.records) {
                    nodes.insert(node.id.clone(), rec.output.tree().clone());
                }
                Json::from_value(
                    p.run_one(&json!({ "nodes": nodes })).unwrap_or_else(
                        |e| json!({ "error": format!("output.assemble failed: {e}") }),
                    ),
                )
            }
            None => self
                .comp
                .order
                .last()
                .map_or_else(Json::null, |&i| self.records[i].output.clone()),
        }
    }
}

/// Names in `rec` the node it is of, and the tool and server it calls.
fn stamp(rec: &mut NodeRecord, node: &crate::file::model::Node) {
    rec.id.clone_from(&node.id);
    rec.tool.clone_from(&node.tool);
    rec.server.clone_from(&node.server);
}
