//! Everything a driver may change about the engine: the limits of the
//! `PIPEWRIGHT_*` environment variables, where data and config live, the
//! process's [`Environment`] and the values of the command line's flags,
//! in one value the driver builds ([`Settings::from_environment`] over the
//! environment it read from its process, then its flags) and hands on:
//! [`Settings::connect_options`] to connections, and narrower values to
//! the loader, the jq evaluator, the runs store and the judge. The engine
//! keeps no settings of its own and reads nothing from its process; a
//! caller that builds none (a test, a benchmark) gets
//! [`Settings::default`], nothing set and an empty environment, whatever
//! its process's says. Each module keeps its own default for a value not
//! set, and says the variable's name in its errors.

use std::path::PathBuf;
use std::time::Duration;

use crate::environment::Environment;
use crate::file::import::FibeLimits;
use crate::file::open::LoadOptions;
use crate::lang::jq::JqLimits;
use crate::mcp::auth::{Logins, Prompt, Say};
use crate::mcp::{Choices, ConnectOptions, DEFAULT_SHUTDOWN_GRACE, LogLevel, MessageLimits};

/// What the environment and the driver's flags set; `None` is "not set,
/// or not a number we take" (each module then uses its default).
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
    /// `browser`); it overrides [`Settings::prompt`].
    pub auth_prompt: Option<String>,
    /// The driver's login prompt when `PIPEWRIGHT_AUTH_PROMPT` names none
    /// (`None`: [`Prompt::Never`]).
    pub prompt: Option<Prompt>,
    /// `--protocol`: the MCP revision for every server and by name.
    pub protocol: Choices,
    /// `--log-level`: asked of servers that log.
    pub log_level: Option<LogLevel>,
    /// `--shutdown-grace` (`None`: [`DEFAULT_SHUTDOWN_GRACE`]).
    pub shutdown_grace: Option<Duration>,
    /// `--fibe-max-steps` / `--fibe-max-iterations`.
    pub fibe: FibeLimits,
    /// Where saved runs, OAuth tokens and recovery copies live:
    /// `PIPEWRIGHT_DATA_DIR`, else the platform's (`None`: nowhere, and
    /// nothing is kept).
    pub data_dir: Option<PathBuf>,
    /// Where `config.yaml` and themes live: `PIPEWRIGHT_CONFIG_DIR`, else
    /// the platform's.
    pub config_dir: Option<PathBuf>,
    /// What the process was started with: what `${env.X}` reads, the
    /// working directory, the program, the user's directories.
    pub env: Environment,
}

impl Settings {
    /// What `env` sets: numbers are trimmed, and every limit but
    /// `PIPEWRIGHT_MAX_RUNS` must be above 0; `PIPEWRIGHT_DATA_DIR` and
    /// `PIPEWRIGHT_CONFIG_DIR` win over the platform's directories. The
    /// environment is kept, for everything else that reads it.
    pub fn from_environment(env: Environment) -> Settings {
        let var = |name: &str| env.var(name).map(str::to_owned);
        let number = |name: &str| var(name).and_then(|v| v.trim().parse::<u64>().ok());
        let positive = |name: &str| number(name).filter(|n| *n > 0);
        let size = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let dir = |name: &str, platform: &Option<PathBuf>| {
            env.var_os(name)
                .map(PathBuf::from)
                .or_else(|| platform.clone())
        };
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
            data_dir: dir("PIPEWRIGHT_DATA_DIR", &env.dirs().pipewright_data),
            config_dir: dir("PIPEWRIGHT_CONFIG_DIR", &env.dirs().pipewright_config),
            env: env.clone(),
            ..Settings::default()
        }
    }

    /// The login prompt in force: `PIPEWRIGHT_AUTH_PROMPT` (when it names
    /// one), else the driver's, else [`Prompt::Never`].
    pub fn login_prompt(&self) -> Prompt {
        self.auth_prompt
            .as_deref()
            .and_then(Prompt::from_setting)
            .or(self.prompt)
            .unwrap_or(Prompt::Never)
    }

    /// How this driver loads files: its limits and Fibe's caps, knowing the
    /// servers its command line adds (`cli_servers`).
    pub fn load_options(&self, cli_servers: Vec<String>) -> LoadOptions {
        LoadOptions {
            max_file_mb: self.max_file_mb,
            max_alias_mb: self.max_alias_mb,
            fibe: self.fibe,
            cli_servers,
            jq: self.jq_limits(),
        }
    }

    /// What one jq program of the driver's own files may spend (and
    /// call: every filter; `serve` sandboxes a caller's programs).
    pub fn jq_limits(&self) -> JqLimits {
        JqLimits {
            steps: self.jq_steps,
            seconds: self.jq_seconds,
            memory_mb: self.jq_memory_mb,
            sandboxed: false,
        }
    }

    /// The options of this driver's connections: its flags' revision, log
    /// level and shutdown grace, the working directory as the only root,
    /// and logins as [`Settings::login_prompt`] allows, told through `say`,
    /// with tokens kept in the data directory and `$BROWSER` opening the
    /// URL; the rest as [`ConnectOptions::default`].
    pub fn connect_options(&self, say: Say) -> ConnectOptions {
        ConnectOptions {
            shutdown_grace: self.shutdown_grace.unwrap_or(DEFAULT_SHUTDOWN_GRACE),
            log_level: self.log_level,
            protocol: self.protocol.clone(),
            logins: Logins::new(self.login_prompt(), say)
                .kept_in(self.data_dir.as_deref())
                .with_browser(self.env.var("BROWSER").map(str::to_owned)),
            roots: self
                .env
                .working_dir()
                .map(|dir| vec![crate::mcp::roots::Root::from_path(dir)])
                .unwrap_or_default(),
            limits: MessageLimits {
                max_message_mb: self.max_message_mb,
                max_tool_list_mb: self.max_tool_list_mb,
            },
            ..ConnectOptions::default()
        }
    }
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
        let s = Settings::from_environment(Environment::with_vars(env));
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
        assert_eq!(
            Settings::from_environment(Environment::default()),
            Settings::default()
        );
    }

    #[test]
    fn the_variables_name_the_directories_over_the_platforms() {
        let platform = crate::environment::PlatformDirs {
            pipewright_data: Some("/home/u/.local/share/pipewright".into()),
            pipewright_config: Some("/home/u/.config/pipewright".into()),
            ..Default::default()
        };
        let plain = Settings::from_environment(Environment::default().with_dirs(platform.clone()));
        assert_eq!(plain.data_dir, platform.pipewright_data);
        assert_eq!(plain.config_dir, platform.pipewright_config);
        let set = Settings::from_environment(
            Environment::with_vars([("PIPEWRIGHT_DATA_DIR", "/tmp/pw-data")]).with_dirs(platform),
        );
        assert_eq!(set.data_dir, Some("/tmp/pw-data".into()));
        assert_eq!(set.config_dir, Some("/home/u/.config/pipewright".into()));
        assert_eq!(set.env.var("PIPEWRIGHT_DATA_DIR"), Some("/tmp/pw-data"));
    }

    #[test]
    fn the_environment_prompt_beats_the_drivers_and_flags_reach_connections() {
        let mut s = Settings {
            prompt: Some(Prompt::Terminal),
            log_level: Some(LogLevel::Warning),
            shutdown_grace: Some(Duration::from_secs(2)),
            ..Settings::default()
        };
        assert_eq!(s.login_prompt(), Prompt::Terminal);
        s.auth_prompt = Some("never".into());
        assert_eq!(s.login_prompt(), Prompt::Never);
        s.auth_prompt = Some("sometimes".into());
        assert_eq!(
            s.login_prompt(),
            Prompt::Terminal,
            "an unknown value is not taken"
        );
        let opts = s.connect_options(|_| {});
        assert_eq!(opts.logins.prompt(), Prompt::Terminal);
        assert_eq!(opts.log_level, Some(LogLevel::Warning));
        assert_eq!(opts.shutdown_grace, Duration::from_secs(2));
        let plain = Settings::default().connect_options(|_| {});
        assert_eq!(plain.shutdown_grace, DEFAULT_SHUTDOWN_GRACE);
        assert_eq!(plain.logins.prompt(), Prompt::Never);
    }

    #[test]
    fn the_settings_reach_what_the_loader_builds() {
        let s = Settings {
            jq_steps: Some(1000),
            max_file_mb: Some(1),
            fibe: FibeLimits {
                max_steps: 1,
                max_iterations: 2,
            },
            ..Settings::default()
        };
        let opts = s.load_options(vec!["extra".into()]);
        assert_eq!(opts.max_file_bytes(), 1024 * 1024);
        assert_eq!(opts.cli_servers, ["extra"]);
        // A node may name the command line's server; its program runs
        // within the settings' steps, not the default 20 million.
        let text =
            "pipe:\n  - {id: a, server: extra, tool: t, transform: '[range(100000)] | length'}\n";
        let loaded = crate::file::open::load_str_with(text, Default::default(), &opts);
        let pipeline = loaded
            .pipeline
            .unwrap_or_else(|| panic!("loads: {:?}", loaded.diagnostics));
        let program = pipeline.compositions[0].nodes[0]
            .transform
            .clone()
            .expect("a transform");
        let err = program
            .run_one(&serde_json::Value::Null)
            .expect_err("stopped");
        assert!(err.to_string().contains("1000"), "{err}");
        let unlimited = crate::file::open::load_str(text);
        assert!(
            unlimited.has_errors(),
            "without the command line's server the node names an unknown one"
        );
        let fibe = "{\"steps\": [{\"tool\": \"a\"}, {\"tool\": \"b\"}]}";
        let capped = crate::file::open::load_str_with(fibe, Default::default(), &opts);
        assert!(
            capped
                .diagnostics
                .iter()
                .any(|d| d.message.contains("at most 1")),
            "{:?}",
            capped.diagnostics
        );
        assert!(!crate::file::open::load_str(fibe).has_errors());
    }
}
