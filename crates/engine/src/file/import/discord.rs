//! Discord MCP `mcp_pipeline` arguments → a native `pipe:`.
//!
//! Steps run in order. `{{id.path}}` becomes `${id.path}` (a string that is
//! exactly one reference keeps the value's type, as in Discord); `{{stepN…}}`
//! reads the Nth step, counted from 1 as Discord documents (unless a step
//! took that name as its `id` or `save_as`); a step without `id` is the
//! node `step_N` (0-based); `save_as` names are other names for the step; `if` becomes a `when:` with JavaScript truthiness (a path that is
//! missing is falsy, as `undefined` is);
//! `continue_on_error: true` becomes `on_error: continue`. Where Discord
//! silently passes `undefined` for a reference it cannot resolve,
//! pipewright reports an error at load or dispatch time.

use indexmap::IndexMap;

use super::shared::{Cx, literal, map_strings, native_ref};
use crate::diag::{Span, suggest};
use crate::file::write::{NativePlan, Step, quoted};
use crate::file::yaml::YNode;
use crate::lang::reference::{Root, Segment};

const TOP_KEYS: &[&str] = &["steps"];
const STEP_KEYS: &[&str] = &["id", "tool", "args", "save_as", "if", "continue_on_error"];
/// jq's view of JavaScript truthiness: false, null, 0 and "" are falsy.
const TRUTHY: &str = ". != null and . != false and . != 0 and . != \"\"";

/// Splits a Discord path (`a.b.0.c`, `a.b[0].c`) into its root and segments;
/// a numeric segment is an array index.
pub fn parse_path(s: &str) -> Option<(String, Vec<Segment>)> {
    let mut parts = Vec::new();
    for chunk in s.trim().split('.') {
        let mut rest = chunk;
        let head = rest.find('[').unwrap_or(rest.len());
        if head > 0 {
            parts.push(&rest[..head]);
        }
        rest = &rest[head..];
        while let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            parts.push(&r[..end]);
            rest = &r[end + 1..];
        }
        if !rest.is_empty() || chunk.is_empty() {
            return None;
        }
    }
    let mut it = parts.into_iter();
    let root = it.next()?.to_owned();
    let segs = it
        .map(|p| match p.parse::<i64>() {
            Ok(i) => Segment::Index(i),
            Err(_) => Segment::Field(p.to_owned()),
        })
        .collect();
    Some((root, segs))
}

/// The `when` of an `if`: a jq predicate over the earlier steps' outputs
/// where a missing path is `null` (Discord's `undefined`), hence falsy.
fn if_predicate(native: &str, segs: &[Segment]) -> String {
    let mut e = format!(".parents[{}]", quoted(native));
    for seg in segs {
        match seg {
            Segment::Field(f) => e.push_str(&format!(" | .[{}]?", quoted(f))),
            Segment::Index(i) => e.push_str(&format!(" | .[{i}]?")),
            Segment::Wildcard => e.push_str(" | .[]?"),
        }
    }
    format!("[{e}] | .[0] | {TRUTHY}")
}

struct Discord<'a, 'c> {
    cx: &'a mut Cx<'c>,
    /// Names a step can be read by (ids and `save_as`) → native id, for
    /// steps already translated.
    names: IndexMap<String, String>,
    /// Every name declared in the file.
    declared: Vec<String>,
}

/// Translates a Discord pipeline; diagnostics go to `cx`.
pub fn translate(cx: &mut Cx, root: &YNode) -> Option<NativePlan> {
    if !cx.keys(root, TOP_KEYS, "a Discord mcp_pipeline") {
        return None;
    }
    let Some(steps_node) = root.get("steps") else {
        cx.err(root.span, "a Discord mcp_pipeline needs `steps`");
        return None;
    };
    let Some(steps) = steps_node.as_seq().filter(|s| !s.is_empty()) else {
        cx.err(steps_node.span, "`steps` must be a non-empty list");
        return None;
    };
    let mut d = Discord {
        cx,
        names: IndexMap::new(),
        declared: Vec::new(),
    };
    // Every name first, so duplicates and reads of later steps are reported as such.
    let mut first: IndexMap<String, Span> = IndexMap::new();
    for (i, s) in steps.iter().enumerate() {
        let id = s.get("id");
        let own = id
            .and_then(YNode::as_str)
            .map_or_else(|| format!("step_{i}"), str::to_owned);
        for (name, span) in [
            (Some(own), id.map_or(s.span, |x| x.span)),
            (
                s.get("save_as").and_then(YNode::as_str).map(str::to_owned),
                s.get("save_as").map_or(s.span, |x| x.span),
            ),
        ] {
            let Some(name) = name else { continue };
            if let Some(at) = first.get(&name) {
                let line = at.start.line;
                d.cx.err(
                    span,
                    format!("duplicate step name `{name}` (first used at line {line})"),
                );
            } else {
                first.insert(name.clone(), span);
                d.declared.push(name);
            }
        }
    }
    // `stepN` (1-based) reads the Nth step, unless a step took that name.
    let positional: Vec<Option<String>> = (1..=steps.len())
        .map(|n| format!("step{n}"))
        .map(|name| (!first.contains_key(&name)).then_some(name))
        .collect();
    d.declared.extend(positional.iter().flatten().cloned());
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        if let Some(step) = d.step(s, i) {
            if let Some(name) = &positional[i] {
                d.names.insert(name.clone(), step.id.clone());
            }
            out.push(step);
        }
    }
    Some(NativePlan {
        dag: false,
        name: "discord".to_owned(),
        header: "Converted from a Discord mcp_pipeline by `pipewright convert`.".to_owned(),
        steps: out,
        output: None,
        dry_run: None,
        max_iterations: None,
    })
}

impl Discord<'_, '_> {
    fn step(&mut self, s: &YNode, i: usize) -> Option<Step> {
        if !self.cx.keys(s, STEP_KEYS, "a Discord pipeline step") {
            return None;
        }
        let Some(tool_node) = s.get("tool") else {
            self.cx.err_hint(
                s.span,
                format!("step {i} has no `tool`"),
                "every step calls one tool: `{\"tool\": …, \"args\": {…}}`",
            );
            return None;
        };
        let Some(tool) = tool_node.as_str().filter(|t| !t.trim().is_empty()) else {
            self.cx
                .err(tool_node.span, "`tool` must be a non-empty string");
            return None;
        };
        if tool == "mcp_pipeline" {
            self.cx.err_hint(
                tool_node.span,
                "a pipeline cannot call `mcp_pipeline`",
                "flatten the inner pipeline's steps into this one",
            );
        }
        let own_id = match s.get("id") {
            Some(v) => match v.as_str() {
                Some(t) if !t.is_empty() => Some(t.to_owned()),
                _ => {
                    self.cx
                        .err(v.span, "a step `id` must be a non-empty string");
                    None
                }
            },
            None => None,
        };
        let name = own_id.clone().unwrap_or_else(|| format!("step_{i}"));
        let id = if self.cx.reserve(&name) {
            name.clone()
        } else {
            self.cx.native_id(&name)
        };
        let mut step = Step::new(id.clone(), s.span, tool.to_owned(), tool_node.span);
        if let Some(args) = s.get("args") {
            if args.as_map().is_none() {
                self.cx.err(
                    args.span,
                    format!("`args` must be an object, found {}", args.type_name()),
                );
            }
            step.args = Some(map_strings(args, &mut |v, text| {
                self.template(v, text, &name)
            }));
        }
        if let Some(c) = s.get("if") {
            match c.as_str() {
                Some(text) => {
                    let inner = text
                        .trim()
                        .trim_start_matches("{{")
                        .trim_end_matches("}}")
                        .trim();
                    if let Some((target, segs)) = self.resolve(c, inner, 0, &name) {
                        step.when = Some((if_predicate(&target, &segs), c.span));
                    }
                }
                None => self.cx.err(
                    c.span,
                    format!(
                        "`if` must be a path string such as \"check.ok\", found {}",
                        c.type_name()
                    ),
                ),
            }
        }
        if let Some(c) = s.get("continue_on_error") {
            match c.kind {
                crate::file::yaml::YKind::Bool(true) => step.continue_on_error = Some(c.span),
                crate::file::yaml::YKind::Bool(false) => {}
                _ => self
                    .cx
                    .err(c.span, "`continue_on_error` must be true or false"),
            }
        }
        if let Some(sa) = s.get("save_as") {
            match sa.as_str() {
                Some(alias) if !alias.is_empty() => {
                    self.names.insert(alias.to_owned(), id.clone());
                    self.cx.aliases.push((alias.to_owned(), id.clone()));
                }
                _ => self.cx.err(sa.span, "`save_as` must be a non-empty name"),
            }
        }
        self.names.insert(name.clone(), id.clone());
        self.cx.named.push(super::shared::ImportedStep {
            native: id,
            binding: Some(name),
            index: i,
            tool: tool.to_owned(),
        });
        Some(step)
    }

    /// A string with `{{…}}` references as a native template.
    fn template(&mut self, v: &YNode, text: &str, step: &str) -> String {
        let mut out = String::new();
        let mut rest = text;
        let mut offset = 0;
        while let Some(open) = rest.find("{{") {
            let Some(close) = rest[open..].find("}}") else {
                break;
            };
            let lit = &rest[..open];
            if lit.ends_with('$') {
                self.cx.err(
                    self.cx_span(v, offset + open),
                    "a `$` right before `{{…}}` cannot be written in pipewright's templates",
                );
            }
            out.push_str(&literal(lit));
            let inner = &rest[open + 2..open + close];
            match self.reference(v, inner, offset + open, step) {
                Some(r) => out.push_str(&r),
                None => out.push_str(&literal(&rest[open..open + close + 2])),
            }
            offset += open + close + 2;
            rest = &rest[open + close + 2..];
        }
        out.push_str(&literal(rest));
        out
    }

    fn cx_span(&self, v: &YNode, offset: usize) -> Span {
        Span::at(self.cx.pos_in(v, offset))
    }

    /// `path` (inside the braces) as a native reference to an earlier step.
    fn reference(&mut self, v: &YNode, path: &str, offset: usize, step: &str) -> Option<String> {
        self.resolve(v, path, offset, step)
            .map(|(native, segs)| native_ref(Root::Node(native), segs))
    }

    /// The native node and path an `{{…}}` path reads.
    fn resolve(
        &mut self,
        v: &YNode,
        path: &str,
        offset: usize,
        step: &str,
    ) -> Option<(String, Vec<Segment>)> {
        let at = self.cx_span(v, offset);
        let Some((root, segs)) = parse_path(path) else {
            self.cx
                .err(at, format!("cannot read the reference `{{{{{path}}}}}`"));
            return None;
        };
        if let Some(native) = self.names.get(&root) {
            return Some((native.clone(), segs));
        }
        let msg = if root == step {
            format!("`{{{{{path}}}}}` in step `{step}` reads the step itself")
        } else if self.declared.contains(&root) {
            format!("`{{{{{path}}}}}` in step `{step}` reads step `{root}`, which runs later")
        } else {
            format!("`{{{{{path}}}}}` in step `{step}` refers to unknown step `{root}`")
        };
        let hint = suggest(&root, self.names.keys().map(String::as_str))
            .map(|s| format!("did you mean `{s}`?"))
            .unwrap_or_else(|| {
                "a step is read by its `id`, its `save_as` name, or `stepN` for the Nth step (counted from 1)".to_owned()
            });
        self.cx.err_hint(at, msg, hint);
        None
    }
}
