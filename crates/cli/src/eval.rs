//! `pipewright eval RUN`: judge a saved run again with its file's `eval:`
//! as the file says now (change a rubric, re-judge yesterday's run),
//! calling no tool: the run's outputs, calls and the tools its servers
//! offered come from the saved trace. The result is saved as a new run
//! (`judged_from` the old one), so `runs diff OLD NEW` shows the score
//! changes. `--dry-run` prints the prompts the judge would get and what
//! they would cost, and asks nothing.

use pipewright_engine::settings::Settings;
use std::path::{Path, PathBuf};

use clap::Args;

use super::output::{Format, print};
use super::report::usage;
use pipewright_engine::eval::estimate;
use pipewright_engine::eval::judge::request;
use pipewright_engine::eval::material::Subject;
use pipewright_engine::eval::metrics::{self, Prepared};
use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::options::exit;
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::store::{self, Runs};
use pipewright_engine::run::trace::{RunStatus, Trace};

/// Arguments of `eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// A run id, a unique prefix of one, `latest` or `latest~N`.
    pub id: String,
    /// Judge with this file's `eval:` (default: the file the run was made
    /// from, as it is now; if it is gone, the copy saved with the run).
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// As `run --format` prints: text, json or junit.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Print each prompt the judge would get and its projected cost; ask
    /// nothing, save nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not save the judged run in history.
    #[arg(long)]
    pub no_save: bool,
    /// Replace the bundled pricing.yaml (prices the judge's model).
    #[arg(long, value_name = "PATH")]
    pub pricing_table: Option<PathBuf>,
    #[command(flatten)]
    pub judge: super::judge::JudgeArgs,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
}

/// Judges a saved run again; returns the exit code.
pub async fn eval(args: EvalArgs, settings: &Settings) -> u8 {
    let Some(runs) = Runs::open(settings.data_dir.as_deref()) else {
        return usage("no user data directory (set PIPEWRIGHT_DATA_DIR)");
    };
    let fail = |e: String| {
        eprintln!("error: {}", super::output::printable(&e));
        exit::INVALID
    };
    let entry = match runs.find(&args.id) {
        Ok(e) => e,
        Err(e) => return fail(e),
    };
    let old = match runs.load(&entry) {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let (file, source) = match file_of(&args, &runs, &entry, &old) {
        Ok(x) => x,
        Err(e) => return fail(e),
    };
    let loaded = pipewright_engine::file::open::load_str_with(
        &source,
        Dialect::Auto,
        &settings.load_options(Vec::new()),
    );
    if pipewright_headless::report_diagnostics(&file, &source, &loaded) {
        eprintln!("{file}: not judged: the file has errors");
        return exit::INVALID;
    }
    let Some(pipeline) = loaded.pipeline else {
        return exit::INVALID;
    };
    let Some(comp) = pipeline.composition(&old.composition.name) else {
        return fail(format!(
            "{file} has no composition `{}` (the one run {} ran)",
            old.composition.name, old.run_id
        ));
    };
    if comp.eval.is_empty() {
        return fail(format!(
            "composition `{}` in {file} has no `eval:` block to judge with",
            comp.name
        ));
    }
    let spend = super::spend::SpendArgs {
        pricing_table: args.pricing_table.clone(),
        ..Default::default()
    };
    let table = match super::spend::pricing_table(&spend, &pipeline) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let redactor = Redactor::default();
    let grader = match pipewright_headless::grader(
        args.judge.flags(),
        &pipeline,
        &table,
        &redactor,
        None,
        None,
        settings,
    ) {
        Ok(g) => g,
        Err(e) => return usage(e),
    };
    let judge = grader.judge_for(comp, &old.vars, &redactor);
    let budget = comp.budget.or(pipeline.budget);
    if args.dry_run {
        print_prompts(&old, comp, &judge, &table, &pipeline);
        return exit::OK;
    }
    let t = pipewright_engine::eval::regrade(&old, comp, judge, budget).await;
    if !args.no_save {
        let load = settings.load_options(Vec::new());
        if let Some(r) =
            Runs::open(settings.data_dir.as_deref()).map(|r| r.capped(settings.max_runs))
            && let Err(e) = r.save_with_source(&t, Some((&source, &load)))
        {
            eprintln!("warning: could not save the judged run: {e}");
        }
        eprintln!(
            "judged run {} again as run {} (pipewright runs diff {} {})",
            old.run_id, t.run_id, old.run_id, t.run_id
        );
    }
    let shown = [t];
    print(args.format, &shown, &file, None);
    let t = &shown[0];
    if t.composition.status == RunStatus::BudgetExceeded {
        exit::BUDGET
    } else if t.passed() {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// The file to judge with and its text: `--file`, else the run's file as
/// it is now, else the copy saved with the run.
fn file_of(
    args: &EvalArgs,
    runs: &Runs,
    entry: &store::Entry,
    old: &Trace,
) -> Result<(String, String), String> {
    let read = |p: &Path| std::fs::read_to_string(p);
    if let Some(p) = &args.file {
        return read(p)
            .map(|t| (p.display().to_string(), t))
            .map_err(|e| format!("cannot read {}: {e}", p.display()));
    }
    for p in [Path::new(&entry.file_abs), Path::new(&old.file)] {
        if !p.as_os_str().is_empty()
            && let Ok(t) = read(p)
        {
            return Ok((old.file.clone(), t));
        }
    }
    match runs.source(entry) {
        Some(t) => {
            eprintln!(
                "warning: {} is gone: judging with the copy of it saved with run {}",
                old.file, old.run_id
            );
            Ok((old.file.clone(), t))
        }
        None => Err(format!(
            "cannot find the file run {} was made from ({}); name it with --file",
            old.run_id, old.file
        )),
    }
}

/// `--dry-run`: each prompt as the judge would get it, with its cost.
fn print_prompts(
    t: &Trace,
    comp: &pipewright_engine::file::model::Composition,
    judge: &Result<pipewright_engine::eval::Judge, String>,
    table: &pipewright_engine::cost::pricing::PricingTable,
    _pipeline: &Pipeline,
) {
    let endpoint = match judge {
        Ok(j) => j.endpoint.as_ref().ok_or("a cassette answers"),
        Err(why) => Err(why.as_str()),
    };
    let projections = estimate::project(
        comp,
        &t.vars,
        endpoint,
        &table.models,
        &Default::default(),
        Some(t),
    );
    let subject = Subject {
        trace: t,
        comp,
        tools: &t.eval_tools,
    };
    for (m, p) in comp.eval.metrics.iter().zip(&projections) {
        let cost = match &p.no_call {
            Some(why) => why.clone(),
            None => format!(
                "{} + {} tok · ${:.4} with {}",
                p.input_tokens,
                p.output_tokens,
                p.cost_usd,
                p.model.as_deref().unwrap_or("?")
            ),
        };
        println!("── eval {} · {cost}", m.name());
        if let Prepared::Ask(ask) = metrics::prepare(m, &subject) {
            let req = request(&ask.prompt, &ask.material, endpoint.ok());
            for msg in req.body["messages"].as_array().into_iter().flatten() {
                let role = msg["role"].as_str().unwrap_or_default();
                let text = msg["content"].as_str().unwrap_or_default();
                // The material is sent compact; it is shown indented.
                let shown = match role {
                    "user" => format!(
                        "<material>\n{}\n</material>",
                        crate::json::pretty(&ask.material)
                    ),
                    _ => text.to_owned(),
                };
                println!("[{role}]\n{}\n", super::output::printable(&shown));
            }
        }
    }
}
