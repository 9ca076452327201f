//! Where a quoted string the YAML scanner could not finish was opened: the
//! scanner stops where it noticed (often lines later), so the quote that
//! began the string is found from the last thing it did read.

use crate::diag::Pos;

/// The opening quote (its place and `"` or `'`) of the string the scanner
/// was reading when it stopped at `stopped`: the first quote after `from`
/// (the end of the last event read) with only spaces, line breaks, YAML's
/// indicators (`:` `-` `,` `[` `{` `?`), comments, anchors and tags
/// before it. `None` when something else comes first.
pub(super) fn opening(source: &str, from: Pos, stopped: Pos) -> Option<(Pos, char)> {
    let first = usize::try_from(from.line.max(1) - 1).ok()?;
    for (row, line) in source.lines().enumerate().skip(first) {
        let line_no = u32::try_from(row + 1).ok()?;
        let skip = if row == first {
            usize::try_from(from.col.max(1) - 1).ok()?
        } else {
            0
        };
        let mut chars = line.chars().enumerate().skip(skip).peekable();
        let mut after_space = true;
        while let Some((col, c)) = chars.next() {
            let at = Pos::new(line_no, u32::try_from(col + 1).ok()?);
            if (at.line, at.col) >= (stopped.line, stopped.col) {
                return None;
            }
            match c {
                '"' | '\'' => return Some((at, c)),
                '#' if after_space => break,
                '&' | '!' if after_space => {
                    // An anchor or a tag: up to the next space.
                    while chars.next_if(|(_, c)| !c.is_whitespace()).is_some() {}
                }
                c if c.is_whitespace() || matches!(c, ':' | '-' | ',' | '[' | '{' | '?') => {}
                _ => return None,
            }
            after_space = c.is_whitespace() || matches!(c, ',' | '[' | '{');
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quote_after_the_last_thing_read_is_found() {
        let src = "a:\n  b: \"hello\n  c: x\n";
        assert_eq!(
            opening(src, Pos::new(2, 4), Pos::new(3, 3)),
            Some((Pos::new(2, 6), '"'))
        );
        let src = "- &x !!str 'hi\n# note\n";
        assert_eq!(
            opening(src, Pos::new(1, 1), Pos::new(3, 1)),
            Some((Pos::new(1, 12), '\''))
        );
        let src = "a: b\n# \"no\"\n  \"key: 1\n";
        assert_eq!(
            opening(src, Pos::new(1, 5), Pos::new(4, 1)),
            Some((Pos::new(3, 3), '"'))
        );
    }

    #[test]
    fn anything_else_first_or_a_quote_past_the_stop_is_none() {
        assert_eq!(opening("a: x \"y\n", Pos::new(1, 2), Pos::new(2, 1)), None);
        assert_eq!(opening("a: \"y\n", Pos::new(1, 2), Pos::new(1, 3)), None);
        assert_eq!(opening("", Pos::new(1, 1), Pos::new(1, 1)), None);
    }
}
