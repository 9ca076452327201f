//! From the calls of one recorded session to the pipeline's steps: every
//! argument leaf is searched for in earlier outputs (and inputs) by the
//! value-flow rules, the best candidate by rank becomes a reference, what
//! has no source becomes an input or, when it looks made by a server, a
//! flagged literal; runs of calls over an earlier array become one
//! `for_each` step.
//!
//! - [`rules`]: the rules (`exact`, `item-field`, `case`, `url-encoded`,
//!   `embedded`, `in-text`, `length`, `same-input`) and their candidates;
//! - [`rank`]: distinctiveness, names that belong together, values that
//!   look made by a server, input names;
//! - [`sites`]: earlier outputs indexed by value;
//! - [`fanout`]: `for_each` detection.

pub(crate) mod fanout;
pub(crate) mod rank;
pub(crate) mod rules;
pub(crate) mod sites;

use std::collections::HashMap;

use indexmap::IndexMap;
use serde_json::Value;

use super::calls::{Call, Recording};
use super::draft::{
    CallRef, Choice, DERIVED, Derived, Leaf, Piece, Step, Template, Var, leaves_of,
};
use crate::file::model::Answer;
use crate::lang::jq::JqProgram;
use crate::lang::reference::{PathDisplay, Segment};
use rank::{last_field, server_made, var_name};
use rules::{Build, Ctx, InputOf};
use sites::Sites;

/// One session's steps, inputs and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Inferred {
    pub steps: Vec<Step>,
    pub vars: IndexMap<String, Var>,
    pub left_out: Vec<String>,
}

/// The calls of `rec` (session number `session`) as steps.
pub fn session(rec: &Recording, session: usize) -> Inferred {
    let mut st = State::default();
    let calls: Vec<(usize, &Call)> = rec
        .calls
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            if c.is_error {
                st.left_out.push(format!(
                    "{}:{}: `{}` failed ({}); left out",
                    rec.source,
                    c.line,
                    c.tool,
                    one_line(&crate::mcp::error_text(&c.result))
                ));
            }
            !c.is_error
        })
        .collect();
    let mut i = 0;
    while i < calls.len() {
        let rest: Vec<&Call> = calls[i..].iter().map(|(_, c)| *c).collect();
        let fan = fanout::detect(&rest, &st.sites);
        let n = fan.as_ref().map_or(1, |f| f.n);
        let group = &calls[i..i + n];
        st.step(rec, session, group, fan.as_ref());
        i += n;
    }
    Inferred {
        steps: st.steps,
        vars: st.vars,
        left_out: st.left_out,
    }
}

fn one_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    if line.chars().count() > 120 {
        format!("{}…", line.chars().take(120).collect::<String>())
    } else {
        line.to_owned()
    }
}

#[derive(Default)]
struct State {
    sites: Sites,
    steps: Vec<Step>,
    ids: Vec<String>,
    fans: Vec<bool>,
    /// Each step's output (a fan-out's: the list), as references see it
    /// before any `transform:`.
    outputs: Vec<Value>,
    inputs: HashMap<String, InputOf>,
    vars: IndexMap<String, Var>,
    /// Argument values seen so far.
    known: Vec<Value>,
    left_out: Vec<String>,
}

impl State {
    fn step(
        &mut self,
        rec: &Recording,
        session: usize,
        group: &[(usize, &Call)],
        fan: Option<&fanout::Fan>,
    ) {
        let (_, first) = group[0];
        let index = self.steps.len();
        let id = unique_id(&self.ids, &first.tool);
        let args = Value::Object(first.args.clone());
        let schema = rec
            .tools
            .get(&first.tool)
            .and_then(|t| t.pointer("/inputSchema/properties"))
            .cloned()
            .unwrap_or(Value::Null);
        let mut leaves = Vec::new();
        for (path, literal) in leaves_of(&args) {
            let item = fan.and_then(|f| f.items.iter().find(|(p, _)| p == &path));
            let choice = match item {
                Some((_, q)) => Choice::Item(q.clone()),
                None => self.leaf(&id, &path, &literal, &schema),
            };
            self.known.push(literal.clone());
            leaves.push(Leaf {
                path,
                literal,
                choice,
            });
        }
        let mut notes = Vec::new();
        let mut answers = Vec::new();
        for (_, c) in group {
            for i in &c.extras.interactions {
                match answer_of(&i.reply, &i.kind) {
                    Some(a) => answers.push(a),
                    None => notes.push(format!(
                        "the recorded reply to a {} question cannot be written as an answer; a run asks for it",
                        i.kind
                    )),
                }
            }
        }
        let output = match fan {
            Some(_) => Value::Array(group.iter().map(|(_, c)| c.output.tree().clone()).collect()),
            None => first.output.tree().clone(),
        };
        self.sites.add(index, &output, fan.is_some());
        self.outputs.push(output);
        self.ids.push(id.clone());
        self.fans.push(fan.is_some());
        self.steps.push(Step {
            id,
            server: first.server.clone(),
            tool: first.tool.clone(),
            calls: group
                .iter()
                .map(|(call, _)| CallRef {
                    session,
                    call: *call,
                })
                .collect(),
            args,
            leaves,
            for_each: fan.map(|f| Template::one(f.source.clone())),
            derived: Vec::new(),
            wrapped: false,
            answers,
            task: first.extras.task.is_some(),
            notes,
        });
    }

    /// What one argument leaf becomes.
    fn leaf(&mut self, id: &str, path: &[Segment], v: &Value, schema: &Value) -> Choice {
        let arg = last_field(path).unwrap_or("value").to_owned();
        // A value the tool's schema fixes is not anyone's output.
        if let Some(Segment::Field(top)) = path.first()
            && let Some(p) = schema.get(top)
            && path.len() == 1
            && (p.get("enum").is_some() || p.get("const").is_some())
        {
            return Choice::Literal;
        }
        if v.is_string() || v.is_number() {
            let ctx = Ctx {
                sites: &self.sites,
                ids: &self.ids,
                step: self.steps.len(),
                fans: &self.fans,
                inputs: &self.inputs,
                known: &self.known,
            };
            let found = rules::candidates(&ctx, &arg, v);
            for c in found {
                let template = match c.build {
                    Build::Template(t) => t,
                    Build::Derive { step, expr } => {
                        match self.derive(step, &arg, &expr, v, c.rule, &c.how, id) {
                            Some(t) => t,
                            None => continue,
                        }
                    }
                };
                return Choice::Inferred {
                    rule: c.rule,
                    confidence: c.confidence,
                    template,
                    how: c.how,
                };
            }
        }
        match v {
            _ if server_made(&arg, v) => Choice::Flagged,
            Value::String(_) => {
                let var = self.input(&arg, v, &format!("{id}.{}", super::draft::arg_path(path)));
                Choice::Input { var, note: None }
            }
            _ => Choice::Literal,
        }
    }

    /// A value step `step`'s transform adds, checked against the recorded
    /// output: the template that reads it, or `None` when jq does not give
    /// `want` back.
    #[expect(
        clippy::too_many_arguments,
        reason = "what a derived value is and who reads it, all used once"
    )]
    fn derive(
        &mut self,
        step: usize,
        arg: &str,
        expr: &str,
        want: &Value,
        rule: super::draft::Rule,
        how: &str,
        reader: &str,
    ) -> Option<Template> {
        let output = self.outputs.get(step)?;
        let program = JqProgram::compile(expr).ok()?;
        if program.run_one(output).ok().as_ref() != Some(want) {
            return None;
        }
        let s = self.steps.get_mut(step)?;
        let key = match s.derived.iter().find(|d| d.expr == expr) {
            Some(d) => d.key.clone(),
            None => {
                let base = rank::words(arg).join("_");
                let base = if base.is_empty() {
                    "value".to_owned()
                } else {
                    base
                };
                let mut key = base.clone();
                let mut n = 2;
                while s.derived.iter().any(|d| d.key == key) {
                    key = format!("{base}_{n}");
                    n += 1;
                }
                s.derived.push(Derived {
                    key: key.clone(),
                    expr: expr.to_owned(),
                    rule,
                    note: format!("{how}, for {reader}.{arg}"),
                });
                key
            }
        };
        // Added fields keep every other path of an object output; any
        // other output is wrapped.
        s.wrapped |= !output.is_object() || output.get(DERIVED).is_some();
        Some(Template::one(Piece::Derived { step, key }))
    }

    /// A new input for `v`: `${var.NAME}` with `v` as its default.
    fn input(&mut self, arg: &str, v: &Value, from: &str) -> String {
        let base = var_name(arg);
        let mut name = base.clone();
        let mut n = 2;
        while self.vars.contains_key(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.vars.insert(
            name.clone(),
            Var {
                value: v.clone(),
                from: from.to_owned(),
            },
        );
        if let Some(k) = sites::key(v) {
            self.inputs.entry(k).or_insert(InputOf {
                var: name.clone(),
                arg: arg.to_owned(),
                value: v.clone(),
            });
        }
        name
    }
}

/// A node id from a tool's name, not one of `ids`.
fn unique_id(ids: &[String], tool: &str) -> String {
    let base = crate::file::loader::id_from(tool);
    let mut id = base.clone();
    let mut n = 2;
    while ids.contains(&id) {
        id = format!("{base}_{n}");
        n += 1;
    }
    id
}

/// The answers-file entry for a recorded reply; `None` for a sampling
/// reply that is not text.
pub fn answer_of(reply: &Value, kind: &str) -> Option<Answer> {
    if kind == "sampling" {
        let text = reply.pointer("/content/text").and_then(Value::as_str)?;
        let model = reply
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("human");
        return Some(Answer::Sample {
            text: text.to_owned(),
            model: model.to_owned(),
        });
    }
    match reply.get("action").and_then(Value::as_str) {
        Some("accept") => Some(Answer::Accept(
            reply.get("content").and_then(Value::as_object).cloned(),
        )),
        Some("decline") => Some(Answer::Decline),
        Some("cancel") => Some(Answer::Cancel),
        _ => None,
    }
}

/// `expect:` entries for a recorded final output: each field exactly, but
/// values that look made by a server by their type, arrays by length.
pub fn expect_of(output: &Value) -> Vec<(String, Value)> {
    const MAX_FIELDS: usize = 12;
    let matcher = |key: &str, v: &Value| -> Value {
        match v {
            Value::Array(a) => serde_json::json!({"length": a.len()}),
            Value::Object(_) => serde_json::json!({"type": "object"}),
            v if server_made(key, v) => serde_json::json!({"type": json_type(v)}),
            v => serde_json::json!({"exact": v}),
        }
    };
    match output {
        Value::Object(m) if !m.is_empty() => m
            .iter()
            .take(MAX_FIELDS)
            .map(|(k, v)| {
                let target = format!("output{}", PathDisplay(&[Segment::Field(k.clone())]));
                (target, matcher(k, v))
            })
            .collect(),
        other => vec![("output".to_owned(), matcher("output", other))],
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests;
