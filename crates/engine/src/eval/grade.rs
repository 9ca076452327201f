//! Grading one trace: every metric of the composition's `eval:` prepared
//! (decided here, or a question for the judge), each question checked
//! against the run's budget before it is asked (judge calls count against
//! `budget:` like tool calls), the questions asked a few at a time, each
//! answer read into the metric's row with its judgement (model, prompt
//! version, tokens, cost), and the judge's spend added to the run's.

use std::time::Duration;

use futures::StreamExt;
use indexmap::IndexMap;

use super::judge::{Answered, Judge, Request, request};
use super::material::{self, Subject};
use super::metrics::{self, Prepared};
use super::verdict;
use crate::cost::pricing::Figures;
use crate::file::model::eval::{MetricKind, MetricSpec};
use crate::file::model::{Budget, Composition};
use crate::mcp::ToolInfo;
use crate::run::budget::{self, Caps, Projection, Spent};
use crate::run::session::BudgetMode;
use crate::run::trace::eval::{EvalRow, Judgement};
use crate::run::trace::{RunStatus, Trace};

/// Questions to the judge in flight at once.
pub const CONCURRENCY: usize = 4;
/// The tokens a reply is expected to take, before any item.
const REPLY_TOKENS: u64 = 200;
/// And for each criterion, question or call it scores.
const REPLY_TOKENS_PER_ITEM: u64 = 60;

/// What grading a trace needs besides the trace.
pub struct Grading<'a> {
    pub comp: &'a Composition,
    /// The judge, or why there is none (every metric is then deferred).
    pub judge: Result<Judge, String>,
    /// The servers' tool lists when they are at hand (a run); a re-judge
    /// uses what the trace kept of them.
    pub tools: Option<&'a IndexMap<String, Vec<ToolInfo>>>,
    pub budget: Budget,
    pub on_budget: BudgetMode,
}

/// Whether a metric shows the judge the servers' tools.
fn needs_tools(m: &MetricSpec) -> bool {
    matches!(
        m.kind,
        MetricKind::McpUse { .. } | MetricKind::ArgumentCorrectness | MetricKind::PlanQuality
    )
}

/// The tokens a reply to `m` is expected to take.
pub fn reply_tokens(m: &MetricSpec, items: usize, max: u64) -> u64 {
    let _ = m;
    (REPLY_TOKENS + REPLY_TOKENS_PER_ITEM * items as u64).min(max)
}

/// Items a question asks about (criteria, questions, calls).
fn items_of(material: &serde_json::Value) -> usize {
    ["criteria", "questions", "calls"]
        .iter()
        .filter_map(|k| material.get(k).and_then(|v| v.as_array()).map(Vec::len))
        .sum()
}

/// Grades `trace` in place: its `eval` rows, `eval_tools`, and its spend
/// and budget verdict with the judge's calls counted.
pub async fn grade(trace: &mut Trace, g: Grading<'_>) {
    let spec = &g.comp.eval;
    if spec.is_empty() {
        trace.eval.clear();
        return;
    }
    // A re-judge replaces earlier judgements: their spend goes with them.
    let (old_cost, old_tokens) = trace
        .eval
        .iter()
        .filter(|r| r.judge.as_ref().is_some_and(|j| !j.replayed && !j.reused))
        .fold((0.0, 0), |(c, t), r| (c + r.cost_usd(), t + r.tokens()));
    trace.composition.cost_total = (trace.composition.cost_total - old_cost).max(0.0);
    trace.composition.tokens_total = trace.composition.tokens_total.saturating_sub(old_tokens);
    if let Some(lists) = g.tools
        && spec.metrics.iter().any(needs_tools)
    {
        trace.eval_tools = material::tools_seen(trace, lists);
    }
    let judge = match g.judge {
        Ok(j) => match j.unavailable() {
            None => j,
            Some(why) => return defer(trace, g.comp, why),
        },
        Err(why) => return defer(trace, g.comp, why),
    };
    let prepared: Vec<(MetricSpec, Prepared)> = {
        let subject = Subject {
            trace,
            comp: g.comp,
            tools: &trace.eval_tools,
        };
        spec.metrics
            .iter()
            .map(|m| (m.clone(), metrics::prepare(m, &subject)))
            .collect()
    };
    let mut rows: Vec<Option<EvalRow>> = Vec::with_capacity(prepared.len());
    let mut questions = Vec::new();
    let mut spent = Spent {
        cost_usd: trace.composition.cost_total,
        tokens: trace.composition.tokens_total,
        elapsed: Duration::ZERO,
    };
    for (i, (metric, p)) in prepared.into_iter().enumerate() {
        match p {
            Prepared::Decided(row) => rows.push(Some(row)),
            Prepared::Ask(ask) => {
                let req = request(&ask.prompt, &ask.material, judge.endpoint.as_ref());
                let projected = project(&judge, &metric, &req, items_of(&ask.material));
                let id = format!("eval {}", metric.name());
                let caps = Caps {
                    run: g.budget,
                    per_call_cost: None,
                    per_call_tokens: None,
                };
                let breach = budget::breaches(&id, caps, spent, &projected)
                    .into_iter()
                    .next();
                if let Some(b) = &breach {
                    trip(trace, &b.cap, g.on_budget);
                    if g.on_budget == BudgetMode::Stop {
                        let mut row = EvalRow::error(
                            metric.name(),
                            metric.threshold,
                            format!(
                                "not judged: the budget would be exceeded ({}: {})",
                                b.cap, b.detail
                            ),
                        );
                        row.tripped = Some(b.cap.clone());
                        rows.push(Some(row));
                        continue;
                    }
                }
                spent.cost_usd += projected.total.cost_usd;
                spent.tokens += projected.total.tokens;
                rows.push(None);
                questions.push((i, metric, ask, req, breach.map(|b| b.cap)));
            }
        }
    }
    let judge_ref = &judge;
    let answers: Vec<_> = futures::stream::iter(questions)
        .map(|(i, metric, ask, req, tripped)| async move {
            let answer = judge_ref.ask(metric.name(), &ask.prompt, &req).await;
            (i, metric, ask, req, tripped, answer)
        })
        .buffered(CONCURRENCY)
        .collect()
        .await;
    for (i, metric, ask, req, tripped, answer) in answers {
        let mut row = match answer {
            Err(why) => EvalRow::error(metric.name(), metric.threshold, why),
            Ok(a) => {
                let read = verdict::read(&a.body);
                let judgement = judgement(&judge, &ask.prompt, &req, &a, read.as_ref().ok());
                let mut row = read
                    .and_then(|r| metrics::finish(&metric, ask.reading, &r.verdict))
                    .unwrap_or_else(|why| EvalRow::error(metric.name(), metric.threshold, why));
                row.judge = Some(judgement);
                row
            }
        };
        row.tripped = tripped;
        rows[i] = Some(row);
    }
    let redactor = judge.bench.redactor();
    trace.eval = rows
        .into_iter()
        .flatten()
        .map(|mut r| {
            if !redactor.is_empty() {
                r.reasoning = redactor.text(&r.reasoning);
                r.reason = redactor.text(&r.reason);
                for it in &mut r.items {
                    it.reasoning = redactor.text(&it.reasoning);
                }
            }
            r
        })
        .collect();
    spend(trace, g.budget, g.on_budget);
}

/// Every metric deferred, for `why`.
fn defer(trace: &mut Trace, comp: &Composition, why: String) {
    trace.eval = comp
        .eval
        .names()
        .map(|m| EvalRow::deferred_because(m, why.clone()))
        .collect();
}

/// The projected figures of asking `req` (free when it is answered from
/// this process's answers or a cassette).
fn project(judge: &Judge, metric: &MetricSpec, req: &Request, items: usize) -> Projection {
    let mut f = Figures::default();
    if !judge.bench.free(&req.sha)
        && let Some(e) = &judge.endpoint
    {
        let out = reply_tokens(metric, items, e.max_tokens);
        f.tokens = req.tokens + out;
        f.cost_usd = judge
            .bench
            .price(&e.model)
            .map_or(0.0, |p| p.cost(req.tokens, out));
        f.model = Some(e.model.clone());
    }
    Projection {
        calls: 1,
        calls_known: true,
        per_call: f.clone(),
        total: f,
    }
}

/// The judgement kept in the row: the endpoint's usage (else counted
/// here), priced by the table (free when replayed or reused).
fn judgement(
    judge: &Judge,
    prompt: &super::prompts::Prompt,
    req: &Request,
    a: &Answered,
    reply: Option<&verdict::Reply>,
) -> Judgement {
    let content_tokens = || {
        a.body
            .pointer("/choices/0/message/content")
            .and_then(serde_json::Value::as_str)
            .map_or(0, crate::cost::tokens::count)
    };
    let (input, output, counted) = match reply.and_then(|r| r.input_tokens.zip(r.output_tokens)) {
        Some((i, o)) => (i, o, false),
        None => (req.tokens, content_tokens(), true),
    };
    let model = reply
        .and_then(|r| r.model.clone())
        .unwrap_or_else(|| a.model.clone());
    let free = a.replayed || a.reused;
    let cost = if free {
        0.0
    } else {
        judge
            .bench
            .price(&model)
            .or_else(|| judge.bench.price(&a.model))
            .map_or(0.0, |p| p.cost(input, output))
    };
    Judgement {
        prompt: prompt.id.to_owned(),
        model,
        endpoint: judge
            .endpoint
            .as_ref()
            .map(|e| e.shown_url())
            .unwrap_or_default(),
        input_tokens: input,
        output_tokens: output,
        tokens_counted: counted,
        cost_usd: cost,
        duration_ms: a.duration.as_millis() as u64,
        attempts: a.attempts,
        replayed: a.replayed,
        reused: a.reused,
        request_sha256: req.sha.clone(),
    }
}

/// Adds the judge's spend to the run's, and trips a cap it passed (on the
/// row whose call passed it).
fn spend(trace: &mut Trace, budget: Budget, mode: BudgetMode) {
    let mut cost = trace.composition.cost_total;
    let mut tokens = trace.composition.tokens_total;
    let mut tripped: Option<(usize, &'static str)> = None;
    for (i, r) in trace.eval.iter().enumerate() {
        if !r.judge.as_ref().is_some_and(|j| !j.replayed && !j.reused) {
            continue;
        }
        cost += r.cost_usd();
        tokens += r.tokens();
        if tripped.is_none() {
            if budget.max_cost_usd.is_some_and(|m| cost > m) {
                tripped = Some((i, "max_cost_usd"));
            } else if budget.max_tokens.is_some_and(|m| tokens > m) {
                tripped = Some((i, "max_tokens"));
            }
        }
    }
    trace.composition.cost_total = cost;
    trace.composition.tokens_total = tokens;
    if let Some((i, cap)) = tripped {
        if trace.eval[i].tripped.is_none() {
            trace.eval[i].tripped = Some(cap.to_owned());
        }
        trip(trace, cap, mode);
    }
}

/// The judge's spend passed `cap`: the run is over budget as a tool call
/// would have made it (`warn` only names the cap).
fn trip(trace: &mut Trace, cap: &str, mode: BudgetMode) {
    if trace.composition.budget_tripped.is_none() {
        trace.composition.budget_tripped = Some(cap.to_owned());
    }
    if mode != BudgetMode::Warn && trace.composition.status != RunStatus::Cancelled {
        trace.composition.status = RunStatus::BudgetExceeded;
    }
}

/// How the run ended by its nodes alone (as the session decides it with no
/// cap tripped).
pub fn status_without_budget(trace: &Trace, comp: &Composition) -> RunStatus {
    let failed = comp.nodes.iter().any(|n| {
        n.on_error != crate::file::model::OnError::Continue
            && trace
                .nodes
                .get(&n.id)
                .is_some_and(|r| r.status == crate::run::trace::NodeStatus::Failed)
    });
    let any_ok = trace
        .nodes
        .values()
        .any(|r| r.status == crate::run::trace::NodeStatus::Ok);
    match (failed, any_ok) {
        (false, _) => RunStatus::Completed,
        (true, true) => RunStatus::Partial,
        (true, false) => RunStatus::Failed,
    }
}
