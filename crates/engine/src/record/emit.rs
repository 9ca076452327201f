//! The draft written out: the pipeline's YAML, each inferred reference
//! with a comment naming its rule, how sure it is and the literal it
//! replaced; and the cassette of the recorded calls beside it, so the file
//! replays offline from day one.
//!
//! [`pipeline`] is the one way the text is made, so the YAML writer under
//! it can change in one place.

use std::fmt::Write as _;
use std::path::Path;

use indexmap::IndexMap;
use serde_json::Value;

use super::calls::Recording;
use super::draft::{Choice, DERIVED, Draft, Leaf, ServerOut, Step, arg_path};
use crate::file::write::quoted;
use crate::lang::reference::{Segment, escape_literal};
use crate::run::cassette::{self, Cassette, Entry};

/// The comment a flagged value carries.
pub const FLAG: &str = "pipewright: no earlier result holds this value and it looks made by a server: a reference may be missing";

/// The longest literal shown in a comment, in characters.
const SHOWN: usize = 60;

/// The pipeline file's text; `cassette` names the cassette written beside
/// it, for the header's replay line; `file` is where the text will be
/// (absolute), for its `$schema` modeline.
pub fn pipeline(d: &Draft, cassette: &str, file: Option<&Path>) -> String {
    let mut w = Writer::default();
    header(&mut w, d, cassette, file);
    w.line(0, &format!("name: {}", quoted(&d.name)));
    servers(&mut w, d);
    if !d.vars.is_empty() {
        w.line(0, "vars:");
        for (name, var) in &d.vars {
            // `vars:` values are not templates: written as they are.
            w.commented(
                2,
                &format!("{}: {}", quoted(name), var.value),
                &format!("recorded in {}", var.from),
            );
        }
    }
    if let Some(out) = d.output.and_then(|i| d.steps.get(i)) {
        w.line(0, &format!("output: {}", quoted(&out.id)));
    }
    if !d.expect.is_empty() {
        w.line(
            0,
            "# What the recorded run ended with: a replay must end the same.",
        );
        w.line(0, "expect:");
        for (target, matcher) in &d.expect {
            w.line(2, &expectation(target, matcher));
        }
    }
    if !d.cases.is_empty() {
        w.line(
            0,
            "# One row per recording: the inputs each used, and how it ended.",
        );
        w.line(0, "cases:");
        for c in &d.cases {
            w.line(2, &format!("- name: {}", quoted(&c.name)));
            let vars: Vec<String> = c
                .vars
                .iter()
                .map(|(k, v)| format!("{}: {v}", quoted(k)))
                .collect();
            w.line(4, &format!("vars: {{{}}}", vars.join(", ")));
            if !c.expect.is_empty() {
                w.line(4, "expect:");
                for (target, matcher) in &c.expect {
                    w.line(6, &expectation(target, matcher));
                }
            }
        }
    }
    w.line(0, "pipe:");
    let ids = d.ids();
    let wrapped = d.wrapped();
    let several = d.servers.len() > 1;
    for s in &d.steps {
        step(&mut w, s, &ids, &wrapped, several);
    }
    w.out
}

/// YAML lines, with the comments that go with them.
#[derive(Default)]
struct Writer {
    out: String,
}

impl Writer {
    fn line(&mut self, indent: usize, text: &str) {
        self.out.push_str(&" ".repeat(indent));
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// A line with a comment after it.
    fn commented(&mut self, indent: usize, text: &str, comment: &str) {
        self.line(indent, &format!("{text}  # {}", one_line(comment)));
    }

    /// A comment on a line of its own.
    fn note(&mut self, indent: usize, comment: &str) {
        self.line(indent, &format!("# {}", one_line(comment)));
    }
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

fn header(w: &mut Writer, d: &Draft, cassette: &str, file: Option<&Path>) {
    for line in crate::file::scaffold::schema_line(file).lines() {
        w.line(0, line);
    }
    w.note(
        0,
        &format!(
            "Written by `pipewright new --from` from {}.",
            d.sources.join(", ")
        ),
    );
    let calls: usize = d.steps.iter().map(|s| s.calls_of(0).count()).sum();
    w.note(
        0,
        &format!(
            "{calls} call(s) became {} node(s). Each inferred reference says the rule that found it,",
            d.steps.len()
        ),
    );
    w.note(
        0,
        "how sure it is, and the value it replaced: read them before you rely on them.",
    );
    let file = cassette.strip_suffix(".cassette.json").unwrap_or("FILE");
    w.note(
        0,
        &format!("Offline, as recorded: pipewright run {file} --replay {cassette}"),
    );
    for l in &d.left_out {
        w.note(0, &format!("left out: {l}"));
    }
}

fn servers(w: &mut Writer, d: &Draft) {
    if d.servers.is_empty() {
        return;
    }
    w.line(0, "servers:");
    for (name, s) in &d.servers {
        w.line(2, &format!("{}:", quoted(name)));
        match s {
            ServerOut::Stdio { command, args, env } => {
                for e in env {
                    w.note(4, &format!("set {e}: the recording masked this value"));
                }
                w.line(4, &format!("command: {}", quoted(command)));
                if !args.is_empty() {
                    let args: Vec<String> = args.iter().map(|a| quoted(a)).collect();
                    w.line(4, &format!("args: [{}]", args.join(", ")));
                }
                protocol(w, d, name);
            }
            ServerOut::Http { url, headers } => {
                w.line(4, &format!("url: {}", quoted(url)));
                protocol(w, d, name);
                if !headers.is_empty() {
                    w.note(4, "header values are never recorded: set these variables");
                    w.line(4, "headers:");
                    for (h, v) in headers {
                        w.line(6, &format!("{}: {}", quoted(h), quoted(v)));
                    }
                }
            }
        }
    }
}

/// `protocol:`, the revision the recording spoke, so a live run speaks it
/// too.
fn protocol(w: &mut Writer, d: &Draft, server: &str) {
    if let Some(p) = d.protocols.get(server) {
        w.commented(4, &format!("protocol: {}", quoted(p)), "as recorded");
    }
}

/// A value as YAML (JSON's syntax), a string escaped so it is no template.
fn literal(v: &Value) -> String {
    match v {
        Value::String(s) => quoted(&escape_literal(s)),
        other => other.to_string(),
    }
}

/// A value shortened for a comment.
fn shown(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() > SHOWN {
        format!("{}…", text.chars().take(SHOWN).collect::<String>())
    } else {
        text
    }
}

fn expectation(target: &str, matcher: &Value) -> String {
    format!("- {{target: {}, matcher: {matcher}}}", quoted(target))
}

fn step(w: &mut Writer, s: &Step, ids: &[String], wrapped: &[bool], several: bool) {
    w.line(2, &format!("- id: {}", quoted(&s.id)));
    for n in &s.notes {
        w.note(4, n);
    }
    if several {
        w.line(4, &format!("server: {}", quoted(&s.server)));
    }
    w.line(4, &format!("tool: {}", quoted(&s.tool)));
    if let Some(fe) = &s.for_each {
        w.commented(
            4,
            &format!("for_each: {}", quoted(&fe.render(ids, wrapped))),
            &format!(
                "the recording made these {} calls, one per item",
                s.calls_of(0).count()
            ),
        );
    }
    match &s.args {
        Value::Object(m) if !m.is_empty() => {
            w.line(4, "args:");
            args(w, s, ids, wrapped);
        }
        _ => w.line(4, "args: {}"),
    }
    if !s.derived.is_empty() {
        let fields: Vec<String> = s
            .derived
            .iter()
            .map(|d| format!("{}: ({})", quoted(&d.key), d.expr))
            .collect();
        let program = if s.wrapped {
            format!(
                "{{\"value\": ., {}: {{{}}}}}",
                quoted(DERIVED),
                fields.join(", ")
            )
        } else {
            format!(". + {{{}: {{{}}}}}", quoted(DERIVED), fields.join(", "))
        };
        if s.wrapped {
            w.note(
                4,
                "the output is kept under `value`; `derived` adds what later steps read:",
            );
        } else {
            w.note(4, "`derived` adds what later steps read to the output:");
        }
        for d in &s.derived {
            w.note(4, &format!("  {}: {} ({})", d.key, d.note, d.rule.name()));
        }
        w.line(4, &format!("transform: {}", jq_text(&program)));
    }
    if s.task {
        w.commented(4, "task: true", "the recorded call ran as a task");
    }
    if !s.answers.is_empty() {
        w.note(4, "the agent's replies to the server's questions, in order");
        w.line(4, "answers:");
        for a in &s.answers {
            w.line(6, &format!("- {}", a.to_json()));
        }
    }
}

/// A jq program as a YAML scalar: single-quoted when it can be.
fn jq_text(program: &str) -> String {
    if program.contains(['\'', '\n']) {
        quoted(program)
    } else {
        format!("'{program}'")
    }
}

/// Writes the step's `args`, mappings and lists over several lines, each
/// leaf with what inference chose for it (walked with a stack: nothing
/// recurses on a recorded value's depth).
fn args(w: &mut Writer, s: &Step, ids: &[String], wrapped: &[bool]) {
    let Value::Object(top) = &s.args else {
        return;
    };
    let mut stack: Vec<(usize, String, &Value, Vec<Segment>)> = top
        .iter()
        .rev()
        .map(|(k, v)| {
            (
                6,
                format!("{}:", quoted(k)),
                v,
                vec![Segment::Field(k.clone())],
            )
        })
        .collect();
    while let Some((indent, lead, v, path)) = stack.pop() {
        match v {
            Value::Object(m) if !m.is_empty() => {
                w.line(indent, &lead);
                for (k, x) in m.iter().rev() {
                    let mut p = path.clone();
                    p.push(Segment::Field(k.clone()));
                    stack.push((indent + 2, format!("{}:", quoted(k)), x, p));
                }
            }
            Value::Array(a) if !a.is_empty() => {
                w.line(indent, &lead);
                for (i, x) in a.iter().enumerate().rev() {
                    let mut p = path.clone();
                    p.push(Segment::Index(i as i64));
                    stack.push((indent + 2, "-".to_owned(), x, p));
                }
            }
            _ => match s.leaves.iter().find(|l| l.path == path) {
                Some(leaf) => leaf_line(w, indent, &lead, leaf, s, ids, wrapped),
                None => w.line(indent, &format!("{lead} {}", literal(v))),
            },
        }
    }
}

fn leaf_line(
    w: &mut Writer,
    indent: usize,
    lead: &str,
    leaf: &Leaf,
    s: &Step,
    ids: &[String],
    wrapped: &[bool],
) {
    let was = shown(&leaf.literal);
    match &leaf.choice {
        Choice::Literal => w.line(indent, &format!("{lead} {}", literal(&leaf.literal))),
        Choice::Flagged => {
            w.note(indent, FLAG);
            w.line(indent, &format!("{lead} {}", literal(&leaf.literal)));
        }
        Choice::Input { var, note } => {
            let text = format!("{lead} {}", quoted(&format!("${{var.{var}}}")));
            let mut comment = format!("input {var}: was {was}");
            if let Some(n) = note {
                let _ = write!(comment, " ({n})");
            }
            w.commented(indent, &text, &comment);
        }
        Choice::Inferred {
            rule,
            confidence,
            template,
            how,
        } => w.commented(
            indent,
            &format!("{lead} {}", quoted(&template.render(ids, wrapped))),
            &format!("{}, {}: {how}; was {was}", rule.name(), confidence.name()),
        ),
        Choice::Item(p) => {
            let t = super::draft::Template::one(super::draft::Piece::Item(p.clone()));
            w.commented(
                indent,
                &format!("{lead} {}", quoted(&t.render(ids, wrapped))),
                &format!(
                    "for_each item: the {} calls took it from each item in turn; the first was {was}",
                    s.calls_of(0).count()
                ),
            );
        }
        Choice::Demoted { rule, why } => {
            w.note(
                indent,
                &format!(
                    "pipewright: {} found a source for `{}`, but it did not replay ({why}); kept as recorded",
                    rule.name(),
                    arg_path(&leaf.path)
                ),
            );
            w.line(indent, &format!("{lead} {}", literal(&leaf.literal)));
        }
    }
}

/// The cassette of every call the draft's steps stand for: `run --replay`
/// answers the pipeline from it offline, questions and all.
pub fn cassette(d: &Draft, recs: &[Recording]) -> Cassette {
    let mut c = Cassette {
        version: cassette::VERSION,
        ..Cassette::default()
    };
    let mut tools: IndexMap<String, Vec<Value>> = IndexMap::new();
    let mut listed: Vec<(String, String)> = Vec::new();
    let refs: Vec<_> = d
        .steps
        .iter()
        .flat_map(|s| s.calls.iter().copied())
        .collect();
    for cr in refs {
        let Some(call) = recs.get(cr.session).and_then(|r| r.calls.get(cr.call)) else {
            continue;
        };
        if call.is_error {
            continue;
        }
        if !listed.contains(&(call.server.clone(), call.tool.clone())) {
            listed.push((call.server.clone(), call.tool.clone()));
            // A tool the recording never listed gets an open schema, so
            // preflight finds it offline.
            let def = recs[cr.session]
                .tools
                .get(&call.tool)
                .cloned()
                .unwrap_or_else(
                    || serde_json::json!({"name": call.tool, "inputSchema": {"type": "object"}}),
                );
            tools.entry(call.server.clone()).or_default().push(def);
        }
        c.calls.push(Entry {
            server: call.server.clone(),
            tool: call.tool.clone(),
            args: cassette::canonical(&Value::Object(call.args.clone())),
            result: call.result.clone(),
            is_error: call.is_error,
            duration_ms: call.duration_ms.round() as u64,
            cost_usd: 0.0,
            tokens: 0,
            model: None,
            interactions: call.extras.interactions.clone(),
            logs: call.extras.logs.clone(),
            progress: call.extras.progress.clone(),
            task: call.extras.task.clone(),
        });
    }
    // The rest of each server's tools, so preflight finds them offline.
    for r in recs {
        let server = r.server().to_owned();
        for (name, def) in &r.tools {
            let known = listed.iter().any(|(_, t)| t == name);
            if !known {
                listed.push((server.clone(), name.clone()));
                tools.entry(server.clone()).or_default().push(def.clone());
            }
        }
    }
    c.tools = tools;
    c
}

#[cfg(test)]
mod tests;
