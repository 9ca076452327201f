//! How a headless command reports on stderr: a load's diagnostics,
//! compiler style, a trace it could not save, and a login's messages.

use pipewright_engine::file::loader::Loaded;
use pipewright_engine::mcp::ConnectOptions;
use pipewright_engine::settings::Settings;

/// Prints every diagnostic of a load to stderr; true when there were errors.
pub fn report_diagnostics(file: &str, source: &str, loaded: &Loaded) -> bool {
    for d in &loaded.diagnostics {
        eprintln!("{}\n", d.render(file, Some(source)));
    }
    loaded.has_errors()
}

/// Keeps the trace in the runs directory of `data_dir`, with the file's
/// text beside it when `source` is given (History draws the run on it);
/// failure to save is only a warning on stderr. `data_dir` and `max_runs`
/// (`PIPEWRIGHT_MAX_RUNS`) are as the driver's settings give them.
pub fn keep(
    trace: &pipewright_engine::run::trace::Trace,
    source: Option<&pipewright_engine::run::store::KeptSource>,
    data_dir: Option<&std::path::Path>,
    max_runs: Option<usize>,
) {
    let Some(runs) = pipewright_engine::run::store::Runs::open(data_dir) else {
        return;
    };
    let runs = runs.capped(max_runs);
    if let Err(e) = runs.save_with_kept_source(trace, source) {
        eprintln!(
            "warning: could not save the trace to {}: {e}",
            runs.dir.display()
        );
    }
}

/// The options of a headless command's connections: as `settings` say, a
/// login's messages on stderr.
pub fn connect_options(settings: &Settings) -> ConnectOptions {
    settings.connect_options(|text| eprintln!("{text}"))
}
