//! The workbench's config file and the places it keeps things, located with
//! the `directories` crate: `config.yaml` and `themes/` in the config
//! directory, recovery copies and run traces in the data directory.
//!
//! ```yaml
//! theme: dark            # dark | light | high-contrast | a file in themes/
//! keys:                  # each entry replaces that action's keys
//!   run: [F5, ctrl-r]
//!   quit: [ctrl-q]
//! sampling:              # writes servers' sampling replies on request
//!   url: https://api.openai.com/v1
//!   model: gpt-4o-mini
//!   api_key: ${env.OPENAI_API_KEY}
//! judge:                 # grades `eval:` (read by `engine::eval::provider`)
//!   url: http://127.0.0.1:11434/v1
//!   model: llama3.1
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::keys::Keymap;
use super::theme::Theme;
use pipewright_engine::mcp::human::provider::Provider;

/// Where config, themes and data live.
#[derive(Debug, Clone, Default)]
pub struct Dirs {
    pub(crate) config: Option<PathBuf>,
    pub(crate) data: Option<PathBuf>,
}

impl Dirs {
    /// Config (`config.yaml`, `themes/`) in `config`, recovery copies and
    /// runs in `data`; none: not kept.
    pub fn new(config: Option<PathBuf>, data: Option<PathBuf>) -> Dirs {
        Dirs { config, data }
    }

    /// The config directory, if there is one.
    pub fn config(&self) -> Option<&Path> {
        self.config.as_deref()
    }

    /// The data directory, if there is one.
    pub fn data(&self) -> Option<&Path> {
        self.data.as_deref()
    }

    /// The directories the driver's settings name (the platform's, unless
    /// `PIPEWRIGHT_CONFIG_DIR` and `PIPEWRIGHT_DATA_DIR` say otherwise).
    pub fn of(settings: &pipewright_engine::settings::Settings) -> Dirs {
        Dirs {
            config: settings.config_dir.clone(),
            data: settings.data_dir.clone(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    theme: Option<String>,
    #[serde(default)]
    keys: BTreeMap<String, Vec<String>>,
    sampling: Option<Provider>,
    /// Read where judges are chosen (`engine::eval::provider`); checked
    /// here so a typo in it is named when the workbench starts.
    #[allow(dead_code)]
    judge: Option<pipewright_engine::eval::provider::JudgeFile>,
}

/// The settings the workbench starts with.
#[derive(Debug, Clone)]
pub struct Config {
    pub theme: Theme,
    pub keymap: Keymap,
}

impl Config {
    /// Reads `config.yaml` from the config directory (a missing file means
    /// the defaults); `theme_override` (the `--theme` flag) wins over it.
    /// Errors name the file and what is wrong with it.
    pub fn load(dirs: &Dirs, theme_override: Option<&str>) -> Result<Config, String> {
        Config::load_with_sampling(dirs, theme_override).map(|(c, _)| c)
    }

    /// Like [`Config::load`], with the file's `sampling:` provider: the
    /// model that may write a sampling reply when the person asks (the
    /// pipeline file's `sampling:` wins over it).
    pub fn load_with_sampling(
        dirs: &Dirs,
        theme_override: Option<&str>,
    ) -> Result<(Config, Option<Provider>), String> {
        Config::load_all(dirs, theme_override).map(|(c, p, _)| (c, p))
    }

    /// Like [`Config::load_with_sampling`], and whether the theme was
    /// chosen (`--theme`, or `theme:` in the file): when it was not, the
    /// workbench may fit the default to the terminal's background.
    pub(crate) fn load_all(
        dirs: &Dirs,
        theme_override: Option<&str>,
    ) -> Result<(Config, Option<Provider>, bool), String> {
        let path = dirs.config.as_ref().map(|d| d.join("config.yaml"));
        let file = match path.as_deref().map(std::fs::read_to_string) {
            Some(Ok(text)) => parse(&text, path.as_deref())?,
            _ => ConfigFile::default(),
        };
        let chosen = theme_override.is_some() || file.theme.is_some();
        let name = theme_override
            .map(str::to_owned)
            .or(file.theme)
            .unwrap_or_else(|| "dark".into());
        let theme = Theme::load(&name, dirs.config.as_deref()).map_err(|e| e.to_string())?;
        let keymap = Keymap::with_overrides(&file.keys).map_err(|e| match &path {
            Some(p) => format!("{}: {e}", p.display()),
            None => e,
        })?;
        Ok((Config { theme, keymap }, file.sampling, chosen))
    }
}

fn parse(text: &str, path: Option<&Path>) -> Result<ConfigFile, String> {
    if text.trim().is_empty() {
        return Ok(ConfigFile::default());
    }
    serde_saphyr::from_str(text).map_err(|e| {
        let name = path.map(|p| p.display().to_string()).unwrap_or_default();
        format!("{name}: {e}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    use crate::keys::Action;

    fn dirs_with(config: &str) -> (tempfile::TempDir, Dirs) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.yaml"), config).unwrap();
        let dirs = Dirs {
            config: Some(dir.path().to_path_buf()),
            data: None,
        };
        (dir, dirs)
    }

    #[test]
    fn missing_config_gives_defaults() {
        let c = Config::load(&Dirs::default(), None).unwrap();
        assert_eq!(c.theme.name, "dark");
    }

    /// Review item 9: only a theme nobody chose is fitted to the
    /// terminal; `--theme` and `theme:` always win.
    #[test]
    fn a_chosen_theme_is_known_as_chosen() {
        let (_, _, chosen) = Config::load_all(&Dirs::default(), None).unwrap();
        assert!(!chosen);
        let (_, _, chosen) = Config::load_all(&Dirs::default(), Some("dark")).unwrap();
        assert!(chosen, "--theme dark is a choice");
        let (_d, dirs) = dirs_with("theme: dark\n");
        let (_, _, chosen) = Config::load_all(&dirs, None).unwrap();
        assert!(chosen, "theme: in config.yaml is a choice");
    }

    #[test]
    fn config_picks_theme_and_keys() {
        let (_d, dirs) = dirs_with("theme: light\nkeys:\n  run: [ctrl-r]\n");
        let c = Config::load(&dirs, None).unwrap();
        assert_eq!(c.theme.name, "light");
        let ev = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
        assert_eq!(c.keymap.action(&ev, true), Some(Action::Run));
        // --theme wins over the file.
        let c = Config::load(&dirs, Some("high-contrast")).unwrap();
        assert_eq!(c.theme.name, "high-contrast");
    }

    #[test]
    fn user_theme_files_are_found() {
        let (d, dirs) = dirs_with("theme: mine\n");
        std::fs::create_dir(d.path().join("themes")).unwrap();
        let text = crate::theme::BUILTIN[0]
            .1
            .replace("name: dark", "name: mine");
        std::fs::write(d.path().join("themes/mine.yaml"), text).unwrap();
        assert_eq!(Config::load(&dirs, None).unwrap().theme.name, "mine");
    }

    #[test]
    fn config_may_name_a_sampling_provider() {
        let (_d, dirs) = dirs_with("sampling:\n  url: http://127.0.0.1:9/v1\n  model: m1\n");
        let (_, p) = Config::load_with_sampling(&dirs, None).unwrap();
        assert_eq!(p.map(|p| p.model), Some("m1".to_owned()));
    }

    #[test]
    fn bad_config_names_the_file_and_the_problem() {
        let (_d, dirs) = dirs_with("colour: red\n");
        let e = Config::load(&dirs, None).unwrap_err();
        assert!(e.contains("config.yaml") && e.contains("colour"), "{e}");
        let (_d, dirs) = dirs_with("keys:\n  fly: [F2]\n");
        let e = Config::load(&dirs, None).unwrap_err();
        assert!(e.contains("keys.fly"), "{e}");
        let (_d, dirs) = dirs_with("theme: neon\n");
        let e = Config::load(&dirs, None).unwrap_err();
        assert!(e.contains("neon"), "{e}");
    }
}
