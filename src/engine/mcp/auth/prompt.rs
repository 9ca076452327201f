//! What a connection does when a server wants a login: the process-wide
//! setting (`PIPEWRIGHT_AUTH_PROMPT`, else as the driver set it, else a
//! guess from the terminal).

use std::sync::{Mutex, PoisonError};

use std::io::IsTerminal;

/// What a connection does when a server wants a login.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    /// Fail with a sentence that says to run `pipewright auth login`.
    Never,
    /// Print the authorization URL on stderr, open a browser, wait.
    Terminal,
    /// Print the authorization URL on stderr and wait; open no browser.
    Print,
    /// Open a browser and wait, printing nothing (the workbench owns the
    /// screen); fails like [`Prompt::Never`] if no browser opens.
    BrowserOnly,
}

static PROMPT: Mutex<Option<Prompt>> = Mutex::new(None);
/// Sets what connections of this process do when a server wants a login.
pub fn set_prompt(prompt: Prompt) {
    *PROMPT.lock().unwrap_or_else(PoisonError::into_inner) = Some(prompt);
}

/// The prompt in force: `PIPEWRIGHT_AUTH_PROMPT` (`never`, `terminal`,
/// `print`, `browser`), else as set, else [`Prompt::Terminal`] when stdin
/// and stderr are terminals, else [`Prompt::Never`].
pub fn prompt() -> Prompt {
    let from_env = crate::engine::settings::get()
        .auth_prompt
        .as_deref()
        .and_then(|v| match v.trim().to_ascii_lowercase().as_str() {
            "never" => Some(Prompt::Never),
            "terminal" => Some(Prompt::Terminal),
            "print" => Some(Prompt::Print),
            "browser" => Some(Prompt::BrowserOnly),
            _ => None,
        });
    let set = *PROMPT.lock().unwrap_or_else(PoisonError::into_inner);
    from_env.or(set).unwrap_or_else(|| {
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Prompt::Terminal
        } else {
            Prompt::Never
        }
    })
}
