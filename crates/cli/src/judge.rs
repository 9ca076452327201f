//! The judge flags `run`, `plan`, `serve` and `eval` share; the grader a
//! command builds from their values is `pipewright_headless::grader`.

use clap::Args;

use pipewright_engine::eval::JudgeFlags;

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
    /// The flags' values, as the engine takes them.
    pub fn flags(&self) -> JudgeFlags {
        JudgeFlags {
            url: self.judge_url.clone(),
            model: self.judge_model.clone(),
            key_env: self.judge_key_env.clone(),
            off: self.no_judge,
        }
    }
}
