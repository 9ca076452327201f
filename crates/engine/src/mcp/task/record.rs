//! What a call made as an MCP task tells while it runs: each status the
//! server gave it ([`TaskNote`]), kept with the call as a [`TaskRecord`].

use serde::{Deserialize, Serialize};

/// The status pipewright gives a task after it sent `tasks/cancel`; the
/// server's own word (`cancelled`) may follow.
pub const CANCEL_SENT: &str = "cancel_sent";

/// One status of a task: `working`, `input_required`, `completed`,
/// `failed`, `cancelled` (the server's), or [`CANCEL_SENT`] (pipewright's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskNote {
    /// The server's `taskId`.
    pub task: String,
    pub status: String,
    /// The server's `statusMessage` (for [`CANCEL_SENT`]: why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl TaskNote {
    /// `task working: Gathering sources...`: the live line's words.
    pub fn text(&self) -> String {
        match &self.message {
            Some(m) => format!("task {}: {m}", self.status),
            None => format!("task {}", self.status),
        }
    }
}

/// One step of a task's history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskStep {
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A call made as a task: its id, its last status, and every status it
/// went through (at most [`MAX_STEPS`], the first and the latest kept).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub id: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// True once pipewright sent `tasks/cancel` for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cancel_sent: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<TaskStep>,
}

/// At most this many steps are kept per task.
pub const MAX_STEPS: usize = 100;

impl TaskRecord {
    /// Adds a status (a repeat of the last one is not a new step).
    pub fn note(&mut self, note: &TaskNote) {
        self.id.clone_from(&note.task);
        self.cancel_sent |= note.status == CANCEL_SENT;
        let step = TaskStep {
            status: note.status.clone(),
            message: note.message.clone(),
        };
        if self.history.last() == Some(&step) {
            return;
        }
        if note.status != CANCEL_SENT || self.status.is_empty() {
            self.status.clone_from(&note.status);
            self.message.clone_from(&note.message);
        }
        if self.history.len() >= MAX_STEPS {
            self.history.remove(1);
        }
        self.history.push(step);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(status: &str, message: Option<&str>) -> TaskNote {
        TaskNote {
            task: "t1".into(),
            status: status.into(),
            message: message.map(str::to_owned),
        }
    }

    #[test]
    fn a_record_keeps_each_change_once_and_the_cancel() {
        let mut r = TaskRecord::default();
        r.note(&note("working", Some("a")));
        r.note(&note("working", Some("a")));
        r.note(&note("working", Some("b")));
        r.note(&note(CANCEL_SENT, Some("timed out")));
        assert_eq!(r.id, "t1");
        assert_eq!(r.history.len(), 3);
        assert!(r.cancel_sent);
        // The server's last word stays the status.
        assert_eq!(r.status, "working");
        r.note(&note("cancelled", None));
        assert_eq!(r.status, "cancelled");
        assert_eq!(note("working", Some("x")).text(), "task working: x");
    }
}
