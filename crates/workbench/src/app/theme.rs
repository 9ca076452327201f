//! The theme the workbench starts with when none was chosen: the light one
//! on a terminal that says its background is light (OSC 11, asked by the
//! terminal loop), else the dark one, with a word on how to choose when
//! the terminal does not say.

use super::App;
use crate::theme::Theme;

/// Where the data directory keeps that the hint was shown once.
const HINT_SHOWN: &str = "theme-hint-shown";

impl App {
    /// Whether no `--theme` and no `theme:` in config.yaml chose the
    /// theme (and `NO_COLOR` did not take every colour away).
    pub(crate) fn theme_by_default(&self) -> bool {
        self.theme_default && !self.theme.mono
    }

    /// Fits the default theme to the terminal: `Some(true)` a light
    /// background, `Some(false)` a dark one, `None` it did not say. A
    /// light terminal gets the light theme (said in Messages); where no
    /// answer came, the status line says once (per data directory) how to
    /// pick a theme, and Messages every time.
    pub(crate) fn fit_theme(&mut self, light: Option<bool>) {
        match light {
            Some(true) => match Theme::load("light", self.dirs.config()) {
                Ok(t) => {
                    self.theme = t;
                    self.note(
                        "the terminal's background is light: the light theme (--theme or theme: in config.yaml picks another)",
                    );
                }
                Err(e) => self.note(e.to_string()),
            },
            Some(false) => {}
            None => {
                let hint = "dark theme: the terminal did not say its background; on a light one use --theme light (or theme: light in config.yaml)";
                let marker = self.dirs.data().map(|d| d.join(HINT_SHOWN));
                match marker {
                    Some(m) if !m.exists() => {
                        self.say(hint, false);
                        let _ = std::fs::create_dir_all(m.parent().unwrap_or(&m));
                        let _ = std::fs::write(&m, "");
                    }
                    _ => self.note(hint),
                }
            }
        }
    }
}
