//! What a key in the inspector asks of the app: the inspector takes it
//! (tabs, the trees, the jq box, the search), hands the focus back (Esc it
//! had no use for), or leaves it to the app.

use crossterm::event::{KeyCode, KeyEvent};

use super::Inspector;

/// What a key in the inspector asks the app to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InspectorEffect {
    /// The inspector used it.
    Taken,
    /// Esc with nothing of the inspector's to close: the DAG takes the
    /// keys.
    Leave,
    /// Not the inspector's: the app says what it would do elsewhere.
    Ignored,
}

impl Inspector {
    /// A key while the inspector has the focus.
    pub fn on_key(&mut self, key: KeyEvent) -> InspectorEffect {
        if self.handle_key(key) {
            InspectorEffect::Taken
        } else if key.code == KeyCode::Esc {
            InspectorEffect::Leave
        } else {
            InspectorEffect::Ignored
        }
    }
}
