//! The five metrics: for each, what pipewright decides without a model
//! (arguments against the tools' inputSchema, the tools `expect` names, a
//! run with no output to grade), the question the judge is asked about the
//! rest, and how its verdict becomes the metric's row (a rubric's weighted
//! mean, a decision tree walked to its leaf, a mean over calls).

use serde_json::{Map, Value, json};

use super::material::{self, Call, Subject};
use super::prompts::{self, Prompt};
use super::verdict::{self, ITEM_REASONING_CHARS, REASONING_CHARS};
use crate::file::model::eval::{MetricKind, MetricSpec, Rubric, TreeNode};
use crate::run::trace::eval::{By, EvalItem, EvalPart, EvalRow, EvalStatus};

/// What a metric needs from the judge, or its row when it needs nothing.
pub enum Prepared {
    /// Decided without a model.
    Decided(EvalRow),
    /// A question for the judge.
    Ask(Ask),
}

/// A question for the judge and what is needed to read its answer.
pub struct Ask {
    pub prompt: Prompt,
    /// The material, as the user message's JSON.
    pub material: Value,
    pub(super) reading: Reading,
}

/// How a verdict is read into a row.
pub(super) enum Reading {
    Criteria(Vec<(String, f64)>),
    Tree(TreeNode),
    Score,
    /// mcp_use: the expected tools' items and their part, already decided.
    Use(Vec<EvalItem>),
    /// argument_correctness: the calls asked about (`c1` …, their names),
    /// the items decided by the schema check, and the calls not shown.
    Args {
        asked: Vec<(String, String)>,
        decided: Vec<EvalItem>,
        unshown: usize,
    },
}

/// What `metric` needs for `subject`.
pub fn prepare(metric: &MetricSpec, s: &Subject<'_>) -> Prepared {
    let mut m = material::header(s);
    let ask = |prompt: Prompt, m: Map<String, Value>, reading: Reading| {
        Prepared::Ask(Ask {
            prompt,
            material: Value::Object(m),
            reading,
        })
    };
    match &metric.kind {
        MetricKind::Rubric(Rubric::Criteria(criteria)) => {
            m.insert("output".into(), material::output(s));
            let list: Vec<Value> = criteria
                .iter()
                .map(
                    |c| json!({ "name": c.name, "weight": c.weight, "description": c.description }),
                )
                .collect();
            m.insert("criteria".into(), Value::Array(list));
            let asked = criteria
                .iter()
                .map(|c| (c.name.clone(), c.weight))
                .collect();
            ask(prompts::RUBRIC, m, Reading::Criteria(asked))
        }
        MetricKind::Rubric(Rubric::Tree(tree)) => {
            m.insert("output".into(), material::output(s));
            let qs: Vec<Value> = tree
                .questions()
                .iter()
                .enumerate()
                .map(|(i, (q, opts))| {
                    let answers: Vec<&str> = opts.iter().map(|(l, _)| l.as_str()).collect();
                    json!({ "id": format!("q{}", i + 1), "question": q, "answers": answers })
                })
                .collect();
            m.insert("questions".into(), Value::Array(qs));
            ask(prompts::RUBRIC_TREE, m, Reading::Tree(tree.clone()))
        }
        MetricKind::TaskCompletion { task } => {
            // No output: nothing ran, or the run failed before its output
            // node gave one. (A run that ended well with `null` for its
            // output is the judge's to grade.)
            let failed = s.trace.composition.status != crate::run::trace::RunStatus::Completed;
            if s.trace.output.is_null() && (!s.trace.composition.ran || failed) {
                return Prepared::Decided(decided(
                    metric,
                    0.0,
                    "the run produced no output: nothing was accomplished (decided without the judge)",
                    "run produced an output",
                ));
            }
            m.insert("task".into(), material::task(s, task.as_deref()));
            m.insert("calls".into(), Value::Array(material::calls(s, false)));
            m.insert("run".into(), material::run(s));
            m.insert("output".into(), material::output(s));
            ask(prompts::TASK_COMPLETION, m, Reading::Score)
        }
        MetricKind::McpUse { expect } => {
            let items = expected_tools(s, expect);
            m.insert("task".into(), material::task(s, None));
            m.insert("tools_offered".into(), Value::Array(material::offered(s)));
            m.insert("calls".into(), Value::Array(material::calls(s, true)));
            if !items.is_empty() {
                let checked: Vec<Value> = items
                    .iter()
                    .map(|i| json!({ "tool": i.name, "called": i.score == Some(1.0) }))
                    .collect();
                m.insert("expected_tools".into(), Value::Array(checked));
            }
            ask(prompts::MCP_USE, m, Reading::Use(items))
        }
        MetricKind::ArgumentCorrectness => arguments(metric, s, m),
        MetricKind::PlanQuality => {
            // The plan alone: the same for every case, so one answer
            // serves them all (the judge is asked once per process).
            let mut m = Map::new();
            m.insert(
                "pipeline".into(),
                json!({ "name": s.comp.name, "description": s.comp.description }),
            );
            m.insert("task".into(), material::task(s, None));
            m.insert("tools_offered".into(), Value::Array(material::offered(s)));
            m.insert("dag".into(), material::dag(s.comp));
            ask(prompts::PLAN_QUALITY, m, Reading::Score)
        }
    }
}

/// A row pipewright scored alone.
fn decided(metric: &MetricSpec, score: f64, reasoning: &str, part: &str) -> EvalRow {
    EvalRow {
        metric: metric.name().to_owned(),
        status: verdict_of(score, metric.threshold),
        score: Some(score),
        threshold: Some(metric.threshold),
        reasoning: reasoning.to_owned(),
        parts: vec![EvalPart {
            name: part.to_owned(),
            by: By::Pipewright,
            score,
            weight: 1.0,
        }],
        ..EvalRow::default()
    }
}

fn verdict_of(score: f64, threshold: f64) -> EvalStatus {
    if score >= threshold {
        EvalStatus::Pass
    } else {
        EvalStatus::Fail
    }
}

/// Each tool `expect` names: 1 when a call of it ended `ok`, else 0.
fn expected_tools(s: &Subject<'_>, expect: &[String]) -> Vec<EvalItem> {
    expect
        .iter()
        .map(|tool| {
            let calls: Vec<_> = s
                .trace
                .nodes
                .values()
                .filter(|r| {
                    !r.mocked
                        && (r.tool == *tool
                            || material::tool_key(r.server.as_deref(), &r.tool) == *tool)
                })
                .collect();
            let ok = calls
                .iter()
                .any(|r| r.status == crate::run::trace::NodeStatus::Ok);
            let reasoning = match (calls.is_empty(), ok) {
                (true, _) => "never called".to_owned(),
                (false, true) => "called, and the call succeeded".to_owned(),
                (false, false) => "called, but no call of it succeeded".to_owned(),
            };
            EvalItem {
                name: tool.clone(),
                score: Some(if ok { 1.0 } else { 0.0 }),
                by: By::Pipewright,
                reasoning,
                ..EvalItem::default()
            }
        })
        .collect()
}

/// argument_correctness: every call's arguments checked against its
/// tool's inputSchema here; the calls that pass (up to the limits) asked
/// about.
fn arguments(metric: &MetricSpec, s: &Subject<'_>, mut m: Map<String, Value>) -> Prepared {
    let calls = material::sent_calls(s.trace);
    if calls.is_empty() {
        return Prepared::Decided(EvalRow::error(
            metric.name(),
            metric.threshold,
            "the run sent no tool call whose arguments could be judged".into(),
        ));
    }
    let mut decided = Vec::new();
    let mut passed: Vec<&Call> = Vec::new();
    let mut shown_of: std::collections::HashMap<&str, usize> = Default::default();
    let mut unshown = 0;
    for call in &calls {
        let schema =
            material::find_tool(s.tools, &call.tool_key).and_then(|t| t.input_schema.as_ref());
        let errors = schema
            .map(|sc| schema_errors(sc, &call.args))
            .unwrap_or_default();
        if !errors.is_empty() {
            decided.push(EvalItem {
                name: call.name.clone(),
                score: Some(0.0),
                by: By::Pipewright,
                reasoning: format!(
                    "its arguments break the tool's inputSchema: {}",
                    super::client::cut(&errors.join("; "), ITEM_REASONING_CHARS)
                ),
                ..EvalItem::default()
            });
            continue;
        }
        let n = shown_of.entry(call.node.as_str()).or_default();
        if *n >= material::ITERATIONS_SHOWN || passed.len() >= material::MAX_JUDGED_CALLS {
            unshown += 1;
            continue;
        }
        *n += 1;
        passed.push(call);
    }
    if passed.is_empty() {
        let mut row = finish_args(metric, Vec::new(), decided, unshown, "");
        row.reasoning =
            "every call broke its tool's inputSchema (decided without the judge)".into();
        return Prepared::Decided(row);
    }
    let mut asked = Vec::new();
    let listed: Vec<Value> = passed
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let id = format!("c{}", i + 1);
            asked.push((id.clone(), c.name.clone()));
            let tool = material::find_tool(s.tools, &c.tool_key);
            json!({
                "call": id,
                "node": c.name,
                "tool": c.tool_key,
                "description": tool.and_then(|t| t.description.clone()),
                "input_schema": tool.and_then(|t| t.input_schema.clone()),
                "arguments": material::clip(&c.args, material::ARGS_BYTES),
                "from": material::sources(s, &c.node),
            })
        })
        .collect();
    m.insert("task".into(), material::task(s, None));
    m.insert("calls".into(), Value::Array(listed));
    Prepared::Ask(Ask {
        prompt: prompts::ARGUMENT_CORRECTNESS,
        material: Value::Object(m),
        reading: Reading::Args {
            asked,
            decided,
            unshown,
        },
    })
}

/// Every way `args` breaks `schema`, each as "at /path: message"; a schema
/// that does not compile checks nothing.
pub fn schema_errors(schema: &Value, args: &Value) -> Vec<String> {
    let Ok(v) = jsonschema::validator_for(schema) else {
        return Vec::new();
    };
    v.iter_errors(args)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("at {at}: {e}")
            }
        })
        .collect()
}

/// The row of an answered question: `Err` says why the verdict cannot be
/// read (the row is then an error).
pub(super) fn finish(
    metric: &MetricSpec,
    ask_reading: Reading,
    v: &Map<String, Value>,
) -> Result<EvalRow, String> {
    let reasoning = verdict::text(v, "reasoning", REASONING_CHARS, "the judge's reply")?;
    let row = match ask_reading {
        Reading::Criteria(asked) => {
            let items = verdict::objects(v, "criteria")?;
            let names: Vec<String> = asked.iter().map(|(n, _)| n.clone()).collect();
            let found = verdict::match_names(&names, &items, "name", "criterion")?;
            let mut out = Vec::new();
            let (mut sum, mut weights) = (0.0, 0.0);
            for ((name, weight), item) in asked.iter().zip(found) {
                let whose = format!("criterion `{}`", super::client::cut(name, 60));
                let sc = verdict::score(item, "score", &whose)?;
                sum += sc * weight;
                weights += weight;
                out.push(EvalItem {
                    name: name.clone(),
                    score: Some(sc),
                    weight: Some(*weight),
                    by: By::Judge,
                    reasoning: verdict::text(item, "reasoning", ITEM_REASONING_CHARS, &whose)?,
                    ..EvalItem::default()
                });
            }
            let score = if weights > 0.0 { sum / weights } else { 0.0 };
            scored(
                metric,
                score,
                reasoning,
                out,
                vec![part("criteria, weighted", By::Judge, score, 1.0)],
            )
        }
        Reading::Tree(tree) => walk(metric, &tree, v, reasoning)?,
        Reading::Score => {
            let sc = verdict::score(v, "score", "the judge's reply")?;
            scored(
                metric,
                sc,
                reasoning,
                Vec::new(),
                vec![part(metric.name(), By::Judge, sc, 1.0)],
            )
        }
        Reading::Use(expected) => {
            let judged = verdict::score(v, "score", "the judge's reply")?;
            let mut parts = vec![part("tools fit the task", By::Judge, judged, 1.0)];
            let mut score = judged;
            if !expected.is_empty() {
                let share =
                    expected.iter().filter_map(|i| i.score).sum::<f64>() / expected.len() as f64;
                parts.insert(
                    0,
                    part(
                        "tools named in expect were called",
                        By::Pipewright,
                        share,
                        1.0,
                    ),
                );
                score = (share + judged) / 2.0;
            }
            scored(metric, score, reasoning, expected, parts)
        }
        Reading::Args {
            asked,
            decided,
            unshown,
        } => {
            let items = verdict::objects(v, "calls")?;
            let ids: Vec<String> = asked.iter().map(|(id, _)| id.clone()).collect();
            let found = verdict::match_names(&ids, &items, "call", "call")?;
            let mut judged = Vec::new();
            for ((id, name), item) in asked.iter().zip(found) {
                let whose = format!("call `{id}` ({name})");
                judged.push(EvalItem {
                    name: name.clone(),
                    score: Some(verdict::score(item, "score", &whose)?),
                    by: By::Judge,
                    reasoning: verdict::text(item, "reasoning", ITEM_REASONING_CHARS, &whose)?,
                    ..EvalItem::default()
                });
            }
            finish_args(metric, judged, decided, unshown, &reasoning)
        }
    };
    Ok(row)
}

fn part(name: &str, by: By, score: f64, weight: f64) -> EvalPart {
    EvalPart {
        name: name.to_owned(),
        by,
        score,
        weight,
    }
}

fn scored(
    metric: &MetricSpec,
    score: f64,
    reasoning: String,
    items: Vec<EvalItem>,
    parts: Vec<EvalPart>,
) -> EvalRow {
    EvalRow {
        metric: metric.name().to_owned(),
        status: verdict_of(score, metric.threshold),
        score: Some(score),
        threshold: Some(metric.threshold),
        reasoning,
        parts,
        items,
        ..EvalRow::default()
    }
}

/// argument_correctness's row: the mean over every call scored, by the
/// schema check (0 for a call that breaks it) or by the judge.
fn finish_args(
    metric: &MetricSpec,
    judged: Vec<EvalItem>,
    decided: Vec<EvalItem>,
    unshown: usize,
    reasoning: &str,
) -> EvalRow {
    let total = (judged.len() + decided.len()).max(1) as f64;
    let j_sum: f64 = judged.iter().filter_map(|i| i.score).sum();
    let score = j_sum / total;
    let mut parts = Vec::new();
    if !decided.is_empty() {
        parts.push(part(
            &format!("{} call(s) broke their tool's inputSchema", decided.len()),
            By::Pipewright,
            0.0,
            decided.len() as f64 / total,
        ));
    }
    if !judged.is_empty() {
        parts.push(part(
            &format!("{} call(s) judged", judged.len()),
            By::Judge,
            j_sum / judged.len() as f64,
            judged.len() as f64 / total,
        ));
    }
    let mut reasoning = reasoning.to_owned();
    if unshown > 0 {
        reasoning.push_str(&format!(
            " ({unshown} more call(s) passed the schema check but were not shown to the judge: at most {} iterations of a fan-out and {} calls are)",
            material::ITERATIONS_SHOWN,
            material::MAX_JUDGED_CALLS
        ));
    }
    let mut items = decided;
    items.extend(judged);
    scored(metric, score, reasoning.trim().to_owned(), items, parts)
}

/// A decision tree walked by the judge's answers from the root to a leaf.
fn walk(
    metric: &MetricSpec,
    tree: &TreeNode,
    v: &Map<String, Value>,
    reasoning: String,
) -> Result<EvalRow, String> {
    let answers = verdict::objects(v, "answers")?;
    let questions = tree.questions();
    let mut node = tree;
    let mut items = Vec::new();
    loop {
        match node {
            TreeNode::Leaf { score, label } => {
                let mut reasoning = reasoning;
                if let Some(l) = label {
                    reasoning = format!("[{l}] {reasoning}").trim().to_owned();
                }
                let path = part(
                    "decision tree, walked by pipewright",
                    By::Judge,
                    *score,
                    1.0,
                );
                return Ok(scored(metric, *score, reasoning, items, vec![path]));
            }
            TreeNode::Question { question, options } => {
                let n = questions
                    .iter()
                    .position(|(q, o)| std::ptr::eq(*o, options.as_slice()) && *q == question)
                    .unwrap_or(0);
                let id = format!("q{}", n + 1);
                let found = verdict::match_names(
                    std::slice::from_ref(&id),
                    &answers,
                    "question",
                    "question",
                )?;
                let whose = format!("question `{id}`");
                let said = verdict::text(found[0], "answer", 200, &whose)?;
                let Some((label, next)) = options
                    .iter()
                    .find(|(l, _)| l.trim().eq_ignore_ascii_case(said.trim()))
                else {
                    let allowed: Vec<&str> = options.iter().map(|(l, _)| l.as_str()).collect();
                    return Err(format!(
                        "the judge answered {whose} with `{said}`, not one of: {}",
                        allowed.join(", ")
                    ));
                };
                items.push(EvalItem {
                    name: question.clone(),
                    answer: Some(label.clone()),
                    by: By::Judge,
                    reasoning: verdict::text(found[0], "reasoning", ITEM_REASONING_CHARS, &whose)?,
                    ..EvalItem::default()
                });
                node = next;
            }
        }
    }
}
