//! Which judge grades a composition, and its settings: the command line
//! (`--judge-url`, `--judge-model`, `--judge-key-env`, or their
//! `PIPEWRIGHT_JUDGE_*` variables), else the composition's
//! `eval.provider:`, else the file's `sampling:` provider, else `judge:` in
//! the user's `config.yaml`. The key is only ever named (`${env.X}`): its
//! value is read from the driver's environment when the judge is resolved, becomes
//! a secret of the run's redactor, and is sent as a bearer token, nowhere
//! else. A key whose variable is unset leaves the metrics deferred, so a
//! file that names a judge still runs green in CI without a key.

use std::path::Path;
use std::time::Duration;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

use crate::environment::Environment;
use crate::file::model::eval::JudgeDecl;
use crate::file::model::{Composition, Pipeline, Sampling};
use crate::lang::snapshot::Snapshot;
use crate::mcp::servers::setting_text;
use crate::redact::Redactor;

/// How long one request to the judge may take when nothing says.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The most tokens the judge may write in one reply when nothing says.
pub const DEFAULT_MAX_TOKENS: u64 = 1024;
/// How often a 429 or 5xx answer is tried again when nothing says.
pub const DEFAULT_RETRIES: u32 = 2;

/// Why metrics are deferred when nothing names a judge.
pub const NO_JUDGE: &str = "no judge provider is configured";
/// Where a judge is named, for the reports that defer for want of one.
pub const WHERE_JUDGES_ARE_NAMED: &str = "a judge is named by `eval.provider:`, `sampling:`, `judge:` in config.yaml, or --judge-url and --judge-model";

/// A judge ready to be called: everything resolved.
#[derive(Clone, PartialEq)]
pub struct Endpoint {
    /// The chat-completions URL (`/chat/completions` added to a base URL).
    pub url: String,
    pub model: String,
    api_key: Option<String>,
    pub timeout: Duration,
    pub max_tokens: u64,
    pub temperature: f64,
    pub retries: u32,
    /// Where the settings came from, for reports: `eval.provider`,
    /// `sampling`, `--judge-url`, `config.yaml judge`.
    pub from: String,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.shown_url())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .field("from", &self.from)
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint with the default settings (tests, and config that gives
    /// only a URL and a model).
    pub fn new(url: &str, model: &str, api_key: Option<String>) -> Endpoint {
        Endpoint {
            url: chat_url(url),
            model: model.to_owned(),
            api_key,
            timeout: DEFAULT_TIMEOUT,
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: 0.0,
            retries: DEFAULT_RETRIES,
            from: String::new(),
        }
    }

    /// The key sent as `Authorization: Bearer …`.
    pub(super) fn api_key(&self) -> Option<&str> {
        self.api_key.as_deref()
    }

    /// The URL as reports show it: no query string, no user info (either
    /// may carry a key).
    pub fn shown_url(&self) -> String {
        shown_url(&self.url)
    }
}

/// `url` without its query string and user info.
pub fn shown_url(url: &str) -> String {
    let no_query = url.split(['?', '#']).next().unwrap_or(url);
    match no_query.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('/') {
            Some((authority, path)) => {
                let host = authority.rsplit('@').next().unwrap_or(authority);
                format!("{scheme}://{host}/{path}")
            }
            None => format!("{scheme}://{}", rest.rsplit('@').next().unwrap_or(rest)),
        },
        None => no_query.to_owned(),
    }
}

/// The chat-completions URL of an API's base URL (or of itself).
fn chat_url(url: &str) -> String {
    let base = url.trim_end_matches('/');
    if base.ends_with("/chat/completions") {
        base.to_owned()
    } else {
        format!("{base}/chat/completions")
    }
}

/// The command line's say: a judge of its own, or none at all.
#[derive(Debug, Clone, Default)]
pub struct JudgeFlags {
    pub url: Option<String>,
    pub model: Option<String>,
    /// The name of the environment variable that holds the key.
    pub key_env: Option<String>,
    /// `--no-judge`: every metric is deferred.
    pub off: bool,
}

impl JudgeFlags {
    /// What `PIPEWRIGHT_JUDGE_URL`, `PIPEWRIGHT_JUDGE_MODEL` and
    /// `PIPEWRIGHT_JUDGE_KEY_ENV` say in `env` (the workbench's flags; the
    /// command line reads them through its own).
    pub fn from_environment(env: &Environment) -> JudgeFlags {
        let var = |n: &str| {
            env.var(n)
                .filter(|v| !v.trim().is_empty())
                .map(str::to_owned)
        };
        JudgeFlags {
            url: var("PIPEWRIGHT_JUDGE_URL"),
            model: var("PIPEWRIGHT_JUDGE_MODEL"),
            key_env: var("PIPEWRIGHT_JUDGE_KEY_ENV"),
            off: false,
        }
    }

    /// The judge the flags declare, if they declare one; an error when
    /// they say half of it.
    pub fn decl(&self) -> Result<Option<JudgeDecl>, String> {
        let (url, model) = match (&self.url, &self.model) {
            (None, None) => {
                return match &self.key_env {
                    Some(_) => Err(
                        "--judge-key-env names a key for a judge, but no --judge-url and --judge-model say which"
                            .into(),
                    ),
                    None => Ok(None),
                };
            }
            (Some(u), Some(m)) => (u.clone(), m.clone()),
            (Some(_), None) => return Err("--judge-url needs --judge-model".into()),
            (None, Some(_)) => return Err("--judge-model needs --judge-url".into()),
        };
        let api_key = match &self.key_env {
            Some(name) if valid_env_name(name) => Some(format!("${{env.{name}}}")),
            // The value is not echoed: it may be the key itself.
            Some(_) => {
                return Err(
                    "--judge-key-env takes the NAME of the environment variable that holds the key (letters, digits and `_`), not the key"
                        .into(),
                );
            }
            None => None,
        };
        Ok(Some(JudgeDecl {
            url,
            model,
            api_key,
            ..JudgeDecl::default()
        }))
    }
}

fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 128
}

/// The judges a run may use, before one is chosen per composition.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub flags: JudgeFlags,
    /// The file's `sampling:` provider.
    pub sampling: Option<Sampling>,
    /// `judge:` in the user's config.yaml.
    pub config: Option<JudgeDecl>,
    /// What the chosen judge's `${env.X}` (its key) read.
    pub env: Environment,
}

impl Sources {
    /// The sources of a run of `pipeline`: `flags`, the file's `sampling:`
    /// and config.yaml in `config_dir` (`Err` names config.yaml's problem),
    /// their keys read in `env`.
    pub fn of(
        flags: JudgeFlags,
        pipeline: &Pipeline,
        config_dir: Option<&Path>,
        env: &Environment,
    ) -> Result<Sources, String> {
        flags.decl()?;
        Ok(Sources {
            flags,
            sampling: pipeline.sampling.clone(),
            config: config_judge(config_dir)?,
            env: env.clone(),
        })
    }

    /// The judge declared for `comp`, and where it was declared; `Err` is
    /// why there is none (every metric is then deferred, saying so).
    pub fn choose(&self, comp: &Composition) -> Result<(JudgeDecl, &'static str), String> {
        if self.flags.off {
            return Err("--no-judge was given".into());
        }
        if let Ok(Some(d)) = self.flags.decl() {
            return Ok((d, "--judge-url"));
        }
        if let Some(d) = &comp.eval.provider {
            return Ok((d.clone(), "eval.provider"));
        }
        if let Some(s) = &self.sampling {
            return Ok((
                JudgeDecl {
                    url: s.url.clone(),
                    model: s.model.clone(),
                    api_key: s.api_key.clone(),
                    ..JudgeDecl::default()
                },
                "sampling",
            ));
        }
        if let Some(d) = &self.config {
            return Ok((d.clone(), "config.yaml judge"));
        }
        Err(NO_JUDGE.into())
    }

    /// The endpoint that grades `comp`, resolved with `vars`; `Err` is why
    /// its metrics are deferred (no judge, or its key's variable unset).
    pub fn endpoint(
        &self,
        comp: &Composition,
        vars: &IndexMap<String, Value>,
        redactor: &Redactor,
    ) -> Result<Endpoint, String> {
        let (decl, from) = self.choose(comp)?;
        resolve(&decl, from, vars, &self.env, redactor)
    }
}

/// Resolves `${env.X}` (read in `env`) and `${var.X}` in `decl`; the key
/// and every env value used become secrets of `redactor`. `Err` says which
/// setting could not be resolved.
pub fn resolve(
    decl: &JudgeDecl,
    from: &str,
    vars: &IndexMap<String, Value>,
    env: &Environment,
    redactor: &Redactor,
) -> Result<Endpoint, String> {
    let scope = Snapshot {
        vars: std::sync::Arc::new(vars.clone()),
        env: env.clone(),
        ..Snapshot::default()
    };
    let text = |field: &str, s: &str| {
        setting_text(s, &scope, redactor)
            .map_err(|e| format!("the judge's `{field}` ({from}): {e}"))
    };
    let api_key = match &decl.api_key {
        Some(k) => {
            let key = text("api_key", k)?;
            redactor.add(key.clone());
            Some(key)
        }
        None => None,
    };
    Ok(Endpoint {
        url: chat_url(&text("url", &decl.url)?),
        model: text("model", &decl.model)?,
        api_key,
        timeout: decl.timeout.unwrap_or(DEFAULT_TIMEOUT),
        max_tokens: decl.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        temperature: decl.temperature.unwrap_or(0.0),
        retries: decl.retries.unwrap_or(DEFAULT_RETRIES),
        from: from.to_owned(),
    })
}

/// `judge:` in config.yaml, as written.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JudgeFile {
    pub url: String,
    pub model: String,
    #[serde(default)]
    pub api_key: Option<String>,
    /// e.g. `30s`.
    #[serde(default)]
    pub timeout: Option<String>,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub retries: Option<u32>,
}

impl JudgeFile {
    /// The declaration, checked as the pipeline file's `eval.provider` is.
    pub fn decl(&self) -> Result<JudgeDecl, String> {
        if let Some(k) = &self.api_key
            && !(k.starts_with("${env.") && k.ends_with('}') && !k[6..].contains(['$', '{']))
        {
            return Err(
                "`judge.api_key` must be a reference such as `${env.OPENAI_API_KEY}` (a key written in the file is not read)"
                    .into(),
            );
        }
        let timeout = match &self.timeout {
            Some(t) => Some(
                crate::file::loader::parse_duration(t)
                    .map_err(|e| format!("`judge.timeout` `{t}`: {e}"))?,
            ),
            None => None,
        };
        Ok(JudgeDecl {
            url: self.url.clone(),
            model: self.model.clone(),
            api_key: self.api_key.clone(),
            timeout,
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            retries: self.retries.map(|r| r.min(10)),
        })
    }
}

/// The parts of config.yaml this module reads (the workbench reads the
/// rest).
#[derive(Debug, Default, Deserialize)]
struct ConfigJudge {
    #[serde(default)]
    judge: Option<JudgeFile>,
}

/// `judge:` of config.yaml in `dir` (none when there is no file); `Err`
/// names the file and what is wrong.
pub fn config_judge(dir: Option<&Path>) -> Result<Option<JudgeDecl>, String> {
    let Some(path) = dir.map(|d| d.join("config.yaml")) else {
        return Ok(None);
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let parsed: ConfigJudge =
        serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    parsed
        .judge
        .map(|j| j.decl().map_err(|e| format!("{}: {e}", path.display())))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_shown_without_keys() {
        assert_eq!(
            shown_url("https://user:sk-1@api.example.com/v1/chat/completions?api-key=sk-2"),
            "https://api.example.com/v1/chat/completions"
        );
        assert_eq!(
            chat_url("http://127.0.0.1:11434/v1/"),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        let e = Endpoint::new("http://h/v1", "m", Some("sk-secret".into()));
        assert!(!format!("{e:?}").contains("sk-secret"));
    }

    #[test]
    fn flags_name_a_whole_judge_and_the_key_by_its_variable() {
        let f = JudgeFlags {
            url: Some("http://h/v1".into()),
            model: Some("m".into()),
            key_env: Some("OPENAI_API_KEY".into()),
            off: false,
        };
        let d = f.decl().unwrap_or_default().unwrap_or_default();
        assert_eq!(d.api_key.as_deref(), Some("${env.OPENAI_API_KEY}"));
        let half = JudgeFlags {
            url: Some("http://h".into()),
            ..JudgeFlags::default()
        };
        assert!(half.decl().is_err());
        let key_given = JudgeFlags {
            key_env: Some("sk-123-abc".into()),
            ..f
        };
        let e = key_given.decl().err().unwrap_or_default();
        assert!(
            e.contains("not the key") && !e.contains("sk-123-abc"),
            "{e}"
        );
    }

    #[test]
    fn an_unset_key_variable_is_a_reason_to_defer_naming_it() {
        let decl = JudgeDecl {
            url: "http://h/v1".into(),
            model: "m".into(),
            api_key: Some("${env.PIPEWRIGHT_TEST_UNSET_JUDGE_KEY}".into()),
            ..JudgeDecl::default()
        };
        let e = resolve(
            &decl,
            "eval.provider",
            &IndexMap::new(),
            &Environment::default(),
            &Redactor::default(),
        )
        .err()
        .unwrap_or_default();
        assert!(e.contains("PIPEWRIGHT_TEST_UNSET_JUDGE_KEY"), "{e}");
    }

    #[test]
    fn config_yaml_gives_a_judge_and_refuses_a_written_key() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            dir.path().join("config.yaml"),
            "theme: dark\njudge:\n  url: http://127.0.0.1:11434/v1\n  model: llama3.1\n  timeout: 2m\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let d = config_judge(Some(dir.path()))
            .unwrap_or_default()
            .unwrap_or_default();
        assert_eq!(d.model, "llama3.1");
        assert_eq!(d.timeout, Some(Duration::from_secs(120)));
        std::fs::write(
            dir.path().join("config.yaml"),
            "judge: { url: http://h, model: m, api_key: sk-live-1 }\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let e = config_judge(Some(dir.path())).err().unwrap_or_default();
        assert!(
            e.contains("must be a reference") && !e.contains("sk-live-1"),
            "{e}"
        );
    }
}
