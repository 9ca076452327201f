//! Reads a pipeline file into the model, reporting every problem at once,
//! each with its line and column.
//!
//! The loader works in two passes: [`Loader`] turns the spanned YAML tree into
//! nodes (checking each field on its own), then [`crate::file::graph`] checks what
//! only the whole composition shows (needs, references, cycles, output).

mod answers;
mod auth;
mod compositions;
mod eval;
mod hash;
mod nodes;
mod settings;

use crate::file::keys::{MCPTEST_SECTIONS, TOP_KEYS};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::Value;

use crate::diag::{Diagnostic, Pos, Span, suggest};
use crate::file::graph;
use crate::file::model::{
    Budget, Case, Compensate, Composition, DEFAULT_BACKOFF, Expectation, ForEach, Kind, Matcher,
    Mock, Need, Node, OnError, OutputSpec, Pipeline, RefSite, ServerDecl, ServerSource, When,
};
use crate::file::yaml::{self, YKind, YNode};
use crate::lang::jq::{JqLimits, JqProgram};
use crate::lang::reference::{self, Part, Root};

/// The result of loading: the model when it could be built, and every
/// diagnostic (errors and warnings) in file order.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub pipeline: Option<Pipeline>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| !d.is_error())
    }

    /// The pipeline if the file has no errors.
    pub fn valid(&self) -> Option<&Pipeline> {
        if self.has_errors() {
            None
        } else {
            self.pipeline.as_ref()
        }
    }
}

/// Loads native pipeline YAML or JSON text (no import detection).
pub fn load_native_str(source: &str) -> Loaded {
    load_native_with(source, None, (&[], JqLimits::default()))
}

/// [`load_native_str`] with the alias limit `max_alias_mb`, the servers
/// the command line adds and the jq programs' limits (see
/// [`load_tree_with`]).
pub fn load_native_with(
    source: &str,
    max_alias_mb: Option<usize>,
    given: (&[String], JqLimits),
) -> Loaded {
    match yaml::parse_limited(source, max_alias_mb) {
        Ok(root) => load_tree_with(source, &root, given),
        Err(d) => Loaded {
            pipeline: None,
            diagnostics: vec![d],
        },
    }
}

/// Loads an already parsed native document.
pub fn load_tree(source: &str, root: &YNode) -> Loaded {
    load_tree_with(source, root, (&[], JqLimits::default()))
}

/// [`load_tree`] knowing the servers the command line adds
/// (`--server NAME=…`, `--servers-from`): nodes may name them, and a node
/// that names none is an error when that makes the choice ambiguous; and
/// with what each of its jq programs may spend (`jq`).
pub fn load_tree_with(
    source: &str,
    root: &YNode,
    (cli_servers, jq): (&[String], JqLimits),
) -> Loaded {
    let mut loader = Loader {
        src: source,
        cli_servers,
        jq,
        diags: Vec::new(),
        scratch: Vec::new(),
        programs: HashMap::new(),
    };
    let pipeline = loader.pipeline(root);
    let mut diagnostics = loader.diags;
    diagnostics.sort_by_key(|d| (d.span.start, d.severity));
    Loaded {
        pipeline,
        diagnostics,
    }
}

struct Loader<'s> {
    src: &'s str,
    /// Servers the command line adds that nodes may name.
    cli_servers: &'s [String],
    /// What each jq program compiled here may spend.
    jq: JqLimits,
    diags: Vec<Diagnostic>,
    /// Room for each node's canonical text while it is hashed.
    scratch: Vec<u8>,
    /// The jq programs compiled so far, by their text.
    programs: HashMap<String, JqProgram>,
}

/// What the loader knows of the file while it reads one composition.
struct FileScope<'a> {
    servers: &'a IndexMap<String, ServerDecl>,
    /// The file's `vars:` defaults.
    vars: &'a IndexMap<String, Value>,
    /// Servers added on the command line (`--server`, `--servers-from`)
    /// that the file does not declare.
    cli: Vec<&'a str>,
}

impl FileScope<'_> {
    fn knows(&self, name: &str) -> bool {
        self.servers.contains_key(name) || self.cli.contains(&name)
    }

    /// Every server a node may name: the file's, then the command line's.
    fn names(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.servers.keys().map(String::as_str).collect();
        all.extend(self.cli.iter().copied());
        all
    }

    /// Whether a node that names no server is ambiguous: the file declares
    /// none or several, and more than one is configured in all.
    fn ambiguous(&self) -> bool {
        self.servers.len() != 1 && self.servers.len() + self.cli.len() > 1
    }
}

impl<'s> Loader<'s> {
    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }

    fn err_hint(&mut self, span: Span, msg: impl Into<String>, hint: impl Into<String>) {
        self.diags
            .push(Diagnostic::error(span, msg).with_hint(hint));
    }

    /// An error at a secret written into the file: the quoted line shows
    /// the value masked.
    fn err_secret(&mut self, span: Span, msg: impl Into<String>, hint: impl Into<String>) {
        self.diags
            .push(Diagnostic::error(span, msg).with_hint(hint).secret());
    }

    fn warn(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::warning(span, msg));
    }

    /// The pairs of a mapping, after reporting unknown and duplicate keys.
    /// Unknown keys are dropped from the result.
    fn mapping<'n>(
        &mut self,
        node: &'n YNode,
        allowed: &[&str],
        what: &str,
    ) -> Option<Vec<(Cow<'n, str>, &'n YNode, &'n YNode)>> {
        let Some(pairs) = node.as_map() else {
            self.err(
                node.span,
                format!("{what} must be a mapping, found {}", node.type_name()),
            );
            return None;
        };
        let mut seen = Seen::default();
        let mut out = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let Some(key) = k.key_str() else {
                self.err(k.span, format!("keys of {what} must be plain names"));
                continue;
            };
            // A string key is borrowed: cloning it copies no text.
            if !seen.insert(key.clone()) {
                self.err(k.span, format!("duplicate key `{key}` in {what}"));
                continue;
            }
            if !allowed.contains(&&*key) {
                let msg = format!("unknown key `{key}` in {what}");
                match suggest(&key, allowed.iter().copied()) {
                    Some(s) => self.err_hint(k.span, msg, format!("did you mean `{s}`?")),
                    None => self.err_hint(
                        k.span,
                        msg,
                        format!("expected one of: {}", allowed.join(", ")),
                    ),
                }
                continue;
            }
            out.push((key, k, v));
        }
        Some(out)
    }

    /// `sampling: {url, model, api_key}`.
    fn sampling(&mut self, v: &YNode) -> Option<crate::file::model::Sampling> {
        let Some(map) = v.as_map() else {
            self.err(
                v.span,
                format!(
                    "`sampling` must be a mapping with `url`, `model` and `api_key`, found {}",
                    v.type_name()
                ),
            );
            return None;
        };
        for (k, _) in map {
            let key = k.as_str().unwrap_or_default();
            if !crate::file::keys::SAMPLING_KEYS.contains(&key) {
                self.err_hint(
                    k.span,
                    format!("unknown key `{key}` in `sampling`"),
                    "`sampling` takes `url`, `model` and `api_key`",
                );
            }
        }
        let mut field = |name: &str, required: bool| match v.get(name) {
            Some(x) => self.string(x, &format!("`sampling.{name}`")),
            None => {
                if required {
                    self.err(v.span, format!("`sampling` needs `{name}`"));
                }
                None
            }
        };
        let url = field("url", true);
        let model = field("model", true);
        let api_key = field("api_key", false);
        Some(crate::file::model::Sampling {
            url: url?,
            model: model?,
            api_key,
        })
    }

    fn string(&mut self, v: &YNode, what: &str) -> Option<String> {
        match &v.kind {
            YKind::Str(s, _) => Some(s.clone()),
            YKind::Int(i) => Some(i.to_string()),
            YKind::Float(f) => Some(f.to_string()),
            YKind::Bool(b) => Some(b.to_string()),
            _ => {
                self.err(
                    v.span,
                    format!("{what} must be a string, found {}", v.type_name()),
                );
                None
            }
        }
    }

    /// A non-empty name such as an id or a tool.
    fn name(&mut self, v: &YNode, what: &str) -> Option<String> {
        let s = self.string(v, what)?;
        if s.trim().is_empty() {
            self.err(v.span, format!("{what} must not be empty"));
            return None;
        }
        Some(s)
    }

    fn number(&mut self, v: &YNode, what: &str) -> Option<f64> {
        match v.kind {
            YKind::Int(i) if i >= 0 => Some(i as f64),
            YKind::Float(f) if f >= 0.0 && f.is_finite() => Some(f),
            _ => {
                self.err(
                    v.span,
                    format!(
                        "{what} must be a non-negative number, found {}",
                        describe(v)
                    ),
                );
                None
            }
        }
    }

    fn count(&mut self, v: &YNode, what: &str) -> Option<u64> {
        match v.kind {
            YKind::Int(i) if i >= 0 => Some(i as u64),
            _ => {
                self.err(
                    v.span,
                    format!(
                        "{what} must be a non-negative integer, found {}",
                        describe(v)
                    ),
                );
                None
            }
        }
    }

    fn duration(&mut self, v: &YNode, what: &str) -> Option<Duration> {
        let parsed = match &v.kind {
            YKind::Int(i) if *i >= 0 => bounded_duration(Duration::from_secs(i.unsigned_abs())),
            YKind::Str(s, _) => parse_duration(s),
            _ => Err(DurationError::Unreadable),
        };
        self.checked_duration(v, what, parsed)
    }

    /// The duration, or an error at `v` saying why it was refused.
    fn checked_duration(
        &mut self,
        v: &YNode,
        what: &str,
        parsed: Result<Duration, DurationError>,
    ) -> Option<Duration> {
        match parsed {
            Ok(d) => Some(d),
            Err(DurationError::Unreadable) => {
                self.err_hint(
                    v.span,
                    format!("invalid duration {} for {what}", describe(v)),
                    "write a number with a unit: 500ms, 30s, 2m, 1h (a bare number means seconds)",
                );
                None
            }
            Err(e @ DurationError::TooLong) => {
                self.err(v.span, format!("{what} {} {e}", describe(v)));
                None
            }
        }
    }

    fn string_map(&mut self, v: &YNode, what: &str) -> IndexMap<String, String> {
        let mut out = IndexMap::new();
        let Some(pairs) = v.as_map() else {
            self.err(
                v.span,
                format!("{what} must be a mapping, found {}", v.type_name()),
            );
            return out;
        };
        for (k, val) in pairs {
            if let (Some(key), Some(s)) = (k.key_text(), self.string(val, what)) {
                out.insert(key, s);
            }
        }
        out
    }

    fn string_list(&mut self, v: &YNode, what: &str) -> Vec<String> {
        let Some(items) = v.as_seq() else {
            self.err(
                v.span,
                format!("{what} must be a list, found {}", v.type_name()),
            );
            return Vec::new();
        };
        items.iter().filter_map(|i| self.string(i, what)).collect()
    }

    fn pipeline(&mut self, root: &YNode) -> Option<Pipeline> {
        if matches!(root.kind, YKind::Null) {
            self.err_hint(
                Span::at(Pos::new(1, 1)),
                "the file is empty",
                "a pipeline file needs a `pipe:` list or a `compositions:` list",
            );
            return None;
        }
        let Some(pairs) = root.as_map() else {
            self.err(
                root.span,
                format!(
                    "a pipeline file must be a mapping with `pipe:` or `compositions:`, found {}",
                    root.type_name()
                ),
            );
            return None;
        };
        // mcptest suite sections are tolerated with a warning.
        let mut allowed: Vec<&str> = TOP_KEYS.to_vec();
        for (k, _) in pairs {
            if let Some(key) = k.key_text()
                && MCPTEST_SECTIONS.contains(&key.as_str())
            {
                self.warn(
                    k.span,
                    format!(
                        "`{key}:` is an mcptest section that pipewright does not run; it is ignored"
                    ),
                );
                allowed.push(MCPTEST_SECTIONS[MCPTEST_SECTIONS.iter().position(|s| *s == key)?]);
            }
        }
        let pairs = self.mapping(root, &allowed, "the pipeline file")?;
        let get = |name: &str| {
            pairs
                .iter()
                .find(|(k, _, _)| k == name)
                .map(|(_, k, v)| (*k, *v))
        };

        let version = get("version").and_then(|(_, v)| {
            let n = self.count(v, "`version`")?;
            if n != 1 {
                self.err(
                    v.span,
                    format!("unsupported version {n}; this pipewright reads version 1"),
                );
            }
            Some(n)
        });
        let servers = get("servers").map_or_else(IndexMap::new, |(_, v)| self.servers(v));
        let vars = get("vars").map_or_else(IndexMap::new, |(_, v)| self.vars(v, "`vars`"));
        let budget = get("budget").map_or_else(Budget::default, |(_, v)| self.budget(v));
        let pricing = get("pricing").map(|(_, v)| {
            if v.as_map().is_none() {
                self.err(
                    v.span,
                    "`pricing` must be a mapping with `tools:` and/or `models:`",
                );
            }
            v.to_json()
        });
        let dry_run = get("dry_run").is_some_and(|(_, v)| match v.kind {
            YKind::Bool(b) => b,
            _ => {
                self.err(
                    v.span,
                    format!("`dry_run` must be true or false, found {}", v.type_name()),
                );
                false
            }
        });
        let lock_strict = get("lock").is_some_and(|(_, v)| match v.as_str() {
            Some("strict") => true,
            Some("warn") => false,
            _ => {
                self.err(
                    v.span,
                    "`lock` must be `strict` (a tool changed since pipewright.lock is an error) or `warn`",
                );
                false
            }
        });
        let sampling = get("sampling").and_then(|(_, v)| self.sampling(v));
        let cli = self
            .cli_servers
            .iter()
            .filter(|n| !servers.contains_key(n.as_str()))
            .map(String::as_str)
            .collect();
        let scope = FileScope {
            servers: &servers,
            vars: &vars,
            cli,
        };

        let mut compositions = Vec::new();
        if let Some((key, pipe)) = get("pipe") {
            let name = get("name")
                .and_then(|(_, v)| self.name(v, "`name`"))
                .unwrap_or_else(|| "pipe".to_owned());
            let description = get("description").and_then(|(_, v)| self.string(v, "`description`"));
            let comp = self.pipe(key, pipe, name, description, &get, &scope);
            compositions.extend(comp);
        } else {
            for key in ["output", "expect", "cases", "name", "description"] {
                if let Some((k, _)) = get(key) {
                    self.err_hint(
                        k.span,
                        format!("top-level `{key}:` belongs to a `pipe:`, and this file has none"),
                        "move it into the composition it describes",
                    );
                }
            }
        }
        if let Some((_, comps)) = get("compositions") {
            match comps.as_seq() {
                Some([]) => self.err(
                    comps.span,
                    "`compositions` is empty; add at least one composition",
                ),
                Some(items) => {
                    for item in items {
                        compositions.extend(self.composition(item, &scope));
                    }
                }
                None => self.err(
                    comps.span,
                    format!("`compositions` must be a list, found {}", comps.type_name()),
                ),
            }
        }
        if get("pipe").is_none() && get("compositions").is_none() {
            self.err_hint(
                root.span,
                "the file declares neither `pipe:` nor `compositions:`",
                "add a `pipe:` list of steps or a `compositions:` list",
            );
        }
        let mut names: IndexMap<&str, Span> = IndexMap::new();
        let mut dupes = Vec::new();
        for c in &compositions {
            if let Some(first) = names.insert(&c.name, c.span) {
                dupes.push((c.span, c.name.clone(), first));
            }
        }
        for (span, name, first) in dupes {
            self.err(
                span,
                format!(
                    "duplicate composition name `{name}` (first used at line {})",
                    first.start.line
                ),
            );
        }
        Some(Pipeline {
            version,
            servers,
            vars,
            budget,
            pricing,
            dry_run,
            lock_strict,
            sampling,
            compositions,
        })
    }
}

/// The keys of one mapping seen so far: a list while it is short (most
/// mappings have a few keys, and hashing each cost more than comparing),
/// a hash set past that.
#[derive(Default)]
struct Seen<'n> {
    few: Vec<Cow<'n, str>>,
    many: HashSet<Cow<'n, str>>,
}

impl<'n> Seen<'n> {
    const FEW: usize = 16;

    /// Whether `key` is new (and now seen).
    fn insert(&mut self, key: Cow<'n, str>) -> bool {
        if self.many.is_empty() {
            if self.few.contains(&key) {
                return false;
            }
            if self.few.len() < Self::FEW {
                self.few.push(key);
                return true;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(key)
    }
}

/// A value as a message quotes it; a long string is cut (an aliased one
/// can be megabytes, and one message is written per place it is used).
fn describe(v: &YNode) -> String {
    const MAX_CHARS: usize = 80;
    match &v.kind {
        YKind::Str(s, _) => match s.char_indices().nth(MAX_CHARS) {
            Some((at, _)) => format!("`{}…` ({} bytes)", &s[..at], s.len()),
            None => format!("`{s}`"),
        },
        YKind::Int(i) => format!("`{i}`"),
        YKind::Float(f) => format!("`{f}`"),
        YKind::Bool(b) => format!("`{b}`"),
        _ => v.type_name().to_owned(),
    }
}

/// The hash of `node`'s definition as the loader computes it
/// ([`Node::hash`](crate::file::model::Node::hash)), for a node changed
/// after loading (a session asks what a node hashes to without its pin).
pub fn definition_hash(node: &crate::file::model::Node) -> String {
    hash::node_hash(node, &mut Vec::new())
}

/// A node id made of `name`: characters an id cannot hold become `_`, a
/// `_` goes first when it would not start as one, and a reserved root
/// (`var`, `env`, `item`) gets a `_` after it. What an imported step and a
/// scaffolded tool are named by.
pub fn id_from(name: &str) -> String {
    let mut id: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if !valid_id(&id) {
        id.insert(0, '_');
    }
    if crate::lang::reference::RESERVED_ROOTS.contains(&id.as_str()) {
        id.push('_');
    }
    id
}

/// Whether `id` can be a node id that references can name.
pub fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Byte length of the `${…}` reference at the start of `s`, quotes inside
/// brackets respected.
fn reference_end(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices().skip(2) {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '}' => return Some(i + 1),
                _ => {}
            },
        }
    }
    None
}

/// The longest duration pipewright takes from a flag, a file or a caller:
/// 365 days. No wait that long is meant, and a longer one (`1e19s`) would
/// overflow the clock when a deadline is set from it.
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// Why a duration's text was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationError {
    /// Not a number with a unit.
    Unreadable,
    /// Longer than [`MAX_DURATION`].
    TooLong,
}

impl std::fmt::Display for DurationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DurationError::Unreadable => "is not a duration (write e.g. 500ms, 30s, 2m, 1h)",
            DurationError::TooLong => {
                "is longer than 8760h (365 days), the longest duration pipewright takes"
            }
        })
    }
}

/// `d` if it is at most [`MAX_DURATION`].
pub fn bounded_duration(d: Duration) -> Result<Duration, DurationError> {
    if d > MAX_DURATION {
        Err(DurationError::TooLong)
    } else {
        Ok(d)
    }
}

/// Parses `500ms`, `30s`, `2m`, `1h`, `1m30s`, `1.5s` or bare seconds, up
/// to [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, DurationError> {
    bounded_duration(parse_any_duration(s).ok_or(DurationError::Unreadable)?)
}

fn parse_any_duration(s: &str) -> Option<Duration> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(secs) = s.parse::<f64>() {
        // `try_`: a number too big for a Duration is not one, not a panic.
        return Duration::try_from_secs_f64(secs).ok();
    }
    let mut total = 0f64;
    let mut rest = s;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let factor = match rest[..unit_len].trim() {
            "ms" => 0.001,
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        total += n * factor;
        rest = &rest[unit_len..];
    }
    Duration::try_from_secs_f64(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let ok = |s| parse_duration(s).ok();
        assert_eq!(ok("30s"), Some(Duration::from_secs(30)));
        assert_eq!(ok("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(ok("2m"), Some(Duration::from_secs(120)));
        assert_eq!(ok("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(ok("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(ok("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(ok("12"), Some(Duration::from_secs(12)));
        assert_eq!(ok("3x"), None);
        assert_eq!(ok("s"), None);
        assert_eq!(ok(""), None);
        assert_eq!(ok("-1s"), None);
        // Too big for a Duration: no value, no panic (found by tests/fuzz_loader.rs).
        assert_eq!(ok("1e30"), None);
        assert_eq!(ok("99999999999999999999999999999999s"), None);
    }

    /// A duration that fits a `Duration` but not the clock (`1e19` s
    /// overflowed `Instant + Duration` and panicked) is refused by name.
    #[test]
    fn durations_past_a_year_are_refused_as_too_long() {
        assert_eq!(parse_duration("8760h"), Ok(MAX_DURATION));
        for text in ["1e19", "10000000000000000000s", "8761h", "31536001"] {
            assert_eq!(parse_duration(text), Err(DurationError::TooLong), "{text}");
        }
        assert_eq!(parse_duration("soon"), Err(DurationError::Unreadable));
    }

    /// A megabyte-long value (an alias makes one cheaply) is quoted cut,
    /// in every message that names it.
    #[test]
    fn a_long_value_is_quoted_cut() {
        let long = YNode {
            kind: YKind::Str("é".repeat(1_000_000), yaml::Style::Plain),
            span: Span::default(),
        };
        let text = describe(&long);
        assert!(
            text.starts_with(&format!("`{}…`", "é".repeat(80))),
            "{text}"
        );
        assert!(text.ends_with("(2000000 bytes)"), "{text}");
    }

    #[test]
    fn reference_end_respects_quotes() {
        assert_eq!(reference_end("${a.b} | x"), Some(6));
        assert_eq!(reference_end(r#"${a["}"]} | x"#), Some(9));
        assert_eq!(reference_end("${a"), None);
    }

    /// Every field a node hash reads, in nodes that exercise the canonical
    /// JSON: keys that sort by bytes (digits, capitals, accents), strings
    /// that need escapes, floats, non-finite numbers, scalar keys, retry
    /// backoffs, mocks, compensations and `_meta`.
    const HASHED: &str = r#"
servers:
  api: {url: "http://127.0.0.1:9/mcp"}
  other: {command: x}
pipe:
  - id: plain
    server: api
    tool: search
  - id: rich
    server: other
    tool: "get_ü"
    args:
      zeta: [1, -2, 3.5, 1e300, -0.0, .nan, .inf, true, null, "x", [], {}]
      alpha: {b: "quote \" backslash \\ tab \t nl \n ctl \u0001 del \u007f é 😀 \u2028", a: {}}
      "10": ten
      1: one
      true: yes
      Z: upper
      é: accent
      user: "${plain.users[0].id}"
      long: "a string long enough to take the canonical text past one SHA-256 block of sixty-four bytes"
    transform: "{name, meta}"
    when: "${plain.users} | length > 0"
    on_error: {retry: {max: 3, backoff: 1.5s}}
    timeout: 2m
    max_cost_per_call_usd: 0.25
    max_tokens_per_call: 5000
    meta: {idempotency_key: "k-1", nested: {z: 1, a: 2}}
    compensate: {server: api, tool: undo, args: {id: "${rich.id}", n: 2}}
  - id: fan
    server: api
    tool: each
    for_each: "${rich.items[*]}"
    max_concurrency: 4
    aligned: [rich]
    on_error: continue
    max_cost_per_call_usd: 1
    timeout: 250ms
    args: {item: "${item}"}
  - id: fixture
    mock: {result: {users: [{id: 7}], b: 1.0}}
    on_error: retry:2
  - id: failing
    mock: {error: {code: -32000, message: "nope"}}
    when: ".parents | length >= 0"
    compensate: {tool: undo}
compositions:
  - name: dag
    nodes:
      - {id: a, server: api, tool: t}
      - {id: b, server: api, tool: t}
      - {id: c, server: api, tool: t, needs: [b, a], args: {x: "${a.x}", y: "${b.y}"}}
"#;

    /// Node hashes are compared with the hashes saved beside earlier runs
    /// (a changed hash makes a node stale), so they must not move: these
    /// were computed by the `serde_json::json!` + canonical text version.
    #[test]
    fn node_hashes_stay_as_saved_runs_know_them() {
        let loaded = crate::file::open::load_str(HASHED);
        let p = loaded
            .valid()
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let hashes: Vec<(&str, &str)> = p
            .compositions
            .iter()
            .flat_map(|c| &c.nodes)
            .map(|n| (n.id.as_str(), n.hash.as_str()))
            .collect();
        assert_eq!(
            hashes,
            [
                (
                    "plain",
                    "c75fd8a48bdea9efcdc93033bcae63ebfb2e3d9bc1a0f34124e4d9a9e6336481"
                ),
                (
                    "rich",
                    "c6bf5fa1d477808405eac32055b9d49b3b34b1e8cf4d6906add3a2134828f75e"
                ),
                (
                    "fan",
                    "3b47a81f8a059637b5217ccf46544ddde0afeff2d5c560f07bbc6d146d1fe4ab"
                ),
                (
                    "fixture",
                    "0d0518b21526271b4e798c53c015421397d40e02797ef09a6ddd5dc69767f247"
                ),
                (
                    "failing",
                    "aca32aff7c6cb79153131a0e2e93bb1c619894b59d1767844195a2d8aa83402b"
                ),
                (
                    "a",
                    "55d88b29271745b54937cb7e8470644d67286da56b79c3c4cc9c911fceb61bea"
                ),
                (
                    "b",
                    "55d88b29271745b54937cb7e8470644d67286da56b79c3c4cc9c911fceb61bea"
                ),
                (
                    "c",
                    "f963f56cff787170f1a2315f82aeec29884577acab45f1752e8ad632a190a5d7"
                ),
            ]
        );
    }

    /// A repeated program is compiled once, but a repeated mistake is
    /// reported at every place it is written.
    #[test]
    fn a_repeated_jq_mistake_is_reported_at_each_node() {
        let src = "pipe:\n  - {id: a, tool: t, transform: '.x | nope'}\n  - {id: b, tool: t, transform: '.x | nope'}\n  - {id: c, tool: t, transform: '.y'}\n  - {id: d, tool: t, transform: '.y'}\n";
        let loaded = crate::file::open::load_str(src);
        let lines: Vec<u32> = loaded.errors().map(|d| d.span.start.line).collect();
        assert_eq!(lines, [2, 3], "{:?}", loaded.diagnostics);
        let p = loaded.pipeline.unwrap_or_else(|| panic!("no pipeline"));
        let sources: Vec<Option<&str>> = p.compositions[0]
            .nodes
            .iter()
            .map(|n| n.transform.as_ref().map(JqProgram::source))
            .collect();
        assert_eq!(sources, [None, None, Some(".y"), Some(".y")]);
    }

    /// Duplicates are found in short and long mappings alike, across the
    /// switch from a list to a hash set.
    #[test]
    fn duplicate_keys_are_found_in_long_mappings() {
        let mut seen = Seen::default();
        let keys: Vec<Cow<str>> = (0..40).map(|i| Cow::Owned(format!("k{i}"))).collect();
        for k in &keys {
            assert!(seen.insert(k.clone()), "{k}");
        }
        for k in &keys {
            assert!(!seen.insert(k.clone()), "{k}");
        }
        let mut node = String::from("pipe:\n  - id: a\n    tool: t\n");
        for i in 0..20 {
            node.push_str(&format!("    x{i}: 1\n"));
        }
        node.push_str("    tool: u\n    x3: 2\n");
        let loaded = crate::file::open::load_str(&node);
        let dupes: Vec<(u32, &str)> = loaded
            .errors()
            .filter(|d| d.message.starts_with("duplicate"))
            .map(|d| (d.span.start.line, d.message.as_str()))
            .collect();
        assert_eq!(
            dupes,
            [
                (24, "duplicate key `tool` in node `a`"),
                (25, "duplicate key `x3` in node `a`"),
            ]
        );
    }

    #[test]
    fn ids() {
        assert!(valid_id("find_user-2"));
        assert!(!valid_id("2find"));
        assert!(!valid_id("a.b"));
        assert!(!valid_id(""));
    }
}
