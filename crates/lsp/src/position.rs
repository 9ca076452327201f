//! Places between the engine and the editor: the engine counts 1-based
//! lines and columns in characters, LSP 0-based lines and UTF-16 code
//! units. Places past a line's end or the text's end are clamped, never
//! an error.

use lsp_types::{Position, Range};

use pipewright_engine::diag::{Pos, Span};

/// A text's lines (without line ends) and where each starts, for
/// converting places.
pub struct Lines<'a> {
    lines: Vec<(usize, &'a str)>,
    len: usize,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut start = 0;
        let lines = text
            .split('\n')
            .map(|l| {
                let at = start;
                start += l.len() + 1;
                (at, l.strip_suffix('\r').unwrap_or(l))
            })
            .collect();
        Self {
            lines,
            len: text.len(),
        }
    }

    fn line(&self, i: usize) -> &'a str {
        self.lines.get(i).map_or("", |(_, l)| l)
    }

    /// The byte offset in the text of an editor's place (clamped).
    pub fn offset(&self, p: Position) -> usize {
        let Some((start, line)) = self.lines.get(p.line as usize) else {
            return self.len;
        };
        let col = self.pos(p).col as usize - 1;
        start + line.char_indices().nth(col).map_or(line.len(), |(b, _)| b)
    }

    /// The editor's place as the engine's: UTF-16 units to characters (a
    /// place inside a surrogate pair is the character's start).
    pub fn pos(&self, p: Position) -> Pos {
        let line = self.line(p.line as usize);
        let mut units = 0u32;
        let mut chars = 0u32;
        for c in line.chars() {
            let next = units + c.len_utf16() as u32;
            if next > p.character {
                break;
            }
            units = next;
            chars += 1;
        }
        Pos::new(p.line.saturating_add(1), chars + 1)
    }

    /// The engine's place as the editor's: characters to UTF-16 units.
    pub fn position(&self, p: Pos) -> Position {
        let row = p.line.saturating_sub(1);
        let line = self.line(row as usize);
        let units: usize = line
            .chars()
            .take(p.col.saturating_sub(1) as usize)
            .map(char::len_utf16)
            .sum();
        Position::new(row, u32::try_from(units).unwrap_or(u32::MAX))
    }

    pub fn range(&self, s: Span) -> Range {
        Range::new(self.position(s.start), self.position(s.end))
    }

    /// A span the engine gives as one place widened to the word there, so
    /// an editor has something to underline.
    pub fn visible_range(&self, s: Span) -> Range {
        if s.end > s.start {
            return self.range(s);
        }
        let line = self.line(s.start.line.saturating_sub(1) as usize);
        let word = line
            .chars()
            .skip(s.start.col.saturating_sub(1) as usize)
            .take_while(|c| !c.is_whitespace())
            .count()
            .max(1);
        self.range(Span::new(s.start, s.start.shifted(word)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_utf16_units_for_the_editor() {
        let lines = Lines::new("a: 1\r\né😀 ${x}\n");
        // `$` is the 4th character, after é (1 unit) 😀 (2 units) and a space.
        assert_eq!(lines.position(Pos::new(2, 4)), Position::new(1, 4));
        assert_eq!(lines.pos(Position::new(1, 4)), Pos::new(2, 4));
        // Inside the surrogate pair: the emoji's start.
        assert_eq!(lines.pos(Position::new(1, 2)), Pos::new(2, 2));
        // Past the end of a line and of the text: clamped.
        assert_eq!(lines.pos(Position::new(0, 99)), Pos::new(1, 5));
        assert_eq!(lines.pos(Position::new(9, 3)), Pos::new(10, 1));
        assert_eq!(lines.position(Pos::new(1, 99)), Position::new(0, 4));
        assert_eq!(lines.position(Pos::new(0, 0)), Position::new(0, 0));
        assert_eq!(lines.offset(Position::new(1, 4)), 13);
        assert_eq!(lines.offset(Position::new(1, 99)), 17);
        assert_eq!(lines.offset(Position::new(7, 0)), 18);
        assert_eq!(
            lines.visible_range(Span::at(Pos::new(2, 4))),
            Range::new(Position::new(1, 4), Position::new(1, 8))
        );
    }
}
