//! Imports of pipelines written for other systems: Fibe's `fibe_pipeline`
//! JSON and Discord MCP's `mcp_pipeline` JSON.
//!
//! An import is translated into native pipeline YAML ([`convert`]), which
//! the native loader then loads; every line of that YAML remembers which
//! span of the imported file it came from, so diagnostics and model spans
//! point into the file the user wrote. `run`, `check`, `plan` and the editor
//! therefore accept imports wherever they accept native files, and
//! `pipewright convert` prints the same YAML.

mod discord;
pub mod emit;
mod fibe;

use std::collections::HashSet;

use serde_json::Value;

use crate::engine::diag::{Diagnostic, Pos, Span, suggest};
use crate::engine::file::loader::Loaded;
use crate::engine::file::model::{OutputSpec, Pipeline, RefSite};
use crate::engine::file::yaml::{self, YKind, YNode};
use crate::engine::lang::reference::{self, Reference, Root, Segment};

/// Which language a pipeline file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Dialect {
    /// Decide from the content (the default).
    #[default]
    Auto,
    /// pipewright's own `pipe:` / `compositions:` file.
    Native,
    /// Fibe `fibe_pipeline` arguments (`steps`, `$.id.path` bindings).
    Fibe,
    /// Discord MCP `mcp_pipeline` arguments (`steps`, `{{id.path}}`).
    Discord,
}

impl Dialect {
    /// The name used in messages and flags.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Auto => "auto",
            Dialect::Native => "native",
            Dialect::Fibe => "fibe",
            Dialect::Discord => "discord",
        }
    }
}

/// Decides the dialect of a parsed document: a mapping with `pipe:` or
/// `compositions:` is native; one with a `steps` list is Fibe or Discord by
/// the fields and reference syntax it uses (Fibe when nothing tells them
/// apart: such a file means the same in both).
pub fn detect(root: &YNode) -> Dialect {
    if root.get("pipe").is_some() || root.get("compositions").is_some() {
        return Dialect::Native;
    }
    let Some(steps) = root.get("steps").and_then(YNode::as_seq) else {
        return Dialect::Native;
    };
    let fibe_top = ["return", "idempotency_key", "dry_run", "cache"]
        .iter()
        .any(|k| root.get(k).is_some());
    let mut fibe = fibe_top;
    let mut discord = false;
    let mut stack: Vec<&YNode> = steps.iter().collect();
    while let Some(step) = stack.pop() {
        for k in [
            "parallel",
            "for_each",
            "on_error",
            "input_path",
            "output_path",
            "collect",
        ] {
            fibe |= step.get(k).is_some();
        }
        for k in ["save_as", "if", "continue_on_error"] {
            discord |= step.get(k).is_some();
        }
        if let Some(inner) = step
            .get("parallel")
            .or(step.get("steps"))
            .and_then(YNode::as_seq)
        {
            stack.extend(inner);
        }
        if let Some(args) = step.get("args") {
            walk_strings(args, &mut |s| {
                fibe |= s.starts_with("$.") || s.starts_with("$$.");
                discord |= s.contains("{{");
            });
        }
    }
    if discord && !fibe {
        Dialect::Discord
    } else {
        Dialect::Fibe
    }
}

fn walk_strings(v: &YNode, f: &mut impl FnMut(&str)) {
    match &v.kind {
        YKind::Str(s, _) => f(s),
        YKind::Seq(items) => items.iter().for_each(|i| walk_strings(i, f)),
        YKind::Map(pairs) => pairs.iter().for_each(|(_, x)| walk_strings(x, f)),
        _ => {}
    }
}

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

/// An imported file translated into native YAML.
#[derive(Debug, Clone)]
pub struct Conversion {
    /// The dialect the file was read as.
    pub dialect: Dialect,
    /// The native pipeline file.
    pub yaml: String,
    /// For each line of `yaml` (0-based), the span of the imported file it
    /// was written from.
    pub origins: Vec<Span>,
    /// Problems found while translating, at their place in the imported file.
    pub diagnostics: Vec<Diagnostic>,
    /// Every native node with the imported step it came from, in order,
    /// for printing results in the imported system's own envelope.
    pub steps: Vec<ImportedStep>,
    /// Discord `save_as` names → native node id.
    pub aliases: Vec<(String, String)>,
}

impl Conversion {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The imported-file span a span of the native YAML comes from.
    pub fn origin(&self, span: Span) -> Span {
        let at = |line: u32| {
            self.origins
                .get(line.saturating_sub(1) as usize)
                .copied()
                .filter(|s| s.start.line > 0)
        };
        at(span.start.line).unwrap_or(Span::at(Pos::new(1, 1)))
    }
}

/// Translates an imported file (`dialect` Fibe or Discord; `Auto` detects).
/// `None` when the text is not YAML/JSON at all or is a native file.
pub fn convert(source: &str, dialect: Dialect) -> Result<Conversion, Diagnostic> {
    let root = yaml::parse(source)?;
    let dialect = match dialect {
        Dialect::Auto => detect(&root),
        d => d,
    };
    Ok(convert_tree(source, &root, dialect))
}

fn convert_tree(source: &str, root: &YNode, dialect: Dialect) -> Conversion {
    let mut cx = Cx::new(source);
    let plan = match dialect {
        Dialect::Discord => discord::translate(&mut cx, root),
        _ => fibe::translate(&mut cx, root),
    };
    let emitted = plan.as_ref().map(emit::emit).unwrap_or_default();
    let mut diagnostics = cx.diags;
    diagnostics.sort_by_key(|d| (d.span.start, d.severity));
    Conversion {
        dialect,
        yaml: emitted.text,
        origins: emitted.origins,
        diagnostics,
        steps: cx.named,
        aliases: cx.aliases,
    }
}

/// Loads any pipeline file: native files go to the native loader, imports
/// are converted first and their diagnostics and spans mapped back.
pub fn load_str_as(source: &str, dialect: Dialect) -> Loaded {
    let root = match yaml::parse(source) {
        Ok(root) => root,
        Err(d) => {
            return Loaded {
                pipeline: None,
                diagnostics: vec![d],
            };
        }
    };
    let dialect = match dialect {
        Dialect::Auto => detect(&root),
        d => d,
    };
    if dialect == Dialect::Native {
        return crate::engine::file::loader::load_tree(source, &root);
    }
    let conv = convert_tree(source, &root, dialect);
    if conv.has_errors() || conv.yaml.is_empty() {
        return Loaded {
            pipeline: None,
            diagnostics: conv.diagnostics,
        };
    }
    let native = crate::engine::file::loader::load_native_str(&conv.yaml);
    let mut diagnostics = conv.diagnostics.clone();
    for d in native.diagnostics {
        // Order-only parents are how steps are sequenced; not a problem here.
        if !d.is_error() && d.message.contains("only orders the two") {
            continue;
        }
        diagnostics.push(Diagnostic {
            span: conv.origin(d.span),
            ..d
        });
    }
    diagnostics.sort_by_key(|d| (d.span.start, d.severity));
    let pipeline = native.pipeline.map(|mut p| {
        remap(&mut p, &|s| conv.origin(s));
        p
    });
    Loaded {
        pipeline,
        diagnostics,
    }
}

/// Moves every span of the model through `f`.
fn remap(p: &mut Pipeline, f: &dyn Fn(Span) -> Span) {
    let site = |r: &mut RefSite| r.pos = f(Span::at(r.pos)).start;
    for c in &mut p.compositions {
        c.span = f(c.span);
        if let Some(OutputSpec::Node { span, .. }) = &mut c.output {
            *span = f(*span);
        }
        for e in &mut c.expect {
            e.span = f(e.span);
        }
        for n in &mut c.nodes {
            n.span = f(n.span);
            n.id_span = f(n.id_span);
            n.server_span = f(n.server_span);
            n.tool_span = f(n.tool_span);
            n.needs.iter_mut().for_each(|x| x.span = f(x.span));
            n.arg_refs.iter_mut().for_each(site);
            if let Some(fe) = &mut n.for_each {
                site(&mut fe.site);
            }
            if let Some(w) = &mut n.when {
                w.span = f(w.span);
                if let Some(s) = &mut w.subject {
                    site(s);
                }
            }
        }
    }
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
    fn new(src: &'s str) -> Self {
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
        let mut id: String = wanted
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if !id.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            id.insert(0, '_');
        }
        if reference::RESERVED_ROOTS.contains(&id.as_str()) {
            id.push('_');
        }
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
            Segment::Field(f) => out.push_str(&format!("{dot}[{}]", emit::quoted(f))),
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

#[cfg(test)]
mod tests;
