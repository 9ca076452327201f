//! The grader `run`, `plan`, `serve` and `eval` build from their judge
//! flags, the file and the cassette in use.

use std::sync::Arc;

use pipewright_engine::cost::pricing::PricingTable;
use pipewright_engine::eval::{Bench, Grader, JudgeFlags, Replay, Sources};
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::cassette::{JudgeEntry, Recorder};
use pipewright_engine::settings::Settings;

/// A grader for `pipeline`'s compositions: judges from `flags` (the
/// command line's `--judge-*` and `--no-judge`), the file and config.yaml
/// (in the settings' config directory, keys read in their environment);
/// judge calls priced by `pricing`, replayed from `replay` (`--replay`,
/// the cassette's `judge:` calls), recorded into `recorder` (`--record`)
/// and their replies bounded by the settings. `Err` is a usage error.
pub fn grader(
    flags: JudgeFlags,
    pipeline: &Pipeline,
    pricing: &PricingTable,
    redactor: &Redactor,
    replay: Option<Replay>,
    recorder: Option<Arc<Recorder>>,
    settings: &Settings,
) -> Result<Grader, String> {
    let sources = Sources::of(
        flags,
        pipeline,
        settings.config_dir.as_deref(),
        &settings.env,
    )?;
    let max_reply_kb = settings.judge_max_reply_kb;
    let record = recorder.map(|r| {
        Arc::new(move |e: JudgeEntry| r.add_judge(e)) as pipewright_engine::eval::judge::Sink
    });
    Ok(Grader {
        sources,
        bench: Arc::new(
            Bench::new(pricing, redactor.clone(), replay, record).with_max_reply_kb(max_reply_kb),
        ),
    })
}
