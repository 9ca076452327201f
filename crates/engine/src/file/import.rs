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
mod fibe;
mod shared;

pub use fibe::FibeLimits;
pub use shared::ImportedStep;
use shared::{Cx, walk_strings};

use crate::diag::{Diagnostic, Pos, Span};
use crate::file::model::{OutputSpec, Pipeline, RefSite};
use crate::file::yaml::{self, YNode};

/// Which language a pipeline file is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    /// Every dialect, in the order a flag's help lists them.
    pub const ALL: &[Dialect] = &[
        Dialect::Auto,
        Dialect::Native,
        Dialect::Fibe,
        Dialect::Discord,
    ];

    /// What each one means, as a flag's help says it.
    pub fn help(self) -> &'static str {
        match self {
            Dialect::Auto => "Decide from the content (the default)",
            Dialect::Native => "pipewright's own `pipe:` / `compositions:` file",
            Dialect::Fibe => "Fibe `fibe_pipeline` arguments (`steps`, `$.id.path` bindings)",
            Dialect::Discord => "Discord MCP `mcp_pipeline` arguments (`steps`, `{{id.path}}`)",
        }
    }

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
    /// Fibe `cache` (default true): the result envelope names the run as
    /// `pipeline_id` only when it is cached.
    pub cache: bool,
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

/// Translates an imported file (`dialect` Fibe or Discord; `Auto` detects)
/// within Fibe's caps `fibe`. `None` when the text is not YAML/JSON at all
/// or is a native file.
pub fn convert(source: &str, dialect: Dialect, fibe: FibeLimits) -> Result<Conversion, Diagnostic> {
    let root = yaml::parse(source)?;
    let dialect = match dialect {
        Dialect::Auto => detect(&root),
        d => d,
    };
    Ok(convert_tree(source, &root, dialect, fibe))
}

pub(crate) fn convert_tree(
    source: &str,
    root: &YNode,
    dialect: Dialect,
    fibe: FibeLimits,
) -> Conversion {
    let mut cx = Cx::new(source);
    let plan = match dialect {
        Dialect::Discord => discord::translate(&mut cx, root),
        _ => fibe::translate(&mut cx, root, fibe),
    };
    let emitted = plan
        .as_ref()
        .map(crate::file::write::emit)
        .unwrap_or_default();
    let mut diagnostics = cx.diags;
    diagnostics.sort_by_key(|d| (d.span.start, d.severity));
    Conversion {
        dialect,
        yaml: emitted.text,
        origins: emitted.origins,
        diagnostics,
        steps: cx.named,
        aliases: cx.aliases,
        cache: !matches!(
            root.get("cache").map(|c| &c.kind),
            Some(crate::file::yaml::YKind::Bool(false))
        ),
    }
}

/// Moves every span of the model through `f`.
pub(crate) fn remap(p: &mut Pipeline, f: &dyn Fn(Span) -> Span) {
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
            n.task_span = f(n.task_span);
            n.needs.iter_mut().for_each(|x| x.span = f(x.span));
            n.arg_refs.iter_mut().for_each(site);
            n.arg_spans.iter_mut().for_each(|(_, s)| *s = f(*s));
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

#[cfg(test)]
mod tests;
