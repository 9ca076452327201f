//! The jq filter box of the Output tab: the text being typed, and the
//! compile-and-run of it on a background thread, latest edit wins.

use std::sync::mpsc::Sender;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

use super::shared::SharedValue;
use pipewright_engine::lang::jq::{JqCompileError, JqProgram};

/// Where the filter is at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterState {
    /// No filter: the whole output is shown.
    Empty,
    /// Compiling and running in the background.
    Running,
    /// The filter produced this many results, shown in the tree.
    Ok(usize),
    /// The program does not compile.
    Compile(JqCompileError),
    /// The program failed on this output.
    Run(String),
}

/// A finished background filter run.
#[derive(Debug)]
pub struct FilterDone {
    /// The edit it belongs to; stale results are dropped.
    pub generation: u64,
    pub result: Result<Vec<Value>, FilterState>,
}

/// What a key did to the box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// The text changed: run the filter again.
    Changed,
    /// The cursor moved, or an editing key had nothing to do.
    Moved,
    /// The box was left (Enter or Esc).
    Closed,
    /// Not a key the box uses (function keys, Ctrl chords): the app's.
    Ignored,
}

/// The filter box.
#[derive(Debug)]
pub struct FilterBox {
    text: String,
    /// Byte index of the cursor in `text`.
    cursor: usize,
    editing: bool,
    state: FilterState,
    generation: u64,
}

impl Default for FilterBox {
    fn default() -> Self {
        FilterBox {
            text: String::new(),
            cursor: 0,
            editing: false,
            state: FilterState::Empty,
            generation: 0,
        }
    }
}

impl FilterBox {
    /// The filter text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Cursor position in characters.
    pub fn cursor_col(&self) -> usize {
        self.text[..self.cursor].chars().count()
    }

    /// Keys go to the box.
    pub fn editing(&self) -> bool {
        self.editing
    }

    /// Where the filter is at.
    pub fn state(&self) -> &FilterState {
        &self.state
    }

    /// Whether a filter applies to the view (it is not empty).
    pub fn active(&self) -> bool {
        !self.text.trim().is_empty()
    }

    /// Whether the filter, as typed, fails (does not compile, or fails on
    /// this output).
    pub fn failed(&self) -> bool {
        matches!(self.state, FilterState::Compile(_) | FilterState::Run(_))
    }

    /// Opens the box for typing.
    pub fn open(&mut self) {
        self.editing = true;
        self.cursor = self.text.len();
    }

    /// Replaces the text (tests, history) and leaves the cursor at its end.
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_owned();
        self.cursor = self.text.len();
    }

    /// Applies one key while editing.
    pub fn edit(&mut self, key: KeyEvent) -> Edit {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc | KeyCode::Enter => {
                self.editing = false;
                Edit::Closed
            }
            KeyCode::Char('u') if ctrl => {
                self.text.clear();
                self.cursor = 0;
                Edit::Changed
            }
            KeyCode::Char(_) if ctrl || key.modifiers.contains(KeyModifiers::ALT) => Edit::Ignored,
            KeyCode::Char(c) => {
                self.text.insert(self.cursor, c);
                self.cursor += c.len_utf8();
                Edit::Changed
            }
            KeyCode::Backspace => match self.text[..self.cursor].chars().next_back() {
                Some(c) => {
                    self.cursor -= c.len_utf8();
                    self.text.remove(self.cursor);
                    Edit::Changed
                }
                None => Edit::Moved,
            },
            KeyCode::Delete => {
                if self.cursor < self.text.len() {
                    self.text.remove(self.cursor);
                    Edit::Changed
                } else {
                    Edit::Moved
                }
            }
            KeyCode::Left => {
                if let Some(c) = self.text[..self.cursor].chars().next_back() {
                    self.cursor -= c.len_utf8();
                }
                Edit::Moved
            }
            KeyCode::Right => {
                if let Some(c) = self.text[self.cursor..].chars().next() {
                    self.cursor += c.len_utf8();
                }
                Edit::Moved
            }
            KeyCode::Home => {
                self.cursor = 0;
                Edit::Moved
            }
            KeyCode::End => {
                self.cursor = self.text.len();
                Edit::Moved
            }
            // Function keys, Tab, Ctrl-chords: the app's (F5 still runs).
            _ => Edit::Ignored,
        }
    }

    /// Starts running the current text on `input` in the background; the
    /// result comes back through `done` tagged with a new generation.
    /// An empty filter, or no input (the node has not run), finishes at once.
    pub fn run<T>(&mut self, input: Option<SharedValue>, done: Sender<T>)
    where
        T: From<FilterDone> + Send + 'static,
    {
        self.generation += 1;
        let Some(input) = input.filter(|_| self.active()) else {
            self.state = FilterState::Empty;
            return;
        };
        self.state = FilterState::Running;
        let generation = self.generation;
        let text = self.text.clone();
        std::thread::spawn(move || {
            let result = run_filter(&text, input.get());
            // The inspector may be gone; then nobody wants the result.
            let _ = done.send(T::from(FilterDone { generation, result }));
        });
    }

    /// Takes a finished run if it belongs to the latest edit; returns the
    /// values to show.
    pub fn finish(&mut self, done: FilterDone) -> Option<Vec<Value>> {
        if done.generation != self.generation || !self.active() {
            return None;
        }
        match done.result {
            Ok(values) => {
                self.state = FilterState::Ok(values.len());
                Some(values)
            }
            Err(state) => {
                self.state = state;
                None
            }
        }
    }

    /// Forgets any run in flight (the node changed).
    pub fn invalidate(&mut self) {
        self.generation += 1;
        self.state = FilterState::Empty;
    }
}

/// Compiles and runs `text` on `input`.
pub fn run_filter(text: &str, input: &Value) -> Result<Vec<Value>, FilterState> {
    let program = JqProgram::compile(text).map_err(FilterState::Compile)?;
    program.run(input).map_err(|e| FilterState::Run(e.message))
}

/// The column (in characters) of a byte offset in `text`.
pub fn column_of(text: &str, offset: usize) -> usize {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text[..at].chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;
    use std::sync::mpsc;
    use std::time::Duration;

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    fn type_text(b: &mut FilterBox, s: &str) {
        for c in s.chars() {
            assert_eq!(b.edit(key(KeyCode::Char(c))), Edit::Changed);
        }
    }

    #[test]
    fn a_filter_runs_on_its_input() {
        let out = run_filter(
            ".users | map(.id)",
            &json!({"users": [{"id": 1}, {"id": 2}]}),
        );
        assert_eq!(out, Ok(vec![json!([1, 2])]));
        let many = run_filter(".[]", &json!([1, 2, 3])).unwrap();
        assert_eq!(many.len(), 3);
    }

    #[test]
    fn a_compile_error_has_a_position() {
        let Err(FilterState::Compile(e)) = run_filter(".users | lenght", &json!({})) else {
            panic!("expected a compile error");
        };
        let p = e.first().unwrap();
        assert_eq!(column_of(".users | lenght", p.offset), 9);
        assert!(p.message.contains("lenght"), "{}", p.message);
    }

    #[test]
    fn a_runtime_error_is_a_sentence() {
        let Err(FilterState::Run(m)) = run_filter(".a.b", &json!({"a": 1})) else {
            panic!("expected a runtime error");
        };
        assert!(m.contains("cannot index"), "{m}");
    }

    /// The filter runs on a thread of its own, with the limits of any jq
    /// program: a value a million levels deep overflowed that thread's
    /// stack and aborted the workbench (leaving the terminal raw).
    #[test]
    fn a_hostile_filter_is_stopped_on_its_thread_with_a_sentence() {
        let (tx, rx) = mpsc::channel::<FilterDone>();
        let mut b = FilterBox::default();
        b.open();
        type_text(&mut b, "reduce range(1000000) as $i (null; [.]) | length");
        b.run(Some(SharedValue::from(Arc::new(json!(null)))), tx);
        let done = rx.recv_timeout(Duration::from_secs(60)).unwrap();
        assert_eq!(b.finish(done), None);
        let FilterState::Run(m) = b.state() else {
            panic!("expected a runtime error: {:?}", b.state());
        };
        assert!(m.contains("nested more than 512 levels deep"), "{m}");
    }

    #[test]
    fn editing_moves_the_cursor_over_characters() {
        let mut b = FilterBox::default();
        b.open();
        type_text(&mut b, ".nämé");
        assert_eq!(b.cursor_col(), 5);
        b.edit(key(KeyCode::Left));
        b.edit(key(KeyCode::Backspace));
        assert_eq!(b.text(), ".näé");
        b.edit(key(KeyCode::Home));
        b.edit(key(KeyCode::Delete));
        assert_eq!(b.text(), "näé");
        assert_eq!(b.edit(key(KeyCode::F(5))), Edit::Ignored);
        assert_eq!(
            b.edit(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL)),
            Edit::Changed
        );
        assert_eq!(b.text(), "");
        assert_eq!(b.edit(key(KeyCode::Esc)), Edit::Closed);
        assert!(!b.editing());
    }

    #[test]
    fn only_the_latest_run_counts() {
        let (tx, rx) = mpsc::channel::<FilterDone>();
        let input = Arc::new(json!({"a": 1, "b": 2}));
        let mut b = FilterBox::default();
        b.open();
        type_text(&mut b, ".a");
        b.run(Some(SharedValue::from(Arc::clone(&input))), tx.clone());
        let first = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        b.edit(key(KeyCode::Backspace));
        type_text(&mut b, "b");
        b.run(Some(SharedValue::from(Arc::clone(&input))), tx.clone());
        assert_eq!(b.state(), &FilterState::Running);
        // The older result arrives late: dropped.
        assert_eq!(b.finish(first), None);
        let second = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(b.finish(second), Some(vec![json!(2)]));
        assert_eq!(b.state(), &FilterState::Ok(1));
    }
}
