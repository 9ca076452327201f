//! The judge flags `run`, `plan`, `serve` and `eval` share, and the grader
//! a command builds from them, the file and the cassette in use.

use std::sync::Arc;

use clap::Args;

use pipewright_engine::cost::pricing::PricingTable;
use pipewright_engine::eval::{Bench, Grader, JudgeFlags, Replay, Sources};
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::cassette::{JudgeEntry, Recorder};
use pipewright_engine::settings::Settings;

/// Who grades `eval:` (see the book's "Judged eval").
#[derive(Debug, Clone, Default, Args)]
pub struct JudgeArgs {
    /// The judge for `eval:`: an OpenAI-compatible chat-completions URL
    /// (or its base, e.g. http://127.0.0.1:11434/v1); wins over the file's
    /// `eval.provider`, its `sampling:` and config.yaml's `judge:`.
    #[arg(long, value_name = "URL", env = "PIPEWRIGHT_JUDGE_URL")]
    pub judge_url: Option<String>,
    /// The judge's model (with --judge-url).
    #[arg(long, value_name = "MODEL", env = "PIPEWRIGHT_JUDGE_MODEL")]
    pub judge_model: Option<String>,
    /// The NAME of the environment variable that holds the judge's API key
    /// (never the key itself).
    #[arg(long, value_name = "NAME", env = "PIPEWRIGHT_JUDGE_KEY_ENV")]
    pub judge_key_env: Option<String>,
    /// Judge nothing: every `eval:` metric is deferred.
    #[arg(long)]
    pub no_judge: bool,
}

impl JudgeArgs {
    pub fn flags(&self) -> JudgeFlags {
        JudgeFlags {
            url: self.judge_url.clone(),
            model: self.judge_model.clone(),
            key_env: self.judge_key_env.clone(),
            off: self.no_judge,
        }
    }
}

/// A grader for `pipeline`'s compositions: judges from the flags, the
/// file and config.yaml (in the settings' config directory, keys read in
/// their environment); judge calls priced by `pricing`, replayed from
/// `replay` (`--replay`, the cassette's `judge:` calls), recorded into
/// `recorder` (`--record`) and their replies bounded by the settings.
/// `Err` is a usage error.
pub fn grader(
    args: &JudgeArgs,
    pipeline: &Pipeline,
    pricing: &PricingTable,
    redactor: &Redactor,
    replay: Option<Replay>,
    recorder: Option<Arc<Recorder>>,
    settings: &Settings,
) -> Result<Grader, String> {
    let sources = Sources::of(
        args.flags(),
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
