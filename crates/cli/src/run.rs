//! `pipewright run FILE` (alias `pipe`): run every composition and case of
//! a file headlessly, print progress and a report, exit with SPEC §4 codes.

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use indexmap::IndexMap;
use serde_json::Value;

use super::progress::Progress;
use super::report::usage;
use super::step::{self, Input, Stepping};
use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::loader::Loaded;
use pipewright_engine::file::model::{Budget, Composition, Pipeline};
use pipewright_engine::file::open::load_file_with;
use pipewright_engine::mcp::caller::Caller;
use pipewright_engine::mcp::human::answers::Answers;
use pipewright_engine::mcp::human::chain::Chain;
use pipewright_engine::mcp::human::provider::Provider;
use pipewright_engine::mcp::servers::{self, ServerArg};
use pipewright_engine::options::exit;
use pipewright_engine::options::parse_vars;
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::events::Event;
use pipewright_engine::run::session::{self, BudgetMode, Command, SessionConfig};
use pipewright_engine::run::store;
use pipewright_engine::run::trace::{RunStatus, Trace};
use pipewright_engine::settings::Settings;

pub use super::output::Format;

pub(crate) mod remote;
pub(crate) mod watch;

use watch::{Signals, Stop, Watch};

/// What to do when a budget cap fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnBudget {
    Stop,
    Continue,
    Warn,
}

/// Arguments of `run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The pipeline file (YAML or JSON).
    pub file: PathBuf,
    /// The pipeline file, as mcptest spells it (`run --config FILE`); the
    /// command line is read with `--config FILE` as FILE.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Also write the run(s) as OpenTelemetry traces (OTLP/JSON) to FILE
    /// (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub otlp: Option<PathBuf>,
    /// Also POST the OTLP/JSON export to a collector, e.g.
    /// `http://127.0.0.1:4318/v1/traces`.
    #[arg(long, value_name = "URL")]
    pub otlp_endpoint: Option<String>,
    /// A `${var.NAME}` value: NAME=VALUE (VALUE is JSON when it parses as
    /// JSON, else text). Repeatable; wins over `vars:` and case rows.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Run only this composition.
    #[arg(long, value_name = "NAME")]
    pub composition: Option<String>,
    /// Run only this case row.
    #[arg(long, value_name = "NAME")]
    pub case: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// The server URL when the file declares none (or exactly one, which it
    /// replaces).
    #[arg(long)]
    pub url: Option<String>,
    /// Add or override a server: NAME=URL or NAME='COMMAND ARGS'. Repeatable.
    #[arg(long = "server", value_name = "NAME=URL|CMD")]
    pub servers: Vec<ServerArg>,
    /// Timeout for every call whose node sets none (e.g. 30s).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Aggregate USD ceiling across every call.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// Aggregate token ceiling.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Wall-clock ceiling of each run (e.g. 2m).
    #[arg(long, value_name = "DURATION")]
    pub max_duration: Option<String>,
    /// What a tripped budget does.
    #[arg(long, value_enum, default_value_t = OnBudget::Stop)]
    pub on_budget_exceeded: OnBudget,
    /// Do not keep a copy of the trace in the user data directory.
    #[arg(long)]
    pub no_save: bool,
    // -- Stepping (see cli::step) --
    /// Pause after each node and read a line from stdin: Enter continues,
    /// `r` re-runs the node, `s` skips the next node, `q` cancels.
    #[arg(long)]
    pub step: bool,
    /// Pause before NODE (repeatable), then ask as `--step` does.
    #[arg(long = "break", value_name = "NODE")]
    pub breaks: Vec<String>,
    /// Read the file as this dialect instead of detecting it.
    #[arg(long, value_parser = crate::choice::choice::<Dialect>(), default_value = "auto")]
    pub dialect: Dialect,
    /// Also use every server of this client config file (Claude Desktop,
    /// Cursor, `.mcp.json`, VS Code `mcp.json`); the file's own win, then
    /// earlier files'. Repeatable. Nodes may name these servers.
    #[arg(long, value_name = "PATH")]
    pub servers_from: Vec<PathBuf>,
    /// Replies to the servers' questions (forms, URLs, sampling), per node
    /// id or `*`, in order (see the book's "Servers that ask questions"). Used before
    /// asking on the terminal; off a terminal, questions it does not answer
    /// are declined.
    #[arg(long, value_name = "FILE")]
    pub answers: Option<PathBuf>,
    /// Run durably on Restate: submit to its ingress at
    /// `restate://HOST:PORT`, where a `pipewright worker` holding the same
    /// file runs it; follow it here (see the book's "Durable runs").
    #[arg(long, value_name = "restate://HOST:PORT")]
    pub on: Option<String>,
    /// With --on: Restate's admin API, read to follow the run (default
    /// port 9070 of the --on host).
    #[arg(long, value_name = "URL", env = "PIPEWRIGHT_RESTATE_ADMIN")]
    pub restate_admin: Option<String>,
    #[command(flatten)]
    pub spend: super::spend::SpendArgs,
    #[command(flatten)]
    pub judge: pipewright_serve::judge::JudgeArgs,
}

/// Who answers the servers' questions in `run`: `--answers`, then the
/// node's `answers:` (added per run by [`Chain::for_run`]), then the
/// person at the terminal (when stdin and stderr are one), then the
/// file's `sampling:` provider for sampling, else decline.
pub(crate) fn human_of(
    args: &RunArgs,
    pipeline: &Pipeline,
    vars: &IndexMap<String, Value>,
    redactor: &Redactor,
) -> Result<Arc<Chain>, String> {
    use std::io::IsTerminal;
    let answers = args.answers.as_deref().map(Answers::load).transpose()?;
    let provider = pipeline
        .sampling
        .as_ref()
        .map(|p| Provider::resolved(p, vars, redactor))
        .transpose()?;
    // `--step` and `--break` read stdin themselves: questions then go to
    // the answers file, the provider, or are declined.
    let stepping = args.step || !args.breaks.is_empty();
    let interactive =
        !stepping && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let person = interactive.then(|| {
        super::ask::Terminal::new(provider.clone())
            as Arc<dyn pipewright_engine::mcp::human::Responder>
    });
    Ok(Arc::new(Chain {
        answers,
        person,
        provider,
    }))
}

/// The budget the flags set (`--max-cost`, `--max-tokens`,
/// `--max-duration`); it wins over the file's.
pub(crate) fn cli_budget(args: &RunArgs) -> Result<Budget, String> {
    Ok(Budget {
        max_cost_usd: args.max_cost,
        max_tokens: args.max_tokens,
        max_duration: pipewright_engine::options::duration_flag(
            "max-duration",
            args.max_duration.as_deref(),
        )?,
        max_iterations: None,
    })
}

/// True when `run` must only plan: `--dry-run` or `--estimate-cost`. A
/// file that says `dry_run: true` (Fibe's) is planned too, which [`run`]
/// finds once it has loaded the file.
pub fn plans_only(args: &RunArgs) -> bool {
    args.spend.dry_run || args.spend.estimate_cost
}

/// The servers a run of `pipeline` talks to, with what resolving them used.
pub(crate) struct Servers {
    pub cli_vars: IndexMap<String, Value>,
    pub redactor: Redactor,
    pub specs: IndexMap<String, pipewright_engine::mcp::ServerSpec>,
}

/// Adds `--servers-from` files to the pipeline's servers, resolves them
/// with `--server` and `--url` (and the vars they use), and points nodes
/// that name no server at the one they call.
pub(crate) fn servers_of(args: &RunArgs, pipeline: &mut Pipeline) -> Result<Servers, String> {
    let file_only = servers::only_declared(pipeline);
    for p in &args.servers_from {
        pipewright_engine::mcp::client_config::add_to(pipeline, p)?;
    }
    let cli_vars = parse_vars(&args.vars)?;
    let redactor = Redactor::default();
    let mut file_vars = pipeline.vars.clone();
    file_vars.extend(cli_vars.clone());
    let specs = servers::resolve(
        pipeline,
        &args.servers,
        args.url.as_deref(),
        &file_vars,
        &redactor,
    )?;
    servers::assign_default(pipeline, file_only, &specs);
    Ok(Servers {
        cli_vars,
        redactor,
        specs,
    })
}

/// The file `run` was given, loaded once: `Err` is the exit code of a
/// usage mistake.
pub fn load(args: &RunArgs, settings: &Settings) -> Result<(String, Loaded), u8> {
    let names = servers::cli_server_names(&args.servers, &args.servers_from).map_err(usage)?;
    let opts = settings.load_options(names);
    Ok(load_file_with(&args.file, args.dialect, &opts))
}

/// Whether the loaded file asks to be planned, not run (`dry_run: true`).
pub fn file_plans_only(loaded: &Loaded) -> bool {
    loaded.pipeline.as_ref().is_some_and(|p| p.dry_run)
}

/// Runs the loaded file; returns the exit code.
pub async fn run(args: RunArgs, source: String, loaded: Loaded, settings: &Settings) -> u8 {
    let name = args.file.display().to_string();
    if super::report::report_diagnostics(&name, &source, &loaded) {
        eprintln!("{name}: not run: the file has errors");
        return exit::INVALID;
    }
    let Some(mut pipeline) = loaded.pipeline else {
        return exit::INVALID;
    };
    if let Some(on) = &args.on {
        return on_restate(&args, on, (&name, &source, &pipeline), settings).await;
    }
    // Masked now, from the file's own servers (`--servers-from` adds more
    // below): the copy kept beside each saved run.
    let kept = (!args.no_save).then(|| store::KeptSource::of(&source, &pipeline));
    let Servers {
        cli_vars,
        redactor,
        specs,
    } = match servers_of(&args, &mut pipeline) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let comps: Vec<&Composition> = pipeline
        .compositions
        .iter()
        .filter(|c| args.composition.as_ref().is_none_or(|n| &c.name == n))
        .collect();
    if comps.is_empty() {
        let names: Vec<&str> = pipeline
            .compositions
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        return usage(format!(
            "no composition named `{}`; the file has: {}",
            args.composition.unwrap_or_default(),
            names.join(", ")
        ));
    }
    if let Some(case) = &args.case
        && !comps
            .iter()
            .any(|c| c.cases.iter().any(|k| &k.name == case))
    {
        return usage(format!(
            "no case named `{case}` in the selected compositions"
        ));
    }
    let timeout =
        match pipewright_engine::options::duration_flag("timeout", args.timeout.as_deref()) {
            Ok(d) => d,
            Err(e) => return usage(e),
        };
    let cli_budget = match cli_budget(&args) {
        Ok(b) => b,
        Err(e) => return usage(e),
    };
    let mut file_vars = pipeline.vars.clone();
    file_vars.extend(cli_vars.clone());
    let human = match human_of(&args, &pipeline, &file_vars, &redactor) {
        Ok(h) => h,
        Err(e) => return usage(e),
    };

    let mut needed: Vec<String> = Vec::new();
    for c in &comps {
        for n in servers::needed(c, &specs) {
            if !needed.contains(&n) {
                needed.push(n);
            }
        }
    }
    let table = match super::spend::pricing_table(&args.spend, &pipeline) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    // From here on a signal cancels rather than kills: servers are started.
    let mut watch = Watch {
        signals: Signals::listen(),
        live: None,
        id: None,
    };
    let connect = super::report::connect_options(settings);
    let prepared = tokio::select! {
        p = super::spend::prepare(&args.spend, table, &specs, &needed, (&redactor, &connect)) => p,
        // Dropping the half-made connections kills the servers started.
        stop = watch.signals.next() => {
            eprintln!("stopped before the run began");
            return stop.code();
        }
    };
    let prepared = match prepared {
        Ok(p) => p,
        Err(code) => return code,
    };
    let checked = super::spend::preflight(
        &name,
        &source,
        &super::spend::runs_of(&pipeline, &comps, args.case.as_deref(), &cli_vars),
        &prepared,
        args.spend.yes,
        true,
    );
    if let Err(code) = checked {
        close(prepared, &mut watch.signals).await;
        return code;
    }

    let grader = match pipewright_serve::judge::grader(
        &args.judge,
        &pipeline,
        &prepared.pricing.table,
        &redactor,
        prepared.judge_replay.clone(),
        prepared.recorder.clone(),
        settings.judge_max_reply_kb,
    ) {
        Ok(g) => g,
        Err(e) => {
            close(prepared, &mut watch.signals).await;
            return usage(e);
        }
    };
    let progress = args.format == Format::Text;
    let stepping = Stepping {
        step: args.step,
        breaks: args.breaks.clone(),
    };
    if let Some(b) = args
        .breaks
        .iter()
        .find(|b| comps.iter().all(|c| c.index_of(b).is_none()))
    {
        return usage(format!(
            "--break `{b}`: no selected composition has a node `{b}`"
        ));
    }
    let mut input = stepping.active().then(Input::stdin);
    let mut traces: Vec<Trace> = Vec::new();
    let mut cancelled = false;
    'runs: for comp in comps {
        let rows: Vec<Option<&pipewright_engine::file::model::Case>> = if comp.cases.is_empty() {
            vec![None]
        } else {
            comp.cases
                .iter()
                .filter(|k| args.case.as_ref().is_none_or(|n| &k.name == n))
                .map(Some)
                .collect()
        };
        for row in rows {
            let mut cfg = config(
                &pipeline, comp, row, &cli_vars, cli_budget, &args, &name, timeout,
            );
            cfg.pricing = prepared.pricing.clone();
            cfg.max_cost_per_call_usd = args.spend.max_cost_per_call;
            cfg.human = Chain::for_run(&human, comp);
            if !args.no_save {
                watch.begin(comp, row.map(|r| r.name.as_str()), &name);
            }
            // Resolved before the run: the judge's key is a secret of it.
            let judge = grader.judge_for(comp, &cfg.vars, &redactor);
            let (budget, on_budget) = (cfg.budget, cfg.on_budget);
            let mut trace = drive(
                comp,
                prepared.caller.clone(),
                cfg,
                redactor.clone(),
                progress,
                (&stepping, input.as_mut()),
                &mut watch,
            )
            .await;
            if let Some(id) = watch.id.take() {
                trace.run_id = id;
            }
            let mut stop = trace.composition.status == RunStatus::Cancelled;
            if !comp.eval.is_empty() && !stop {
                let grading = pipewright_engine::eval::Grading {
                    comp,
                    judge,
                    tools: Some(&prepared.tools),
                    budget,
                    on_budget,
                };
                tokio::select! {
                    () = pipewright_engine::eval::grade(&mut trace, grading) => {}
                    signal = watch.signals.next() => {
                        eprintln!("{}", signal.notice());
                        stop = true;
                    }
                }
                if stop {
                    for r in &mut trace.eval {
                        r.reason = "not judged: cancelled while the judge was asked".into();
                    }
                }
            }
            if let Some(kept) = &kept {
                super::report::keep(&trace, Some(kept), settings.max_runs);
            }
            // Saved: the record of the run in progress goes.
            watch.live = None;
            traces.push(trace);
            if stop {
                cancelled = true;
                break 'runs;
            }
        }
    }
    super::output::aggregate_cases(&mut traces);
    let saved = super::spend::save_cassette(&args.spend, &prepared);
    if let Err(code) = saved {
        close(prepared, &mut watch.signals).await;
        return code;
    }

    super::output::print(
        args.format,
        &traces,
        &name,
        Some((&pipeline, source.as_str(), args.dialect, settings.fibe)),
    );
    if let Some(code) =
        super::output::export_otlp(&traces, args.otlp.as_deref(), args.otlp_endpoint.as_deref())
            .await
    {
        close(prepared, &mut watch.signals).await;
        return code;
    }
    // The report is out and the traces saved before the servers get their
    // shutdown grace.
    let stopped = close(prepared, &mut watch.signals).await;
    for t in &traces {
        if let Some(cap) = &t.composition.budget_tripped
            && t.composition.status != RunStatus::BudgetExceeded
        {
            eprintln!(
                "warning: budget `{cap}` was exceeded in {} (--on-budget-exceeded warn)",
                store::label(t)
            );
        }
    }
    if cancelled || stopped.is_some() {
        return watch.signals.first().map_or(exit::CANCELLED, Stop::code);
    }
    let over_budget = traces
        .iter()
        .any(|t| t.composition.status == RunStatus::BudgetExceeded);
    if over_budget {
        return exit::BUDGET;
    }
    if traces.iter().all(Trace::passed) {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// `run --on restate://…`: one composition, run by a worker.
async fn on_restate(
    args: &RunArgs,
    on: &str,
    (name, source, pipeline): (&str, &str, &Pipeline),
    settings: &Settings,
) -> u8 {
    let r = match remote::Restate::parse(on, args.restate_admin.as_deref()) {
        Ok(r) => r,
        Err(e) => return usage(e),
    };
    // What the worker decides (its servers, its answers) cannot be chosen
    // here.
    let local_only = [
        (args.step, "--step"),
        (!args.breaks.is_empty(), "--break"),
        (!args.servers.is_empty(), "--server"),
        (args.url.is_some(), "--url"),
        (!args.servers_from.is_empty(), "--servers-from"),
        (args.answers.is_some(), "--answers"),
        (args.case.is_some(), "--case"),
        (args.timeout.is_some(), "--timeout"),
        (args.max_cost.is_some(), "--max-cost"),
        (args.max_tokens.is_some(), "--max-tokens"),
        (args.max_duration.is_some(), "--max-duration"),
        (args.spend.record.is_some(), "--record"),
        (args.spend.replay.is_some(), "--replay"),
    ];
    if let Some((_, flag)) = local_only.iter().find(|(set, _)| *set) {
        return usage(format!(
            "{flag} does not go with --on: a durable run runs as the worker's file says (put it in the file)"
        ));
    }
    let comps: Vec<&Composition> = pipeline
        .compositions
        .iter()
        .filter(|c| args.composition.as_ref().is_none_or(|n| &c.name == n))
        .collect();
    let comp = match comps.as_slice() {
        [c] => *c,
        [] => {
            return usage(format!(
                "no composition named `{}`",
                args.composition.clone().unwrap_or_default()
            ));
        }
        _ => {
            return usage("--on runs one composition: name it with --composition".to_owned());
        }
    };
    if !comp.cases.is_empty() {
        return usage(format!(
            "composition `{}` has cases: --on runs a composition once, not its cases",
            comp.name
        ));
    }
    let vars = match parse_vars(&args.vars) {
        Ok(v) => v,
        Err(e) => return usage(e),
    };
    let stem = args
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "pipeline".into());
    let tool = pipewright_engine::run::durable::client::tool_name(
        comp,
        pipeline.compositions.len() == 1,
        &stem,
    );
    remote::submit(
        &r,
        remote::Submission {
            file: name,
            source,
            pipeline,
            tool,
            args: vars.into_iter().collect(),
        },
        remote::Report {
            format: args.format,
            save: !args.no_save,
            otlp: args.otlp.as_deref(),
            otlp_endpoint: args.otlp_endpoint.as_deref(),
            fibe: settings.fibe,
            max_runs: settings.max_runs,
        },
    )
    .await
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn config(
    pipeline: &Pipeline,
    comp: &Composition,
    row: Option<&pipewright_engine::file::model::Case>,
    cli_vars: &IndexMap<String, Value>,
    cli_budget: Budget,
    args: &RunArgs,
    file: &str,
    timeout: Option<std::time::Duration>,
) -> SessionConfig {
    let mut vars = pipeline.vars.clone();
    if let Some(r) = row {
        vars.extend(r.vars.clone());
    }
    vars.extend(cli_vars.clone());
    let expect = pipewright_engine::file::model::Case::expectations(row, comp);
    SessionConfig {
        file: file.to_owned(),
        case: row.map(|r| r.name.clone()),
        vars,
        budget: cli_budget.or(comp.budget).or(pipeline.budget),
        on_budget: match args.on_budget_exceeded {
            OnBudget::Stop => BudgetMode::Stop,
            OnBudget::Continue => BudgetMode::Continue,
            OnBudget::Warn => BudgetMode::Warn,
        },
        default_timeout: timeout,
        expect,
        ..SessionConfig::default()
    }
}

/// Drives one session to the end of its run, printing progress to stderr
/// (a live line on a terminal); SIGINT or SIGTERM cancels the run.
/// `--step` and `--break` hand the session to [`step::drive`].
async fn drive(
    comp: &Composition,
    caller: Arc<dyn Caller>,
    cfg: SessionConfig,
    redactor: Redactor,
    progress: bool,
    (stepping, input): (&Stepping, Option<&mut Input>),
    watch: &mut Watch,
) -> Trace {
    let mut s = session::start(Arc::new(comp.clone()), caller, cfg, redactor);
    // Stepping talks to the user on stderr whatever the output format.
    let mut shown = if progress || stepping.active() {
        Progress::stderr()
    } else {
        Progress::new(Box::new(std::io::sink()), false)
    };
    if let Some(input) = input.filter(|_| stepping.active()) {
        let last = step::drive(comp, s, stepping, input, &mut shown, watch).await;
        return last.unwrap_or_else(|| empty_trace(comp));
    }
    s.handle.send(Command::Run);
    let mut last = None;
    let mut ticker = tokio::time::interval(std::time::Duration::from_millis(100));
    loop {
        tokio::select! {
            ev = s.events.recv() => match ev {
                Some(Event::RunFinished { trace, .. }) => {
                    last = Some(*trace);
                    break;
                }
                Some(ev) => {
                    watch.saw(&ev);
                    shown.event(&ev);
                }
                None => break,
            },
            _ = ticker.tick(), if shown.is_live() => {
                if !super::ask::asking() {
                    shown.flush_held();
                }
                shown.tick();
            }
            stop = watch.signals.next() => {
                shown.println(&format!("\n{}", stop.notice()));
                s.handle.send(Command::Cancel);
            }
        }
    }
    shown.flush_held();
    shown.clear();
    drop(s.handle);
    let from_task = s.task.await.ok().flatten();
    last.or(from_task).unwrap_or_else(|| empty_trace(comp))
}

/// Closes the servers, each with its shutdown grace, unless a stop signal
/// comes first: a second one quits at once ([`Signals::next`]); a first
/// one (the run was not cancelled) ends the wait and is returned. Either
/// way the connections are dropped and with them each server's process
/// group.
async fn close(prepared: super::spend::Prepared, signals: &mut Signals) -> Option<Stop> {
    tokio::select! {
        () = super::spend::close(prepared) => None,
        stop = signals.next() => Some(stop),
    }
}

fn empty_trace(comp: &Composition) -> Trace {
    Trace {
        run_id: pipewright_engine::run::trace::new_run_id(),
        file: String::new(),
        composition: pipewright_engine::run::trace::RunSummary {
            name: comp.name.clone(),
            started_at: None,
            case: None,
            ran: false,
            status: RunStatus::Failed,
            budget_tripped: None,
            cost_total: 0.0,
            tokens_total: 0,
            duration_ms: 0,
            paused_ms: 0,
            pauses: Vec::new(),
            output_tokens: 0,
            output_tokens_all: 0,
        },
        vars: IndexMap::new(),
        nodes: IndexMap::new(),
        completed_step_ids: Vec::new(),
        failed_step: None,
        output: pipewright_engine::json::Json::null(),
        expect: Vec::new(),
        compensations: Vec::new(),
        eval: Vec::new(),
        eval_aggregate: Vec::new(),
        judged_from: None,
        eval_tools: IndexMap::new(),
        server_logs: IndexMap::new(),
        server_protocols: IndexMap::new(),
        durable: None,
    }
}
