//! `serve` and `worker` held to the `pipewright.lock` beside each file:
//! at start a change since the lock is a warning at the node, or under
//! `--locked` / `lock: strict` an error that stops the start like any
//! preflight problem (exit 2, naming the composition, the tool and the
//! change); while serving, a call whose locked tool changed since (a
//! `list_changed` between calls) is refused before its first upstream call,
//! and one that changes mid-run is caught by the session before the next
//! call.

use std::path::Path;
use std::sync::Arc;

use indexmap::IndexMap;

use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::lock::{FILE_NAME, Lock, Pinned};
use pipewright_engine::mcp::servers::ServerPool;
use pipewright_engine::options::exit;
use pipewright_engine::plan::preflight::{self, Preflight, ToolLists};

use super::model::Served;

/// The lock `path` is held to, with the handshakes of `pool`: `None` when
/// there is none (and `locked` is not asked); strict with `locked` or the
/// file's `lock: strict`. A lock that cannot be read, or none under
/// `locked`, is exit code 2 (the reason printed).
pub(crate) fn pinned(
    path: &Path,
    pipeline: &Pipeline,
    locked: bool,
    pool: &ServerPool,
) -> Result<Option<Arc<Pinned>>, u8> {
    let name = path.display();
    match Lock::read_for(path) {
        Ok(Some(lock)) => Ok(Some(Arc::new(Pinned {
            lock,
            strict: locked || pipeline.lock_strict,
            handshakes: pool
                .connections()
                .map(|c| (c.name().to_owned(), c.server_info()))
                .collect(),
        }))),
        Ok(None) if locked => {
            eprintln!(
                "error: --locked: there is no {FILE_NAME} beside {name}; run `pipewright lock {name}` first"
            );
            Err(exit::INVALID)
        }
        Ok(None) => Ok(None),
        Err(e) => {
            eprintln!("error: {e}");
            Err(exit::INVALID)
        }
    }
}

/// Adds to `report` what changed since the lock in the tools `comp` calls
/// (errors when the lock is strict, else warnings).
pub(crate) fn at_start(
    report: &mut Preflight,
    comp: &Composition,
    tools: &ToolLists,
    default_server: Option<&str>,
    pinned: &Pinned,
) {
    preflight::pinned::check_lock(report, &[comp], tools, default_server, pinned);
}

/// Why a call of `served` is refused now: a tool it calls changed since
/// the lock (the servers' lists as they are now), the lock being strict.
/// The sentence names the tool and the change, and is logged.
pub(crate) fn refusal(served: &Served) -> Option<String> {
    let pinned = served.pinned.as_ref().filter(|p| p.strict)?;
    let live: ToolLists = served
        .pool
        .connections()
        .map(|c| (c.name().to_owned(), c.tools().to_vec()))
        .collect::<IndexMap<_, _>>();
    let drifts = preflight::pinned::drift(
        &[&served.comp],
        &live,
        served.pricing.default_server.as_deref(),
        pinned,
    );
    if drifts.is_empty() {
        return None;
    }
    let changes: Vec<String> = drifts
        .iter()
        .map(|d| format!("{}\n{}", d.summary(), d.diff_text()))
        .collect();
    let why = format!(
        "`{}` is refused: {} changed since {} (the lock is strict; `pipewright lock --update` accepts it): {}",
        served.name,
        if drifts.len() == 1 {
            "a tool it calls"
        } else {
            "tools it calls"
        },
        FILE_NAME,
        changes.join("\n")
    );
    eprintln!("{}: {why}", served.file);
    Some(why)
}
