//! A judged metric as text, the same words wherever it is shown: `run`
//! and `runs show` print these lines, the workbench's Results view draws
//! them. `eval rubric 0.82 ≥ 0.70 PASS`, the judge's reasoning, who
//! decided which part, a failed row's items, the judgement's model,
//! prompt, tokens and cost; a deferred row says why. The judge's words are
//! untrusted: a terminal printer passes each line through its filter for
//! control characters.

use crate::run::trace::EvalAggregate;
use crate::run::trace::eval::{By, EvalRow, EvalStatus};

/// Reasoning is shown up to this many characters in the text report.
const SHOWN_REASONING: usize = 400;
/// A failed row lists at most this many of its items.
const SHOWN_ITEMS: usize = 10;

fn cut(s: &str, max: usize) -> String {
    super::client::cut(&s.replace(['\n', '\r'], " "), max)
}

/// The report's lines for one row (indented under its composition).
pub fn row_lines(row: &EvalRow) -> Vec<String> {
    let mut out = Vec::new();
    let threshold = row.threshold.unwrap_or_default();
    match (row.status, row.score) {
        (EvalStatus::Pass, Some(s)) => out.push(format!(
            "  eval {} {s:.2} ≥ {threshold:.2} PASS",
            row.metric
        )),
        (EvalStatus::Fail, Some(s)) => out.push(format!(
            "  eval {} {s:.2} < {threshold:.2} FAIL",
            row.metric
        )),
        (EvalStatus::Error, _) => {
            out.push(format!(
                "  eval {} ERROR: {}",
                row.metric,
                cut(&row.reason, 600)
            ));
        }
        _ => out.push(format!(
            "  eval {} DEFERRED: {}",
            row.metric,
            cut(&row.reason, 300)
        )),
    }
    if !row.reasoning.is_empty() {
        out.push(format!("    {}", cut(&row.reasoning, SHOWN_REASONING)));
    }
    if row.parts.iter().any(|p| p.by == By::Pipewright) {
        let parts: Vec<String> = row
            .parts
            .iter()
            .map(|p| {
                let by = match p.by {
                    By::Judge => "the judge",
                    By::Pipewright => "pipewright",
                };
                format!("{} {:.2} by {by}", p.name, p.score)
            })
            .collect();
        out.push(format!("    parts: {}", parts.join("; ")));
    }
    if row.status == EvalStatus::Fail {
        for item in row.items.iter().take(SHOWN_ITEMS) {
            let mark = match (item.score, &item.answer) {
                (_, Some(a)) => format!("→ {a}"),
                (Some(s), None) => format!("{s:.2}"),
                (None, None) => String::new(),
            };
            let mut line = format!("    · {} {mark}", cut(&item.name, 80));
            if !item.reasoning.is_empty() {
                line.push_str(&format!(": {}", cut(&item.reasoning, 200)));
            }
            out.push(line);
        }
    }
    if let Some(j) = &row.judge {
        let how = match (j.replayed, j.reused) {
            (true, _) => " (replayed from the cassette, free)",
            (_, true) => " (the same prompt judged above, free)",
            _ => "",
        };
        out.push(format!(
            "    judge {} · {} · {} + {} tok · ${:.4}{how}",
            cut(&j.model, 60),
            j.prompt,
            j.input_tokens,
            j.output_tokens,
            j.cost_usd
        ));
    }
    out
}

/// The hint a report prints once under rows deferred for want of a judge.
pub fn deferred_hint(rows: &[EvalRow]) -> Option<String> {
    rows.iter()
        .any(|r| r.status == EvalStatus::Deferred && r.reason == super::provider::NO_JUDGE)
        .then(|| format!("    ({})", super::provider::WHERE_JUDGES_ARE_NAMED))
}

/// The aggregate lines of a composition's cases.
pub fn aggregate_lines(comp: &str, aggregates: &[EvalAggregate]) -> Vec<String> {
    aggregates
        .iter()
        .map(|a| {
            let scores = match (a.mean, a.min) {
                (Some(mean), Some(min)) => format!("mean {mean:.2} · min {min:.2}"),
                _ => "no score".to_owned(),
            };
            let mut counts = vec![format!("{} passed", a.passed)];
            for (n, what) in [
                (a.failed, "failed"),
                (a.errors, "error"),
                (a.deferred, "deferred"),
            ] {
                if n > 0 {
                    counts.push(format!("{n} {what}"));
                }
            }
            format!(
                "eval {comp} {}: {scores} over {} case(s) ({})",
                a.metric,
                a.cases,
                counts.join(", ")
            )
        })
        .collect()
}
