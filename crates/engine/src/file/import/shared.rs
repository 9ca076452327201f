//! What both translations share: the translation context that hands out
//! node ids and collects diagnostics, the record of which native node stands
//! for which imported step, and small writers of native references, jq
//! paths and literals.

use std::collections::HashSet;

use serde_json::Value;

use crate::diag::{Diagnostic, Pos, Span, suggest};
use crate::file::yaml::{YKind, YNode};
use crate::lang::reference::{self, Reference, Root, Segment};

use crate::file::write;

/// A native node and the imported step it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedStep {
    /// The node id in the native pipeline (and in traces).
    pub native: String,
    /// The name the imported system binds the step's result under (Fibe:
    /// the step or `for_each` block id, none for unnamed and inner steps;
    /// Discord: the id or `step_N`).
    pub binding: Option<String>,
    /// The position of the top-level step in the imported `steps` list.
    pub index: usize,
    pub tool: String,
}

/// Translation state shared by both dialects.
pub(crate) struct Cx<'s> {
    pub src: &'s str,
    pub diags: Vec<Diagnostic>,
    /// Native ids handed out so far.
    used: HashSet<String>,
    pub named: Vec<ImportedStep>,
    /// Index of the top-level step being translated.
    pub index: usize,
    pub aliases: Vec<(String, String)>,
}

impl<'s> Cx<'s> {
    pub(super) fn new(src: &'s str) -> Self {
        Cx {
            src,
            diags: Vec::new(),
            used: HashSet::new(),
            named: Vec::new(),
            index: 0,
            aliases: Vec::new(),
        }
    }

    pub fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::error(span, msg));
    }

    pub fn err_hint(&mut self, span: Span, msg: impl Into<String>, hint: impl Into<String>) {
        self.diags
            .push(Diagnostic::error(span, msg).with_hint(hint));
    }

    pub fn warn(&mut self, span: Span, msg: impl Into<String>) {
        self.diags.push(Diagnostic::warning(span, msg));
    }

    /// Reports keys of `v` outside `allowed`; false when `v` is no mapping.
    pub fn keys(&mut self, v: &YNode, allowed: &[&str], what: &str) -> bool {
        let Some(pairs) = v.as_map() else {
            self.err(
                v.span,
                format!("{what} must be an object, found {}", v.type_name()),
            );
            return false;
        };
        for (k, _) in pairs {
            let key = k.key_text().unwrap_or_default();
            if !allowed.contains(&key.as_str()) {
                let msg = format!("unknown key `{key}` in {what}");
                match suggest(&key, allowed.iter().copied()) {
                    Some(s) => self.err_hint(k.span, msg, format!("did you mean `{s}`?")),
                    None => self.err_hint(
                        k.span,
                        msg,
                        format!("expected one of: {}", allowed.join(", ")),
                    ),
                }
            }
        }
        true
    }

    /// A native id for an imported step id (or for an unnamed step, from
    /// `fallback`), unique in the file.
    pub fn native_id(&mut self, wanted: &str) -> String {
        let mut id = crate::file::loader::id_from(wanted);
        while !self.used.insert(id.clone()) {
            id.push('_');
        }
        id
    }

    /// Reserves a native id exactly as written when it is valid and free.
    pub fn reserve(&mut self, id: &str) -> bool {
        reference::is_valid_node_id(id) && self.used.insert(id.to_owned())
    }

    /// Whether an error was already reported at `span`.
    pub fn has_errors_at(&self, span: Span) -> bool {
        self.diags.iter().any(|d| d.is_error() && d.span == span)
    }

    /// The file position of byte `offset` inside string scalar `v`.
    pub fn pos_in(&self, v: &YNode, offset: usize) -> Pos {
        v.pos_in_str(self.src, offset)
    }
}

/// A native reference `${root.path}` as text.
pub(crate) fn native_ref(root: Root, path: Vec<Segment>) -> String {
    Reference::new(root, path).to_string()
}

/// A path as a jq filter: `.a["b c"][0]`; `[*]` maps the rest over the
/// array (`[.a[] | .b]`).
pub(crate) fn jq_path(path: &[Segment]) -> String {
    if let Some(star) = path.iter().position(|s| *s == Segment::Wildcard) {
        let pre = jq_path(&path[..star]);
        let pre = if pre == "." { String::new() } else { pre };
        return format!("[{pre}.[] | {}]", jq_path(&path[star + 1..]));
    }
    let mut out = String::new();
    for s in path {
        let dot = if out.is_empty() { "." } else { "" };
        match s {
            Segment::Field(f) if is_jq_ident(f) => out.push_str(&format!(".{f}")),
            Segment::Field(f) => out.push_str(&format!("{dot}[{}]", write::quoted(f))),
            Segment::Index(i) => out.push_str(&format!("{dot}[{i}]")),
            Segment::Wildcard => {}
        }
    }
    if out.is_empty() { ".".to_owned() } else { out }
}

fn is_jq_ident(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The literal text `text` as a native template.
pub(crate) fn literal(text: &str) -> String {
    reference::escape_literal(text).into_owned()
}

/// Copies an argument tree, turning each string through `f` (which returns
/// the native template); keys are kept as they are.
pub(crate) fn map_strings(v: &YNode, f: &mut dyn FnMut(&YNode, &str) -> String) -> YNode {
    let kind = match &v.kind {
        YKind::Str(s, style) => YKind::Str(f(v, s), *style),
        YKind::Seq(items) => YKind::Seq(items.iter().map(|i| map_strings(i, f)).collect()),
        YKind::Map(pairs) => YKind::Map(
            pairs
                .iter()
                .map(|(k, x)| (k.clone(), map_strings(x, f)))
                .collect(),
        ),
        other => other.clone(),
    };
    YNode { kind, span: v.span }
}

/// The value of a `Value` written as a jq literal.
pub(crate) fn jq_literal(v: &Value) -> String {
    v.to_string()
}

pub(crate) fn walk_strings(v: &YNode, f: &mut impl FnMut(&str)) {
    match &v.kind {
        YKind::Str(s, _) => f(s),
        YKind::Seq(items) => items.iter().for_each(|i| walk_strings(i, f)),
        YKind::Map(pairs) => pairs.iter().for_each(|(_, x)| walk_strings(x, f)),
        _ => {}
    }
}
