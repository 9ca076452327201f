//! A YAML (and JSON) document as a tree whose every key and value knows its
//! line and column, built from the event parser that serde-saphyr re-exports.
//!
//! The loader walks this tree rather than deserialising straight into structs
//! so that it can report every problem of a file at once, each at its place.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Number, Value};
use serde_saphyr::granit_parser::{ErrorKind, Event, Parser, ScalarStyle, Span as YSpan, Tag};

use crate::diag::{Diagnostic, Pos, Span};

mod unclosed;

/// How a scalar was written, which decides how positions inside it map back
/// to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

/// One node of the document.
#[derive(Debug, Clone, PartialEq)]
pub struct YNode {
    pub kind: YKind,
    pub span: Span,
}

/// What a node holds. Mappings keep their pairs in file order, duplicates
/// included, so the loader can report them.
#[derive(Debug, Clone, PartialEq)]
pub enum YKind {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String, Style),
    Seq(Vec<YNode>),
    Map(Vec<(YNode, YNode)>),
}

impl YNode {
    /// The JSON type name used in messages ("a string", "a mapping" …).
    pub fn type_name(&self) -> &'static str {
        match self.kind {
            YKind::Null => "null",
            YKind::Bool(_) => "a boolean",
            YKind::Int(_) | YKind::Float(_) => "a number",
            YKind::Str(..) => "a string",
            YKind::Seq(_) => "a list",
            YKind::Map(_) => "a mapping",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            YKind::Str(s, _) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(YNode, YNode)]> {
        match &self.kind {
            YKind::Map(pairs) => Some(pairs),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&[YNode]> {
        match &self.kind {
            YKind::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The value under `key` in a mapping (the first one, if duplicated).
    pub fn get(&self, key: &str) -> Option<&YNode> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.is_key(key))
            .map(|(_, v)| v)
    }

    /// Whether this mapping key reads as `key`; a string key is compared
    /// in place, not copied (an aliased key can be megabytes).
    pub fn is_key(&self, key: &str) -> bool {
        match &self.kind {
            YKind::Str(s, _) => s == key,
            YKind::Seq(_) | YKind::Map(_) => false,
            _ => self.key_text().as_deref() == Some(key),
        }
    }

    /// A mapping key as text: strings as they are, other scalars as written.
    pub fn key_text(&self) -> Option<String> {
        self.key_str().map(Cow::into_owned)
    }

    /// [`YNode::key_text`], with a string key borrowed rather than copied.
    pub fn key_str(&self) -> Option<Cow<'_, str>> {
        match &self.kind {
            YKind::Str(s, _) => Some(Cow::Borrowed(s)),
            YKind::Int(i) => Some(Cow::Owned(i.to_string())),
            YKind::Float(f) => Some(Cow::Owned(f.to_string())),
            YKind::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
            YKind::Null => Some(Cow::Borrowed("null")),
            _ => None,
        }
    }

    /// The node as plain JSON (positions dropped). Non-scalar keys become
    /// their compact JSON text; non-finite floats become null.
    pub fn to_json(&self) -> Value {
        match &self.kind {
            YKind::Null => Value::Null,
            YKind::Bool(b) => Value::Bool(*b),
            YKind::Int(i) => Value::Number((*i).into()),
            YKind::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
            YKind::Str(s, _) => Value::String(s.clone()),
            YKind::Seq(items) => Value::Array(items.iter().map(YNode::to_json).collect()),
            YKind::Map(pairs) => {
                let mut map = Map::with_capacity(pairs.len());
                for (k, v) in pairs {
                    let key = k.key_text().unwrap_or_else(|| k.to_json().to_string());
                    map.insert(key, v.to_json());
                }
                Value::Object(map)
            }
        }
    }

    /// The file position of byte `offset` inside this string scalar's value,
    /// as exactly as the scalar's style allows (escapes in double-quoted
    /// strings and folded lines are approximated).
    pub fn pos_in_str(&self, source: &str, offset: usize) -> Pos {
        let YKind::Str(value, style) = &self.kind else {
            return self.span.start;
        };
        let prefix = value.get(..offset).unwrap_or(value);
        let newlines = prefix.matches('\n').count();
        let tail_chars = prefix.rsplit('\n').next().map_or(0, |t| t.chars().count());
        let start = self.span.start;
        match style {
            Style::Plain | Style::SingleQuoted | Style::DoubleQuoted => {
                let quote = usize::from(*style != Style::Plain);
                if newlines == 0 {
                    start.shifted(quote + tail_chars)
                } else {
                    let line = start.line + newlines as u32;
                    Pos::new(line, 1 + indent_of(source, line) as u32 + tail_chars as u32)
                }
            }
            Style::Literal | Style::Folded => {
                // Content begins on the line after the `|` / `>` indicator,
                // wherever the parser put the scalar's start.
                let on_indicator = source
                    .lines()
                    .nth(start.line.saturating_sub(1) as usize)
                    .is_some_and(|l| {
                        let t = l.split(" #").next().unwrap_or(l).trim_end();
                        t.trim_end_matches(['+', '-', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
                            .ends_with(['|', '>'])
                    });
                let line = start.line + u32::from(on_indicator) + newlines as u32;
                Pos::new(line, 1 + indent_of(source, line) as u32 + tail_chars as u32)
            }
        }
    }
}

fn indent_of(source: &str, line: u32) -> usize {
    source
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .map_or(0, |l| l.chars().take_while(|c| *c == ' ').count())
}

fn pos_of(m: &serde_saphyr::granit_parser::Marker) -> Pos {
    Pos::new(
        u32::try_from(m.line()).unwrap_or(u32::MAX),
        u32::try_from(m.col() + 1).unwrap_or(u32::MAX),
    )
}

fn span_of(s: &YSpan) -> Span {
    Span::new(pos_of(&s.start), pos_of(&s.end))
}

/// Parses one YAML or JSON document. An empty document is `null`. A syntax
/// error comes back as a diagnostic at the place the parser stopped.
/// Anchors and aliases copy at most [`DEFAULT_MAX_ALIAS_MB`].
pub fn parse(source: &str) -> Result<YNode, Diagnostic> {
    parse_within(source, max_alias_bytes(None))
}

/// [`parse`] with the alias limit `PIPEWRIGHT_MAX_ALIAS_MB` sets (`None`:
/// the default).
pub fn parse_limited(source: &str, max_alias_mb: Option<usize>) -> Result<YNode, Diagnostic> {
    parse_within(source, max_alias_bytes(max_alias_mb))
}

/// [`parse`] with copies made for anchors and aliases limited to
/// `max_alias_bytes` of text.
fn parse_within(source: &str, max_alias_bytes: usize) -> Result<YNode, Diagnostic> {
    let mut builder = Builder {
        parser: Parser::new_from_str(source),
        source,
        read_to: Pos::new(1, 1),
        anchors: HashMap::new(),
        depth: 0,
        expanded: 0,
        copied_bytes: 0,
        max_alias_bytes,
    };
    builder.document()
}

/// Deepest nesting accepted; deeper input is refused rather than risking
/// the stack.
const MAX_DEPTH: usize = 256;

/// Stack left below which [`Builder::node`] continues on a new segment of
/// [`STACK_SEGMENT`] bytes.
const STACK_RED_ZONE: usize = 128 * 1024;
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// Most nodes that aliases may copy into one document. Each `*alias` copies
/// its anchor's whole subtree, so a few lines of nested aliases (a "billion
/// laughs" file) would otherwise expand without end.
pub const MAX_ALIAS_NODES: usize = 100_000;

/// Most text, in MiB, that anchors and aliases may copy into one document,
/// unless `PIPEWRIGHT_MAX_ALIAS_MB` says otherwise: twice the file limit
/// ([`crate::file::open::DEFAULT_MAX_FILE_MB`]). The node limit
/// alone let one big string through: 3 MiB anchored once and aliased 2,000
/// times is 2,000 nodes but 6 GB of text.
pub const DEFAULT_MAX_ALIAS_MB: usize = 16;

/// The alias limit of `max_alias_mb` (else the default), in bytes.
fn max_alias_bytes(max_alias_mb: Option<usize>) -> usize {
    max_alias_mb
        .unwrap_or(DEFAULT_MAX_ALIAS_MB)
        .saturating_mul(1024 * 1024)
}

struct Builder<'a> {
    parser: Parser<'a, serde_saphyr::granit_parser::StrInput<'a>>,
    /// The text parsed, read again to explain a string left open.
    source: &'a str,
    /// Where the last event read ended.
    read_to: Pos,
    /// Each anchor's node and its [`Weight`].
    anchors: HashMap<usize, (YNode, Weight)>,
    depth: usize,
    /// Nodes copied by aliases so far.
    expanded: usize,
    /// Bytes of text copied so far: by aliases, and into the anchor table
    /// (an anchor nested in an anchor is held once more for each).
    copied_bytes: usize,
    max_alias_bytes: usize,
}

impl<'a> Builder<'a> {
    fn next(&mut self) -> Result<(Event<'a>, YSpan), Diagnostic> {
        match self.parser.next_event() {
            Some(Ok(ev)) => {
                self.read_to = pos_of(&ev.1.end);
                Ok(ev)
            }
            Some(Err(e)) => {
                let pos = pos_of(e.marker());
                let in_string = matches!(
                    e.kind(),
                    ErrorKind::UnclosedQuotedScalar
                        | ErrorKind::InvalidQuotedScalarIndent
                        | ErrorKind::DocumentIndicatorInQuotedScalar
                );
                let opened = in_string
                    .then(|| unclosed::opening(self.source, self.read_to, pos))
                    .flatten();
                // A quote on the line the scanner stopped at: the string
                // does end, on a line not indented enough.
                let ends_there = matches!(e.kind(), ErrorKind::InvalidQuotedScalarIndent)
                    && opened.is_some_and(|(_, quote)| {
                        self.source
                            .lines()
                            .nth(pos.line.saturating_sub(1) as usize)
                            .is_some_and(|l| l.contains(quote))
                    });
                Err(match opened {
                    Some((at, quote)) if ends_there => Diagnostic::error(
                        Span::new(at, at.shifted(1)),
                        format!(
                            "YAML syntax error: this string goes on to line {}, which is indented less than the string needs: its opening {quote} is here",
                            pos.line
                        ),
                    )
                    .with_hint(format!(
                        "indent line {} more than the string's key, or close the string with {quote} on line {}",
                        pos.line, at.line
                    )),
                    Some((at, quote)) => Diagnostic::error(
                        Span::new(at, at.shifted(1)),
                        format!(
                            "YAML syntax error: this string is not closed: its opening {quote} is here; YAML read on to {pos} looking for its end ({})",
                            e.info()
                        ),
                    )
                    .with_hint(format!("close it with {quote} on line {}", at.line)),
                    None => Diagnostic::error(
                        Span::at(pos),
                        format!("YAML syntax error: {}", e.info()),
                    ),
                })
            }
            None => Err(Diagnostic::error(
                Span::default(),
                "YAML syntax error: unexpected end of input",
            )),
        }
    }

    fn document(&mut self) -> Result<YNode, Diagnostic> {
        let mut root: Option<YNode> = None;
        loop {
            let (ev, span) = self.next()?;
            match ev {
                Event::StreamStart | Event::DocumentEnd => {}
                Event::StreamEnd => break,
                Event::DocumentStart(..) => {
                    if root.is_some() {
                        return Err(Diagnostic::error(
                            span_of(&span),
                            "a pipeline file holds one YAML document, but a second one starts here",
                        )
                        .with_hint("remove the `---` line or split the file"));
                    }
                    let (ev, span) = self.next_node_event()?;
                    root = Some(match ev {
                        Event::DocumentEnd => YNode {
                            kind: YKind::Null,
                            span: span_of(&span),
                        },
                        ev => self.node(ev, span)?,
                    });
                }
                _ => {}
            }
        }
        Ok(root.unwrap_or(YNode {
            kind: YKind::Null,
            span: Span::at(Pos::new(1, 1)),
        }))
    }

    /// The next event that can start a node, skipping comments.
    fn next_node_event(&mut self) -> Result<(Event<'a>, YSpan), Diagnostic> {
        loop {
            let (ev, span) = self.next()?;
            if !matches!(ev, Event::Comment(..) | Event::Anchor(..)) {
                return Ok((ev, span));
            }
        }
    }

    /// The node `ev` starts, on a fresh stack segment when little is left:
    /// a level of nesting costs kilobytes of stack in a debug build, and
    /// files are loaded on small-stacked threads too (tokio workers under
    /// `serve`, the editor's validation).
    fn node(&mut self, ev: Event<'a>, span: YSpan) -> Result<YNode, Diagnostic> {
        if let Event::Scalar(text, style, anchor, tag) = ev {
            // A scalar nests nothing: no stack to check (most nodes are).
            return self.scalar_node(text, style, anchor, tag.as_deref(), &span);
        }
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || self.node_here(ev, span))
    }

    fn scalar_node(
        &mut self,
        text: Cow<'a, str>,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        span: &YSpan,
    ) -> Result<YNode, Diagnostic> {
        let forced_str = tag.is_some_and(|t| t.is_yaml_core_schema_tag("str"));
        let node = YNode {
            kind: scalar(text, style, forced_str),
            span: span_of(span),
        };
        self.remember(anchor, &node)?;
        Ok(node)
    }

    fn node_here(&mut self, ev: Event<'a>, span: YSpan) -> Result<YNode, Diagnostic> {
        let start = span_of(&span);
        match ev {
            Event::Scalar(text, style, anchor, tag) => {
                self.scalar_node(text, style, anchor, tag.as_deref(), &span)
            }
            Event::SequenceStart(_, anchor, _) => {
                self.enter(start)?;
                let mut items = Vec::new();
                let end = loop {
                    let (ev, span) = self.next_node_event()?;
                    if let Event::SequenceEnd = ev {
                        break span_of(&span);
                    }
                    items.push(self.node(ev, span)?);
                };
                self.depth -= 1;
                let node = YNode {
                    kind: YKind::Seq(items),
                    span: Span::new(start.start, end.end),
                };
                self.remember(anchor, &node)?;
                Ok(node)
            }
            Event::MappingStart(_, anchor, _) => {
                self.enter(start)?;
                let mut pairs = Vec::new();
                let end = loop {
                    let (ev, span) = self.next_node_event()?;
                    if let Event::MappingEnd = ev {
                        break span_of(&span);
                    }
                    let key = self.node(ev, span)?;
                    let (ev, span) = self.next_node_event()?;
                    let value = self.node(ev, span)?;
                    pairs.push((key, value));
                };
                self.depth -= 1;
                let node = YNode {
                    kind: YKind::Map(pairs),
                    span: Span::new(start.start, end.end),
                };
                self.remember(anchor, &node)?;
                Ok(node)
            }
            Event::Alias(id) => match self.anchors.get(&id).map(|(_, w)| *w) {
                Some(weight) => {
                    self.expanded = self.expanded.saturating_add(weight.nodes);
                    if self.expanded > MAX_ALIAS_NODES {
                        return Err(Diagnostic::error(
                            start,
                            format!(
                                "aliases expand to more than {MAX_ALIAS_NODES} nodes; the file is refused (an alias bomb?)"
                            ),
                        ));
                    }
                    // Checked before the copy is made.
                    self.copy(start, weight.bytes, "this alias")?;
                    let kind = self
                        .anchors
                        .get(&id)
                        .map_or(YKind::Null, |(target, _)| target.kind.clone());
                    Ok(YNode { kind, span: start })
                }
                None => Err(Diagnostic::error(start, "alias to an unknown anchor")),
            },
            Event::UnresolvedAlias(name) => Err(Diagnostic::error(
                start,
                format!("alias `*{name}` has no matching anchor `&{name}`"),
            )),
            _ => Err(Diagnostic::error(
                start,
                "YAML syntax error: unexpected token",
            )),
        }
    }

    fn enter(&mut self, at: Span) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::error(
                at,
                format!("the document nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    /// Counts `bytes` more of copied text, or refuses the document at
    /// `at` once the copies pass the limit.
    fn copy(&mut self, at: Span, bytes: usize, what: &str) -> Result<(), Diagnostic> {
        self.copied_bytes = self.copied_bytes.saturating_add(bytes);
        if self.copied_bytes <= self.max_alias_bytes {
            return Ok(());
        }
        let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
        Err(Diagnostic::error(
            at,
            format!(
                "anchors and aliases copy more than {:.0} MiB of text into the document ({what} copies {:.1} MiB), so the file is refused (an alias bomb?); PIPEWRIGHT_MAX_ALIAS_MB=N raises the limit",
                mib(self.max_alias_bytes),
                mib(bytes)
            ),
        ))
    }

    fn remember(&mut self, anchor: usize, node: &YNode) -> Result<(), Diagnostic> {
        if anchor != 0 {
            let weight = Weight::of(node);
            self.copy(node.span, weight.bytes, "this anchor")?;
            self.anchors.insert(anchor, (node.clone(), weight));
        }
        Ok(())
    }
}

/// How much a copy of a node costs: the nodes it holds (itself included)
/// and the bytes of their text.
#[derive(Debug, Clone, Copy, Default)]
struct Weight {
    nodes: usize,
    bytes: usize,
}

impl Weight {
    fn of(node: &YNode) -> Weight {
        let mut w = Weight::default();
        w.add(node);
        w
    }

    fn add(&mut self, node: &YNode) {
        self.nodes = self.nodes.saturating_add(1);
        match &node.kind {
            YKind::Str(s, _) => self.bytes = self.bytes.saturating_add(s.len()),
            YKind::Seq(items) => items.iter().for_each(|i| self.add(i)),
            YKind::Map(pairs) => pairs.iter().for_each(|(k, v)| {
                self.add(k);
                self.add(v);
            }),
            _ => {}
        }
    }
}

/// Resolves a scalar with the YAML 1.2 core schema: only plain scalars can be
/// null, booleans or numbers.
fn scalar(text: Cow<'_, str>, style: ScalarStyle, forced_str: bool) -> YKind {
    let style = match style {
        ScalarStyle::Plain => Style::Plain,
        ScalarStyle::SingleQuoted => Style::SingleQuoted,
        ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
        ScalarStyle::Literal => Style::Literal,
        _ => Style::Folded,
    };
    if style != Style::Plain || forced_str {
        return YKind::Str(text.into_owned(), style);
    }
    match &*text {
        "" | "~" | "null" | "Null" | "NULL" => return YKind::Null,
        "true" | "True" | "TRUE" => return YKind::Bool(true),
        "false" | "False" | "FALSE" => return YKind::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return YKind::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return YKind::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return YKind::Float(f64::NAN),
        _ => {}
    }
    if let Some(i) = parse_int(&text) {
        return YKind::Int(i);
    }
    if looks_like_float(&text)
        && let Ok(f) = text.parse::<f64>()
    {
        return YKind::Float(f);
    }
    YKind::Str(text.into_owned(), Style::Plain)
}

fn parse_int(text: &str) -> Option<i64> {
    let (neg, digits) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let value = if let Some(hex) = digits.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(oct) = digits.strip_prefix("0o") {
        i64::from_str_radix(oct, 8).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i64>().ok()?
    } else {
        return None;
    };
    Some(if neg { -value } else { value })
}

fn looks_like_float(text: &str) -> bool {
    let t = text.trim_start_matches(['-', '+']);
    !t.is_empty()
        && t.bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b'.')
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(src: &str) -> YNode {
        match parse(src) {
            Ok(n) => n,
            Err(d) => panic!("{}", d.message),
        }
    }

    #[test]
    fn scalars_follow_the_core_schema() {
        let n = p("a: 1\nb: 1.5\nc: true\nd: ~\ne: '1'\nf: hello\ng: 0x10\nh: -3\n");
        let j = n.to_json();
        assert_eq!(
            j,
            serde_json::json!({"a":1,"b":1.5,"c":true,"d":null,"e":"1","f":"hello","g":16,"h":-3})
        );
    }

    #[test]
    fn keys_and_values_know_their_place() {
        let n = p("pipe:\n  - id: find\n    tool: search\n");
        let pipe = n.get("pipe").and_then(|v| v.as_seq()).map(|s| s[0].clone());
        let step = pipe.unwrap_or_else(|| panic!("no step"));
        let pairs = step.as_map().unwrap_or_default();
        assert_eq!(pairs[0].0.span.start, Pos::new(2, 5));
        assert_eq!(pairs[0].1.span.start, Pos::new(2, 9));
        assert_eq!(pairs[1].1.span.start, Pos::new(3, 11));
    }

    #[test]
    fn json_loads_too() {
        let n = p(r#"{"pipe": [{"id": "a", "tool": "t", "args": {"n": 2}}]}"#);
        assert_eq!(n.to_json()["pipe"][0]["args"]["n"], 2);
    }

    /// A string left open is reported where it opened (the scanner stops
    /// lines later), with where the scanner read on to.
    #[test]
    fn an_unclosed_quote_is_reported_where_the_string_opened() {
        let err = |src: &str| match parse(src) {
            Ok(_) => panic!("{src:?} parsed"),
            Err(d) => (
                d.span.start.to_string(),
                d.message,
                d.hint.unwrap_or_default(),
            ),
        };
        let (at, message, hint) = err(
            "pipe:\n  - id: a\n    tool: echo\n    args:\n      message: \"hello\n  - id: b\n    tool: echo\n    args: { message: x }\n",
        );
        assert_eq!(at, "5:16");
        assert!(
            message.starts_with(
                "YAML syntax error: this string is not closed: its opening \" is here; YAML read on to 6:3"
            ),
            "{message}"
        );
        assert_eq!(hint, "close it with \" on line 5");
        // At the end of the file, single-quoted, in a list.
        let (at, message, hint) = err("a:\n  - x\n  - 'open\n");
        assert_eq!(at, "3:5", "{message}");
        assert_eq!(hint, "close it with ' on line 3");
        // In a flow mapping.
        let (at, message, _) = err("a: { b: \"x }\nc: d\n---\n");
        assert_eq!(at, "1:9", "{message}");
        // A string that ends on a line indented too little.
        let (at, message, hint) = err("a:\n  b: \"multi\n line\"\n");
        assert_eq!(at, "2:6");
        assert!(
            message.contains("this string goes on to line 3, which is indented less"),
            "{message}"
        );
        assert_eq!(
            hint,
            "indent line 3 more than the string's key, or close the string with \" on line 2"
        );
        // Other syntax errors keep the scanner's place and words.
        let (at, message, _) = err("a: [1, 2\nb: c\n");
        assert!(!message.contains("not closed"), "{message}");
        assert_ne!(at, "1:4");
    }

    #[test]
    fn syntax_errors_have_a_position() {
        let err = parse("a: [1, 2\nb: c\n").err();
        let d = err.unwrap_or_else(|| panic!("expected an error"));
        assert!(d.message.starts_with("YAML syntax error"), "{}", d.message);
        assert!(d.span.start.line >= 1);
    }

    #[test]
    fn second_document_is_refused() {
        let d = parse("a: 1\n---\nb: 2\n").err();
        assert!(d.is_some_and(|d| d.span.start.line == 2));
    }

    #[test]
    fn duplicate_keys_are_kept_for_the_loader() {
        let n = p("a: 1\na: 2\n");
        assert_eq!(n.as_map().map(<[_]>::len), Some(2));
    }

    #[test]
    fn anchors_and_aliases_expand() {
        let n = p("base: &b {x: 1}\nother: *b\n");
        assert_eq!(n.to_json()["other"]["x"], 1);
    }

    /// Nine levels of nine aliases each would be 9^9 (387 million) copies.
    fn alias_bomb() -> String {
        let mut src = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for level in 1..=9 {
            let prev = format!("*a{}", level - 1);
            let items = [prev.as_str(); 9].join(", ");
            src.push_str(&format!("a{level}: &a{level} [{items}]\n"));
        }
        src
    }

    #[test]
    fn an_alias_bomb_is_refused_at_its_alias() {
        let src = alias_bomb();
        assert!(src.len() < 1024);
        let d = parse(&src)
            .err()
            .unwrap_or_else(|| panic!("the bomb was accepted"));
        assert!(
            d.message.contains("aliases expand to more than"),
            "{}",
            d.message
        );
        assert!(d.span.start.line >= 2, "no position: {:?}", d.span);
    }

    #[test]
    fn ordinary_aliases_stay_well_under_the_cap() {
        let mut src = String::from("base: &b {x: 1, y: [1, 2, 3]}\n");
        for i in 0..1000 {
            src.push_str(&format!("k{i}: *b\n"));
        }
        assert!(parse(&src).is_ok());
    }

    /// One big string anchored once and aliased `aliases` times, each
    /// alias on a line of its own (`k0: *big` on line 2 …).
    fn big_string_aliased(bytes: usize, aliases: usize) -> String {
        let mut src = format!("big: &big \"{}\"\n", "x".repeat(bytes));
        for i in 0..aliases {
            src.push_str(&format!("k{i}: *big\n"));
        }
        src
    }

    /// 3 MiB aliased 2,000 times is 2,000 nodes, far under the node limit,
    /// but 6 GB of text: it is refused at the alias that passes the byte
    /// limit, before that copy is made, with the limit and its setting.
    #[test]
    fn a_big_string_aliased_many_times_is_refused_at_the_alias_that_passes_the_byte_limit() {
        let src = big_string_aliased(3 * 1024 * 1024, 2000);
        let d = parse_within(&src, DEFAULT_MAX_ALIAS_MB * 1024 * 1024)
            .err()
            .unwrap_or_else(|| panic!("6 GB of aliases were accepted"));
        assert!(
            d.message
                .starts_with("anchors and aliases copy more than 16 MiB of text"),
            "{}",
            d.message
        );
        assert!(
            d.message.contains("this alias copies 3.0 MiB"),
            "{}",
            d.message
        );
        assert!(
            d.message
                .ends_with("PIPEWRIGHT_MAX_ALIAS_MB=N raises the limit"),
            "{}",
            d.message
        );
        // The anchor's copy (3 MiB) and four aliases fit in 16 MiB; the
        // fifth alias (`k4`, line 6) is the one refused.
        assert_eq!(d.span.start, Pos::new(6, 5));
    }

    #[test]
    fn the_alias_byte_limit_is_the_one_given() {
        let src = big_string_aliased(1024 * 1024, 3);
        assert!(parse_within(&src, 4 * 1024 * 1024).is_ok());
        let d = parse_within(&src, 3 * 1024 * 1024)
            .err()
            .unwrap_or_else(|| panic!("accepted over the limit"));
        assert!(d.message.contains("more than 3 MiB"), "{}", d.message);
        assert_eq!(d.span.start.line, 4);
    }

    /// Anchors nested in anchors each hold a copy of what they contain:
    /// 256 of them around one big string would be 256 copies.
    #[test]
    fn nested_anchors_around_a_big_string_count_as_copies() {
        let depth = 200;
        let mut src = String::from("a: ");
        for i in 0..depth {
            src.push_str(&format!("&n{i} ["));
        }
        src.push_str(&format!("\"{}\"", "x".repeat(1024 * 1024)));
        src.push_str(&"]".repeat(depth));
        src.push('\n');
        let d = parse_within(&src, DEFAULT_MAX_ALIAS_MB * 1024 * 1024)
            .err()
            .unwrap_or_else(|| panic!("200 copies of 1 MiB were accepted"));
        assert!(
            d.message.contains("this anchor copies 1.0 MiB"),
            "{}",
            d.message
        );
    }

    /// Aliased keys are compared in place when the loader looks a key up.
    #[test]
    fn keys_are_found_whatever_their_scalar() {
        let n = p("1: a\ntrue: b\nname: c\n");
        assert_eq!(n.get("1").and_then(YNode::as_str), Some("a"));
        assert_eq!(n.get("true").and_then(YNode::as_str), Some("b"));
        assert_eq!(n.get("name").and_then(YNode::as_str), Some("c"));
        assert!(n.get("nam").is_none());
    }

    #[test]
    fn positions_inside_strings() {
        let src = "a: \"hi ${x}\"\nb: plain ${y}\nc: |\n  line one\n  and ${z}\n";
        let n = p(src);
        let a = n.get("a").unwrap_or_else(|| panic!());
        assert_eq!(a.pos_in_str(src, 3), Pos::new(1, 8));
        let b = n.get("b").unwrap_or_else(|| panic!());
        assert_eq!(b.pos_in_str(src, 6), Pos::new(2, 10));
        let c = n.get("c").unwrap_or_else(|| panic!());
        assert_eq!(c.pos_in_str(src, 13), Pos::new(5, 7));
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let src = "[".repeat(10_000);
        assert!(parse(&src).is_err());
    }

    /// 256 levels of flow mappings overflowed a 2 MiB thread (a tokio
    /// worker's) in a debug build before the builder grew its stack; found
    /// by tests/fuzz_loader.rs.
    #[test]
    fn deep_nesting_is_refused_on_a_small_stack_too() {
        // The shape the fuzzer found (flow mappings left open).
        let src = format!("servers:\n  x: {{url: {}\"h\", c: 1\n", "{a: ".repeat(600));
        let refused = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || parse(&src).err().map(|d| d.message))
            .and_then(|t| t.join().map_err(|_| std::io::Error::other("panicked")));
        assert_eq!(
            refused.ok().flatten().as_deref(),
            Some("the document nests deeper than 256 levels")
        );
    }
}
