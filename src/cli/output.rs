//! How runs are printed (`run --format`, `runs show --format`) and
//! exported (`--otlp`, `--otlp-endpoint`).

use std::path::Path;

use clap::ValueEnum;

use crate::engine::file::import::Dialect;
use crate::engine::file::model::Pipeline;
use crate::engine::run::store;
use crate::engine::run::trace::eval::EvalRow;
use crate::engine::run::trace::{EvalStatus, RunStatus, Trace};
use crate::options::exit;

/// Output formats of `run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A human report (progress goes to stderr).
    Text,
    /// The trace envelope (an array when several compositions or cases ran).
    Json,
    /// JUnit XML, one test case per composition and case.
    Junit,
    /// The result envelope of Fibe's `fibe_pipeline` meta-tool.
    Fibe,
    /// The result envelope of Discord MCP's `mcp_pipeline` meta-tool.
    Discord,
}

/// Prints `traces` in `format`. The Fibe and Discord envelopes use the
/// pipeline (and its source text and dialect) to name steps as the file
/// does; without it, each node is a step.
pub fn print(
    format: Format,
    traces: &[Trace],
    file: &str,
    pipeline: Option<(&Pipeline, &str, Dialect)>,
) {
    match format {
        Format::Text => print_text(traces),
        Format::Json => {
            // Results as the servers sent them; streamed to stdout.
            let shown: Vec<Trace> = traces.iter().map(Trace::as_sent).collect();
            match shown.as_slice() {
                [one] => crate::cli::json::print_pretty(one),
                all => crate::cli::json::print_pretty(all),
            }
        }
        Format::Junit => print!("{}", junit(file, traces)),
        Format::Fibe | Format::Discord => {
            let fibe = format == Format::Fibe;
            match pipeline {
                Some((p, source, dialect)) => {
                    super::formats::print_run(traces, p, source, dialect, fibe);
                }
                None => {
                    let shapes: Vec<super::formats::Shape> =
                        traces.iter().map(super::formats::Shape::of_trace).collect();
                    let envelope = if fibe {
                        super::formats::fibe
                    } else {
                        super::formats::discord
                    };
                    super::formats::print(traces, &shapes, envelope);
                }
            }
        }
    }
}

/// Writes the OTLP/JSON export of `traces` to `file` and/or POSTs it to an
/// OTLP/HTTP collector at `endpoint` (`…/v1/traces`). `Some(code)` when
/// that failed (the reason printed).
pub async fn export_otlp(
    traces: &[Trace],
    file: Option<&Path>,
    endpoint: Option<&str>,
) -> Option<u8> {
    if file.is_none() && endpoint.is_none() {
        return None;
    }
    let body = crate::engine::run::otlp::export(traces);
    let text = crate::cli::json::pretty(&body);
    if let Some(path) = file {
        let written = if path == Path::new("-") {
            println!("{text}");
            Ok(())
        } else {
            std::fs::write(path, &text)
        };
        if let Err(e) = written {
            eprintln!(
                "error: cannot write the OTLP export to {}: {e}",
                path.display()
            );
            return Some(exit::INVALID);
        }
    }
    if let Some(url) = endpoint {
        let sent = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(text)
            .send()
            .await;
        match sent {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => {
                eprintln!("error: the OTLP collector at {url} answered {}", r.status());
                return Some(exit::FAILED);
            }
            Err(e) => {
                eprintln!("error: cannot reach the OTLP collector at {url}: {e}");
                return Some(exit::UNREACHABLE);
            }
        }
    }
    None
}

pub fn print_text(traces: &[Trace]) {
    let mut passed = 0;
    for (i, t) in traces.iter().enumerate() {
        let ok = t.passed();
        passed += usize::from(ok);
        println!(
            "composition [{}] {}",
            if ok { "PASS" } else { "FAIL" },
            printable(&store::label(t))
        );
        let c = &t.composition;
        println!(
            "  spent ${:.4} · {} tok · context: output {} tok (every node's output: {} tok)",
            c.cost_total, c.tokens_total, c.output_tokens, c.output_tokens_all
        );
        println!("  run {}", t.run_id);
        if let Some(d) = &t.durable {
            println!("  durable on {}", d.restate);
            for line in crate::engine::run::durable::attempt_lines(&d.attempts) {
                println!("    {}", printable(&line));
            }
        }
        if t.composition.status != RunStatus::Completed {
            let why = match (&t.failed_step, &t.composition.budget_tripped) {
                (_, Some(cap)) => format!(" (budget `{cap}`)"),
                (Some(step), _) => {
                    let err = t
                        .nodes
                        .get(step)
                        .and_then(|n| n.error.clone())
                        .unwrap_or_default();
                    format!(" at `{step}`: {err}")
                }
                _ => String::new(),
            };
            println!(
                "  status {}{}",
                t.composition.status.as_str(),
                printable(&why)
            );
        }
        for e in t.expect.iter().filter(|e| !e.pass) {
            let msg = e
                .message
                .clone()
                .unwrap_or_else(|| format!("actual {}", e.actual));
            println!("  expect {} {}: {}", e.target, e.matcher, printable(&msg));
        }
        for c in &t.compensations {
            match &c.error {
                None => println!("  compensated {} ({})", c.node, c.tool),
                Some(e) => println!(
                    "  compensation of {} ({}) failed: {}",
                    c.node,
                    c.tool,
                    printable(e)
                ),
            }
        }
        for row in &t.eval {
            for line in crate::engine::eval::text::row_lines(row) {
                println!("{}", printable(&line));
            }
        }
        if let Some(hint) = crate::engine::eval::text::deferred_hint(&t.eval) {
            println!("{hint}");
        }
        let last_of_comp = traces
            .get(i + 1)
            .is_none_or(|n| n.composition.name != t.composition.name);
        if last_of_comp {
            for line in
                crate::engine::eval::text::aggregate_lines(&t.composition.name, &t.eval_aggregate)
            {
                println!("{}", printable(&line));
            }
        }
    }
    println!(
        "ran {} composition(s): {passed} passed, {} failed",
        traces.len(),
        traces.len() - passed
    );
}

pub use crate::engine::eval::aggregate_cases;

/// `s` as XML text; control characters (which XML 1.0 forbids, or a
/// terminal would act on) become `?` as in text output.
pub(crate) fn xml_escape(s: &str) -> String {
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
            xml_escape(&crate::engine::eval::client::cut(&row.reason, 1000))
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

/// Text from a server (names, descriptions, results, errors) made safe to
/// print on a terminal: control characters (escape sequences, carriage
/// returns, bells) are shown as `?`, so a server cannot change the title,
/// clear the screen, hide a link or overwrite a line. New lines and tabs
/// stay.
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.contains(bad) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.chars().map(|c| if bad(c) { '?' } else { c }).collect())
}
