//! A small text input for the question modal: one line for a form field,
//! several for a sampling reply. It takes the editing keys (characters,
//! Backspace, Delete, arrows, Home, End, readline's Ctrl-U, Ctrl-K, Ctrl-W,
//! Ctrl-A, Ctrl-E and, when multi-line, Enter); the modal's commands reach
//! it only when the keymap did not claim the key.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Text being typed, with a cursor (row, column in characters).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TextInput {
    lines: Vec<String>,
    row: usize,
    col: usize,
    multiline: bool,
}

impl TextInput {
    /// A one-line input holding `text`, the cursor at its end.
    pub fn line(text: &str) -> TextInput {
        let mut t = TextInput {
            multiline: false,
            ..TextInput::default()
        };
        t.set_text(text);
        t
    }

    /// A multi-line input (Enter breaks the line) holding `text`.
    pub fn area(text: &str) -> TextInput {
        let mut t = TextInput {
            multiline: true,
            ..TextInput::default()
        };
        t.set_text(text);
        t
    }

    /// Replaces the text; the cursor goes to its end.
    pub fn set_text(&mut self, text: &str) {
        self.lines = if self.multiline {
            text.split('\n').map(str::to_owned).collect()
        } else {
            vec![text.replace('\n', " ")]
        };
        if self.lines.is_empty() {
            self.lines.push(String::new());
        }
        self.row = self.lines.len() - 1;
        self.col = self.lines[self.row].chars().count();
    }

    /// The text, lines joined with `\n`.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The lines as typed.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The cursor: line and character column.
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    /// Types `text` at the cursor (a paste); newlines break lines when
    /// multi-line and become spaces otherwise.
    pub fn insert(&mut self, text: &str) {
        for c in text.chars() {
            match c {
                '\r' => {}
                '\n' if self.multiline => self.newline(),
                '\n' | '\t' => self.put(' '),
                c => self.put(c),
            }
        }
    }

    fn byte_at(&self, col: usize) -> usize {
        let line = &self.lines[self.row];
        line.char_indices().nth(col).map_or(line.len(), |(i, _)| i)
    }

    fn put(&mut self, c: char) {
        let at = self.byte_at(self.col);
        self.lines[self.row].insert(at, c);
        self.col += 1;
    }

    fn newline(&mut self) {
        let at = self.byte_at(self.col);
        let rest = self.lines[self.row].split_off(at);
        self.row += 1;
        self.lines.insert(self.row, rest);
        self.col = 0;
    }

    fn line_len(&self) -> usize {
        self.lines[self.row].chars().count()
    }

    /// An editing key; true when it changed the text or moved the cursor.
    /// Besides the plain keys, the readline chords every shell and most
    /// text fields take: Ctrl-U deletes to the start of the line, Ctrl-K to
    /// its end, Ctrl-W the word before the cursor, Ctrl-A and Ctrl-E go to
    /// the start and the end of the line.
    pub fn key(&mut self, key: KeyEvent) -> bool {
        if key.modifiers.contains(KeyModifiers::ALT) {
            return false;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) {
            return self.chord(key.code);
        }
        match key.code {
            KeyCode::Char(c) => self.put(c),
            KeyCode::Enter if self.multiline => self.newline(),
            KeyCode::Backspace if self.col > 0 => {
                self.col -= 1;
                let at = self.byte_at(self.col);
                self.lines[self.row].remove(at);
            }
            KeyCode::Backspace if self.row > 0 => {
                let line = self.lines.remove(self.row);
                self.row -= 1;
                self.col = self.line_len();
                self.lines[self.row].push_str(&line);
            }
            KeyCode::Delete if self.col < self.line_len() => {
                let at = self.byte_at(self.col);
                self.lines[self.row].remove(at);
            }
            KeyCode::Delete if self.row + 1 < self.lines.len() => {
                let next = self.lines.remove(self.row + 1);
                self.lines[self.row].push_str(&next);
            }
            KeyCode::Left if self.col > 0 => self.col -= 1,
            KeyCode::Left if self.row > 0 => {
                self.row -= 1;
                self.col = self.line_len();
            }
            KeyCode::Right if self.col < self.line_len() => self.col += 1,
            KeyCode::Right if self.row + 1 < self.lines.len() => {
                self.row += 1;
                self.col = 0;
            }
            KeyCode::Up if self.row > 0 => {
                self.row -= 1;
                self.col = self.col.min(self.line_len());
            }
            KeyCode::Down if self.row + 1 < self.lines.len() => {
                self.row += 1;
                self.col = self.col.min(self.line_len());
            }
            KeyCode::Home => self.col = 0,
            KeyCode::End => self.col = self.line_len(),
            _ => return false,
        }
        true
    }

    /// A Ctrl chord (see [`TextInput::key`]); false for one it does not
    /// take.
    fn chord(&mut self, code: KeyCode) -> bool {
        match code {
            KeyCode::Char('u') => {
                let at = self.byte_at(self.col);
                self.lines[self.row].replace_range(..at, "");
                self.col = 0;
            }
            KeyCode::Char('k') => {
                let at = self.byte_at(self.col);
                self.lines[self.row].truncate(at);
            }
            KeyCode::Char('w') => {
                let chars: Vec<char> = self.lines[self.row].chars().collect();
                let mut from = self.col;
                while from > 0 && chars[from - 1].is_whitespace() {
                    from -= 1;
                }
                while from > 0 && !chars[from - 1].is_whitespace() {
                    from -= 1;
                }
                let (a, b) = (self.byte_at(from), self.byte_at(self.col));
                self.lines[self.row].replace_range(a..b, "");
                self.col = from;
            }
            KeyCode::Char('a') => self.col = 0,
            KeyCode::Char('e') => self.col = self.line_len(),
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn types_moves_and_deletes_by_characters() {
        let mut t = TextInput::line("héllo");
        t.key(k(KeyCode::Left));
        t.key(k(KeyCode::Backspace));
        t.key(k(KeyCode::Char('L')));
        assert_eq!(t.text(), "hélLo");
        t.key(k(KeyCode::Home));
        t.key(k(KeyCode::Delete));
        assert_eq!(t.text(), "élLo");
        assert!(!t.key(k(KeyCode::Enter)), "one line: Enter is not text");
    }

    #[test]
    fn readline_chords_clear_cut_and_move() {
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        let mut t = TextInput::line("Ada Lovelace");
        assert!(t.key(ctrl('w')));
        assert_eq!(t.text(), "Ada ");
        assert!(t.key(ctrl('a')));
        assert_eq!(t.cursor(), (0, 0));
        assert!(t.key(ctrl('e')));
        assert_eq!(t.cursor(), (0, 4));
        t.key(k(KeyCode::Left));
        t.key(k(KeyCode::Left));
        assert!(t.key(ctrl('k')));
        assert_eq!(t.text(), "Ad");
        assert!(t.key(ctrl('u')));
        assert_eq!(t.text(), "");
        assert!(!t.key(ctrl('z')), "not an editing chord");
    }

    #[test]
    fn an_area_breaks_and_joins_lines() {
        let mut t = TextInput::area("ab");
        t.key(k(KeyCode::Left));
        t.key(k(KeyCode::Enter));
        assert_eq!(t.text(), "a\nb");
        assert_eq!(t.cursor(), (1, 0));
        t.key(k(KeyCode::Backspace));
        assert_eq!(t.text(), "ab");
        t.insert("x\ny");
        assert_eq!(t.text(), "ax\nyb");
    }
}
