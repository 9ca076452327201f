//! `pipewright runs list|show|diff|export|prune`: the saved runs, read back.

use pipewright_engine::settings::Settings;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use serde_json::json;

use super::output::{Format, print};
use super::report::usage;
use pipewright_engine::options::exit;
use pipewright_engine::run::diff;
use pipewright_engine::run::store::{Entry, Runs};
use pipewright_engine::run::trace::Trace;

mod answer;

/// The `runs` subcommands.
#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List saved runs, newest first.
    List(ListArgs),
    /// Print a saved run as `run` printed it.
    Show(ShowArgs),
    /// What changed between two runs, node by node, and the lines of the
    /// file text each ran (exit 0 same run, 1 different, 2 bad id).
    Diff(DiffArgs),
    /// Export a saved run as OpenTelemetry traces (OTLP/JSON) or as a
    /// cassette that `run --replay` answers its calls from.
    Export(ExportArgs),
    /// Remove old runs (runs open in a workbench are kept).
    Prune(PruneArgs),
    /// Follow a durable run (`run --on restate://…`) to its end and report
    /// it as `run` does: after the client that submitted it died, say.
    Attach(AttachArgs),
    /// Answer a question a durable run waits on (from any terminal).
    Answer(answer::AnswerArgs),
}

/// Text or JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    Text,
    Json,
}

/// Arguments of `runs list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only runs of this pipeline file.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Only runs that ended so: completed, partial, failed,
    /// budget_exceeded, cancelled, interrupted (the process died).
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// At most N runs.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub limit: usize,
    /// A table, or the index entries as JSON.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

/// Arguments of `runs show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A run id, a unique prefix of one, `latest` or `latest~N`.
    pub id: String,
    /// As `run --format` prints: text, json, junit, fibe or discord.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
}

/// Arguments of `runs diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier run.
    pub a: String,
    /// The later run.
    pub b: String,
    /// Count differences in duration too.
    #[arg(long)]
    pub timing: bool,
    /// Lines per change, or `{a, b, same, changes}` as JSON.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    pub format: ListFormat,
}

/// Arguments of `runs export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run id, a unique prefix of one, `latest` or `latest~N`.
    pub id: String,
    /// Write OTLP/JSON here (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub otlp: Option<PathBuf>,
    /// POST the OTLP/JSON export to a collector, e.g.
    /// `http://127.0.0.1:4318/v1/traces`.
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// Write the run's calls as a cassette for `run --replay` (to --out,
    /// else `RUN-ID.cassette.json`).
    #[arg(long, conflicts_with_all = ["otlp", "otlp_endpoint"])]
    pub cassette: bool,
    /// Where --cassette writes.
    #[arg(long, value_name = "FILE", requires = "cassette")]
    pub out: Option<PathBuf>,
}

/// Arguments of `runs attach`.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The run id `run --on` printed.
    pub id: String,
    /// Restate's ingress, as given to `run --on`.
    #[arg(long, value_name = "restate://HOST:PORT")]
    pub on: String,
    /// Restate's admin API (default port 9070 of the --on host).
    #[arg(long, value_name = "URL", env = "PIPEWRIGHT_RESTATE_ADMIN")]
    pub restate_admin: Option<String>,
    /// As `run --format` prints: text, json, junit, fibe or discord.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Do not save the run in history.
    #[arg(long)]
    pub no_save: bool,
}

/// Arguments of `runs prune`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).multiple(true)))]
pub struct PruneArgs {
    /// Keep the newest N runs.
    #[arg(long, value_name = "N", group = "what")]
    pub keep: Option<usize>,
    /// Remove runs older than this (`30d`, `12h`, `90m`).
    #[arg(long, value_name = "AGE", group = "what")]
    pub older_than: Option<String>,
}

/// Runs a `runs` subcommand; returns the exit code.
pub async fn runs(cmd: RunsCommand, settings: &Settings) -> u8 {
    let Some(runs) = Runs::open(settings.data_dir.as_deref()) else {
        return usage("no user data directory (set PIPEWRIGHT_DATA_DIR)");
    };
    match cmd {
        RunsCommand::List(a) => list(&runs, &a),
        RunsCommand::Show(a) => match load(&runs, &a.id) {
            Ok((_, t)) => {
                let pipeline = pipewright_engine::file::open::load_file_with(
                    std::path::Path::new(&t.file),
                    pipewright_engine::file::import::Dialect::Auto,
                    &settings.load_options(Vec::new()),
                );
                let valid = pipeline
                    .1
                    .pipeline
                    .as_ref()
                    .filter(|_| !pipeline.1.has_errors());
                let shaped = valid.map(|p| {
                    (
                        p,
                        pipeline.0.as_str(),
                        pipewright_engine::file::import::Dialect::Auto,
                        settings.fibe,
                    )
                });
                print(a.format, std::slice::from_ref(&t), &t.file, shaped);
                exit::OK
            }
            Err(code) => code,
        },
        RunsCommand::Diff(a) => diff_runs(&runs, &a),
        RunsCommand::Export(a) if a.cassette => match load(&runs, &a.id) {
            Ok((e, t)) => export_cassette(
                &t,
                a.out
                    .unwrap_or_else(|| PathBuf::from(format!("{}.cassette.json", e.id))),
            ),
            Err(code) => code,
        },
        RunsCommand::Export(a) => {
            if a.otlp.is_none() && a.otlp_endpoint.is_none() {
                return usage(
                    "say where the export goes: --otlp FILE and/or --otlp-endpoint URL, or --cassette",
                );
            }
            match load(&runs, &a.id) {
                Ok((_, t)) => super::output::export_otlp(
                    std::slice::from_ref(&t),
                    a.otlp.as_deref(),
                    a.otlp_endpoint.as_deref(),
                )
                .await
                .unwrap_or(exit::OK),
                Err(code) => code,
            }
        }
        RunsCommand::Prune(a) => prune(&runs, &a),
        RunsCommand::Attach(a) => attach(&a, settings).await,
        RunsCommand::Answer(a) => answer::answer(&a).await,
    }
}

/// `runs export --cassette`: writes the run's calls to `path`.
fn export_cassette(t: &Trace, path: PathBuf) -> u8 {
    let c = pipewright_engine::run::cassette::export::from_trace(t);
    match c.save(&path) {
        Ok(()) => {
            eprintln!(
                "wrote {} call(s) of run {} to {}",
                c.calls.len(),
                t.run_id,
                super::output::printable(&path.display().to_string())
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("error: {}", super::output::printable(&e.to_string()));
            exit::INVALID
        }
    }
}

/// The run `spec` names, read back; errors quote the id as typed, so they
/// are printed with its control characters shown as `?`.
fn load(runs: &Runs, spec: &str) -> Result<(Entry, Trace), u8> {
    let fail = |e: String| {
        eprintln!("error: {}", super::output::printable(&e));
        exit::INVALID
    };
    let entry = runs.find(spec).map_err(fail)?;
    let trace = runs.load(&entry).map_err(fail)?;
    Ok((entry, trace))
}

/// `runs attach`: follows a durable run, reports it, saves it.
async fn attach(a: &AttachArgs, settings: &Settings) -> u8 {
    use super::run::remote;
    if !remote::valid_id(&a.id) {
        return usage(format!(
            "`{}` is not a run id (letters, digits and `-`, as `run --on` prints it)",
            a.id
        ));
    }
    let r = match remote::Restate::parse(&a.on, a.restate_admin.as_deref()) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    let report = remote::Report {
        format: a.format,
        save: !a.no_save,
        otlp: None,
        otlp_endpoint: None,
        // No file is shown in the file's own steps here.
        fibe: Default::default(),
        data_dir: settings.data_dir.as_deref(),
        max_runs: settings.max_runs,
    };
    remote::follow(&r, &a.id, None, None, report).await
}

fn list(runs: &Runs, a: &ListArgs) -> u8 {
    let rows: Vec<Entry> = runs
        .entries()
        .into_iter()
        .rev()
        .filter(|e| a.file.as_ref().is_none_or(|f| e.is_of(f)))
        .filter(|e| a.status.as_ref().is_none_or(|s| &e.status == s))
        .take(a.limit)
        .collect();
    if a.format == ListFormat::Json {
        println!("{}", crate::json::pretty(&rows));
        return exit::OK;
    }
    if rows.is_empty() {
        println!("no saved runs");
        return exit::OK;
    }
    // A durable run's id (…-<16 hex>) is longer than a local one's: the
    // column is as wide as the longest shown.
    let id_w = rows
        .iter()
        .map(|e| e.id.chars().count())
        .max()
        .unwrap_or(0)
        .max(20);
    println!(
        "{:<id_w$}  {:<19}  {:<24}  {:<20}  {:<15}  {:>8}  {:>8}  {:>6}  failed",
        "id", "time (UTC)", "file", "composition", "status", "duration", "cost", "tokens"
    );
    for e in &rows {
        let (time, comp) = (e.time(), e.label());
        // The index is a file anyone could have written: its names are
        // printed as text from a server is.
        let row = format!(
            "{:<id_w$}  {:<19}  {:<24}  {:<20}  {:<15}  {:>8}  {:>8}  {:>6}  {}",
            e.id,
            time,
            cut(&e.file, 24),
            cut(&comp, 20),
            e.status,
            format!("{}ms", e.duration_ms),
            format!("${:.4}", e.cost_usd),
            e.tokens,
            e.failed_step.as_deref().unwrap_or("")
        );
        println!("{}", super::output::printable(&row));
    }
    exit::OK
}

/// `s` in at most `n` characters, cut at the front (paths end with what
/// tells them apart).
fn cut(s: &str, n: usize) -> String {
    let len = s.chars().count();
    if len <= n {
        s.to_owned()
    } else {
        format!("…{}", s.chars().skip(len - n + 1).collect::<String>())
    }
}

fn diff_runs(runs: &Runs, a: &DiffArgs) -> u8 {
    let (ea, ta) = match load(runs, &a.a) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let (eb, tb) = match load(runs, &a.b) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let changes = diff::diff(&ta, &tb, a.timing);
    let (sa, sb) = (runs.source(&ea), runs.source(&eb));
    if a.format == ListFormat::Json {
        let file = match (&sa, &sb) {
            (Some(x), Some(y)) => json!(diff::source::diff(x, y).unwrap_or_default()),
            _ => serde_json::Value::Null,
        };
        let v = json!({ "a": ea.id, "b": eb.id, "same": changes.is_empty(), "changes": changes, "file": file });
        println!("{}", crate::json::pretty(&v));
    } else {
        let file = diff::source::text(sa.as_deref(), sb.as_deref());
        let text = diff::report(&ea.id, &eb.id, &changes, &file);
        print!("{}", super::output::printable(&text));
    }
    if changes.is_empty() {
        exit::OK
    } else {
        exit::FAILED
    }
}

fn prune(runs: &Runs, a: &PruneArgs) -> u8 {
    let older = match a.older_than.as_deref().map(parse_age) {
        Some(Ok(d)) => Some(d),
        Some(Err(e)) => return usage(e),
        None => None,
    };
    match runs.prune(a.keep, older) {
        Ok(p) => {
            println!(
                "removed {} run(s), kept {}{}",
                p.removed.len(),
                p.kept,
                if p.held.is_empty() {
                    String::new()
                } else {
                    format!(" ({} open in a workbench)", p.held.len())
                }
            );
            exit::OK
        }
        Err(e) => {
            eprintln!("error: cannot prune {}: {e}", runs.dir.display());
            exit::FAILED
        }
    }
}

/// `30d`, `12h`, `90m`, `45s` (and what `--timeout` takes).
fn parse_age(s: &str) -> Result<std::time::Duration, String> {
    // Ages are not deadlines: any age is fine, so a huge one saturates
    // (it keeps every run) instead of overflowing.
    if let Some(days) = s.strip_suffix('d')
        && let Ok(n) = days.trim().parse::<u64>()
    {
        return Ok(std::time::Duration::from_secs(n.saturating_mul(86_400)));
    }
    use pipewright_engine::file::loader::{DurationError, parse_duration};
    match parse_duration(s) {
        Ok(d) => Ok(d),
        Err(DurationError::TooLong) => Ok(std::time::Duration::MAX),
        Err(DurationError::Unreadable) => Err(format!(
            "--older-than `{s}`: write an age such as 30d, 12h or 90m"
        )),
    }
}
