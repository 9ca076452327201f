//! A hand-written scanner that splits template strings into literal text and
//! `${...}` references, and finds every reference inside a JSON value.

use std::borrow::Cow;
use std::mem;

use serde_json::Value;
use thiserror::Error;

use super::ast::{Part, Reference, Root, Segment, Template, is_bare_char, is_node_id_shape};

/// A malformed template. `offset` and `len` are the byte range of the
/// offending text within the parsed string; `len` is 0 only at its end.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{message}{}", hint.as_deref().map(|h| format!("; {h}")).unwrap_or_default())]
pub struct SyntaxError {
    pub offset: usize,
    pub len: usize,
    /// What is wrong, as a sentence fragment for humans.
    pub message: String,
    /// How to fix it, when there is an obvious fix (a diagnostic's hint).
    pub hint: Option<String>,
}

impl SyntaxError {
    fn new(offset: usize, len: usize, message: impl Into<String>) -> Self {
        Self {
            offset,
            len,
            message: message.into(),
            hint: None,
        }
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// Something found at a location inside a JSON value: `at` is the path of
/// object keys and array indexes that leads to the string holding it
/// (see [`super::location_text`] to print it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    pub at: Vec<Segment>,
    pub value: T,
}

/// Parses one template string, stopping at the first syntax error.
pub fn parse_template(s: &str) -> Result<Template, SyntaxError> {
    scan(s, true).map_err(|errors| {
        errors
            .into_iter()
            .next()
            .unwrap_or_else(|| SyntaxError::new(0, s.len(), "invalid template"))
    })
}

/// Parses one template string and reports every syntax error in it: after a
/// malformed reference, scanning resumes after the next `}`.
pub fn parse_template_all(s: &str) -> Result<Template, Vec<SyntaxError>> {
    scan(s, false)
}

/// Escapes `text` so that it parses as a template meaning exactly `text`:
/// every `${` becomes `$${`. Borrows when there is nothing to escape.
pub fn escape_literal(text: &str) -> Cow<'_, str> {
    if text.contains("${") {
        Cow::Owned(text.replace("${", "$${"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Parses every string value inside `v` (object keys are not templates) and
/// returns all references with where they were found, or every syntax error
/// when there is at least one.
pub fn collect_refs(v: &Value) -> Result<Vec<Located<Reference>>, Vec<Located<SyntaxError>>> {
    let mut refs = Vec::new();
    let mut errors = Vec::new();
    let mut at = Vec::new();
    visit_strings(v, &mut at, &mut |s, at| match parse_template_all(s) {
        Ok(t) => refs.extend(t.parts.into_iter().filter_map(|p| match p {
            Part::Ref(r) => Some(Located {
                at: at.to_vec(),
                value: r,
            }),
            Part::Lit(_) => None,
        })),
        Err(errs) => errors.extend(errs.into_iter().map(|e| Located {
            at: at.to_vec(),
            value: e,
        })),
    });
    if errors.is_empty() {
        Ok(refs)
    } else {
        Err(errors)
    }
}

fn visit_strings(v: &Value, at: &mut Vec<Segment>, f: &mut impl FnMut(&str, &[Segment])) {
    match v {
        Value::String(s) => {
            // Strings without `$` cannot hold a reference or an error.
            if s.contains('$') {
                f(s, at);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(Segment::Index(i64::try_from(i).unwrap_or(i64::MAX)));
                visit_strings(item, at, f);
                at.pop();
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                if needs_visit(item) {
                    at.push(Segment::Field(key.clone()));
                    visit_strings(item, at, f);
                    at.pop();
                }
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Whether a value may hold a string; saves cloning keys of scalar fields.
fn needs_visit(v: &Value) -> bool {
    matches!(v, Value::String(_) | Value::Array(_) | Value::Object(_))
}

fn scan(s: &str, stop_at_first: bool) -> Result<Template, Vec<SyntaxError>> {
    let bytes = s.as_bytes();
    if !bytes.contains(&b'$') {
        return Ok(Template::literal(s));
    }
    let mut parts = Vec::new();
    let mut errors = Vec::new();
    let mut lit = String::new();
    let mut lit_start = 0;
    let mut i = 0;
    while let Some(rel) = bytes[i..].iter().position(|&b| b == b'$') {
        let dollar = i + rel;
        match bytes.get(dollar + 1) {
            Some(b'$') if bytes.get(dollar + 2) == Some(&b'{') => {
                // `$${`: keep one `$` and let the `{` start the next literal.
                lit.push_str(&s[lit_start..=dollar]);
                lit_start = dollar + 2;
                i = dollar + 3;
            }
            Some(b'{') => {
                lit.push_str(&s[lit_start..dollar]);
                match RefParser::new(s, dollar).parse() {
                    Ok(r) => {
                        if !lit.is_empty() {
                            parts.push(Part::Lit(mem::take(&mut lit)));
                        }
                        i = r.offset + r.len;
                        lit_start = i;
                        parts.push(Part::Ref(r));
                    }
                    Err(e) => {
                        let resume = bytes[e.offset..]
                            .iter()
                            .position(|&b| b == b'}')
                            .map(|k| e.offset + k + 1);
                        errors.push(e);
                        match resume {
                            Some(next) if !stop_at_first => {
                                i = next;
                                lit_start = next;
                            }
                            _ => return Err(errors),
                        }
                    }
                }
            }
            _ => i = dollar + 1,
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    lit.push_str(&s[lit_start..]);
    if !lit.is_empty() || parts.is_empty() {
        parts.push(Part::Lit(lit));
    }
    Ok(Template { parts })
}

/// Parses one reference starting at the `$` of `${`.
struct RefParser<'s> {
    s: &'s str,
    start: usize,
    pos: usize,
}

impl<'s> RefParser<'s> {
    fn new(s: &'s str, start: usize) -> Self {
        Self {
            s,
            start,
            pos: start + 2,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.pos).copied()
    }

    fn peek_char(&self) -> Option<char> {
        self.s.get(self.pos..).and_then(|rest| rest.chars().next())
    }

    /// Length in bytes of the character at `pos` (0 at the end).
    fn char_len(&self) -> usize {
        self.peek_char().map_or(0, char::len_utf8)
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn bare_word(&mut self) -> &'s str {
        let rest = &self.s[self.pos..];
        let end = rest
            .char_indices()
            .find(|&(_, c)| !is_bare_char(c))
            .map_or(rest.len(), |(k, _)| k);
        self.pos += end;
        &rest[..end]
    }

    fn unterminated(&self) -> SyntaxError {
        SyntaxError::new(
            self.start,
            self.s.len() - self.start,
            "unterminated reference: `${` is never closed by `}`",
        )
    }

    /// An error about the character at `pos`.
    fn at_char(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError::new(self.pos, self.char_len(), message)
    }

    fn found(&self) -> String {
        match self.peek_char() {
            Some(c) => format!("found `{c}`"),
            None => "found the end of the string".to_owned(),
        }
    }

    fn parse(mut self) -> Result<Reference, SyntaxError> {
        if !self.s.as_bytes()[self.pos..].contains(&b'}') {
            return Err(self.unterminated());
        }
        self.skip_ws();
        if self.peek() == Some(b'}') {
            return Err(SyntaxError::new(
                self.start,
                self.pos + 1 - self.start,
                "empty reference `${}`",
            )
            .hint("write a node id, `var.NAME`, `env.NAME` or `item` inside"));
        }
        let root_at = self.pos;
        let word = self.bare_word();
        let root = match word {
            "" => {
                return Err(self.at_char(format!(
                    "a reference starts with a node id, `var`, `env` or `item`, {}",
                    self.found()
                )));
            }
            "var" => Root::Var(self.name("var")?),
            "env" => {
                let name = self.name("env")?;
                if matches!(self.peek(), Some(b'.' | b'[')) {
                    return Err(self
                        .at_char(format!(
                            "`${{{}}}` takes no path: environment values are plain strings",
                            Root::Env(name)
                        ))
                        .hint("read the value whole, or parse it with a `transform`"));
                }
                Root::Env(name)
            }
            "item" => Root::Item,
            id if is_node_id_shape(id) => Root::Node(id.to_owned()),
            id => {
                return Err(SyntaxError::new(
                    root_at,
                    id.len(),
                    format!("`{id}` is not a valid node id"),
                )
                .hint("node ids start with an ASCII letter or `_` and go on with letters, digits, `_` or `-`"));
            }
        };
        let mut path = Vec::new();
        while let Some(segment) = self.segment()? {
            path.push(segment);
        }
        let before_ws = self.pos;
        self.skip_ws();
        match self.peek() {
            Some(b'}') => Ok(Reference {
                root,
                path,
                offset: self.start,
                len: self.pos + 1 - self.start,
            }),
            None => Err(self.unterminated()),
            Some(_) if self.pos > before_ws => Err(self
                .at_char(format!(
                    "expected `}}` to close the reference, {}",
                    self.found()
                ))
                .hint("whitespace is only allowed right inside `${` and `}`")),
            Some(_) => Err(self.at_char(format!(
                "expected `.`, `[` or `}}` in the reference, {}",
                self.found()
            ))),
        }
    }

    /// The variable name after `var` or `env`.
    fn name(&mut self, keyword: &str) -> Result<String, SyntaxError> {
        let at = self.pos;
        match self.segment()? {
            Some(Segment::Field(name)) => Ok(name),
            Some(other) => Err(SyntaxError::new(
                at,
                self.pos - at,
                format!("`{keyword}` must be followed by a variable name, not `{other}`"),
            )
            .hint(format!("write `${{{keyword}.NAME}}`"))),
            None => Err(SyntaxError::new(
                self.start,
                self.pos - self.start,
                format!("`{keyword}` needs a variable name"),
            )
            .hint(format!("write `${{{keyword}.NAME}}`"))),
        }
    }

    /// The next path segment, or `None` when the path ends here.
    fn segment(&mut self) -> Result<Option<Segment>, SyntaxError> {
        match self.peek() {
            Some(b'.') => {
                self.pos += 1;
                let word = self.bare_word();
                if !word.is_empty() {
                    return Ok(Some(Segment::Field(word.to_owned())));
                }
                let err =
                    self.at_char(format!("expected a field name after `.`, {}", self.found()));
                Err(match self.peek() {
                    Some(b'[' | b'"' | b'\'') => {
                        err.hint("write a quoted key as `[\"key\"]`, without a dot before it")
                    }
                    _ => err,
                })
            }
            Some(b'[') => self.bracket().map(Some),
            _ => Ok(None),
        }
    }

    fn bracket(&mut self) -> Result<Segment, SyntaxError> {
        let open = self.pos;
        self.pos += 1;
        let segment = match self.peek() {
            Some(b'*') => {
                self.pos += 1;
                Segment::Wildcard
            }
            Some(quote @ (b'"' | b'\'')) => Segment::Field(self.quoted(quote)?),
            Some(b'-' | b'0'..=b'9') => Segment::Index(self.index(open)?),
            Some(b']') => {
                return Err(SyntaxError::new(open, 2, "empty brackets `[]`").hint(
                    "write an index such as `[0]`, `[*]` or a quoted key such as `[\"key\"]`",
                ));
            }
            None | Some(b'}') => return Err(self.unclosed_bracket(open)),
            Some(_) => return Err(self.bad_index(open)),
        };
        match self.peek() {
            Some(b']') => {
                self.pos += 1;
                Ok(segment)
            }
            None | Some(b'}') => Err(self.unclosed_bracket(open)),
            Some(_) => Err(self.at_char(format!("expected `]`, {}", self.found()))),
        }
    }

    fn unclosed_bracket(&self, open: usize) -> SyntaxError {
        SyntaxError::new(open, 1, "unterminated `[`: expected `]`")
    }

    fn bad_index(&self, open: usize) -> SyntaxError {
        let rest = &self.s[open..];
        let close = rest.find(']').filter(|&k| !rest[..k].contains('}'));
        let (len, inner) = match close {
            Some(k) => (k + 1, &rest[1..k]),
            None => {
                let next = rest[1..].chars().next().map_or(0, char::len_utf8);
                (1 + next, &rest[1..1 + next])
            }
        };
        let message = format!("`[{inner}]` is not a valid index");
        let hint = if close.is_some() && !inner.is_empty() && inner.chars().all(is_bare_char) {
            format!(
                "write `[0]`, `[-1]` or `[*]` for arrays, or `.{inner}` or `[\"{inner}\"]` for a key"
            )
        } else {
            "write `[0]`, `[-1]` or `[*]` for arrays, or a quoted key such as `[\"key\"]`"
                .to_owned()
        };
        SyntaxError::new(open, len, message).hint(hint)
    }

    fn index(&mut self, open: usize) -> Result<i64, SyntaxError> {
        let num_start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let digits_start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == digits_start {
            return Err(self.bad_index(open));
        }
        let text = &self.s[num_start..self.pos];
        text.parse::<i64>().map_err(|_| {
            SyntaxError::new(
                num_start,
                text.len(),
                format!("index `{text}` is too large"),
            )
        })
    }

    /// A quoted key; `pos` is at the opening quote.
    fn quoted(&mut self, quote: u8) -> Result<String, SyntaxError> {
        let open = self.pos;
        let bytes = self.s.as_bytes();
        self.pos += 1;
        let mut out = String::new();
        let mut chunk = self.pos;
        loop {
            match bytes.get(self.pos) {
                None => {
                    let q = char::from(quote);
                    return Err(SyntaxError::new(
                        open,
                        self.s.len() - open,
                        format!("unterminated quoted key: missing closing `{q}`"),
                    ));
                }
                Some(&b) if b == quote => {
                    out.push_str(&self.s[chunk..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    out.push_str(&self.s[chunk..self.pos]);
                    let escaped = match bytes.get(self.pos + 1) {
                        Some(b'\\') => '\\',
                        Some(b'"') => '"',
                        Some(b'\'') => '\'',
                        _ => {
                            let next = self.s[self.pos + 1..].chars().next();
                            let len = 1 + next.map_or(0, char::len_utf8);
                            let shown = &self.s[self.pos..self.pos + len];
                            return Err(SyntaxError::new(
                                self.pos,
                                len,
                                format!("unknown escape `{shown}` in a quoted key"),
                            )
                            .hint(r#"only `\"`, `\'` and `\\` are escapes"#));
                        }
                    };
                    out.push(escaped);
                    self.pos += 2;
                    chunk = self.pos;
                }
                Some(_) => self.pos += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests;
