//! The pipeline `new --from` is writing, before it is text: one step per
//! call (or per fan-out of calls), each argument leaf with what inference
//! chose for it and why. Inference builds it, the proof demotes what does
//! not replay, and [`emit`](super::emit) writes it.

use std::fmt::Write as _;

use indexmap::IndexMap;
use serde_json::Value;

use crate::file::model::Answer;
use crate::lang::reference::{PathDisplay, Segment, escape_literal};

/// Which session and which of its calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CallRef {
    pub session: usize,
    pub call: usize,
}

/// The rule that found a value's source, by the name the comments and the
/// docs use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    /// The same value at a path of an earlier output.
    Exact,
    /// A field of an array item: the first, the last, or the one whose
    /// other field matches a known value.
    ItemField,
    /// An earlier string with its case changed.
    Case,
    /// An earlier string URL-encoded.
    UrlEncoded,
    /// Earlier values inside a longer string (`users/${find.id}`).
    Embedded,
    /// A piece of an earlier text output, cut out by a `transform:`.
    InText,
    /// The length of an earlier array.
    Length,
    /// The same value as an earlier argument that became an input.
    SameInput,
}

impl Rule {
    /// The rule's name, as comments, tests and the docs say it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Exact => "exact",
            Rule::ItemField => "item-field",
            Rule::Case => "case",
            Rule::UrlEncoded => "url-encoded",
            Rule::Embedded => "embedded",
            Rule::InText => "in-text",
            Rule::Length => "length",
            Rule::SameInput => "same-input",
        }
    }

    /// Every rule, in the order the docs list them.
    pub const ALL: [Rule; 8] = [
        Rule::Exact,
        Rule::ItemField,
        Rule::Case,
        Rule::UrlEncoded,
        Rule::Embedded,
        Rule::InText,
        Rule::Length,
        Rule::SameInput,
    ];
}

/// How sure an inferred reference is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Confidence {
    Guess,
    Likely,
    Sure,
}

impl Confidence {
    pub fn name(self) -> &'static str {
        match self {
            Confidence::Sure => "sure",
            Confidence::Likely => "likely",
            Confidence::Guess => "guess",
        }
    }

    /// One level less sure.
    pub fn down(self) -> Confidence {
        match self {
            Confidence::Sure => Confidence::Likely,
            _ => Confidence::Guess,
        }
    }
}

/// One piece of a written string.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Text as it is (escaped when written).
    Lit(String),
    /// Step `step`'s output at `path`.
    Out { step: usize, path: Vec<Segment> },
    /// A value step `step`'s `transform:` adds for later steps.
    Derived { step: usize, key: String },
    /// `${var.NAME}`.
    Var(String),
    /// `${item…}` in a fan-out.
    Item(Vec<Segment>),
}

/// A string as written: literal text and references.
#[derive(Debug, Clone, PartialEq)]
pub struct Template(pub Vec<Piece>);

impl Template {
    /// One reference, so the written string keeps the value's type.
    pub fn one(piece: Piece) -> Template {
        Template(vec![piece])
    }

    /// The text, with each step's id from `ids` (and `value` inserted for a
    /// step whose output its transform wraps, per `wrapped`).
    pub fn render(&self, ids: &[String], wrapped: &[bool]) -> String {
        let mut out = String::new();
        for p in &self.0 {
            match p {
                Piece::Lit(t) => out.push_str(&escape_literal(t)),
                Piece::Out { step, path } => {
                    let id = ids.get(*step).map_or("?", String::as_str);
                    let wrap = if wrapped.get(*step).copied().unwrap_or(false) {
                        ".value"
                    } else {
                        ""
                    };
                    let _ = write!(out, "${{{id}{wrap}{}}}", PathDisplay(path));
                }
                Piece::Derived { step, key } => {
                    let id = ids.get(*step).map_or("?", String::as_str);
                    let key = PathDisplay(&[Segment::Field(key.clone())]).to_string();
                    let _ = write!(out, "${{{id}.{DERIVED}{key}}}");
                }
                Piece::Var(name) => {
                    let name = PathDisplay(&[Segment::Field(name.clone())]).to_string();
                    let _ = write!(out, "${{var{name}}}");
                }
                Piece::Item(path) => {
                    let _ = write!(out, "${{item{}}}", PathDisplay(path));
                }
            }
        }
        out
    }

    /// The steps whose outputs it reads.
    pub fn steps(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().filter_map(|p| match p {
            Piece::Out { step, .. } | Piece::Derived { step, .. } => Some(*step),
            _ => None,
        })
    }
}

/// The key under which a step's `transform:` keeps the values it adds for
/// later steps.
pub const DERIVED: &str = "derived";

/// What was chosen for one argument leaf.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    /// Kept as recorded: a number, a boolean, a value the tool's schema
    /// fixes, or (with several sessions) a value every session agrees on.
    Literal,
    /// Kept as recorded, and flagged: it looks made by a server and no
    /// earlier result holds it.
    Flagged,
    /// An input: `${var.NAME}`, the recorded value its default.
    Input { var: String, note: Option<String> },
    /// A reference (or an interpolation) a rule found.
    Inferred {
        rule: Rule,
        confidence: Confidence,
        template: Template,
        /// What it reads, in words, for the comment.
        how: String,
    },
    /// A fan-out's item (or a field of it).
    Item(Vec<Segment>),
    /// An inferred reference that did not reproduce the recorded value:
    /// kept as recorded, with why.
    Demoted { rule: Rule, why: String },
}

/// One leaf of a step's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    /// Where in `args`.
    pub path: Vec<Segment>,
    /// The value recorded (the first call's, for a fan-out).
    pub literal: Value,
    pub choice: Choice,
}

/// A value a step's `transform:` adds, under [`DERIVED`], for later steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub key: String,
    /// A jq expression over the step's output.
    pub expr: String,
    pub rule: Rule,
    /// What it is and who reads it, for the comment.
    pub note: String,
}

/// One node of the pipeline being written.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub id: String,
    pub server: String,
    pub tool: String,
    /// The calls it stands for (one, or a fan-out's, in order), of every
    /// recording it was written from.
    pub calls: Vec<CallRef>,
    /// The first call's arguments, as recorded.
    pub args: Value,
    pub leaves: Vec<Leaf>,
    /// `for_each:`: the array its calls went over.
    pub for_each: Option<Template>,
    pub derived: Vec<Derived>,
    /// Its output is not an object, so its `transform:` wraps it as
    /// `{value, derived}` (references read `${id.value…}`).
    pub wrapped: bool,
    pub answers: Vec<Answer>,
    /// The call ran as a task.
    pub task: bool,
    /// Comments for the step as a whole.
    pub notes: Vec<String>,
}

impl Step {
    /// The calls it stands for in recording `session`, in order.
    pub fn calls_of(&self, session: usize) -> impl Iterator<Item = CallRef> + '_ {
        self.calls
            .iter()
            .copied()
            .filter(move |c| c.session == session)
    }
}

/// A `vars:` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    pub value: Value,
    /// Where it was first used, e.g. `search_users.query`.
    pub from: String,
}

/// A server of the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerOut {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Environment variables that stand for masked values in `args`.
        env: Vec<String>,
    },
    Http {
        url: String,
        /// Header names and the `${env.NAME}` each is read from.
        headers: Vec<(String, String)>,
    },
}

/// A `cases:` row (several recordings).
#[derive(Debug, Clone, PartialEq)]
pub struct CaseOut {
    pub name: String,
    pub vars: IndexMap<String, Value>,
    pub expect: Vec<(String, Value)>,
    /// The session it comes from.
    pub session: usize,
}

/// The whole pipeline being written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Draft {
    /// The pipe's name.
    pub name: String,
    /// The recordings it was written from, as named in the header.
    pub sources: Vec<String>,
    pub servers: IndexMap<String, ServerOut>,
    /// The MCP revision each server was spoken to in the recording, when
    /// it is one pipewright speaks (the file's `protocol:`).
    pub protocols: IndexMap<String, String>,
    pub vars: IndexMap<String, Var>,
    pub steps: Vec<Step>,
    /// The step whose output is the pipeline's.
    pub output: Option<usize>,
    /// `expect:` entries: target and matcher.
    pub expect: Vec<(String, Value)>,
    pub cases: Vec<CaseOut>,
    /// Calls left out, each with why (failed calls, …).
    pub left_out: Vec<String>,
}

impl Draft {
    /// Every step's id, by index.
    pub fn ids(&self) -> Vec<String> {
        self.steps.iter().map(|s| s.id.clone()).collect()
    }

    /// Which steps' outputs are wrapped by their transform.
    pub fn wrapped(&self) -> Vec<bool> {
        self.steps.iter().map(|s| s.wrapped).collect()
    }

    /// Inferred references by rule, in [`Rule::ALL`] order.
    pub fn by_rule(&self) -> Vec<(Rule, usize)> {
        let mut counts: IndexMap<Rule, usize> = IndexMap::new();
        for leaf in self.steps.iter().flat_map(|s| &s.leaves) {
            if let Choice::Inferred { rule, .. } = &leaf.choice {
                *counts.entry(*rule).or_default() += 1;
            }
        }
        Rule::ALL
            .iter()
            .filter_map(|r| counts.get(r).map(|n| (*r, *n)))
            .collect()
    }

    /// How many leaves were flagged.
    pub fn flagged(&self) -> usize {
        self.leaves_where(|c| matches!(c, Choice::Flagged))
    }

    /// How many references the proof demoted.
    pub fn demoted(&self) -> usize {
        self.leaves_where(|c| matches!(c, Choice::Demoted { .. }))
    }

    fn leaves_where(&self, f: impl Fn(&Choice) -> bool) -> usize {
        self.steps
            .iter()
            .flat_map(|s| &s.leaves)
            .filter(|l| f(&l.choice))
            .count()
    }

    /// Every inferred reference as `(step id, argument path, rule,
    /// written text)`, for tests and summaries.
    pub fn references(&self) -> Vec<(String, String, Rule, String)> {
        let ids = self.ids();
        let wrapped = self.wrapped();
        let mut out = Vec::new();
        for s in &self.steps {
            for l in &s.leaves {
                if let Choice::Inferred { rule, template, .. } = &l.choice {
                    out.push((
                        s.id.clone(),
                        arg_path(&l.path),
                        *rule,
                        template.render(&ids, &wrapped),
                    ));
                }
            }
        }
        out
    }
}

/// An argument path as `user_id` or `filter.tags[0]`.
pub fn arg_path(path: &[Segment]) -> String {
    crate::lang::reference::location_text("", path)
}

/// Every scalar leaf of `v` with its path (objects and arrays are walked;
/// empty ones are leaves themselves).
pub fn leaves_of(v: &Value) -> Vec<(Vec<Segment>, Value)> {
    let mut out = Vec::new();
    let mut stack: Vec<(Vec<Segment>, &Value)> = vec![(Vec::new(), v)];
    while let Some((path, v)) = stack.pop() {
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, x) in m.iter().rev() {
                    let mut p = path.clone();
                    p.push(Segment::Field(k.clone()));
                    stack.push((p, x));
                }
            }
            Value::Array(a) if !a.is_empty() => {
                for (i, x) in a.iter().enumerate().rev() {
                    let mut p = path.clone();
                    p.push(Segment::Index(i as i64));
                    stack.push((p, x));
                }
            }
            _ if path.is_empty() => {}
            other => out.push((path, other.clone())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_render_as_references_and_escaped_text() {
        let ids = vec!["find".to_owned(), "get".to_owned()];
        let t = Template(vec![
            Piece::Lit("users/${x}/".into()),
            Piece::Out {
                step: 0,
                path: vec![
                    Segment::Field("users".into()),
                    Segment::Index(0),
                    Segment::Field("id".into()),
                ],
            },
        ]);
        assert_eq!(
            t.render(&ids, &[false, false]),
            "users/$${x}/${find.users[0].id}"
        );
        assert_eq!(
            t.render(&ids, &[true, false]),
            "users/$${x}/${find.value.users[0].id}"
        );
        let d = Template::one(Piece::Derived {
            step: 1,
            key: "odd key".into(),
        });
        assert_eq!(
            d.render(&ids, &[false, false]),
            "${get.derived[\"odd key\"]}"
        );
        assert_eq!(
            Template::one(Piece::Var("QUERY".into())).render(&ids, &[]),
            "${var.QUERY}"
        );
        assert_eq!(
            Template::one(Piece::Item(vec![Segment::Field("id".into())])).render(&ids, &[]),
            "${item.id}"
        );
    }

    #[test]
    fn leaves_come_in_order_with_their_paths() {
        let l = leaves_of(&json!({"a": 1, "b": {"c": ["x", {"d": true}]}, "e": {}}));
        let shown: Vec<String> = l
            .iter()
            .map(|(p, v)| format!("{}={v}", arg_path(p)))
            .collect();
        assert_eq!(shown, ["a=1", "b.c[0]=\"x\"", "b.c[1].d=true", "e={}"]);
    }
}
