//! How judged metrics are reported beyond their text lines
//! ([`crate::engine::eval::text`]): the aggregate over a composition's
//! cases, and the JUnit test cases and properties. The judge's words are
//! untrusted text: XML goes through `xml_escape`.

use crate::engine::run::trace::Trace;
use crate::engine::run::trace::eval::{EvalRow, EvalStatus, aggregate};

fn cut(s: &str, max: usize) -> String {
    crate::engine::eval::client::cut(&s.replace(['\n', '\r'], " "), max)
}

/// Gives every trace of a composition that ran several cases the
/// aggregate of its metrics over them.
pub fn aggregate_cases(traces: &mut [Trace]) {
    let mut names: Vec<String> = Vec::new();
    for t in traces.iter() {
        if !names.contains(&t.composition.name) {
            names.push(t.composition.name.clone());
        }
    }
    for name in names {
        let of = |t: &Trace| t.composition.name == name && t.composition.case.is_some();
        let cases = traces.iter().filter(|t| of(t)).count();
        if cases < 2 {
            continue;
        }
        let agg = aggregate(traces.iter().filter(|t| of(t)).map(|t| t.eval.as_slice()));
        for t in traces.iter_mut().filter(|t| of(t)) {
            t.eval_aggregate.clone_from(&agg);
        }
    }
}

/// A row as a JUnit test case.
pub fn junit_case(file: &str, label: &str, row: &EvalRow) -> String {
    use super::output::xml_escape;
    let head = format!(
        "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">",
        xml_escape(file),
        xml_escape(&format!("{label} eval {}", row.metric)),
        row.judge
            .as_ref()
            .map_or(0.0, |j| j.duration_ms as f64 / 1000.0)
    );
    let score = row.score.map(|s| format!("{s:.2}")).unwrap_or_default();
    let threshold = row.threshold.unwrap_or_default();
    let body = match row.status {
        EvalStatus::Pass => format!(
            "\n      <system-out>{}</system-out>\n    ",
            xml_escape(&format!(
                "score {score} ≥ {threshold:.2}: {}",
                row.reasoning
            ))
        ),
        EvalStatus::Fail => format!(
            "\n      <failure message=\"{}\">{}</failure>\n    ",
            xml_escape(&format!("score {score} < {threshold:.2}")),
            xml_escape(&row.reasoning)
        ),
        EvalStatus::Error => format!(
            "\n      <error message=\"{}\"/>\n    ",
            xml_escape(&cut(&row.reason, 1000))
        ),
        EvalStatus::Deferred => format!(
            "\n      <skipped message=\"{}\"/>\n    ",
            xml_escape(&row.reason)
        ),
    };
    format!("{head}{body}</testcase>\n")
}

/// The aggregates as suite properties (`eval.COMPOSITION.METRIC.mean` …).
pub fn junit_properties(traces: &[Trace]) -> String {
    use super::output::xml_escape;
    let mut seen: Vec<&str> = Vec::new();
    let mut props = Vec::new();
    for t in traces {
        if t.eval_aggregate.is_empty() || seen.contains(&t.composition.name.as_str()) {
            continue;
        }
        seen.push(&t.composition.name);
        for a in &t.eval_aggregate {
            let key = |what: &str| format!("eval.{}.{}.{what}", t.composition.name, a.metric);
            if let (Some(mean), Some(min)) = (a.mean, a.min) {
                props.push((key("mean"), format!("{mean:.4}")));
                props.push((key("min"), format!("{min:.4}")));
            }
            props.push((key("cases"), a.cases.to_string()));
        }
    }
    if props.is_empty() {
        return String::new();
    }
    let mut out = String::from("    <properties>\n");
    for (k, v) in props {
        out.push_str(&format!(
            "      <property name=\"{}\" value=\"{}\"/>\n",
            xml_escape(&k),
            xml_escape(&v)
        ));
    }
    out.push_str("    </properties>\n");
    out
}
