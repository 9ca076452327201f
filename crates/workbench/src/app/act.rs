//! What an action does (its key, or a palette row): runs and steps sent to
//! the session (started first when none is open), breakpoints, the views
//! and overlays it opens, and the refusals it says instead.

use super::*;

impl App {
    /// Carries out an action.
    pub fn act(&mut self, action: Action) -> Vec<Effect> {
        let sel = self.selected_node_id();
        // A saved run open read-only: what would change the live plan or
        // its run is refused in a sentence, not done behind the screen.
        if let Some(v) = &self.viewing {
            let what = match action {
                Action::Breakpoint => Some("breakpoints are set"),
                Action::Rerun | Action::RerunFrom => Some("nodes are re-run"),
                Action::Skip => Some("nodes are skipped"),
                Action::Pin => Some("outputs are pinned as mocks"),
                _ => None,
            };
            if let Some(what) = what {
                let id = v.entry.id.clone();
                self.say(
                    format!(
                        "run {id} is open read-only: {what} on the live run (Esc in the DAG goes back to it)"
                    ),
                    true,
                );
                return Vec::new();
            }
        }
        match action {
            Action::Run => self.command(Command::Run, true),
            Action::Step => self.command(Command::Step, true),
            Action::Continue => match self.run {
                RunState::Paused { .. } => self.command(Command::Resume, false),
                RunState::Idle | RunState::Finished(_) => self.command(Command::Run, true),
                _ => Vec::new(),
            },
            Action::Pause => self.command(Command::Pause, false),
            Action::Cancel if self.cancel_durable() => Vec::new(),
            Action::Cancel => self.command(Command::Cancel, false),
            Action::Breakpoint => {
                let Some(id) = sel else {
                    return self.no_selection();
                };
                let on = !self.breakpoints.remove(&id);
                if on {
                    self.breakpoints.insert(id.clone());
                }
                if let Some(i) = self.dag.selected()
                    && let Some(v) = self.visuals.get_mut(i)
                {
                    v.breakpoint = on;
                }
                if self.session.is_open() {
                    vec![Effect::Send(Command::ToggleBreakpoint(id))]
                } else {
                    Vec::new()
                }
            }
            Action::Rerun | Action::RerunFrom | Action::Skip | Action::Pin => {
                let Some(id) = sel else {
                    return self.no_selection();
                };
                let cmd = match action {
                    Action::Rerun => Command::Rerun(id),
                    Action::RerunFrom => Command::RerunFrom(id),
                    Action::Skip => Command::Skip(id),
                    _ => Command::Pin(id),
                };
                let start = matches!(cmd, Command::Rerun(_) | Command::RerunFrom(_));
                self.command(cmd, start)
            }
            Action::Timeline => {
                self.timeline.toggle();
                self.focus = Focus::Dag;
                Vec::new()
            }
            Action::History => {
                self.open_history();
                Vec::new()
            }
            Action::Results => {
                self.overlay = Some(self.results_overlay());
                Vec::new()
            }
            Action::Judge => self.judge_on_screen(),
            Action::RunCases => self.run_cases(),
            Action::NextCase => self.next_case(),
            Action::Messages => {
                self.overlay = Some(Overlay::Messages(
                    overlay::MessagesPane::new().with_doctor(self.failed_server.clone()),
                ));
                Vec::new()
            }
            Action::Zoom => {
                self.zoom = !self.zoom;
                Vec::new()
            }
            Action::Wrap => {
                let on = !self.inspector.wrap();
                self.inspector.set_wrap(on);
                self.editor.set_wrap(on);
                let what = if on {
                    "wrap on: long lines continue on the next rows"
                } else {
                    "wrap off: long lines are cut (scroll sideways)"
                };
                self.say(what, false);
                Vec::new()
            }
            Action::Questions => {
                if self.asks.is_empty() {
                    self.say("no server is asking anything now", false);
                } else {
                    self.asks.unhide();
                }
                Vec::new()
            }
            Action::QuickFix => self.quick_fix(),
            Action::Yank => self.yank(false),
            Action::YankPath => self.yank(true),
            Action::Complete => self.complete_action(),
            Action::WritePipeline => self.write_recording(),
            Action::DryRun | Action::Estimate => {
                self.overlay = Some(self.plan_overlay(action == Action::Estimate));
                Vec::new()
            }
            Action::NextPane | Action::PrevPane => {
                let order = [Focus::Editor, Focus::Dag, Focus::Inspector];
                let at = order.iter().position(|f| *f == self.focus).unwrap_or(0);
                let step = if action == Action::NextPane { 1 } else { 2 };
                self.focus = order[(at + step) % 3];
                Vec::new()
            }
            Action::Save => {
                match self.editor.save() {
                    Ok(()) => self.say(format!("saved {}", self.editor.path().display()), false),
                    Err(e) => self.say(
                        format!("could not save {}: {e}", self.editor.path().display()),
                        true,
                    ),
                }
                Vec::new()
            }
            Action::ExternalEditor => vec![Effect::ExternalEditor],
            Action::Palette => {
                self.overlay = Some(Overlay::Palette(Palette::new(self.palette_items())));
                Vec::new()
            }
            Action::Help => {
                self.overlay = Some(Overlay::Help(overlay::Help::default()));
                Vec::new()
            }
            // The modal's keys act only in a server's question.
            Action::AskNextField
            | Action::AskPrevField
            | Action::AskChoose
            | Action::AskChooseBack
            | Action::AskAccept
            | Action::AskSend
            | Action::AskProvider
            | Action::AskOpenUrl
            | Action::AskCopyUrl
            | Action::AskDecline
            | Action::AskCancel
            | Action::AskHide => {
                self.say("no server is asking anything now", false);
                Vec::new()
            }
            Action::Quit => {
                let running = self.run_in_progress();
                let unsaved = self.editor.is_dirty();
                if running || unsaved {
                    self.overlay = Some(Overlay::ConfirmQuit(overlay::ConfirmQuit::new(
                        unsaved, running,
                    )));
                    Vec::new()
                } else {
                    self.quit = true;
                    vec![Effect::Quit]
                }
            }
        }
    }

    /// "the file has 2 error(s); the first, at 7:12: …", for refusals.
    pub(super) fn errors_sentence(&self) -> String {
        use pipewright_engine::diag::Severity;
        let first = self
            .editor
            .diagnostics()
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .min_by_key(|d| d.span.start);
        match first {
            Some(d) => format!(
                "the file has {} error(s), the first at line {}, column {}: {} (fix them to run)",
                self.errors, d.span.start.line, d.span.start.col, d.message
            ),
            None => format!("the file has {} error(s); fix them to run", self.errors),
        }
    }

    /// Whether a parent of node `id` has no usable record (never ran in
    /// this session, or the run was reset).
    pub(super) fn parents_missing(&self, id: &str) -> bool {
        let Some(comp) = &self.comp else {
            return false;
        };
        let Some(i) = comp.index_of(id) else {
            return false;
        };
        if !self.session.is_open() {
            // A new session has no records at all.
            return true;
        }
        comp.parents[i].iter().any(|&p| {
            self.visuals.get(p).is_none_or(|v| {
                v.record.is_none() || !(v.status.is_terminal() || v.status == NodeStatus::Stale)
            })
        })
    }

    pub(crate) fn no_selection(&mut self) -> Vec<Effect> {
        if self.comp.is_none() {
            self.say(
                "no plan yet: the file does not load (i edits it; m shows every message)",
                true,
            );
        } else {
            self.say("select a node first (arrows in the DAG)", true);
        }
        Vec::new()
    }

    pub(crate) fn selected_node_id(&self) -> Option<String> {
        let comp = self.comp.as_ref()?;
        Some(comp.nodes.get(self.dag.selected()?)?.id.clone())
    }

    /// Sends `cmd` to the session, starting one first when `start` allows.
    /// A command that runs something runs the buffer as it is now: an edit
    /// the debounced validation has not caught up with is validated first
    /// (and its plan adopted, or its errors refuse the run).
    pub(crate) fn command(&mut self, cmd: Command, start: bool) -> Vec<Effect> {
        let runs_something = matches!(
            cmd,
            Command::Run
                | Command::Step
                | Command::Resume
                | Command::Rerun(_)
                | Command::RerunFrom(_)
                | Command::RunTo(_)
        );
        if self.durable.is_some() && !matches!(cmd, Command::Cancel) {
            let k = self.keymap.label(Action::Cancel);
            self.say(
                format!(
                    "a durable run is being followed here: it runs in Restate ({k} cancels it)"
                ),
                true,
            );
            return Vec::new();
        }
        let mut effects = if runs_something {
            self.catch_up()
        } else {
            Vec::new()
        };
        if runs_something && self.viewing.is_none() {
            self.say_where_runs_go();
        }
        if runs_something && self.viewing.is_none() && self.errors == 0 {
            // Checked again on the vars of the case this run uses.
            effects.extend(self.live_preflight());
            if self.preflight_refuses() {
                return effects;
            }
        }
        effects.extend(self.send_command(cmd, start, runs_something));
        effects
    }

    fn send_command(&mut self, cmd: Command, start: bool, runs_something: bool) -> Vec<Effect> {
        if runs_something && self.errors > 0 && self.viewing.is_none() {
            let why = self.errors_sentence();
            self.say(format!("not run: {why}"), true);
            return Vec::new();
        }
        if self.refused_below_stale(&cmd) {
            return Vec::new();
        }
        // A node whose parents have no record in this session cannot be
        // re-run on them: it runs with its ancestors, and nothing
        // downstream.
        let cmd = match cmd {
            Command::Rerun(id) | Command::RerunFrom(id)
                if self.viewing.is_none()
                    && !self.run_in_progress()
                    && self.parents_missing(&id) =>
            {
                let alone = self
                    .comp
                    .as_ref()
                    .and_then(|c| c.index_of(&id).map(|i| c.parents[i].is_empty()))
                    .unwrap_or(true);
                let text = if alone {
                    format!("running `{id}` on its own (nothing downstream)")
                } else {
                    format!(
                        "`{id}` has no recorded parents yet: running its ancestors, then `{id}` (nothing downstream)"
                    )
                };
                self.say(text, false);
                Command::RunTo(id)
            }
            other => other,
        };
        if let Some(v) = &self.viewing {
            let id = v.entry.id.clone();
            self.say(
                format!(
                    "run {id} is open read-only: Esc (in the DAG) returns to the live workbench; in History (H) F5 restores its file and runs it"
                ),
                true,
            );
            return Vec::new();
        }
        if matches!(cmd, Command::Run | Command::RunTo(_)) {
            self.trace = None;
        }
        if self.session.is_open() {
            if let (Command::Rerun(id) | Command::RerunFrom(id), RunState::Paused { .. }) =
                (&cmd, &self.run)
            {
                let go = self.keymap.label(Action::Continue);
                let after = match cmd {
                    Command::Rerun(_) => String::new(),
                    _ => format!("; what follows it runs when the run goes on ({go})"),
                };
                self.say(format!("re-running `{id}` in the paused run{after}"), false);
            }
            return vec![Effect::Send(cmd)];
        }
        if !start {
            self.say("nothing is running (F5 runs, F10 steps)", true);
            return Vec::new();
        }
        // Fibe's `dry_run: true`: plan, call nothing.
        if self.pipeline.as_ref().is_some_and(|p| p.dry_run) {
            self.overlay = Some(self.plan_overlay(false));
            self.say(
                "the file says `dry_run: true`: this is the plan, nothing is called (remove it to run)",
                false,
            );
            return Vec::new();
        }
        if self.errors > 0 && self.pipeline.is_none() {
            let why = self.errors_sentence();
            self.say(format!("not run: {why}"), true);
            return Vec::new();
        }
        let (Some(p), Some(c)) = (self.pipeline.clone(), self.comp.clone()) else {
            self.say("no valid plan yet", true);
            return Vec::new();
        };
        let then = vec![cmd];
        self.session.started(session_key(&p, &c));
        self.run = RunState::Connecting;
        self.clear_not_started();
        let cfg = Box::new(self.session_config(&p, &c));
        vec![Effect::Start {
            pipeline: p,
            comp: c,
            cfg,
            breakpoints: self.breakpoints.iter().cloned().collect(),
            then,
        }]
    }

    /// Opened with `--on restate://…`: the run keys still run here (the
    /// edit, run, look loop needs no saved file and no worker); the first
    /// of them says so, and how to run on Restate.
    fn say_where_runs_go(&mut self) {
        let Some(restate) = &self.opts.restate else {
            return;
        };
        if std::mem::replace(&mut self.said_where, true) {
            return;
        }
        let run = self.keymap.label(Action::Run);
        let palette = self.keymap.label(Action::Palette);
        self.say(
            format!(
                "{run} runs here, in this workbench; `{palette} durable run` runs the saved file on {}",
                restate.on
            ),
            false,
        );
    }

    /// The dry run (`d`, `e`) with preflight's verdict, as `plan` gives
    /// it. Without the lists (not come yet, or a server not reached) F5
    /// checks after connecting, as before.
    pub(super) fn plan_overlay(&self, estimate: bool) -> Overlay {
        match self.plan_model() {
            Some(plan) => {
                let file = self.opts.file.display().to_string();
                let mut view = overlay::PlanView::new(&file, plan, estimate);
                if let Some(report) = self.tools.report() {
                    view.with_preflight(report, &file, self.plan_source.as_deref());
                }
                Overlay::Plan(Box::new(view))
            }
            None => Overlay::text(
                "plan".into(),
                vec!["no valid plan: fix the file's errors first".into()],
            ),
        }
    }

    /// A key the focused pane and the keymap left alone: the status line
    /// says so, instead of nothing happening. A chord the editor knows
    /// (Ctrl-Z, Ctrl-A …) says that it works there.
    pub(super) fn unbound(&mut self, key: KeyEvent) {
        let KeyCode::Char(c) = key.code else {
            return;
        };
        let help = self.keymap.label(Action::Help);
        let palette = self.keymap.label(Action::Palette);
        let chord = key.modifiers - KeyModifiers::SHIFT;
        if !chord.is_empty() {
            let name = crate::keys::Key::from(key).to_string();
            let editor = match c.to_ascii_lowercase() {
                _ if chord != KeyModifiers::CONTROL => None,
                'z' => Some("undoes"),
                'y' => Some("redoes"),
                'a' => Some("selects all"),
                'f' => Some("finds"),
                'g' => Some("goes to a line"),
                'x' => Some("cuts"),
                'v' => Some("pastes"),
                _ => None,
            };
            let text = match editor {
                Some(what) => {
                    format!("{name} {what} in the editor (i edits the file); here it does nothing")
                }
                None => format!(
                    "{name} does nothing here: {help} lists the keys, {palette} finds a command"
                ),
            };
            self.say(text, false);
            return;
        }
        let text = if c == '/' {
            "/ searches in the inspector's Output (a jq filter), Raw and Logs tabs, the help, Messages and History"
                .to_owned()
        } else {
            format!("`{c}` does nothing here: {help} lists the keys, {palette} finds a command")
        };
        self.say(text, false);
    }
}
