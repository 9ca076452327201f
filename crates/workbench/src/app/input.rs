//! The workbench's input: keys, mouse and paste become actions, actions
//! become state changes and [`Effect`]s, and overlays (palette, plan,
//! questions) take their keys first.

use super::*;
use crate::dag::DagEffect;
use crate::editor::keys::EditorEffect;
use crate::inspector::keys::InspectorEffect;
use crate::keys::Key;
use crate::messages::{PaneKey, pane_key};

impl App {
    /// A key press.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        // The status line says what the last action did; the next one
        // clears it, so it never shows something no longer true.
        self.messages.status = None;
        if self.asks.is_empty() {
            self.asks.hidden = false;
        }
        // A server's question takes the keys while it is shown, but for
        // the two that leave it: hide it (to look at the nodes first) and
        // quit.
        if self.asks.shown() {
            if self.keymap.modal_action(&key, false) == Some(Action::AskHide) {
                self.asks.hidden = true;
                let k = self.keymap.label(Action::Questions);
                self.say(
                    format!("the question waits (its node shows ?): {k} brings it back"),
                    false,
                );
                return Vec::new();
            }
            if self.keymap.action(&key, true) == Some(Action::Quit) {
                self.asks.hidden = true;
                return self.act(Action::Quit);
            }
            return self.ask_key(key);
        }
        if let Some(mut ov) = self.overlay.take() {
            if self.overlay_find_key(&mut ov, key).is_some() {
                self.overlay = Some(ov);
                return Vec::new();
            }
            let effects = self.on_overlay_key(ov, key);
            if self.overlay.is_none() {
                self.overlay_find = None;
            }
            return effects;
        }
        // A saved run on screen is read-only: the editor's place shows its
        // file, and keys never reach the buffer hidden behind it.
        if self.viewing.is_some() && self.focus == Focus::Editor {
            self.focus = Focus::Dag;
        }
        let in_editor = self.focus == Focus::Editor;
        if in_editor
            && !self.editor.recovery_pending()
            && let Some(effects) = self.completion_key(key)
        {
            return effects;
        }
        let action = self.keymap.action(&key, in_editor);
        // No plan yet (a new or broken file): a letter in the DAG is not
        // a run command; it is most likely text meant for the editor.
        if self.focus == Focus::Dag
            && self.comp.is_none()
            && matches!(key.code, KeyCode::Char(_))
            && !Key::from(key).is_global()
            && !matches!(
                action,
                Some(
                    Action::Help
                        | Action::Palette
                        | Action::Quit
                        | Action::Messages
                        | Action::History
                )
            )
        {
            let _ = self.dag_key(key);
            return Vec::new();
        }
        // The pane gets the key first unless it is a global binding; the
        // inspector's filter box takes letters while it is open. A key the
        // pane took is done: it is not handled a second time below.
        if let Some(a) = action {
            self.editor.completion = None;
            if in_editor || !self.pane_wants(key) {
                return self.act(a);
            }
            return Vec::new();
        }
        match self.focus {
            Focus::Editor => {
                let effect = self.editor.on_key(key);
                match effect {
                    EditorEffect::Leave => {
                        self.focus = Focus::Dag;
                        return Vec::new();
                    }
                    EditorEffect::Typed | EditorEffect::Answered if key.code != KeyCode::Esc => {
                        self.refresh_completion(key);
                    }
                    _ => {}
                }
                if effect == EditorEffect::Answered && self.comp.is_some() {
                    self.focus = Focus::Dag;
                }
                return self.follow_editor_cursor();
            }
            Focus::Inspector => match self.inspector.on_key(key) {
                InspectorEffect::Taken => {}
                InspectorEffect::Leave => self.focus = Focus::Dag,
                InspectorEffect::Ignored => self.unbound(key),
            },
            Focus::Dag => {
                if !self.dag_key(key) {
                    self.unbound(key);
                }
            }
        }
        Vec::new()
    }

    /// Whether the focused pane takes this key before the command keys
    /// (the inspector's filter box does while it is open).
    pub(super) fn pane_wants(&mut self, key: KeyEvent) -> bool {
        if self.focus != Focus::Inspector || Key::from(key).is_global() {
            return false;
        }
        self.inspector.handle_key(key)
    }

    /// A key for the DAG pane; false when it does nothing there.
    pub(super) fn dag_key(&mut self, key: KeyEvent) -> bool {
        if key.code == KeyCode::Esc && self.viewing.is_some() {
            self.leave_viewing();
            return true;
        }
        if self.timeline.shown && self.timeline_key(key) {
            return true;
        }
        match self.dag.on_key(key, self.layout.as_ref()) {
            DagEffect::Ignored => return false,
            DagEffect::Stay => {}
            DagEffect::Select(sel) => self.select(sel, true),
            DagEffect::Edit => self.focus = Focus::Editor,
            DagEffect::Inspect => self.focus = Focus::Inspector,
            DagEffect::NoPlan => {
                let k = self.keymap.label(Action::Help);
                self.say(
                    format!("no plan yet: i (or Enter) edits the file; {k} lists the keys"),
                    false,
                );
            }
        }
        true
    }

    /// A mouse event, routed to the pane under it.
    pub fn on_mouse(&mut self, ev: MouseEvent) -> Vec<Effect> {
        if self.asks.shown() {
            return Vec::new();
        }
        if self.overlay.is_some() {
            return self.overlay_mouse(ev);
        }
        let at = Position::new(ev.column, ev.row);
        let a = self.areas;
        if a.dag.contains(at) && self.timeline.shown {
            if let MouseEventKind::Down(MouseButton::Left) = ev.kind {
                self.focus = Focus::Dag;
                self.timeline_click(ev.row);
            }
        } else if a.dag.contains(at) {
            match ev.kind {
                MouseEventKind::Down(MouseButton::Left) => {
                    self.focus = Focus::Dag;
                    if let Some(layout) = &self.layout
                        && let Some(i) = self.dag.hit(layout, ev.column, ev.row)
                    {
                        self.select(Some(i), true);
                    }
                }
                MouseEventKind::ScrollDown => self.dag.scroll_by(0, 2),
                MouseEventKind::ScrollUp => self.dag.scroll_by(0, -2),
                MouseEventKind::ScrollRight => self.dag.scroll_by(4, 0),
                MouseEventKind::ScrollLeft => self.dag.scroll_by(-4, 0),
                _ => {}
            }
        } else if a.editor.contains(at) && self.viewing.is_some() {
            // The saved run's file, read-only.
        } else if a.editor.contains(at) {
            if matches!(ev.kind, MouseEventKind::Down(_)) {
                self.focus = Focus::Editor;
            }
            self.editor.handle_mouse(ev, a.editor);
            return self.follow_editor_cursor();
        } else if a.inspector.contains(at) {
            if matches!(ev.kind, MouseEventKind::Down(_)) {
                self.focus = Focus::Inspector;
            }
            self.inspector.handle_mouse(ev, a.inspector);
        }
        Vec::new()
    }

    /// The mouse over an overlay: the wheel scrolls it (or moves the
    /// choice of a list), a click on a palette row does that row, a click
    /// outside closes it.
    fn overlay_mouse(&mut self, ev: MouseEvent) -> Vec<Effect> {
        let at = Position::new(ev.column, ev.row);
        let r = self.areas.overlay;
        let key = |code| KeyEvent::new(code, crossterm::event::KeyModifiers::NONE);
        match ev.kind {
            MouseEventKind::ScrollDown => self.overlay_wheel(true),
            MouseEventKind::ScrollUp => self.overlay_wheel(false),
            MouseEventKind::Down(MouseButton::Left) if !r.contains(at) => {
                // Outside: close it, unless it asks a question.
                match self.overlay {
                    Some(Overlay::ConfirmQuit { .. } | Overlay::ConfirmDestructive { .. }) => {
                        Vec::new()
                    }
                    _ => {
                        self.overlay = None;
                        Vec::new()
                    }
                }
            }
            MouseEventKind::Down(MouseButton::Left) => {
                let Some(Overlay::Palette(p)) = &mut self.overlay else {
                    return Vec::new();
                };
                // The frame, the input line and a blank line, then rows.
                let room = r.height.saturating_sub(4) as usize;
                let Some(row) = ev.row.checked_sub(r.y + 3) else {
                    return Vec::new();
                };
                if (row as usize) < room && p.select_shown(p.first_drawn(room) + row as usize) {
                    return self.on_key(key(KeyCode::Enter));
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The wheel over an overlay: a list's choice moves a row, a text
    /// scrolls three lines.
    fn overlay_wheel(&mut self, down: bool) -> Vec<Effect> {
        let list = matches!(
            self.overlay,
            Some(Overlay::Palette(_) | Overlay::History(_))
        );
        let code = match (list, down) {
            (true, true) => KeyCode::Down,
            (true, false) => KeyCode::Up,
            (false, true) => KeyCode::Char('j'),
            (false, false) => KeyCode::Char('k'),
        };
        let times = if list { 1 } else { 3 };
        let mut effects = Vec::new();
        for _ in 0..times {
            if self.overlay.is_none() {
                break;
            }
            effects.extend(self.on_key(KeyEvent::new(code, crossterm::event::KeyModifiers::NONE)));
        }
        effects
    }

    /// Text pasted into the terminal goes into the editor as one edit.
    pub fn on_paste(&mut self, text: &str) {
        // A paste is input like a key: the last action's message goes
        // (`saved x.yml` next to `unsaved` was no longer true).
        self.messages.status = None;
        if self.asks.shown() {
            self.asks.paste(text);
            return;
        }
        if self.focus != Focus::Editor || self.overlay.is_some() || self.viewing.is_some() {
            return;
        }
        self.editor.paste_text(text);
        // A paste moves the cursor within what it pasted; the composition
        // follows on the next key.
        let _ = self.follow_editor_cursor();
    }

    /// Carries out an action.
    pub fn act(&mut self, action: Action) -> Vec<Effect> {
        let sel = self.selected_node_id();
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
                if let Some(i) = self.dag.selected
                    && let Some(v) = self.visuals.get_mut(i)
                {
                    v.breakpoint = on;
                }
                if self.session.open {
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
                self.timeline.shown = !self.timeline.shown;
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
                self.overlay = Some(Overlay::Messages {
                    scroll: u16::MAX,
                    wrap: true,
                });
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
                    self.asks.hidden = false;
                }
                Vec::new()
            }
            Action::QuickFix => self.quick_fix(),
            Action::Yank => self.yank(false),
            Action::YankPath => self.yank(true),
            Action::Complete => self.complete_action(),
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
                self.overlay = Some(Overlay::Help { scroll: 0 });
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
                    self.overlay = Some(Overlay::ConfirmQuit { unsaved, running });
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
        if !self.session.open {
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
        Some(comp.nodes.get(self.dag.selected?)?.id.clone())
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
        if self.session.open {
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
        let cfg = Box::new(self.session_config(&p, &c));
        vec![Effect::Start {
            pipeline: p,
            comp: c,
            cfg,
            breakpoints: self.breakpoints.iter().cloned().collect(),
            then,
        }]
    }

    pub(super) fn on_overlay_key(&mut self, ov: Overlay, key: KeyEvent) -> Vec<Effect> {
        match ov {
            Overlay::ConfirmQuit { unsaved, running } => match key.code {
                KeyCode::Char('s') | KeyCode::Char('S') if unsaved => {
                    let mut e = self.act(Action::Save);
                    if !self.editor.is_dirty() {
                        self.quit = true;
                        e.push(Effect::Quit);
                    }
                    e
                }
                KeyCode::Char('q') | KeyCode::Char('Q') | KeyCode::Char('y') => {
                    if unsaved {
                        self.editor.discard_recovery();
                    }
                    if running {
                        // The loop cancels the run and saves its trace
                        // before the servers are shut down.
                        self.say("cancelling the run and saving its trace…", false);
                    }
                    self.quit = true;
                    vec![Effect::Quit]
                }
                KeyCode::Esc => Vec::new(),
                _ => {
                    self.overlay = Some(Overlay::ConfirmQuit { unsaved, running });
                    Vec::new()
                }
            },
            Overlay::ConfirmDestructive { calls, .. } => {
                if matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y')) {
                    self.session.allowed_destructive.extend(calls);
                    vec![Effect::Proceed]
                } else {
                    self.on_start_failed("not run: destructive calls were not allowed");
                    vec![Effect::DropSession]
                }
            }
            Overlay::History(h) => self.history_key(h, key),
            Overlay::Scaffold(c) => self.scaffold_key(c, key),
            Overlay::Messages { scroll, wrap } => {
                let action = self.keymap.action(&key, false);
                if let PaneKey::Show { scroll, wrap } = pane_key(scroll, wrap, key, action) {
                    self.overlay = Some(Overlay::Messages { scroll, wrap });
                }
                Vec::new()
            }
            Overlay::Palette(p) => self.palette_key(p, key),
            Overlay::Text { ref title, .. }
                if title.starts_with("results:")
                    && self.keymap.action(&key, false) == Some(Action::Judge) =>
            {
                let ids: Vec<String> = self.results.rows.iter().map(|r| r.run_id.clone()).collect();
                self.overlay = Some(ov);
                self.judge_saved(ids)
            }
            other => {
                let closes = matches!(key.code, KeyCode::Esc | KeyCode::Char('q') | KeyCode::Enter)
                    || self.keymap.action(&key, false) == Some(Action::Help);
                if !closes {
                    self.overlay = Some(other.scrolled(key));
                }
                Vec::new()
            }
        }
    }

    pub(super) fn plan_overlay(&self, estimate: bool) -> Overlay {
        match self.plan_model() {
            Some(plan) => {
                let file = self.opts.file.display().to_string();
                let mut view = overlay::PlanView::new(&file, plan, estimate);
                self.plan_with_preflight(&mut view);
                Overlay::Plan(Box::new(view))
            }
            None => Overlay::Text {
                title: "plan".into(),
                body: vec!["no valid plan: fix the file's errors first".into()],
                scroll: 0,
            },
        }
    }

    /// A plain key the focused pane and the keymap left alone: the status
    /// line says so, instead of nothing happening.
    pub(super) fn unbound(&mut self, key: KeyEvent) {
        let KeyCode::Char(c) = key.code else {
            return;
        };
        if !(key.modifiers - KeyModifiers::SHIFT).is_empty() {
            return;
        }
        let help = self.keymap.label(Action::Help);
        let palette = self.keymap.label(Action::Palette);
        let text = if c == '/' {
            "/ searches in the inspector's Output (a jq filter), Raw and Logs tabs, the help, Messages and History"
                .to_owned()
        } else {
            format!("`{c}` does nothing here: {help} lists the keys, {palette} finds a command")
        };
        self.say(text, false);
    }
}
