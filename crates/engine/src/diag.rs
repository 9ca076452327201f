//! Source positions and diagnostics: every load-time problem is one of these.

use std::fmt;

/// A 1-based line and column in a source file (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl Pos {
    pub const fn new(line: u32, col: u32) -> Self {
        Self { line, col }
    }

    /// The position `chars` characters further along the same line.
    pub fn shifted(self, chars: usize) -> Self {
        Self {
            line: self.line,
            col: self
                .col
                .saturating_add(u32::try_from(chars).unwrap_or(u32::MAX)),
        }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A range in a source file; `end` is exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
pub struct Span {
    pub start: Pos,
    pub end: Pos,
}

impl Span {
    pub const fn new(start: Pos, end: Pos) -> Self {
        Self { start, end }
    }

    /// A span that covers a single position.
    pub const fn at(pos: Pos) -> Self {
        Self {
            start: pos,
            end: pos,
        }
    }
}

/// How bad a diagnostic is: errors stop a file from running, warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One problem found in a pipeline file, with where it is and what to do.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    pub span: Span,
    pub message: String,
    /// A suggestion such as "did you mean `needs`?".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// The span holds a secret (a key written into the file): the source
    /// line is quoted with the span masked, so the error never echoes it.
    #[serde(skip)]
    pub secret: bool,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Error,
            span,
            message: message.into(),
            hint: None,
            secret: false,
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            span,
            message: message.into(),
            hint: None,
            secret: false,
        }
    }

    /// Marks the span as a secret's: it is masked wherever the line is
    /// quoted.
    pub fn secret(mut self) -> Self {
        self.secret = true;
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Renders the diagnostic like a compiler: `file:line:col: error: message`,
    /// then the source line with a caret and the hint. Control characters
    /// (a file's ids and keys can hold ESC, CR, NUL, C1) are drawn as
    /// visible stand-ins, one column each, so the caret stays under its
    /// place and a terminal acts on none of them.
    pub fn render(&self, file: &str, source: Option<&str>) -> String {
        let mut out = format!(
            "{}:{}:{}: {}: {}",
            visible(file),
            self.span.start.line,
            self.span.start.col,
            self.severity,
            visible(&self.message)
        );
        if let Some(line) = source.and_then(|s| {
            s.lines()
                .nth(self.span.start.line.saturating_sub(1) as usize)
        }) {
            // A tab is one column to the caret but up to eight on screen.
            let mut line = visible(line).replace('\t', " ");
            let num = self.span.start.line.to_string();
            let pad = " ".repeat(num.len());
            let caret_at = self.span.start.col.saturating_sub(1) as usize;
            let mut width = if self.span.end.line == self.span.start.line
                && self.span.end.col > self.span.start.col
            {
                (self.span.end.col - self.span.start.col) as usize
            } else {
                1
            };
            if self.secret {
                // The secret's characters, to the span's end or the line's
                // (a value that goes on past the line is cut there).
                let chars: Vec<char> = line.chars().collect();
                let end = if self.span.end.line == self.span.start.line {
                    (caret_at + width).min(chars.len())
                } else {
                    chars.len()
                };
                let start = caret_at.min(end);
                line = chars[..start]
                    .iter()
                    .chain(crate::redact::MASK.chars().collect::<Vec<_>>().iter())
                    .chain(chars[end..].iter())
                    .collect();
                width = crate::redact::MASK.len();
            }
            out.push_str(&format!(
                "\n {pad} |\n {num} | {line}\n {pad} | {}{}",
                " ".repeat(caret_at),
                "^".repeat(width.min(line.chars().count().saturating_sub(caret_at).max(1)))
            ));
        }
        if let Some(hint) = &self.hint {
            out.push_str(&format!("\n  = hint: {}", visible(hint)));
        }
        out
    }
}

/// Text from a server (names, descriptions, results, errors) made safe to
/// print on a terminal: control characters (escape sequences, carriage
/// returns, bells) are shown as `?`, so a server cannot change the title,
/// clear the screen, hide a link or overwrite a line. New lines and tabs
/// stay.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.contains(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.chars().map(|c| if bad(c) { '?' } else { c }).collect())
}

/// `text` with each control character but new line and tab drawn as a
/// visible character one column wide: C0 and DEL as their Unicode control
/// pictures (`␛`, `␍`, `␀`, `␡`), C1 (U+0080–U+009F, which a terminal
/// may read as 8-bit CSI or OSC) as `?`.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.contains(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| match c {
            c if !bad(c) => c,
            '\u{7f}' => '\u{2421}',
            c if c < ' ' => char::from_u32(0x2400 + u32::from(c)).unwrap_or('?'),
            _ => '?',
        })
        .collect()
}

/// Levenshtein distance, for "did you mean" hints.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a likely typo.
pub fn suggest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1) + usize::from(word.len() > 6);
    candidates
        .into_iter()
        .map(|c| (edit_distance(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(suggest("need", ["needs", "when", "tool"]), Some("needs"));
        assert_eq!(suggest("tol", ["needs", "when", "tool"]), Some("tool"));
        assert_eq!(suggest("zzzzzz", ["needs", "when", "tool"]), None);
    }

    #[test]
    fn renders_like_a_compiler() {
        let d = Diagnostic::error(
            Span::new(Pos::new(2, 3), Pos::new(2, 7)),
            "unknown key `nede`",
        )
        .with_hint("did you mean `needs`?");
        let text = d.render("f.yml", Some("a:\n  nede: x\n"));
        assert!(
            text.starts_with("f.yml:2:3: error: unknown key `nede`"),
            "{text}"
        );
        assert!(text.contains("  ^^^^"), "{text}");
        assert!(text.ends_with("= hint: did you mean `needs`?"), "{text}");
    }

    /// ESC, CR, NUL, DEL and C1 in a message or a source line are shown,
    /// not sent: the terminal gets none, and the caret stays under the
    /// column it points at.
    #[test]
    fn control_characters_are_drawn_visibly_and_the_caret_stays_aligned() {
        let source = "a:\n  \u{1b}]0;t\u{7}\r\0\u{9b}2J\u{7f}\tkey: x\n";
        // `key` starts at column 16: 2 spaces and 13 characters before it.
        let d = Diagnostic::error(
            Span::new(Pos::new(2, 16), Pos::new(2, 19)),
            "unknown key `\u{1b}]0;t\u{7}\r\0\u{9b}2J\u{7f}\tkey`",
        )
        .with_hint("not \u{9d}8;;x\u{9c}");
        let text = d.render("f\u{1b}[2J.yml", Some(source));
        assert!(
            !text.contains(|c: char| c.is_control() && c != '\n' && c != '\t'),
            "{text:?}"
        );
        assert!(
            text.starts_with("f␛[2J.yml:2:16: error: unknown key `␛]0;t␇␍␀?2J␡\tkey`"),
            "{text}"
        );
        assert!(text.ends_with("= hint: not ?8;;x?"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let snippet = lines[2];
        let caret = lines[3];
        assert_eq!(snippet, " 2 |   ␛]0;t␇␍␀?2J␡ key: x");
        let col = |line: &str, at: &str| line.find(at).map(|i| line[..i].chars().count());
        assert_eq!(col(snippet, "key"), col(caret, "^^^"), "{text}");
    }
}
