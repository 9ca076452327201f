//! JUnit XML of runs: a test case per composition and case, and one per
//! judged metric; what `run --format junit` prints and the workbench's
//! History exports.

use crate::diag::printable;
use crate::run::store;
use crate::run::trace::eval::EvalRow;
use crate::run::trace::{EvalStatus, RunStatus, Trace};

/// `s` as XML text; control characters (which XML 1.0 forbids, or a
/// terminal would act on) become `?` as in text output.
pub fn xml_escape(s: &str) -> String {
    printable(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// JUnit XML: a test case per composition and case (its run and its
/// expectations), and one per judged metric of each (`… eval rubric`): a
/// metric under its threshold is a failure, one that could not be scored
/// an error, a deferred one skipped. The aggregate of a composition's cases
/// is a property of the suite.
pub fn junit(file: &str, traces: &[Trace]) -> String {
    let ran_ok =
        |t: &Trace| t.composition.status == RunStatus::Completed && t.expect.iter().all(|e| e.pass);
    let rows = || traces.iter().flat_map(|t| t.eval.iter());
    let failures = traces.iter().filter(|t| !ran_ok(t)).count()
        + rows().filter(|r| r.status == EvalStatus::Fail).count();
    let errors = rows().filter(|r| r.status == EvalStatus::Error).count();
    let skipped = rows().filter(|r| r.status == EvalStatus::Deferred).count();
    let secs: f64 = traces
        .iter()
        .map(|t| t.composition.duration_ms as f64 / 1000.0)
        .sum();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{secs:.3}\">\n",
        xml_escape(file),
        traces.len() + rows().count()
    );
    out.push_str(&junit_properties(traces));
    for t in traces {
        out.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">",
            xml_escape(file),
            xml_escape(&store::label(t)),
            t.composition.duration_ms as f64 / 1000.0
        ));
        if !ran_ok(t) {
            let mut msg = format!("status {}", t.composition.status.as_str());
            if let Some(step) = &t.failed_step {
                msg.push_str(&format!(" at {step}"));
            }
            let details: Vec<String> = t
                .expect
                .iter()
                .filter(|e| !e.pass)
                .map(|e| format!("expect {} {} (actual {})", e.target, e.matcher, e.actual))
                .collect();
            out.push_str(&format!(
                "\n      <failure message=\"{}\">{}</failure>\n    ",
                xml_escape(&msg),
                xml_escape(&details.join("\n"))
            ));
        }
        out.push_str("</testcase>\n");
        for row in &t.eval {
            out.push_str(&junit_case(file, &store::label(t), row));
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// A row as a JUnit test case.
pub fn junit_case(file: &str, label: &str, row: &EvalRow) -> String {
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
            xml_escape(&crate::eval::client::cut(&row.reason, 1000))
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
