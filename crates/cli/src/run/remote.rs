//! `run FILE --on restate://HOST:PORT` and `runs attach ID`: a durable run
//! submitted to Restate and followed to its end.
//!
//! The run goes to Restate's ingress as a `Pipewright` workflow keyed by a
//! new run id; a worker (`pipewright worker`) runs it. The client follows
//! the run's journal through Restate's admin SQL API (one line per call
//! outcome, one per worker that picked the run up), waits for the
//! workflow's output — the trace — and reports it as a local run is
//! reported: same formats, same history, same exit codes. The client can
//! die without the run noticing; `runs attach ID` follows it again.

use serde_json::Value;

use pipewright_engine::file::model::Pipeline;
use pipewright_engine::options::exit;
use pipewright_engine::run::durable::Entry;
pub use pipewright_engine::run::durable::client::{
    Failure, Journal, Restate, RunRequest, attach, file_hash, start, ticker, valid_id,
};
use pipewright_engine::run::store;
use pipewright_engine::run::trace::RunStatus;

/// What `run --on` submits, after the file was checked.
pub struct Submission<'a> {
    pub file: &'a str,
    pub source: &'a str,
    pub pipeline: &'a Pipeline,
    pub tool: String,
    pub args: serde_json::Map<String, Value>,
}

/// How the report goes out.
pub struct Report<'a> {
    pub format: crate::output::Format,
    pub save: bool,
    pub otlp: Option<&'a std::path::Path>,
    pub otlp_endpoint: Option<&'a str>,
    /// Fibe's caps, to show the run in the file's own steps.
    pub fibe: pipewright_engine::file::import::FibeLimits,
    /// Where runs are kept and `PIPEWRIGHT_MAX_RUNS`, as the driver's
    /// settings give them.
    pub data_dir: Option<&'a std::path::Path>,
    pub max_runs: Option<usize>,
}

/// The exit code of a run that could not be followed to its trace.
fn code_of(f: Failure) -> u8 {
    match f {
        Failure::Unreachable => exit::UNREACHABLE,
        Failure::Refused => exit::INVALID,
        Failure::Failed => exit::FAILED,
    }
}

/// Submits the run and follows it; returns the exit code.
pub async fn submit(r: &Restate, s: Submission<'_>, report: Report<'_>) -> u8 {
    let req = RunRequest {
        tool: s.tool.clone(),
        args: s.args,
        file_sha256: file_hash(s.source.as_bytes()),
    };
    let (id, invocation) = match start(r, &req).await {
        Ok(started) => started,
        Err((failure, sentence)) => {
            eprintln!("error: {sentence}");
            return code_of(failure);
        }
    };
    eprintln!(
        "run {id} on {}: follow it again with `pipewright runs attach {id} --on {}`",
        r.on, r.on
    );
    follow(
        r,
        &id,
        invocation,
        Some((s.file, s.source, s.pipeline)),
        report,
    )
    .await
}

/// Follows run `id` to its end and reports it; returns the exit code.
pub async fn follow(
    r: &Restate,
    id: &str,
    invocation: Option<String>,
    file: Option<(&str, &str, &Pipeline)>,
    report: Report<'_>,
) -> u8 {
    let mut signals = pipewright_headless::Signals::listen();
    // Progress lines go with the text report, as `run` prints them.
    let progress = report.format == crate::output::Format::Text;
    let mut journal = Some(Journal {
        invocation,
        next: 0,
    });
    type Poll<'a> =
        std::pin::Pin<Box<dyn std::future::Future<Output = (Journal, Vec<Entry>)> + Send + 'a>>;
    let mut polling: Option<Poll<'_>> = None;
    let mut polled = false;
    let mut tick = ticker();
    let output = attach(r, id);
    tokio::pin!(output);
    let got = loop {
        tokio::select! {
            got = &mut output => break got,
            _ = tick.tick(), if progress && polling.is_none() => {
                if let Some(mut j) = journal.take() {
                    polling = Some(Box::pin(async move {
                        let e = j.poll(r, id).await;
                        (j, e)
                    }));
                }
            }
            (j, e) = async {
                match polling.as_mut() {
                    Some(p) => p.await,
                    None => std::future::pending().await,
                }
            }, if polling.is_some() => {
                polling = None;
                polled = true;
                show(e, id, &r.on);
                journal = Some(j);
            }
            stop = signals.next() => {
                eprintln!(
                    "\nstopped following: run {id} goes on in Restate; follow it again with `pipewright runs attach {id} --on {}`",
                    r.on
                );
                return stop.code();
            }
        }
    };
    // A run that outlived the first tick showed lines: the last calls' lines
    // follow. A shorter one goes straight to its report (a journal query
    // costs tens of milliseconds).
    if progress && polled {
        // The lines of the last calls, if no poll had seen them.
        let j = match polling.take() {
            Some(p) => {
                let (j, e) = p.await;
                show(e, id, &r.on);
                Some(j)
            }
            None => journal.take(),
        };
        if let Some(mut j) = j {
            show(j.poll(r, id).await, id, &r.on);
        }
    }
    let mut trace = match got {
        Ok(t) => t,
        Err((failure, sentence)) => {
            eprintln!("error: run {id}: {sentence}");
            return code_of(failure);
        }
    };
    trace.run_id = id.to_owned();
    if let Some(d) = trace.durable.as_mut() {
        d.restate = r.on.clone();
    }
    let name = file.map_or_else(|| trace.file.clone(), |f| f.0.to_owned());
    if report.save {
        match file {
            Some((_, source, p)) => pipewright_headless::keep(
                &trace,
                Some(&store::KeptSource::of(source, p)),
                report.data_dir,
                report.max_runs,
            ),
            None => pipewright_headless::keep(&trace, None, report.data_dir, report.max_runs),
        }
    }
    let traces = [trace];
    crate::output::print(
        report.format,
        &traces,
        &name,
        file.map(|(_, source, p)| {
            (
                p,
                source,
                pipewright_engine::file::import::Dialect::Auto,
                report.fibe,
            )
        }),
    );
    if let Some(code) = crate::output::export_otlp(&traces, report.otlp, report.otlp_endpoint).await
    {
        return code;
    }
    let t = &traces[0];
    match t.composition.status {
        RunStatus::Cancelled => exit::CANCELLED,
        RunStatus::BudgetExceeded => exit::BUDGET,
        _ if t.passed() => exit::OK,
        _ => exit::FAILED,
    }
}

/// Prints journal entries as `run` prints finished nodes.
fn show(entries: Vec<Entry>, id: &str, on: &str) {
    for e in entries {
        match e {
            Entry::Question { question: q } => {
                let what = match q.request["message"].as_str() {
                    Some(m) => format!(": {}", pipewright_engine::diag::printable(m)),
                    None => String::new(),
                };
                eprintln!(
                    "? {} · {} asks ({}){what}\n  the run waits for an answer: `pipewright runs answer {id} --on {on}`",
                    q.node.as_deref().unwrap_or("-"),
                    pipewright_engine::diag::printable(&q.server),
                    q.kind,
                );
            }
            Entry::Attempt(a) => eprintln!("↻ {} picked the run up at {}", a.worker, a.at),
            Entry::Calls { calls, .. } => {
                for c in calls {
                    let mark = match &c.outcome {
                        Ok(o) if !o.is_error => "✓",
                        _ => "✗",
                    };
                    let ms = c.outcome.as_ref().map_or(0, |o| o.duration_ms);
                    eprintln!(
                        "{mark} {} · {} · {ms}ms · journaled by {}",
                        c.node.as_deref().unwrap_or("-"),
                        c.tool,
                        c.worker
                    );
                }
            }
        }
    }
}
