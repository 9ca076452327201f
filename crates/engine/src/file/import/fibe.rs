//! Fibe `fibe_pipeline` arguments → native nodes.
//!
//! Steps run in order; a `parallel` block's members all follow the previous
//! step and the next step follows all of them (so a file with a `parallel`
//! block becomes a composition with `needs`, any other file a `pipe:`).
//! A `for_each` becomes one fanned-out node per inner step. `$.id.path`
//! strings become `${id.path}`, the alias becomes `${item}`, `$$.` is the
//! literal `$.`, `output_path` a `transform`, `input_path` is applied to
//! the argument tree, `idempotency_key` becomes a per-node request `_meta`.

use indexmap::IndexMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

mod for_each;
mod limits;
mod paths;

pub use limits::FibeLimits;

use super::shared::{Cx, jq_path, literal, map_strings, native_ref};
use crate::diag::{Span, suggest};
use crate::file::write::{NativePlan, Output, Step, quoted};
use crate::file::yaml::{YKind, YNode};
use crate::lang::reference::{Root, Segment};
pub use paths::parse_path;
use paths::{Str, classify, split_root};

const TOP_KEYS: &[&str] = &["steps", "return", "dry_run", "cache", "idempotency_key"];
const STEP_KEYS: &[&str] = &[
    "id",
    "tool",
    "args",
    "on_error",
    "input_path",
    "output_path",
    "parallel",
    "for_each",
    "as",
    "steps",
    "collect",
];
/// How deep `parallel` / `for_each` may nest.
pub const MAX_DEPTH: usize = 8;
/// The `_meta` field that carries a step's idempotency key.
pub const IDEMPOTENCY_META: &str = "idempotencyKey";

/// Which ids a step's strings may read as something else than a binding.
#[derive(Default, Clone)]
struct Scope {
    /// `for_each` alias, read as `${item}`.
    alias: Option<String>,
    /// The inner step this fanned-out node iterates over, read as `${item}`.
    fan_prev: Option<String>,
    /// The step being translated (to name it in messages).
    step: String,
}

struct Fibe<'a, 'c> {
    cx: &'a mut Cx<'c>,
    key: Option<String>,
    dag: bool,
    /// Every id declared anywhere, with where.
    declared: IndexMap<String, Span>,
    /// Fibe id → native id, for steps that already ran.
    bound: IndexMap<String, String>,
    /// Top-level bindings, in order (the default `return`).
    top: Vec<(String, String)>,
    /// Ids of the members of the parallel block being translated.
    siblings: Vec<String>,
    /// True while translating the steps inside a `for_each`.
    in_block: bool,
    steps: Vec<Step>,
}

/// Translates a Fibe pipeline; diagnostics go to `cx`.
pub fn translate(cx: &mut Cx, root: &YNode, limits: FibeLimits) -> Option<NativePlan> {
    if !cx.keys(root, TOP_KEYS, "a Fibe pipeline") {
        return None;
    }
    let Some(steps_node) = root.get("steps") else {
        cx.err_hint(
            root.span,
            "a Fibe pipeline needs `steps`",
            "add `\"steps\": [{\"id\": …, \"tool\": …}]`",
        );
        return None;
    };
    let Some(steps) = steps_node.as_seq() else {
        cx.err(
            steps_node.span,
            format!("`steps` must be a list, found {}", steps_node.type_name()),
        );
        return None;
    };
    if steps.is_empty() {
        cx.err(
            steps_node.span,
            "`steps` is empty; a Fibe pipeline needs at least one step",
        );
        return None;
    }
    if steps.len() > limits.max_steps {
        cx.err_hint(
            steps_node.span,
            format!(
                "{} steps: a Fibe pipeline may have at most {}",
                steps.len(),
                limits.max_steps
            ),
            "raise the cap with FIBE_MCP_PIPELINE_MAX_STEPS=N or --fibe-max-steps N, or split the pipeline",
        );
        return None;
    }
    let key = root.get("idempotency_key").and_then(|k| match k.as_str() {
        Some(s) => Some(s.to_owned()),
        None => {
            cx.err(k.span, "`idempotency_key` must be a string");
            None
        }
    });
    let mut f = Fibe {
        cx,
        key,
        dag: false,
        declared: IndexMap::new(),
        bound: IndexMap::new(),
        top: Vec::new(),
        siblings: Vec::new(),
        in_block: false,
        steps: Vec::new(),
    };
    for s in steps {
        f.declare(s);
    }
    let mut prev: Vec<String> = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        f.cx.index = i;
        let before = f.bound.len();
        if let Some(t) = f.step(s, &format!("step_{i}"), 1, &prev) {
            prev = t;
        }
        let new: Vec<(String, String)> = f
            .bound
            .iter()
            .skip(before)
            .map(|(a, b)| (a.clone(), b.clone()))
            .collect();
        if s.get("for_each").is_some() {
            // Inner bindings are not visible after the block; the block's own id is.
            let id = s.get("id").and_then(YNode::as_str);
            for (fid, _) in &new {
                if Some(fid.as_str()) != id {
                    f.bound.shift_remove(fid);
                }
            }
        }
        f.top.extend(
            f.bound
                .iter()
                .skip(before)
                .map(|(a, b)| (a.clone(), b.clone())),
        );
    }
    let output = root.get("return").and_then(|r| f.output(r));
    let header = "Converted from a Fibe pipeline by `pipewright convert`.".to_owned();
    let dry_run = root.get("dry_run").and_then(|d| match d.kind {
        YKind::Bool(true) => Some(d.span),
        YKind::Bool(false) => None,
        _ => {
            f.cx.err(
                d.span,
                format!("`dry_run` must be true or false, found {}", d.type_name()),
            );
            None
        }
    });
    if let Some(c) = root.get("cache") {
        if matches!(c.kind, YKind::Bool(_)) {
            f.cx.warn(c.span, "`cache`: pipewright keeps every run in its run history instead of Fibe's 5-minute result cache; `cache: false` only leaves `pipeline_id` out of `--format fibe`");
        } else {
            f.cx.err(
                c.span,
                format!("`cache` must be true or false, found {}", c.type_name()),
            );
        }
    }
    if let Some(k) = root.get("idempotency_key") {
        f.cx.warn(k.span, "`idempotency_key`: each call carries sha256(key:step_id) as its request `_meta.idempotencyKey`, not as an Idempotency-Key HTTP header; a server must read `_meta` to deduplicate");
    }
    let fans_out = f.steps.iter().any(|s| s.for_each.is_some());
    Some(NativePlan {
        dag: f.dag,
        name: "fibe".to_owned(),
        header,
        steps: f.steps,
        output,
        dry_run,
        max_iterations: fans_out.then_some(limits.max_iterations),
    })
}

impl Fibe<'_, '_> {
    /// Records every id (duplicates are errors) before translating, so a
    /// reference to a later step says so.
    fn declare(&mut self, s: &YNode) {
        if let Some(id) = s.get("id") {
            if let Some(text) = id.as_str() {
                if let Some(first) = self.declared.get(text) {
                    let line = first.start.line;
                    self.cx.err(
                        id.span,
                        format!("duplicate step id `{text}` (first defined at line {line})"),
                    );
                } else {
                    self.declared.insert(text.to_owned(), id.span);
                }
            } else {
                self.cx.err(
                    id.span,
                    format!("a step `id` must be a string, found {}", id.type_name()),
                );
            }
        }
        for inner in [s.get("parallel"), s.get("steps")].into_iter().flatten() {
            for i in inner.as_seq().unwrap_or_default() {
                self.declare(i);
            }
        }
    }

    fn step(
        &mut self,
        s: &YNode,
        fallback: &str,
        depth: usize,
        prev: &[String],
    ) -> Option<Vec<String>> {
        if depth > MAX_DEPTH {
            self.cx.err_hint(
                s.span,
                format!("steps nest deeper than {MAX_DEPTH} levels"),
                "Fibe rejects `parallel` / `for_each` blocks nested more than 8 deep; flatten the pipeline",
            );
            return None;
        }
        if !self.cx.keys(s, STEP_KEYS, "a Fibe step") {
            return None;
        }
        let kinds: Vec<&str> = ["tool", "parallel", "for_each"]
            .into_iter()
            .filter(|k| s.get(k).is_some())
            .collect();
        match kinds.as_slice() {
            ["tool"] => self
                .tool_step(s, fallback, prev, &Scope::default(), None)
                .map(|id| vec![id]),
            ["parallel"] => self.parallel(s, fallback, depth, prev),
            ["for_each"] => self.for_each(s, fallback, depth, prev),
            [] => {
                self.cx.err_hint(
                    s.span,
                    "a step needs one of `tool`, `parallel` or `for_each`",
                    "a single call is `{\"id\": …, \"tool\": …, \"args\": {…}}`",
                );
                None
            }
            many => {
                self.cx.err(s.span, format!("a step has exactly one of `tool`, `parallel` or `for_each`; this one has `{}`", many.join("` and `")));
                None
            }
        }
    }

    fn parallel(
        &mut self,
        s: &YNode,
        fallback: &str,
        depth: usize,
        prev: &[String],
    ) -> Option<Vec<String>> {
        let p = s.get("parallel")?;
        let Some(members) = p.as_seq().filter(|m| !m.is_empty()) else {
            self.cx
                .err(p.span, "`parallel` must be a non-empty list of steps");
            return None;
        };
        for k in [
            "id",
            "args",
            "on_error",
            "as",
            "steps",
            "collect",
            "input_path",
            "output_path",
        ] {
            if let Some((key, _)) = s.as_map().and_then(|m| m.iter().find(|(x, _)| x.is_key(k))) {
                self.cx.err(
                    key.span,
                    format!("`{k}` does not apply to a `parallel` block"),
                );
            }
        }
        if members.len() > 8 {
            self.cx.warn(
                p.span,
                format!(
                    "Fibe runs at most 8 members of a `parallel` block at once; pipewright starts all {} together",
                    members.len()
                ),
            );
        }
        self.dag = true;
        let saved = std::mem::replace(
            &mut self.siblings,
            members
                .iter()
                .filter_map(|m| m.get("id").and_then(YNode::as_str).map(str::to_owned))
                .collect(),
        );
        let mut out = Vec::new();
        for (j, m) in members.iter().enumerate() {
            if let Some(t) = self.step(m, &format!("{fallback}_{j}"), depth + 1, prev) {
                out.extend(t);
            }
        }
        self.siblings = saved;
        Some(out)
    }

    /// The native reference of a `for_each` value and the nodes it reads.
    fn source(&mut self, fe: &YNode, src: &str) -> Option<(String, Vec<String>)> {
        let mut refs = Vec::new();
        let text = self.rewrite(fe, src, &Scope::default(), &mut refs);
        if refs.is_empty() && !self.cx.has_errors_at(fe.span) {
            self.cx.err(fe.span, format!("`for_each` must read an earlier step's output, e.g. `$.list.items`; `{src}` does not"));
            return None;
        }
        Some((text, refs))
    }

    /// Translates one tool call; returns its native id.
    fn tool_step(
        &mut self,
        s: &YNode,
        fallback: &str,
        prev: &[String],
        scope: &Scope,
        rename: Option<&str>,
    ) -> Option<String> {
        if !self.cx.keys(s, STEP_KEYS, "a Fibe step") {
            return None;
        }
        let tool_node = s.get("tool")?;
        let Some(tool) = tool_node.as_str().filter(|t| !t.trim().is_empty()) else {
            self.cx
                .err(tool_node.span, "`tool` must be a non-empty string");
            return None;
        };
        if tool == "fibe_pipeline" {
            self.cx.err_hint(
                tool_node.span,
                "nested fibe_pipeline is not allowed",
                "flatten the inner pipeline's steps into this one",
            );
        }
        let fibe_id = s.get("id").and_then(YNode::as_str).map(str::to_owned);
        let wanted = rename.map(str::to_owned).or(fibe_id.clone());
        let id = match &wanted {
            Some(w) if self.cx.reserve(w) => w.clone(),
            Some(w) => self.cx.native_id(w),
            None => self.cx.native_id(fallback),
        };
        let scope = Scope {
            step: fibe_id.clone().unwrap_or_else(|| id.clone()),
            ..scope.clone()
        };
        let mut step = Step::new(id.clone(), s.span, tool.to_owned(), tool_node.span);
        let mut refs = Vec::new();
        if let Some(args) = s.get("args") {
            let args = match s.get("input_path") {
                Some(ip) => self.input_path(args, ip)?,
                None => args.clone(),
            };
            if args.as_map().is_none() {
                self.cx.err(
                    args.span,
                    format!("`args` must be an object, found {}", args.type_name()),
                );
            }
            step.args = Some(map_strings(&args, &mut |v, text| {
                self.rewrite(v, text, &scope, &mut refs)
            }));
        } else if let Some(ip) = s.get("input_path") {
            self.cx.err(
                ip.span,
                "`input_path` filters `args`, and this step has none",
            );
        }
        if let Some(oe) = s.get("on_error") {
            match oe.as_str() {
                Some("abort") => {}
                Some("continue") => step.continue_on_error = Some(oe.span),
                _ => self.cx.err_hint(
                    oe.span,
                    format!("unknown `on_error` {}", describe(oe)),
                    "Fibe's `on_error` is \"abort\" (the default) or \"continue\"",
                ),
            }
        }
        if let Some(op) = s.get("output_path") {
            match op.as_str().map(parse_path) {
                Some(Ok(path)) if !path.is_empty() => {
                    step.transform = Some((jq_path(&path), op.span))
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => self.cx.err(op.span, format!("`output_path`: {e}")),
                None => self
                    .cx
                    .err(op.span, "`output_path` must be a JSONPath string"),
            }
        }
        if let Some(key) = &self.key {
            let step_id = fibe_id.clone().unwrap_or_else(|| id.clone());
            let digest = hex::encode(Sha256::digest(format!("{key}:{step_id}").as_bytes()));
            step.meta = Some(json!({ IDEMPOTENCY_META: digest }));
        }
        let mut needs: Vec<String> = prev.to_vec();
        for r in refs {
            if !needs.contains(&r) {
                needs.push(r);
            }
        }
        step.needs = needs;
        self.steps.push(step);
        // Inner steps of a `for_each` are bound only inside the block; its
        // last one carries the block's binding.
        let binding = match (self.in_block, rename) {
            (_, Some(r)) => Some(r.to_owned()),
            (true, None) => None,
            (false, None) => fibe_id.clone(),
        };
        self.cx.named.push(super::shared::ImportedStep {
            native: id.clone(),
            binding,
            index: self.cx.index,
            tool: tool.to_owned(),
        });
        if let Some(f) = fibe_id {
            self.bound.insert(f, id.clone());
        }
        Some(id)
    }

    /// `args` narrowed by `input_path`, walking the literal tree; a path that
    /// reaches a `$.` string extends that reference.
    fn input_path(&mut self, args: &YNode, ip: &YNode) -> Option<YNode> {
        let path = match ip.as_str().map(parse_path) {
            Some(Ok(p)) => p,
            Some(Err(e)) => {
                self.cx.err(ip.span, format!("`input_path`: {e}"));
                return None;
            }
            None => {
                self.cx
                    .err(ip.span, "`input_path` must be a JSONPath string");
                return None;
            }
        };
        let mut cur = args.clone();
        for (k, seg) in path.iter().enumerate() {
            let next = match (&cur.kind, seg) {
                (YKind::Map(_), Segment::Field(f)) => cur.get(f).cloned(),
                (YKind::Seq(items), Segment::Index(i)) => {
                    usize::try_from(*i).ok().and_then(|i| items.get(i)).cloned()
                }
                (YKind::Str(s, style), _) if s.starts_with("$.") => {
                    let mut text = s.clone();
                    for rest in &path[k..] {
                        match rest {
                            Segment::Field(f) => text.push_str(&format!("['{f}']")),
                            Segment::Index(i) => text.push_str(&format!("[{i}]")),
                            Segment::Wildcard => text.push_str("[*]"),
                        }
                    }
                    return Some(YNode {
                        kind: YKind::Str(text, *style),
                        span: cur.span,
                    });
                }
                _ => None,
            };
            match next {
                Some(n) => cur = n,
                None => {
                    self.cx.err(
                        ip.span,
                        format!(
                            "`input_path` selects nothing in `args` (at segment {})",
                            k + 1
                        ),
                    );
                    return None;
                }
            }
        }
        Some(cur)
    }

    /// One string of an argument tree as a native template; the native ids
    /// it reads go to `refs`.
    fn rewrite(&mut self, v: &YNode, text: &str, scope: &Scope, refs: &mut Vec<String>) -> String {
        match classify(text) {
            Str::Literal(l) => literal(&l),
            Str::Bad(e) => {
                self.cx.err(v.span, e);
                literal(text)
            }
            Str::Ref(root, rest) => {
                if scope.alias.as_deref() == Some(root.as_str())
                    || scope.fan_prev.as_deref() == Some(root.as_str())
                {
                    return native_ref(Root::Item, rest);
                }
                if self.siblings.contains(&root) && root != scope.step {
                    self.cx.err_hint(
                        v.span,
                        format!("parallel member `{}` depends on its sibling `{root}`", scope.step),
                        "members of a `parallel` block run at the same time; move the dependent step after the block",
                    );
                    return literal(text);
                }
                if let Some(native) = self.bound.get(&root) {
                    if !refs.contains(native) {
                        refs.push(native.clone());
                    }
                    return native_ref(Root::Node(native.clone()), rest);
                }
                let d = if self.declared.contains_key(&root) {
                    format!("`{text}` reads step `{root}`, which has not run at this point")
                } else {
                    format!("`{text}` refers to unknown step `{root}`")
                };
                let hint = suggest(&root, self.bound.keys().map(String::as_str))
                    .map(|s| format!("did you mean `{s}`?"));
                match hint {
                    Some(h) => self.cx.err_hint(v.span, d, h),
                    None => self.cx.err(v.span, d),
                }
                literal(text)
            }
        }
    }

    fn output(&mut self, r: &YNode) -> Option<(Output, Span)> {
        if let Some(text) = r.as_str() {
            match classify(text) {
                Str::Ref(root, rest) => {
                    let Some(native) = self.bound.get(&root).cloned() else {
                        self.cx
                            .err(r.span, format!("`return` reads unknown step `{root}`"));
                        return None;
                    };
                    return Some(if rest.is_empty() {
                        (Output::Node(native), r.span)
                    } else {
                        (
                            Output::Assemble(format!(
                                ".nodes[{}] | {}",
                                quoted(&native),
                                jq_path(&rest)
                            )),
                            r.span,
                        )
                    });
                }
                _ if text == "$" => return Some((Output::Assemble(self.bindings_jq()), r.span)),
                _ => {}
            }
        }
        let jq = self.return_jq(r)?;
        Some((Output::Assemble(jq), r.span))
    }

    fn bindings_jq(&self) -> String {
        let fields: Vec<String> = self
            .top
            .iter()
            .map(|(f, n)| format!("{}: .nodes[{}]", quoted(f), quoted(n)))
            .collect();
        format!("{{{}}}", fields.join(", "))
    }

    fn return_jq(&mut self, v: &YNode) -> Option<String> {
        Some(match &v.kind {
            YKind::Map(pairs) => {
                let mut parts = Vec::new();
                for (k, x) in pairs {
                    parts.push(format!(
                        "{}: ({})",
                        quoted(&k.key_text().unwrap_or_default()),
                        self.return_jq(x)?
                    ));
                }
                format!("{{{}}}", parts.join(", "))
            }
            YKind::Seq(items) => {
                let parts: Option<Vec<String>> = items
                    .iter()
                    .map(|i| self.return_jq(i).map(|j| format!("({j})")))
                    .collect();
                format!("[{}]", parts?.join(", "))
            }
            YKind::Str(s, _) => match classify(s) {
                Str::Ref(root, rest) => match self.bound.get(&root) {
                    Some(n) => format!(".nodes[{}] | {}", quoted(n), jq_path(&rest)),
                    None => {
                        self.cx
                            .err(v.span, format!("`return` reads unknown step `{root}`"));
                        return None;
                    }
                },
                Str::Literal(l) => quoted(&l),
                Str::Bad(e) => {
                    self.cx.err(v.span, e);
                    return None;
                }
            },
            _ => super::shared::jq_literal(&v.to_json()),
        })
    }
}

/// The step ids a tree of arguments reads through `$.id…` strings.
fn roots_of(args: Option<&YNode>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(a) = args {
        super::shared::walk_strings(a, &mut |s| {
            if let Str::Ref(root, _) = classify(s) {
                out.push(root);
            }
        });
    }
    out
}

fn describe(v: &YNode) -> String {
    match v.as_str() {
        Some(s) => format!("`{s}`"),
        None => Value::from(v.type_name()).to_string(),
    }
}
