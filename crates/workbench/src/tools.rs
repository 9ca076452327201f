//! What the workbench keeps of its servers' tools for preflight as you
//! type: their `tools/list`s for the plan's servers (fetched in the
//! background, or the live session's), the fetch under way, and
//! preflight's latest verdict on the plan. The app's side, fetching the
//! lists and running preflight on them, is `app/preflight.rs`.

use pipewright_engine::plan::preflight::{Preflight, ToolLists};

/// The tool lists kept for preflight as you type, and its latest verdict.
#[derive(Debug, Default)]
pub(crate) struct LiveTools {
    /// The lists, for the plan's servers as the key names them, and the
    /// server of nodes that name none.
    lists: Option<(String, ToolLists, Option<String>)>,
    /// The key a fetch was asked for (under way, or failed: not asked
    /// again until the servers change).
    asked: Option<String>,
    /// What preflight found on the plan adopted last (`None`: the lists
    /// have not come yet).
    report: Option<Preflight>,
    /// Completion was asked for before the lists came.
    want_completion: bool,
}

impl LiveTools {
    /// The lists kept: the key of the servers they are for, the lists by
    /// server, and the server of nodes that name none.
    pub(crate) fn lists(&self) -> Option<(&str, &ToolLists, Option<&str>)> {
        self.lists
            .as_ref()
            .map(|(k, l, d)| (k.as_str(), l, d.as_deref()))
    }

    /// The key a fetch was asked for, if one was.
    pub(crate) fn asked(&self) -> Option<&str> {
        self.asked.as_deref()
    }

    /// A fetch of the lists of the servers `key` names is under way.
    pub(crate) fn asking(&mut self, key: String) {
        self.asked = Some(key);
    }

    /// What preflight found on the plan adopted last (`None`: the lists
    /// have not come yet).
    pub(crate) fn report(&self) -> Option<&Preflight> {
        self.report.as_ref()
    }

    /// The lists for the servers `key` names came; `default` serves the
    /// nodes that name none.
    pub(crate) fn got(&mut self, key: String, lists: ToolLists, default: Option<String>) {
        self.lists = Some((key, lists, default));
    }

    /// Preflight checked the plan adopted last (`None`: no lists for it
    /// yet).
    pub(crate) fn checked(&mut self, report: Option<Preflight>) {
        self.report = report;
    }

    /// The servers' lists changed: they are fetched again.
    pub(crate) fn forget(&mut self) {
        self.lists = None;
        self.asked = None;
    }

    /// Completion was asked for before the lists came: it opens when they
    /// do.
    pub(crate) fn want_completion(&mut self) {
        self.want_completion = true;
    }

    /// Whether completion was waiting for the lists (no longer after).
    pub(crate) fn take_want_completion(&mut self) -> bool {
        std::mem::take(&mut self.want_completion)
    }
}
