//! What the keys do now: the mode the status bar leads with (`app/mode.rs`
//! reads it off the app).

/// What the keys do now, shown first in the status bar and in the footer
/// (which lists that mode's keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The DAG (or the timeline) has the keys: command keys act.
    Dag,
    /// The inspector has the keys: tabs, the tree, command keys act.
    Inspect,
    /// The editor has the keys: letters are text.
    Edit,
    /// The inspector's jq box has the keys.
    Filter,
    /// A search prompt (`/` in Raw) has the keys.
    Search,
    /// A server's question has the keys.
    Ask,
    /// An overlay (help, palette, plan, history, messages…) has the keys.
    Overlay,
    /// The recovery dialog: unsaved text found at start waits for an
    /// answer.
    Recover,
}

impl Mode {
    /// The word the status bar shows.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Dag => "DAG",
            Mode::Inspect => "INSPECT",
            Mode::Edit => "EDIT",
            Mode::Filter => "FILTER",
            Mode::Search => "SEARCH",
            Mode::Ask => "ASK",
            Mode::Overlay => "OVERLAY",
            Mode::Recover => "RECOVER",
        }
    }
}
