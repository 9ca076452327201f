//! What watches `pipewright run` from outside the engine: the signals that
//! stop it, and the record of each run in progress that a SIGKILL leaves
//! behind (see [`store::live`]).
//!
//! The signals are SIGINT (Ctrl-C) and SIGTERM
//! (`kill`, a CI job's timeout, `docker stop`). The first cancels the run
//! as the workbench's cancel does, so the run is saved as `cancelled` with
//! the nodes that finished and the servers get their usual shutdown (they
//! are in their own process groups: a signal to pipewright never reaches
//! them). A second signal quits at once.
//!
//! The signals themselves are [`Signals`] (`pipewright_headless`), which
//! `serve` and `worker` listen to as well.

use pipewright_headless::Signals;

use pipewright_engine::file::model::Composition;
use pipewright_engine::run::events::Event;
use pipewright_engine::run::store::{self, live::Live};
use pipewright_engine::run::trace::{RunSummary, Trace, new_run_id};

/// What watches a run from outside the engine: the stop signals, and the
/// record of the run in progress that a SIGKILL leaves behind.
pub struct Watch {
    pub signals: Signals,
    pub live: Option<Live>,
    /// The id the record reserved, which the saved trace takes.
    pub id: Option<String>,
}

impl Watch {
    /// Starts the record of the run of `comp` (and case) in the runs of
    /// `data_dir` and reserves its id; without a writable runs directory
    /// there is none.
    pub fn begin(
        &mut self,
        comp: &Composition,
        case: Option<&str>,
        file: &str,
        data_dir: Option<&std::path::Path>,
    ) {
        let mut head = Trace {
            run_id: new_run_id(),
            file: file.to_owned(),
            composition: RunSummary {
                name: comp.name.clone(),
                case: case.map(str::to_owned),
                started_at: Some(pipewright_engine::run::exec::now_rfc3339()),
                ..Default::default()
            },
            ..Trace::default()
        };
        self.live = store::live::begin(data_dir, &mut head);
        self.id = self.live.as_ref().map(|_| head.run_id);
    }

    /// Keeps a node that finished in the record of the run.
    pub fn saw(&mut self, ev: &Event) {
        if let (Some(live), Event::NodeFinished { id, record }) = (self.live.as_mut(), ev) {
            live.node(id, record);
        }
    }
}
