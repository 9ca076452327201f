//! Undo in the steps people expect: typed characters coalesce into one step
//! per word (a run of deletions into one), a paste or any other edit is one
//! step, and redo mirrors undo. ratatui-textarea records every edit on its
//! own; a step here is a group of its edits, known by the text's hash
//! before and after it, and undone or redone one textarea edit at a time
//! until the text is back at that hash (so no edit is ever skipped over).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// A pause longer than this between two typed characters starts a new
/// step.
pub const PAUSE: Duration = Duration::from_millis(1000);

/// Steps kept; the textarea keeps as many edits, so older steps could not
/// be undone anyway.
const MAX_STEPS: usize = 10_000;

/// What an edit was, for deciding whether it joins the step before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A typed character (not a newline).
    Type(char),
    /// Backspace, Delete, or a word deleted.
    Delete,
    /// Anything else: a newline, a paste, a cut, a replaced text. Always a
    /// step of its own.
    Other,
}

/// One undo step: the text's hash before it and (once undone) after it.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub before: u64,
    pub after: u64,
}

/// The step still growing: the next edit may join it.
#[derive(Debug, Clone, Copy)]
struct Open {
    deleting: bool,
    /// The last typed character was whitespace: a word starting now is a
    /// new step.
    last_ws: bool,
    at: Instant,
    /// Where the cursor was after the step's last edit.
    cursor: (usize, usize),
}

/// The undo and redo stacks of steps.
#[derive(Debug, Default)]
pub struct Steps {
    done: VecDeque<Step>,
    undone: Vec<Step>,
    open: Option<Open>,
}

impl Steps {
    /// Whether an edit of `kind` at `cursor` (with no selection) joins the
    /// step being typed.
    pub fn joins(&self, kind: Kind, cursor: (usize, usize), selecting: bool, now: Instant) -> bool {
        let Some(open) = &self.open else {
            return false;
        };
        if selecting || open.cursor != cursor || now.duration_since(open.at) > PAUSE {
            return false;
        }
        match kind {
            Kind::Type(c) => !open.deleting && (!open.last_ws || c.is_whitespace()),
            Kind::Delete => open.deleting,
            Kind::Other => false,
        }
    }

    /// Records an edit that changed the text: a new step when `before`
    /// (the text's hash before it) is given, else one more edit of the
    /// open step.
    pub fn record(
        &mut self,
        kind: Kind,
        before: Option<u64>,
        cursor: (usize, usize),
        now: Instant,
    ) {
        if let Some(before) = before {
            self.undone.clear();
            if self.done.len() == MAX_STEPS {
                self.done.pop_front();
            }
            self.done.push_back(Step { before, after: 0 });
        }
        self.open = match kind {
            Kind::Type(c) => Some(Open {
                deleting: false,
                last_ws: c.is_whitespace(),
                at: now,
                cursor,
            }),
            Kind::Delete => Some(Open {
                deleting: true,
                last_ws: false,
                at: now,
                cursor,
            }),
            Kind::Other => None,
        };
    }

    /// The next edit starts a new step (the cursor moved, a key other than
    /// typing was pressed, …).
    pub fn close(&mut self) {
        self.open = None;
    }

    /// The step to undo, moved to the redo stack with `after`, the text's
    /// hash now.
    pub fn undo(&mut self, after: u64) -> Option<Step> {
        self.open = None;
        let mut step = self.done.pop_back()?;
        step.after = after;
        self.undone.push(step);
        Some(step)
    }

    /// The step to redo, moved back to the undo stack.
    pub fn redo(&mut self) -> Option<Step> {
        self.open = None;
        let step = self.undone.pop()?;
        self.done.push_back(step);
        Some(step)
    }
}
