//! A saved run on screen (History, Enter): the run, the file text it ran,
//! and the live workbench's plan stashed behind it until Esc brings it back;
//! and the plan a saved run is drawn on. The app's side (opening one,
//! leaving it, keeping the live plan current behind it) is
//! `app/viewing.rs`.

use std::sync::Arc;

use crate::dag::DagLayout;
use crate::state::NodeVisual;
use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::run::store::Entry;
use pipewright_engine::run::trace::Trace;

/// A saved run on screen instead of the live one (History, Enter).
pub(crate) struct Viewing {
    pub(crate) entry: Entry,
    pub(crate) trace: Trace,
    /// Keeps the run from being pruned while it is open.
    pub(crate) _hold: Option<pipewright_engine::run::store::Hold>,
    /// The live workbench, put back on Esc (and kept up to date meanwhile).
    pub(crate) stash: Stash,
    /// The file text it ran, shown in the editor's place (read-only).
    pub(crate) source: Option<String>,
}

/// What the screen shows of a plan: swapped out while a saved run is open.
#[derive(Default)]
pub(crate) struct Stash {
    pub(crate) pipeline: Option<Arc<Pipeline>>,
    pub(crate) comp: Option<Arc<Composition>>,
    pub(crate) layout: Option<DagLayout>,
    pub(crate) visuals: Vec<NodeVisual>,
    pub(crate) selected: Option<usize>,
}

/// The plan a saved run is drawn on: its saved file text's composition,
/// else a pipe of its nodes in the order they ran (tool names kept).
pub(crate) fn run_plan(
    source: Option<&str>,
    trace: &Trace,
    load: &pipewright_engine::file::open::LoadOptions,
) -> Option<(Arc<Pipeline>, Arc<Composition>)> {
    let name = &trace.composition.name;
    let loaded = |s: &str| {
        pipewright_engine::file::open::load_str_with(
            s,
            pipewright_engine::file::import::Dialect::Auto,
            load,
        )
    };
    if let Some(p) = source.and_then(|s| loaded(s).pipeline)
        && let Some(c) = p.composition(name).cloned()
    {
        return Some((Arc::new(p), Arc::new(c)));
    }
    let mut text = String::from("pipe:\n");
    for (id, rec) in &trace.nodes {
        let tool = if rec.tool.is_empty() {
            "unknown"
        } else {
            &rec.tool
        };
        text.push_str(&format!(
            "  - id: {}\n    tool: {}\n",
            serde_json::to_string(id).ok()?,
            serde_json::to_string(tool).ok()?
        ));
    }
    let p = pipewright_engine::file::open::load_str(&text).pipeline?;
    let c = p.compositions.first().cloned()?;
    Some((Arc::new(p), Arc::new(c)))
}
