//! What a connection does when a server wants a login ([`Prompt`]: the
//! driver's choice, unless `PIPEWRIGHT_AUTH_PROMPT` in its settings says
//! otherwise), where the authorization URL is told (the driver's `say`;
//! the engine writes to no terminal), where tokens are kept and which
//! browser opens. They travel in [`Logins`], which `ConnectOptions`
//! carries.

use std::{
    collections::HashSet,
    path::{Path, PathBuf},
    sync::{Arc, Mutex, PoisonError},
};

use super::error::OAuthError;
use super::store::TokenStore;

/// What a connection does when a server wants a login.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    /// Fail with a sentence that says to run `pipewright auth login`.
    Never,
    /// Tell the authorization URL (the driver's `say`), open a browser,
    /// wait.
    Terminal,
    /// Tell the authorization URL and wait; open no browser.
    Print,
    /// Open a browser and wait, printing nothing (the workbench owns the
    /// screen); fails like [`Prompt::Never`] if no browser opens.
    BrowserOnly,
}

impl Prompt {
    /// The prompt `PIPEWRIGHT_AUTH_PROMPT` names (`never`, `terminal`,
    /// `print`, `browser`, any case), if it names one.
    pub fn from_setting(value: &str) -> Option<Prompt> {
        match value.trim().to_ascii_lowercase().as_str() {
            "never" => Some(Prompt::Never),
            "terminal" => Some(Prompt::Terminal),
            "print" => Some(Prompt::Print),
            "browser" => Some(Prompt::BrowserOnly),
            _ => None,
        }
    }
}

/// Where a login's messages go: the authorization URL to open, then that
/// it succeeded.
pub type Say = fn(&str);

/// How the connections of one driver log in: the [`Prompt`], where it tells
/// the user, where tokens are kept, which browser opens, and the servers
/// already logged in by them (a second 401 from one of those is an error,
/// not another login). Clones share that set.
#[derive(Clone)]
pub struct Logins {
    prompt: Prompt,
    say: Say,
    /// The data directory, whose `auth/` keeps the tokens (`None`: no
    /// tokens are kept or used).
    data_dir: Option<PathBuf>,
    /// `$BROWSER`, as the driver's environment gives it.
    browser: Option<String>,
    made: Arc<Mutex<HashSet<String>>>,
}

impl Logins {
    /// Logins as `prompt` allows, told through `say`, keeping no tokens
    /// (see [`Logins::kept_in`]).
    pub fn new(prompt: Prompt, say: Say) -> Logins {
        Logins {
            prompt,
            say,
            data_dir: None,
            browser: None,
            made: Arc::default(),
        }
    }

    /// The same, keeping tokens in `auth/` of `data_dir`.
    pub fn kept_in(mut self, data_dir: Option<&Path>) -> Logins {
        self.data_dir = data_dir.map(Path::to_path_buf);
        self
    }

    /// The same, opening the authorization URL with `browser` (`$BROWSER`;
    /// `None`: the system's opener).
    pub fn with_browser(mut self, browser: Option<String>) -> Logins {
        self.browser = browser;
        self
    }

    /// Where these logins keep their tokens.
    pub(super) fn store(&self) -> Result<TokenStore, OAuthError> {
        TokenStore::in_data_dir(self.data_dir.as_deref())
    }

    /// `$BROWSER`, when the driver's environment sets it.
    pub(super) fn browser(&self) -> Option<&str> {
        self.browser.as_deref()
    }

    /// The prompt in force.
    pub fn prompt(&self) -> Prompt {
        self.prompt
    }

    /// Tells the user `text` where the driver said.
    pub(super) fn say(&self, text: &str) {
        (self.say)(text);
    }

    /// True when a connection with these logins logged in to `url` already.
    pub(super) fn made(&self, url: &str) -> bool {
        self.made
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(url)
    }

    /// Notes that a connection logged in to `url`.
    pub(super) fn note(&self, url: &str) {
        self.made
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(url.to_owned());
    }
}

impl Default for Logins {
    /// No login prompt ([`Prompt::Never`]), nothing told.
    fn default() -> Logins {
        Logins::new(Prompt::Never, |_| {})
    }
}

impl std::fmt::Debug for Logins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Logins")
            .field("prompt", &self.prompt)
            .field("data_dir", &self.data_dir)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_names_a_prompt_in_any_case_and_clones_share_the_logins() {
        assert_eq!(Prompt::from_setting(" Browser "), Some(Prompt::BrowserOnly));
        assert_eq!(Prompt::from_setting("NEVER"), Some(Prompt::Never));
        assert_eq!(Prompt::from_setting("sometimes"), None);
        let logins = Logins::new(Prompt::Print, |_| {});
        let clone = logins.clone();
        clone.note("http://127.0.0.1:9/mcp");
        assert!(logins.made("http://127.0.0.1:9/mcp"));
        assert!(!Logins::default().made("http://127.0.0.1:9/mcp"));
        assert_eq!(Logins::default().prompt(), Prompt::Never);
    }
}
