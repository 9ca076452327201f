//! A pipeline in native terms (what an import produces) and the writer
//! that prints it as a pipeline file while remembering, for every line it
//! writes, where in another file (the imported one) that line came from.

use serde_json::Value;

use super::quote::quoted;
use crate::diag::Span;
use crate::file::yaml::{YKind, YNode};

/// One native node produced by an import.
#[derive(Debug, Clone)]
pub struct Step {
    pub id: String,
    /// The imported step this node comes from.
    pub origin: Span,
    pub tool: String,
    pub tool_span: Span,
    /// Arguments whose string values are already native templates.
    pub args: Option<YNode>,
    /// Parents (DAG form only).
    pub needs: Vec<String>,
    /// `on_error: continue` and where the imported file said so.
    pub continue_on_error: Option<Span>,
    pub for_each: Option<(String, Span)>,
    /// Fanned-out parents read element-wise (see `aligned:`).
    pub aligned: Vec<String>,
    pub transform: Option<(String, Span)>,
    pub when: Option<(String, Span)>,
    /// Request `_meta` fields sent with every call of the node.
    pub meta: Option<Value>,
}

impl Step {
    /// A node calling `tool` with nothing else set.
    pub fn new(id: String, origin: Span, tool: String, tool_span: Span) -> Self {
        Step {
            id,
            origin,
            tool,
            tool_span,
            args: None,
            needs: Vec::new(),
            continue_on_error: None,
            for_each: None,
            aligned: Vec::new(),
            transform: None,
            when: None,
            meta: None,
        }
    }
}

/// What the pipeline returns.
#[derive(Debug, Clone)]
pub enum Output {
    /// One node's output.
    Node(String),
    /// A jq program over `{nodes: {id: output}}`.
    Assemble(String),
}

/// A whole imported pipeline in native terms.
#[derive(Debug, Clone)]
pub struct NativePlan {
    /// `pipe:` (linear) when false, one composition with `needs` when true.
    pub dag: bool,
    pub name: String,
    pub header: String,
    pub steps: Vec<Step>,
    pub output: Option<(Output, Span)>,
    /// `dry_run: true`, and where the imported file said so.
    pub dry_run: Option<Span>,
    /// A cap on the run's fan-out iterations (`budget.max_iterations`).
    pub max_iterations: Option<u64>,
}

/// Native YAML text and, for each of its lines (0-based), the span of the
/// imported file it was written from.
#[derive(Debug, Clone, Default)]
pub struct Emitted {
    pub text: String,
    pub origins: Vec<Span>,
}

impl Emitted {
    fn line(&mut self, indent: usize, text: &str, origin: Span) {
        self.text.push_str(&" ".repeat(indent));
        self.text.push_str(text);
        self.text.push('\n');
        self.origins.push(origin);
    }
}

fn scalar(v: &YNode) -> Option<String> {
    Some(match &v.kind {
        YKind::Null => "null".to_owned(),
        YKind::Bool(b) => b.to_string(),
        YKind::Int(i) => i.to_string(),
        YKind::Float(f) => {
            serde_json::Number::from_f64(*f).map_or("null".into(), |n| n.to_string())
        }
        YKind::Str(s, _) => quoted(s),
        YKind::Seq(items) if items.is_empty() => "[]".to_owned(),
        YKind::Map(pairs) if pairs.is_empty() => "{}".to_owned(),
        _ => return None,
    })
}

/// Writes `key: value` for any tree, block style, one leaf per line.
fn value(out: &mut Emitted, indent: usize, lead: &str, v: &YNode) {
    if let Some(s) = scalar(v) {
        out.line(indent, &format!("{lead} {s}"), v.span);
        return;
    }
    out.line(indent, lead, v.span);
    match &v.kind {
        YKind::Map(pairs) => {
            for (k, val) in pairs {
                let key = quoted(&k.key_text().unwrap_or_default());
                value(out, indent + 2, &format!("{key}:"), val);
            }
        }
        YKind::Seq(items) => {
            for item in items {
                value(out, indent + 2, "-", item);
            }
        }
        _ => {}
    }
}

/// Prints the plan as a native pipeline file.
pub fn emit(plan: &NativePlan) -> Emitted {
    let mut out = Emitted::default();
    let top = Span::default();
    for line in plan.header.lines() {
        out.line(0, &format!("# {line}"), top);
    }
    if let Some(span) = plan.dry_run {
        out.line(0, "dry_run: true", span);
    }
    if let Some(n) = plan.max_iterations {
        out.line(0, &format!("budget: {{max_iterations: {n}}}"), top);
    }
    let output = |out: &mut Emitted, indent: usize| {
        if let Some((o, span)) = &plan.output {
            let text = match o {
                Output::Node(id) => format!("output: {}", quoted(id)),
                Output::Assemble(jq) => format!("output: {{assemble: {}}}", quoted(jq)),
            };
            out.line(indent, &text, *span);
        }
    };
    let indent = if plan.dag {
        out.line(0, "compositions:", top);
        out.line(2, &format!("- name: {}", quoted(&plan.name)), top);
        output(&mut out, 4);
        out.line(4, "nodes:", top);
        6
    } else {
        out.line(0, &format!("name: {}", quoted(&plan.name)), top);
        output(&mut out, 0);
        out.line(0, "pipe:", top);
        2
    };
    for s in &plan.steps {
        out.line(indent, &format!("- id: {}", quoted(&s.id)), s.origin);
        let i = indent + 2;
        if plan.dag && !s.needs.is_empty() {
            let needs: Vec<String> = s.needs.iter().map(|n| quoted(n)).collect();
            out.line(i, &format!("needs: [{}]", needs.join(", ")), s.origin);
        }
        out.line(i, &format!("tool: {}", quoted(&s.tool)), s.tool_span);
        if let Some(args) = &s.args {
            value(&mut out, i, "args:", args);
        }
        if let Some((src, span)) = &s.for_each {
            out.line(i, &format!("for_each: {}", quoted(src)), *span);
        }
        if !s.aligned.is_empty() {
            let ids: Vec<String> = s.aligned.iter().map(|n| quoted(n)).collect();
            out.line(i, &format!("aligned: [{}]", ids.join(", ")), s.origin);
        }
        if let Some((src, span)) = &s.when {
            out.line(i, &format!("when: {}", quoted(src)), *span);
        }
        if let Some((src, span)) = &s.transform {
            out.line(i, &format!("transform: {}", quoted(src)), *span);
        }
        if let Some(span) = s.continue_on_error {
            out.line(i, "on_error: continue", span);
        }
        if let Some(meta) = &s.meta {
            out.line(i, &format!("meta: {meta}"), s.origin);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Pos;

    #[test]
    fn every_written_line_has_an_origin_and_the_text_parses_back() {
        let args = crate::file::yaml::parse(r#"{"a": {"b": [1, "x", {"c": null}]}, "e": []}"#)
            .expect("json");
        let mut step = Step::new(
            "s".into(),
            Span::at(Pos::new(3, 1)),
            "echo".into(),
            Span::default(),
        );
        step.args = Some(args);
        let plan = NativePlan {
            dag: false,
            name: "t".into(),
            header: "made here".into(),
            steps: vec![step],
            output: None,
            dry_run: None,
            max_iterations: None,
        };
        let e = emit(&plan);
        assert_eq!(e.text.lines().count(), e.origins.len());
        let back = crate::file::yaml::parse(&e.text).expect("yaml");
        let pipe = back.get("pipe").and_then(YNode::as_seq).expect("pipe");
        assert_eq!(
            pipe[0].get("args").map(YNode::to_json),
            Some(serde_json::json!({"a": {"b": [1, "x", {"c": null}]}, "e": []}))
        );
    }
}
