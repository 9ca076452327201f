//! The one place the components' messages are applied: each [`Msg`] a pane
//! or an overlay pushed becomes the change of state it asks for and the
//! [`Effect`]s the event loop is to carry out. The work itself is done by
//! the app's methods, by concern, in the other files of `app/`.

use super::*;
use crate::history::export::ExportFormat;

impl App {
    /// Applies the messages in `queue`, oldest first.
    pub(crate) fn apply(&mut self, mut queue: Queue) -> Vec<Effect> {
        let mut effects = Vec::new();
        while let Some(msg) = queue.pop() {
            effects.extend(self.update(msg));
        }
        effects
    }

    /// What a component's message does.
    pub(crate) fn update(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Act(action) => return self.act(action),
            Msg::Focus(focus) => self.focus = focus,
            Msg::Say { text, error } => self.say(text, error),
            Msg::Select(i) => self.select(i, true),
            Msg::SelectNode(id) => {
                let i = self.comp.as_ref().and_then(|c| c.index_of(&id));
                self.select(i, true);
            }
            Msg::Edited { key } => {
                if key.code != KeyCode::Esc {
                    self.refresh_completion(key);
                }
                return self.follow_editor_cursor();
            }
            Msg::Recovery(answer) => {
                let said = self.editor.answer_recovery(answer);
                self.say(said, false);
            }
            Msg::RecoveryDiff => self.show_recovery_diff(),
            Msg::CursorMoved => return self.follow_editor_cursor(),
            Msg::Complete { from, text } => {
                self.completion = None;
                self.editor.replace_before_cursor(from, &text);
                return self.follow_editor_cursor();
            }
            Msg::CloseCompletion => self.completion = None,
            Msg::CloseOverlay => {
                // Back to the overlay it was opened from, if any; its
                // search was the closed one's.
                self.overlay = self.overlay_under.take();
                self.overlay_find = None;
            }
            Msg::LeaveViewing => self.leave_viewing(),
            Msg::Doctor(server) => return self.doctor(server),
            Msg::Answered { node, action } => {
                self.update_asking(node.as_deref());
                let who = node.map(|n| format!("{n}: ")).unwrap_or_default();
                let text = format!("{who}answered {action}");
                // A session logs every answer it gets (the modal's, an
                // answers file's, the provider's): here it is only shown.
                // A durable run's answer goes to Restate, which says
                // nothing back: it is logged here.
                if self.durable.is_some() {
                    self.say(text, false);
                } else {
                    self.messages.show(text, false);
                }
            }
            Msg::OpenUrl(url) => return vec![Effect::OpenUrl(url)],
            Msg::Copy { text, what } => return self.copy(text, &what),
            Msg::AskProvider { ticket, request } => return self.ask_provider(ticket, request),
            Msg::Theme(name) => self.use_theme(&name),
            Msg::Composition(name) => {
                let mut effects = self.fresh_session();
                effects.extend(self.choose_composition(&name));
                return effects;
            }
            Msg::Case(name) => return self.choose_case(&name),
            Msg::Durable => return self.start_durable(),
            Msg::OpenScaffold => return self.open_scaffold(),
            Msg::FollowRecording(path) => return self.follow_recording(&path),
            Msg::WriteScaffold { tools, chosen } => self.write_scaffold(&tools, &chosen),
            Msg::ChooseExport(entry) => {
                // History stays under the choice: answered, it is back.
                self.overlay_under = self.overlay.take();
                self.overlay = Some(Overlay::Choice(Box::new(overlay::Choice::export(entry))));
            }
            Msg::Export { entry, format } => match (format.and_then(ExportFormat::of_key), entry) {
                (Some(what), Some(e)) => self.export_saved(&e, what),
                _ => self.say("not exported", false),
            },
            Msg::RerunSaved(entry) => return self.rerun_saved(&entry),
            Msg::JudgeSaved(ids) => return self.judge_saved(ids),
            Msg::JudgeResults => {
                let ids = self.results.run_ids();
                return self.judge_saved(ids);
            }
            Msg::OpenRun(entry) => self.open_run(entry),
            Msg::RestoreRun(entry) => {
                if self.restore_saved(&entry) {
                    self.overlay = None;
                    self.overlay_under = None;
                }
            }
            Msg::DiffRun(entry) => self.mark_diff(&entry),
            Msg::SaveAndQuit => {
                let mut effects = self.act(Action::Save);
                if !self.editor.is_dirty() {
                    self.quit = true;
                    effects.push(Effect::Quit);
                }
                return effects;
            }
            Msg::Quit { discard, running } => {
                if discard {
                    self.editor.discard_recovery();
                }
                if running {
                    // The loop cancels the run and saves its trace before
                    // the servers are shut down.
                    self.say("cancelling the run and saving its trace…", false);
                }
                self.quit = true;
                return vec![Effect::Quit];
            }
            Msg::AllowDestructive(calls) => {
                self.session.allow(calls);
                return vec![Effect::Proceed];
            }
            Msg::RefuseDestructive => {
                self.on_start_failed("not run: destructive calls were not allowed");
                return vec![Effect::DropSession];
            }
            Msg::Validated(loaded) => {
                let mut effects = self.on_validated(&loaded);
                // A file that has not loaded yet gets its servers' tool
                // lists for completion all the same.
                effects.extend(self.ask_tools_for_text());
                return effects;
            }
            Msg::Saved(path) => {
                // Said once: a save by key was said as it happened.
                let text = format!("saved {}", path.display());
                if self.messages.last_logged() != Some(text.as_str()) {
                    self.say(text, false);
                }
            }
            Msg::ExternalChange { dirty } => {
                if dirty {
                    // The editor asks reload-or-keep; it needs the keys.
                    self.focus = Focus::Editor;
                    self.overlay = None;
                    self.overlay_under = None;
                } else {
                    self.say("the file changed on disk: reloaded", false);
                }
            }
        }
        Vec::new()
    }
}
