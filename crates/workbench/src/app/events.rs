//! What the workbench hears back: ticks, the preflight verdict, a session
//! that failed to start and the session's events, each turned into state
//! the panes draw and [`Effect`]s to carry out.

use super::*;
use pipewright_engine::run::events::PauseReason;

impl App {
    /// A message from a background task.
    pub fn on_message(&mut self, msg: crate::inbox::Message) -> Vec<Effect> {
        use crate::inbox::Message as M;
        match msg {
            M::Question {
                question, reply, ..
            }
            | M::DurableQuestion { question, reply } => {
                if let Some(i) = self.node_index(question.node.as_deref()) {
                    self.visuals[i].asking = true;
                    self.sync_live_of(i);
                }
                self.asks.push(question, reply);
            }
            M::Sampled { ticket, result } => self.asks.provided(ticket, result),
            M::Judged { result, again } => self.judged(result, again),
            M::DurableOpened { node } => self.durable_opened(node.as_deref()),
            M::DurableCall { node, ok, line } => self.durable_call(node.as_deref(), ok, line),
            M::DurableDone { result, source } => self.durable_done(result, &source),
            M::Tools { key, result } => return self.on_tools(key, result),
            M::Recording { generation } => self.on_recording(generation),
            M::RecordingWritten { result } => self.on_recording_written(result),
            M::Doctored { server, result } => self.on_doctored(&server, result),
        }
        Vec::new()
    }

    /// Called on every tick: animates, lets the editor validate and watch
    /// the file, and picks up the inspector's background work.
    pub fn on_tick(&mut self, now: Instant) -> Vec<Effect> {
        self.tick = self.tick.wrapping_add(1);
        let mut queue = Queue::default();
        self.editor.tick_into(now, &mut queue);
        let effects = self.apply(queue);
        self.inspector.poll();
        self.prune_questions();
        // The selected node's elapsed time moves while it runs.
        if self
            .dag
            .selected()
            .and_then(|i| self.visuals.get(i))
            .is_some_and(|v| v.status == NodeStatus::Running)
        {
            self.sync_live();
        }
        self.messages.fade(now);
        effects
    }

    /// Writes the recovery copy now (SIGTERM, SIGHUP): the editor's
    /// debounce is skipped by ticking it from the future.
    pub fn editor_flush_recovery(&mut self) {
        let _ = self.editor.tick(Instant::now() + Duration::from_secs(60));
    }

    /// Preflight ran on the connected servers' tool lists. Problems go to
    /// the editor's gutter at their nodes and nothing runs; destructive
    /// calls not yet allowed are asked about first.
    pub fn on_preflight(&mut self, report: &Preflight) -> Preflighted {
        if !report.ok() {
            let mut diags = self.editor.diagnostics().to_vec();
            for p in &report.problems {
                if !diags.contains(p) {
                    diags.push(p.clone());
                }
            }
            let n = report.problems.len();
            self.editor.set_diagnostics(diags);
            self.on_start_failed(&format!(
                "preflight: {n} problem(s) (see the editor); nothing was called"
            ));
            return Preflighted::Stop;
        }
        let new: Vec<String> = report
            .destructive
            .iter()
            .map(|d| format!("{}→{}", d.node, d.tool))
            .filter(|k| !self.session.allows(k))
            .collect();
        if new.is_empty() {
            return Preflighted::Go;
        }
        let mut body = vec![
            "This run calls tools their servers mark destructive:".to_owned(),
            String::new(),
        ];
        for d in &report.destructive {
            body.push(format!(
                "  node {:<16} {} on server {}",
                d.node, d.tool, d.server
            ));
        }
        body.push(String::new());
        body.push("y: run them   Esc: do not run".to_owned());
        self.overlay = Some(Overlay::ConfirmDestructive(
            overlay::ConfirmDestructive::new(new, body),
        ));
        Preflighted::Ask
    }

    /// Whether the selected node has no record yet (its Args preview
    /// depends on the parents' records).
    fn selected_waits(&self) -> bool {
        self.dag
            .selected()
            .and_then(|i| self.visuals.get(i))
            .is_some_and(|v| v.record.is_none())
    }

    /// After a run with a failure: the first failed node (in run order) is
    /// selected and its Error tab shown, unless a failed node already is.
    fn show_first_failure(&mut self) {
        let Some(comp) = self.comp.clone() else {
            return;
        };
        let failed = |i: usize| {
            self.visuals
                .get(i)
                .is_some_and(|v| v.status == NodeStatus::Failed)
        };
        if self.dag.selected().is_some_and(failed) {
            self.inspector.set_tab(crate::inspector::Tab::Error);
            return;
        }
        if let Some(&i) = comp.order.iter().find(|&&i| failed(i)) {
            // The editor's cursor stays where the person is typing.
            self.select(Some(i), self.focus != Focus::Editor);
            self.inspector.set_tab(crate::inspector::Tab::Error);
        }
    }

    /// After a budget stop: the node the gate kept from being called is
    /// selected, its Error tab saying the sentence that decided it.
    fn show_budget_block(&mut self) {
        let blocked = self.visuals.iter().position(|v| {
            v.record
                .as_ref()
                .and_then(|r| r.skip_reason.as_deref())
                .is_some_and(|why| why.starts_with("not called: budget cap"))
        });
        if let Some(i) = blocked {
            self.select(Some(i), self.focus != Focus::Editor);
            self.inspector.set_tab(crate::inspector::Tab::Error);
        }
    }

    /// The session could not start (a server did not answer, …).
    pub fn on_start_failed(&mut self, error: &str) {
        self.session.close();
        self.run = RunState::Idle;
        self.say(error.to_owned(), true);
        // The nodes that did not run say why on their Error tab, and the
        // failing server's error is shown there whole.
        self.start_error = Some(error.to_owned());
        if self.inspector.tab() != crate::inspector::Tab::Error
            && self
                .dag
                .selected()
                .and_then(|i| self.visuals.get(i))
                .is_some_and(|v| v.record.is_none())
        {
            self.inspector.set_tab(crate::inspector::Tab::Error);
        }
        self.sync_live();
    }

    /// The session could not start because server `server` did not
    /// (`None`: before any server was reached, say a setting that did not
    /// resolve): besides what [`on_start_failed`](Self::on_start_failed)
    /// does, the nodes that would have called it are marked ✗, and their
    /// header says why, until the next run starts.
    pub fn on_server_failed(&mut self, server: Option<&str>, error: &str) {
        self.on_start_failed(error);
        let Some(comp) = self.comp.clone() else {
            return;
        };
        for (node, v) in comp.nodes.iter().zip(self.visuals.iter_mut()) {
            // A node that names no server calls the default one; a mocked
            // node calls none.
            let calls = match (server, node.server.as_deref()) {
                (Some(failed), Some(its)) => failed == its,
                _ => true,
            };
            if calls && node.mock.is_none() && v.record.is_none() {
                v.status = NodeStatus::Failed;
            }
        }
        self.not_started = Some(match server {
            Some(s) => format!("server {s} could not start"),
            None => "the session could not start".to_owned(),
        });
        if let Some(s) = server {
            self.failed_server = Some(s.to_owned());
            let key = self.keymap.label(crate::keys::Action::Messages);
            self.note(format!(
                "server {s} could not start: {key} then D runs the doctor's checklist for it"
            ));
        }
        self.sync_live();
    }

    /// A new run (or a new try at one): the nodes marked as not started
    /// are pending again.
    pub(crate) fn clear_not_started(&mut self) {
        if self.not_started.take().is_some() {
            for v in &mut self.visuals {
                if v.record.is_none() && v.status == NodeStatus::Failed {
                    v.status = NodeStatus::Pending;
                }
            }
        }
    }

    /// A session event: the panes redraw from the state it leaves (the
    /// live state behind a saved run on screen, when one is).
    pub fn on_session(&mut self, ev: Event) -> Vec<Effect> {
        self.behind_viewing(|app| app.on_live_session(ev))
    }

    fn on_live_session(&mut self, ev: Event) -> Vec<Effect> {
        let idx = |app: &App, id: &str| app.comp.as_ref().and_then(|c| c.index_of(id));
        match ev {
            Event::RunStarted {
                composition,
                case,
                nodes,
            } => {
                let case = case.map(|c| format!(" [{c}]")).unwrap_or_default();
                self.note(format!("run started: {composition}{case}, {nodes} node(s)"));
                self.run = RunState::Running;
                self.start_error = None;
                self.clear_not_started();
                self.run_source = self.plan_source.clone();
                self.timeline.start();
                for v in &mut self.visuals {
                    v.paused_before = false;
                    v.started_ms = None;
                    v.changed = false;
                }
                self.refresh_inspector();
            }
            Event::NodeStatus { id, status, reason } => {
                if let Some(i) = idx(self, &id) {
                    let v = &mut self.visuals[i];
                    v.status = status;
                    if status == NodeStatus::Pending {
                        // A clean slate: nothing of an earlier run shows.
                        v.progress = None;
                        v.failed_iterations = 0;
                        v.record = None;
                        v.note = None;
                        v.logs.clear();
                        v.started_ms = None;
                        v.live_args = None;
                        v.task = None;
                        v.changed = false;
                        v.iterations.clear();
                    }
                    if status == NodeStatus::Skipped
                        && let Some(r) = reason
                    {
                        v.record = Some(Arc::new(NodeRecord {
                            status: NodeStatus::Skipped,
                            skip_reason: Some(r),
                            ..NodeRecord::default()
                        }));
                    }
                    if self.dag.selected() == Some(i) {
                        self.refresh_inspector();
                    }
                }
            }
            Event::NodeStarted { id, args, .. } => {
                let at = self.timeline.elapsed_ms();
                if let Some(i) = idx(self, &id) {
                    let v = &mut self.visuals[i];
                    v.status = NodeStatus::Running;
                    v.paused_before = false;
                    v.record = None;
                    if args.is_some() {
                        v.live_args = args;
                    }
                    // A retry keeps the first attempt's start.
                    if v.started_ms.is_none() {
                        v.started_ms = at;
                    }
                    if self.dag.selected() == Some(i) {
                        self.refresh_inspector();
                    }
                }
            }
            Event::Compensated { id, ok, error } => match (ok, error) {
                (true, _) => self.say(format!("{id}: undone (compensate)"), false),
                (false, e) => self.say(
                    format!("{id}: compensate failed: {}", e.unwrap_or_default()),
                    true,
                ),
            },
            Event::Retrying { id, attempt, error } => {
                self.say_about(
                    &id,
                    format!("{id}: attempt {attempt} failed, retrying: {error}"),
                    false,
                );
            }
            Event::IterationStarted { id, index, total } => {
                let now = self.now_ms();
                if let Some(i) = idx(self, &id) {
                    let v = &mut self.visuals[i];
                    if v.progress.is_none() {
                        v.progress = Some((0, total));
                    }
                    v.started_ms.get_or_insert(now);
                    v.iterations.retain(|it| it.index != index);
                    v.iterations.push(crate::state::LiveIteration {
                        index,
                        status: NodeStatus::Running,
                        started_ms: now,
                        ended_ms: None,
                    });
                    v.iterations.sort_by_key(|it| it.index);
                    self.sync_live_of(i);
                }
            }
            Event::Iteration {
                id,
                index,
                done,
                total,
                status,
            } => {
                let now = self.now_ms();
                if let Some(i) = idx(self, &id) {
                    let v = &mut self.visuals[i];
                    v.progress = Some((done, total));
                    if status == NodeStatus::Failed {
                        v.failed_iterations += 1;
                    }
                    if let Some(it) = v.iterations.iter_mut().find(|it| it.index == index) {
                        it.status = status;
                        it.ended_ms = Some(now);
                    }
                    self.sync_live_of(i);
                }
            }
            Event::Progress { id, note, .. } => {
                if let Some(i) = idx(self, &id) {
                    self.visuals[i].note = Some(note);
                    self.sync_live_of(i);
                }
            }
            Event::ServerLog { id, line } => {
                if let Some(i) = idx(self, &id) {
                    let logs = &mut self.visuals[i].logs;
                    if logs.len() >= pipewright_engine::mcp::human::MAX_KEPT {
                        logs.remove(0);
                    }
                    logs.push(line);
                    self.sync_live_of(i);
                }
            }
            Event::Answered { id, kind, action } => {
                self.say(format!("{id}: {kind} answered: {action}"), false);
            }
            Event::Task { id, note, .. } => {
                self.say_about(&id, format!("{id}: {}", note.text()), false);
                if let Some(i) = idx(self, &id) {
                    let task = self.visuals[i].task.get_or_insert_default();
                    if task.id != note.task {
                        *task = Default::default();
                    }
                    task.note(&note);
                    self.sync_live_of(i);
                }
            }
            Event::ToolsChanged { added, removed } => {
                let list = |v: &[String]| {
                    if v.is_empty() {
                        "none".to_owned()
                    } else {
                        v.join(", ")
                    }
                };
                self.say(
                    format!(
                        "a server's tool list changed: added {}; removed {}",
                        list(&added),
                        list(&removed)
                    ),
                    !removed.is_empty(),
                );
                // Preflight as you type checks against the new lists.
                return self.tools_changed();
            }
            Event::NodeFinished { id, record } => {
                if let Some(i) = idx(self, &id) {
                    let v = &mut self.visuals[i];
                    v.status = record.status;
                    v.asking = false;
                    v.live_args = None;
                    if let Some(p) = crate::state::fan_out_progress(&record) {
                        v.progress = Some(p);
                        v.failed_iterations = crate::state::failed_iterations(&record);
                    }
                    let ok = record.status == NodeStatus::Ok;
                    v.record = Some(Arc::from(record));
                    if self.dag.selected() == Some(i) {
                        // A node that now succeeded has no error to show.
                        if ok && self.inspector.tab() == crate::inspector::Tab::Error {
                            self.inspector.set_tab(crate::inspector::Tab::Output);
                        }
                        self.refresh_inspector();
                    } else if self.selected_waits() {
                        // The selected node's preview reads this run's
                        // parents: it changes as they finish.
                        self.refresh_inspector();
                    }
                }
                self.messages.drop_about(Some(&id));
                self.node_ended(&id);
            }
            Event::Paused { reason, before } => {
                for v in &mut self.visuals {
                    v.paused_before = false;
                }
                if let Some(b) = &before
                    && let Some(i) = idx(self, b)
                {
                    self.visuals[i].paused_before = true;
                }
                // `p`'s answer is shown too; the others are in the badge.
                if let Some(line) = self.paused_line(reason, before.as_deref()) {
                    if reason == PauseReason::User {
                        self.say(line, false);
                    } else {
                        self.note(line);
                    }
                }
                self.run = RunState::Paused { reason, before };
                self.refresh_inspector();
            }
            Event::Resumed => {
                for v in &mut self.visuals {
                    v.paused_before = false;
                }
                // A step goes on to pause again: its next pause says so.
                if matches!(
                    self.run,
                    RunState::Paused {
                        reason: PauseReason::User | PauseReason::Breakpoint,
                        ..
                    }
                ) {
                    self.note("resumed");
                }
                self.run = RunState::Running;
            }
            // The timeline's gaps are the session's pauses: time paused
            // with nothing in flight.
            Event::Idle { at_ms } => self.timeline.idle(at_ms),
            Event::Busy { pause } => self.timeline.busy(pause),
            Event::Breakpoint { id, on } => {
                if let Some(i) = idx(self, &id) {
                    self.visuals[i].breakpoint = on;
                }
                if on {
                    self.breakpoints.insert(id);
                } else {
                    self.breakpoints.remove(&id);
                }
            }
            Event::PlanReplaced { stale, fresh, .. } => {
                for id in stale {
                    if let Some(i) = idx(self, &id) {
                        self.visuals[i].status = NodeStatus::Stale;
                    }
                }
                // Back to what they ran with (an edit undone): their
                // records count again.
                for id in fresh {
                    if let Some(i) = idx(self, &id) {
                        let v = &mut self.visuals[i];
                        if let Some(r) = &v.record {
                            v.status = r.status;
                        }
                    }
                }
                if !matches!(self.run, RunState::Running) {
                    self.refresh_inspector();
                }
            }
            Event::Pinned { id, yaml, .. } => self.write_pin(&id, &yaml),
            Event::BudgetTripped { cap, detail } => {
                self.say(format!("budget: {cap} tripped: {detail}"), true);
            }
            Event::Rejected { command, reason } => {
                self.say(format!("{command}: {reason}"), true);
            }
            Event::RunFinished { status, trace } => {
                let ok = trace
                    .nodes
                    .values()
                    .filter(|n| n.status == NodeStatus::Ok)
                    .count();
                self.note(format!(
                    "run {}: {ok}/{} ok in {} (run {})",
                    status.phrase(),
                    trace.nodes.len(),
                    crate::inspector::text::duration_text(trace.composition.duration_ms),
                    trace.run_id
                ));
                self.run = RunState::Finished(status);
                self.messages.drop_about(None);
                for v in &mut self.visuals {
                    v.paused_before = false;
                    v.live_args = None;
                }
                self.show_first_failure();
                if status == RunStatus::BudgetExceeded {
                    self.show_budget_block();
                }
                self.refresh_inspector();
                let mut trace = trace;
                let judging = self.judge_finished(&mut trace);
                self.trace = Some((*trace).clone());
                let next = self.record_result(&trace);
                let mut effects = vec![Effect::SaveTrace(trace)];
                effects.extend(judging);
                effects.extend(next);
                return effects;
            }
        }
        Vec::new()
    }

    /// The Messages line for a pause: what it means and the key that
    /// goes on. A step's first pause (its call just sent) says nothing:
    /// the next one names the node it stops before.
    fn paused_line(&self, reason: PauseReason, before: Option<&str>) -> Option<String> {
        let go = self.keymap.label(Action::Continue);
        let step = self.keymap.label(Action::Step);
        Some(match (reason, before) {
            (PauseReason::User, _) => {
                format!("paused: calls in flight finish, nothing new starts ({go} continues)")
            }
            (PauseReason::Breakpoint, Some(b)) => {
                format!("at breakpoint `{b}`: it has not run ({step} runs it, {go} continues)")
            }
            (PauseReason::Step, Some(b)) => {
                format!("step: next is `{b}` ({step} runs it, {go} continues)")
            }
            (_, None) => return None,
        })
    }
}
