//! What the judged `eval:` metrics left in a trace: one row per metric
//! (its verdict, score and threshold, the judge's reasoning, the parts
//! pipewright decided itself and the parts the judge gave, and the
//! judgement's model, prompt version, tokens and cost), and the aggregate
//! over a composition's cases that reports print.

use serde::{Deserialize, Serialize};

/// What became of one metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum EvalStatus {
    /// Scored at or above its threshold.
    Pass,
    /// Scored below its threshold: the run fails.
    Fail,
    /// Could not be scored (the judge failed, refused, answered something
    /// unreadable, or the budget stopped it): the run fails.
    Error,
    /// Not judged: no judge is configured (or `--no-judge`); never fails a
    /// run.
    #[default]
    Deferred,
}

impl EvalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EvalStatus::Pass => "pass",
            EvalStatus::Fail => "fail",
            EvalStatus::Error => "error",
            EvalStatus::Deferred => "deferred",
        }
    }
}

/// Who decided a part of a score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum By {
    /// The LLM judge.
    #[default]
    Judge,
    /// pipewright, without a model (a schema check, a list of tools).
    Pipewright,
}

/// One judged metric of `eval:` and what became of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct EvalRow {
    pub metric: String,
    pub status: EvalStatus,
    /// Why the row is `deferred` or an `error`; empty otherwise.
    pub reason: String,
    /// The score, 0 to 1 (none when deferred or an error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The judge's reasoning for the whole metric.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
    /// How the score is made: each part, who gave it and its weight.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<EvalPart>,
    /// The evidence: each criterion, question, call or expected tool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<EvalItem>,
    /// The judge call behind the row, if one was made (or replayed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<Judgement>,
    /// The budget cap this row's judge call tripped (the run is then over
    /// budget because of judging).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tripped: Option<String>,
}

impl EvalRow {
    /// A row not judged, saying why.
    pub fn deferred(metric: &str) -> Self {
        EvalRow::deferred_because(metric, "no judge provider is configured".to_owned())
    }

    /// A row not judged, for `reason`.
    pub fn deferred_because(metric: &str, reason: String) -> Self {
        EvalRow {
            metric: metric.to_owned(),
            status: EvalStatus::Deferred,
            reason,
            ..EvalRow::default()
        }
    }

    /// A row that could not be scored, for `reason`.
    pub fn error(metric: &str, threshold: f64, reason: String) -> Self {
        EvalRow {
            metric: metric.to_owned(),
            status: EvalStatus::Error,
            reason,
            threshold: Some(threshold),
            ..EvalRow::default()
        }
    }

    /// False when the row fails its run (a score under its threshold, or
    /// an error).
    pub fn holds(&self) -> bool {
        matches!(self.status, EvalStatus::Pass | EvalStatus::Deferred)
    }

    /// What the judge call cost (0 when none was made, or it was replayed).
    pub fn cost_usd(&self) -> f64 {
        self.judge.as_ref().map_or(0.0, |j| j.cost_usd)
    }

    /// The tokens the judge call used.
    pub fn tokens(&self) -> u64 {
        self.judge
            .as_ref()
            .map_or(0, |j| j.input_tokens + j.output_tokens)
    }
}

/// A part of a score: who gave it, and how much it weighs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct EvalPart {
    /// What the part measures, e.g. `tools named in expect`.
    pub name: String,
    pub by: By,
    pub score: f64,
    pub weight: f64,
}

/// One piece of evidence: a criterion, a question and its answer, a call
/// and its arguments, an expected tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct EvalItem {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// A decision tree's answer to this question.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    pub by: By,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
}

/// One call of the judge, as the trace keeps it (the prompt itself is in
/// the cassette when the run is recorded; `request_sha256` names it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Judgement {
    /// The metric's prompt and its version, e.g. `rubric@1`.
    pub prompt: String,
    /// The model that answered (as the endpoint named it).
    pub model: String,
    /// The endpoint, without its query string.
    pub endpoint: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The endpoint reported no usage: the tokens were counted here (o200k).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tokens_counted: bool,
    /// From the pricing table's `models:` (0 when the model has no price,
    /// and for a replay or a reused answer).
    pub cost_usd: f64,
    pub duration_ms: u64,
    /// How many requests it took (429 and 5xx answers are tried again).
    pub attempts: u32,
    /// Answered from a cassette (`--replay`): free.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
    /// The same prompt was judged earlier in this process (another case):
    /// its answer is reused, free.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reused: bool,
    /// SHA-256 of the request's messages: what a cassette matches on.
    pub request_sha256: String,
}

/// A tool as the judge is shown it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ToolSeen {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Kept for the tools the run called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<serde_json::Value>,
}

/// A metric over every case of a composition, as reports print it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct EvalAggregate {
    pub metric: String,
    /// Cases with a score.
    pub scored: usize,
    pub cases: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    pub threshold: Option<f64>,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub deferred: usize,
}

/// The aggregate of each metric over `rows` (one list of rows per case),
/// in the order the metrics first appear.
pub fn aggregate<'a>(rows: impl IntoIterator<Item = &'a [EvalRow]>) -> Vec<EvalAggregate> {
    let mut out: Vec<EvalAggregate> = Vec::new();
    let mut sums: Vec<f64> = Vec::new();
    for case in rows {
        for r in case {
            let i = match out.iter().position(|a| a.metric == r.metric) {
                Some(i) => i,
                None => {
                    out.push(EvalAggregate {
                        metric: r.metric.clone(),
                        ..EvalAggregate::default()
                    });
                    sums.push(0.0);
                    out.len() - 1
                }
            };
            let a = &mut out[i];
            a.cases += 1;
            if a.threshold.is_none() {
                a.threshold = r.threshold;
            }
            match r.status {
                EvalStatus::Pass => a.passed += 1,
                EvalStatus::Fail => a.failed += 1,
                EvalStatus::Error => a.errors += 1,
                EvalStatus::Deferred => a.deferred += 1,
            }
            if let Some(s) = r.score {
                a.scored += 1;
                sums[i] += s;
                a.min = Some(a.min.map_or(s, |m: f64| m.min(s)));
            }
        }
    }
    for (a, sum) in out.iter_mut().zip(sums) {
        if a.scored > 0 {
            a.mean = Some(sum / a.scored as f64);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(metric: &str, status: EvalStatus, score: Option<f64>) -> EvalRow {
        EvalRow {
            metric: metric.into(),
            status,
            score,
            threshold: Some(0.7),
            ..EvalRow::default()
        }
    }

    #[test]
    fn the_aggregate_is_the_mean_and_minimum_of_the_scored_cases() {
        let a = [
            row("rubric", EvalStatus::Pass, Some(0.9)),
            row("plan_quality", EvalStatus::Pass, Some(1.0)),
        ];
        let b = [
            row("rubric", EvalStatus::Fail, Some(0.5)),
            row("plan_quality", EvalStatus::Error, None),
        ];
        let agg = aggregate([&a[..], &b[..]]);
        assert_eq!(agg.len(), 2);
        assert_eq!(agg[0].metric, "rubric");
        assert!((agg[0].mean.unwrap_or_default() - 0.7).abs() < 1e-9);
        assert_eq!(agg[0].min, Some(0.5));
        assert_eq!((agg[0].passed, agg[0].failed), (1, 1));
        assert_eq!(agg[1].scored, 1);
        assert_eq!(agg[1].errors, 1);
        assert!(!b[0].holds() && !b[1].holds() && a[0].holds());
        assert!(EvalRow::deferred("rubric").holds());
    }
}
