//! The mode the workbench is in (what the keys do now) and the messages
//! it keeps for the Messages pane.

use super::*;
use crate::mode::{LOG_CAP, LogEntry};

impl App {
    /// What the keys do now.
    pub fn mode(&self) -> Mode {
        if self.asks.shown() {
            return Mode::Ask;
        }
        if self.overlay.is_some() {
            return Mode::Overlay;
        }
        match self.focus {
            Focus::Editor if self.viewing.is_none() => Mode::Edit,
            Focus::Inspector if self.inspector.filter_editing() => Mode::Filter,
            Focus::Inspector if self.inspector.find_typing() => Mode::Search,
            Focus::Inspector => Mode::Inspect,
            _ => Mode::Dag,
        }
    }

    /// Adds a line to the Messages pane only (what happened, for the
    /// record), leaving the status bar as it is.
    pub fn note(&mut self, text: impl Into<String>) {
        self.log_line(text.into(), false);
    }

    /// Shows a message in the status bar for a few seconds.
    /// The whole text goes to the Messages pane.
    pub fn say(&mut self, text: impl Into<String>, error: bool) {
        let text = text.into();
        self.log_line(text.clone(), error);
        self.message = Some(Message {
            text,
            error,
            at: Instant::now(),
            about: None,
        });
    }

    /// Says something about node `id`'s call in flight: the message goes
    /// when the node (or the run) ends.
    pub fn say_about(&mut self, id: &str, text: impl Into<String>, error: bool) {
        self.say(text, error);
        if let Some(m) = &mut self.message {
            m.about = Some(id.to_owned());
        }
    }

    /// Drops the status message about `id`'s call in flight (any node's,
    /// with `None`).
    pub(crate) fn drop_message_about(&mut self, id: Option<&str>) {
        if let Some(about) = self.message.as_ref().and_then(|m| m.about.as_deref())
            && id.is_none_or(|id| id == about)
        {
            self.message = None;
        }
    }

    /// Keeps `text` in the Messages pane, the oldest lines going past
    /// [`LOG_CAP`].
    fn log_line(&mut self, text: String, error: bool) {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.log.push(LogEntry { at, text, error });
        if self.log.len() > LOG_CAP {
            let extra = self.log.len() - LOG_CAP;
            self.log.drain(..extra);
        }
    }

    /// Totals of what has run: (ok, failed, cost, tokens).
    pub fn totals(&self) -> (usize, usize, f64, u64) {
        let mut ok = 0;
        let mut failed = 0;
        let mut cost = 0.0;
        let mut tokens = 0;
        for v in &self.visuals {
            match v.status {
                NodeStatus::Ok => ok += 1,
                NodeStatus::Failed => failed += 1,
                _ => {}
            }
            if let Some(r) = &v.record {
                cost += r.cost_usd;
                tokens += r.tokens;
            }
        }
        (ok, failed, cost, tokens)
    }

    /// The ids of the nodes running now.
    pub fn running(&self) -> Vec<&str> {
        match &self.comp {
            Some(c) => c
                .nodes
                .iter()
                .zip(&self.visuals)
                .filter(|(_, v)| v.status == NodeStatus::Running)
                .map(|(n, _)| n.id.as_str())
                .collect(),
            None => Vec::new(),
        }
    }
}
