//! The recovery copy on offer at start (found by
//! [`Recovery::offer`](super::recovery::Recovery::offer)): what the editor
//! says of it, and what the answer to the app's dialog does with it.

use super::Editor;
use super::recovery::{Recovered, Recovery};
use crate::msg::RecoveryAnswer;

impl Editor {
    /// The recovery copy on offer, until answered.
    pub fn recovery_offer(&self) -> Option<&Recovered> {
        self.offer.as_ref().map(|(_, found)| found)
    }

    /// The process id of the live workbench that holds this file's
    /// recovery slot, when this one keeps its copy beside it (0: it did
    /// not say).
    pub fn recovery_beside(&self) -> Option<u32> {
        self.recovery.as_ref().and_then(Recovery::beside)
    }

    /// Answers the copy on offer; what happened, in a sentence.
    pub(crate) fn answer_recovery(&mut self, answer: RecoveryAnswer) -> String {
        let Some((slot, found)) = self.offer.take() else {
            return "no unsaved text is on offer".into();
        };
        let ours = self
            .recovery
            .as_ref()
            .is_some_and(|r| r.text_path() == slot.text_path());
        match answer {
            RecoveryAnswer::Recover => {
                self.set_text(&found.text);
                if !ours {
                    slot.remove();
                }
                "recovered the unsaved text; Ctrl-S saves it".into()
            }
            RecoveryAnswer::Discard => {
                slot.remove();
                "discarded the unsaved text".into()
            }
            RecoveryAnswer::Later => {
                // The copy stays for the next start: this session writes
                // its own beside it.
                if ours && let Some(r) = &self.recovery {
                    self.recovery = Some(r.beside_self());
                }
                "kept the unsaved text: it is offered again at the next start".into()
            }
        }
    }
}
