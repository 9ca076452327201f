//! The app's handle on the engine's session: whether one exists (or is
//! being started) for the plan on screen, what it was started for, and the
//! destructive calls the person allowed. The session itself runs in the
//! event loop; the app only asks for it through effects.

use std::collections::BTreeSet;

/// What the app knows of its session.
#[derive(Debug, Default)]
pub(crate) struct SessionHandle {
    /// A session exists (or is being started) for the current plan.
    open: bool,
    /// The servers and composition the session was started for; a change
    /// means a new session.
    key: Option<String>,
    /// The destructive calls the user allowed, as `node→tool` (asked again
    /// when the plan calls another one).
    allowed_destructive: BTreeSet<String>,
}

impl SessionHandle {
    /// Whether a session exists (or is being started).
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    /// Whether the person allowed the destructive call `node→tool`.
    pub(crate) fn allows(&self, call: &str) -> bool {
        self.allowed_destructive.contains(call)
    }

    /// The person allowed these destructive calls (`node→tool`).
    pub(crate) fn allow(&mut self, calls: Vec<String>) {
        self.allowed_destructive.extend(calls);
    }

    /// A session is being started for `key`.
    pub(crate) fn started(&mut self, key: String) {
        self.open = true;
        self.key = Some(key);
    }

    /// The session is gone (dropped, or it failed to start); true when one
    /// was open, so the loop must be told to drop it.
    pub(crate) fn close(&mut self) -> bool {
        self.key = None;
        std::mem::take(&mut self.open)
    }

    /// Whether the open session was started for `key`.
    pub(crate) fn is_for(&self, key: &str) -> bool {
        self.open && self.key.as_deref() == Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_for_the_key_it_was_started_with_until_closed() {
        let mut s = SessionHandle::default();
        assert!(!s.is_for("main"));
        assert!(!s.close(), "nothing to drop");
        s.started("main".into());
        assert!(s.is_for("main"));
        assert!(!s.is_for("other"));
        assert!(s.close(), "the open session is to be dropped");
        assert!(!s.open && s.key.is_none());
        assert!(!s.is_for("main"));
    }
}
