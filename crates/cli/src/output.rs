//! How runs are printed (`run --format`, `runs show --format`) and
//! exported (`--otlp`, `--otlp-endpoint`).

use pipewright_engine::file::import::FibeLimits;
use std::path::Path;

use clap::ValueEnum;

use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::options::exit;
use pipewright_engine::run::store;
use pipewright_engine::run::trace::{RunStatus, Trace};

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
    pipeline: Option<(&Pipeline, &str, Dialect, FibeLimits)>,
) {
    match format {
        Format::Text => print_text(traces),
        Format::Json => {
            // Results as the servers sent them; streamed to stdout.
            let shown: Vec<Trace> = traces.iter().map(Trace::as_sent).collect();
            match shown.as_slice() {
                [one] => crate::json::print_pretty(one),
                all => crate::json::print_pretty(all),
            }
        }
        Format::Junit => print!("{}", junit(file, traces)),
        Format::Fibe | Format::Discord => {
            let fibe = format == Format::Fibe;
            match pipeline {
                Some((p, source, dialect, limits)) => {
                    super::formats::print_run(traces, p, (source, dialect, limits), fibe);
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
    let body = pipewright_engine::run::otlp::export(traces);
    let text = crate::json::pretty(&body);
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
            for line in pipewright_engine::run::durable::attempt_lines(&d.attempts) {
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
            for line in pipewright_engine::eval::text::row_lines(row) {
                println!("{}", printable(&line));
            }
        }
        if let Some(hint) = pipewright_engine::eval::text::deferred_hint(&t.eval) {
            println!("{hint}");
        }
        let last_of_comp = traces
            .get(i + 1)
            .is_none_or(|n| n.composition.name != t.composition.name);
        if last_of_comp {
            for line in pipewright_engine::eval::text::aggregate_lines(
                &t.composition.name,
                &t.eval_aggregate,
            ) {
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

pub use pipewright_engine::eval::aggregate_cases;

pub(crate) use pipewright_engine::diag::printable;
pub use pipewright_engine::eval::junit::junit;
