//! What changed in the judged metrics between two runs: each metric's
//! verdict, score (to four places), threshold, and the model and prompt
//! that judged it; a metric graded in one run only is added or removed.

use serde_json::Value;

use crate::run::trace::{EvalRow, Trace};

/// One difference: its path, the value before and after (`null` when the
/// place did not exist on that side).
pub type Diff = (String, Value, Value);

/// A score as compared and shown: four decimal places.
fn rounded(s: Option<f64>) -> Value {
    s.map_or(Value::Null, |s| {
        Value::from((s * 10_000.0).round() / 10_000.0)
    })
}

fn fields(r: &EvalRow) -> [(&'static str, Value); 5] {
    [
        ("status", Value::from(r.status.as_str())),
        ("score", rounded(r.score)),
        ("threshold", rounded(r.threshold)),
        (
            "model",
            r.judge
                .as_ref()
                .map_or(Value::Null, |j| Value::from(j.model.as_str())),
        ),
        (
            "prompt",
            r.judge
                .as_ref()
                .map_or(Value::Null, |j| Value::from(j.prompt.as_str())),
        ),
    ]
}

/// Appends the differences of `a`'s and `b`'s `eval` rows to `out`.
pub fn changes(out: &mut Vec<Diff>, a: &Trace, b: &Trace) {
    for ra in &a.eval {
        let path = format!("eval.{}", ra.metric);
        match b.eval.iter().find(|r| r.metric == ra.metric) {
            None => out.push((path, Value::from(ra.status.as_str()), Value::Null)),
            Some(rb) => {
                for ((field, x), (_, y)) in fields(ra).into_iter().zip(fields(rb)) {
                    if x != y {
                        out.push((format!("{path}.{field}"), x, y));
                    }
                }
            }
        }
    }
    for rb in b
        .eval
        .iter()
        .filter(|r| !a.eval.iter().any(|x| x.metric == r.metric))
    {
        out.push((
            format!("eval.{}", rb.metric),
            Value::Null,
            Value::from(rb.status.as_str()),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::trace::EvalStatus;

    fn run(rows: Vec<EvalRow>) -> Trace {
        Trace {
            eval: rows,
            ..Trace::default()
        }
    }

    fn row(metric: &str, status: EvalStatus, score: f64) -> EvalRow {
        EvalRow {
            metric: metric.into(),
            status,
            score: Some(score),
            threshold: Some(0.7),
            ..EvalRow::default()
        }
    }

    #[test]
    fn score_and_verdict_changes_are_listed_by_metric() {
        let a = run(vec![
            row("rubric", EvalStatus::Pass, 0.82),
            row("mcp_use", EvalStatus::Pass, 1.0),
        ]);
        let b = run(vec![
            row("rubric", EvalStatus::Fail, 0.6400000001),
            row("plan_quality", EvalStatus::Pass, 0.9),
        ]);
        let mut out = Vec::new();
        changes(&mut out, &a, &b);
        let paths: Vec<&str> = out.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(
            paths,
            [
                "eval.rubric.status",
                "eval.rubric.score",
                "eval.mcp_use",
                "eval.plan_quality"
            ]
        );
        assert_eq!(out[1].1, Value::from(0.82));
        assert_eq!(out[1].2, Value::from(0.64));
        let mut same = Vec::new();
        changes(&mut same, &a, &a);
        assert!(same.is_empty());
    }
}
