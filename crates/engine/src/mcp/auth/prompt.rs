//! What a connection does when a server wants a login: the process-wide
//! setting (`PIPEWRIGHT_AUTH_PROMPT`, else as the driver set it, else
//! [`Prompt::Never`]), and where the authorization URL is told (the
//! driver's `say`; the engine writes to no terminal).

use std::sync::{Mutex, PoisonError};

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

/// Where a login's messages go: the authorization URL to open, then that
/// it succeeded.
pub type Say = fn(&str);

static PROMPT: Mutex<Option<(Prompt, Say)>> = Mutex::new(None);

/// Sets what connections of this process do when a server wants a login,
/// and where [`Prompt::Terminal`] and [`Prompt::Print`] tell the user.
pub fn set_prompt(prompt: Prompt, say: Say) {
    *PROMPT.lock().unwrap_or_else(PoisonError::into_inner) = Some((prompt, say));
}

/// Tells the user `text` where the driver said; nothing if it said nowhere.
pub(super) fn say(text: &str) {
    if let Some((_, say)) = *PROMPT.lock().unwrap_or_else(PoisonError::into_inner) {
        say(text);
    }
}

/// The prompt in force: `PIPEWRIGHT_AUTH_PROMPT` (`never`, `terminal`,
/// `print`, `browser`), else as set, else [`Prompt::Never`].
pub fn prompt() -> Prompt {
    let from_env = crate::settings::get().auth_prompt.as_deref().and_then(|v| {
        match v.trim().to_ascii_lowercase().as_str() {
            "never" => Some(Prompt::Never),
            "terminal" => Some(Prompt::Terminal),
            "print" => Some(Prompt::Print),
            "browser" => Some(Prompt::BrowserOnly),
            _ => None,
        }
    });
    let set = PROMPT
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .map(|(p, _)| p);
    from_env.or(set).unwrap_or(Prompt::Never)
}
