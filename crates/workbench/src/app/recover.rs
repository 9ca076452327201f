//! The app's side of recovery at start: the dialog over the panes when
//! the editor found unsaved text a workbench that ended left behind, the
//! difference it can show, and the word said when another live workbench
//! edits the same file (this one's unsaved text is then kept apart).

use super::App;
use crate::overlay::{Overlay, RecoverDialog};

impl App {
    /// Opens the recovery dialog when the editor has a copy on offer, or
    /// says that another workbench holds the file's recovery copy.
    pub(super) fn ask_about_recovery(&mut self) {
        if let Some(found) = self.editor.recovery_offer() {
            let dialog = RecoverDialog::new(self.opts.file.clone(), found.clone());
            self.overlay = Some(Overlay::Recover(dialog));
        } else if let Some(pid) = self.editor.recovery_beside() {
            let who = match pid {
                0 => "another workbench".to_owned(),
                pid => format!("another workbench (pid {pid})"),
            };
            self.say(
                format!(
                    "{who} is editing this file too: this one's unsaved text is kept apart, and neither offers the other's"
                ),
                false,
            );
        }
    }

    /// The difference between the file and the copy on offer, over the
    /// dialog (Esc comes back to it).
    pub(super) fn show_recovery_diff(&mut self) {
        let Some(found) = self.editor.recovery_offer() else {
            return;
        };
        let file = std::fs::read_to_string(self.editor.path()).unwrap_or_default();
        let diff = pipewright_engine::run::diff::source::text(Some(&file), Some(&found.text));
        let body = diff.lines().map(str::to_owned).collect();
        self.overlay_under = self.overlay.take();
        self.overlay = Some(Overlay::text(
            "the file → the unsaved text".to_owned(),
            body,
        ));
    }
}
