//! The limits a user may change through `PIPEWRIGHT_*` environment
//! variables, read once per process at one place: the binary reads them at
//! start ([`Settings::from_env`], [`install`]); a process that installs
//! none (a test, a benchmark) gets [`Settings::default`], nothing set,
//! whatever its environment says. Each module keeps its own default for a
//! value not set, and says the variable's name in its errors.

use std::sync::OnceLock;

/// What the environment sets; `None` is "not set, or not a number we
/// take" (each module then uses its default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// `PIPEWRIGHT_MAX_RUNS`: saved runs kept (0: no cap).
    pub max_runs: Option<usize>,
    /// `PIPEWRIGHT_MAX_FILE_MB`: the largest pipeline file loaded.
    pub max_file_mb: Option<u64>,
    /// `PIPEWRIGHT_MAX_ALIAS_MB`: text YAML aliases may copy into a file.
    pub max_alias_mb: Option<usize>,
    /// `PIPEWRIGHT_MAX_MESSAGE_MB`: one message from a server.
    pub max_message_mb: Option<usize>,
    /// `PIPEWRIGHT_MAX_TOOL_LIST_MB`: a server's whole tool list.
    pub max_tool_list_mb: Option<usize>,
    /// `PIPEWRIGHT_JUDGE_MAX_REPLY_KB`: a judge's answer.
    pub judge_max_reply_kb: Option<usize>,
    /// `PIPEWRIGHT_JQ_STEPS`: evaluation steps of one jq program.
    pub jq_steps: Option<u64>,
    /// `PIPEWRIGHT_JQ_SECONDS`: the time one jq program may take.
    pub jq_seconds: Option<u64>,
    /// `PIPEWRIGHT_JQ_MEMORY_MB`: the memory one jq program may hold.
    pub jq_memory_mb: Option<u64>,
    /// `PIPEWRIGHT_AUTH_PROMPT`, as written (`never`, `terminal`, `print`,
    /// `browser`); the auth module reads it.
    pub auth_prompt: Option<String>,
}

impl Settings {
    /// What the process environment sets.
    pub fn from_env() -> Settings {
        Settings::from_lookup(|name| std::env::var(name).ok())
    }

    /// What `var` (a variable's value by its name) sets: numbers are
    /// trimmed, and every limit but `PIPEWRIGHT_MAX_RUNS` must be above 0.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Settings {
        let number = |name: &str| var(name).and_then(|v| v.trim().parse::<u64>().ok());
        let positive = |name: &str| number(name).filter(|n| *n > 0);
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        Settings {
            max_runs: number("PIPEWRIGHT_MAX_RUNS").map(size),
            max_file_mb: positive("PIPEWRIGHT_MAX_FILE_MB"),
            max_alias_mb: positive("PIPEWRIGHT_MAX_ALIAS_MB").map(size),
            max_message_mb: positive("PIPEWRIGHT_MAX_MESSAGE_MB").map(size),
            max_tool_list_mb: positive("PIPEWRIGHT_MAX_TOOL_LIST_MB").map(size),
            judge_max_reply_kb: positive("PIPEWRIGHT_JUDGE_MAX_REPLY_KB").map(size),
            jq_steps: positive("PIPEWRIGHT_JQ_STEPS"),
            jq_seconds: positive("PIPEWRIGHT_JQ_SECONDS"),
            jq_memory_mb: positive("PIPEWRIGHT_JQ_MEMORY_MB"),
            auth_prompt: var("PIPEWRIGHT_AUTH_PROMPT"),
        }
    }
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Sets this process's settings; the first call wins, and a call after a
/// setting was read changes nothing (the binary calls it first thing).
pub fn install(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

/// The settings in force: as installed, else nothing set.
pub fn get() -> &'static Settings {
    SETTINGS.get_or_init(Settings::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_trimmed_and_limits_must_be_above_zero() {
        let env = [
            ("PIPEWRIGHT_MAX_RUNS", "0"),
            ("PIPEWRIGHT_MAX_FILE_MB", " 3 "),
            ("PIPEWRIGHT_MAX_ALIAS_MB", "0"),
            ("PIPEWRIGHT_MAX_MESSAGE_MB", "lots"),
            ("PIPEWRIGHT_JQ_STEPS", "1000"),
            ("PIPEWRIGHT_AUTH_PROMPT", "Never"),
        ];
        let s = Settings::from_lookup(|name| {
            env.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        });
        assert_eq!(s.max_runs, Some(0), "0 runs is no cap");
        assert_eq!(s.max_file_mb, Some(3));
        assert_eq!(s.max_alias_mb, None, "a 0 limit is not taken");
        assert_eq!(s.max_message_mb, None);
        assert_eq!(s.jq_steps, Some(1000));
        assert_eq!(s.jq_seconds, None);
        assert_eq!(s.auth_prompt.as_deref(), Some("Never"));
    }

    #[test]
    fn nothing_set_is_the_default() {
        assert_eq!(Settings::from_lookup(|_| None), Settings::default());
    }
}
