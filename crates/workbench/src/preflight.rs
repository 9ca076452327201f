//! What preflight as you type keeps between validations: the tool lists
//! of the plan's servers and the latest verdict. The app's side is
//! `apply`: fetching the lists and running preflight on them; its marks
//! and quick fix are `engine::author::fix`'s.

use std::time::Duration;

use pipewright_engine::plan::preflight::{Preflight, ToolLists};

mod apply;

/// The tool lists kept for preflight as you type, and its latest verdict.
#[derive(Debug, Default)]
pub struct LiveTools {
    /// The lists, for the plan's servers as the key names them, and the
    /// server of nodes that name none.
    pub lists: Option<(String, ToolLists, Option<String>)>,
    /// The key a fetch was asked for (under way, or failed: not asked
    /// again until the servers change).
    pub asked: Option<String>,
    /// What preflight found on the plan adopted last (`None`: the lists
    /// have not come yet).
    pub report: Option<Preflight>,
    /// How long that check took.
    pub took: Option<Duration>,
    /// Completion was asked for before the lists came.
    pub want_completion: bool,
}
