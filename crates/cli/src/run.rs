//! `pipewright run FILE` (alias `pipe`): run every composition and case of
//! a file headlessly, print progress and a report, exit with SPEC §4 codes.

use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use super::prepare::{self, Setup};
use super::progress::Progress;
use super::report::usage;
use super::spend::Prepared;
use super::step::{self, Input, Stepping};
use pipewright_engine::eval::Grader;
use pipewright_engine::file::loader::Loaded;
use pipewright_engine::file::model::{Case, Composition, Pipeline};
use pipewright_engine::mcp::caller::Caller;
use pipewright_engine::mcp::human::answers::Answers;
use pipewright_engine::mcp::human::chain::Chain;
use pipewright_engine::mcp::human::provider::Provider;
use pipewright_engine::options::exit;
use pipewright_engine::options::parse_vars;
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::events::Event;
use pipewright_engine::run::session::{self, Command, SessionConfig};
use pipewright_engine::run::store;
use pipewright_engine::run::trace::{RunStatus, Trace};
use pipewright_engine::settings::Settings;

use super::output::Format;

pub(crate) mod args;
pub(crate) mod remote;
pub(crate) mod watch;

use args::RunArgs;
use pipewright_headless::{Signals, Stop};
use watch::Watch;

/// Who answers the servers' questions in `run`: `--answers`, then the
/// node's `answers:` (added per run by [`Chain::for_run`]), then the
/// person at the terminal (when stdin and stderr are one), then the
/// file's `sampling:` provider for sampling, else decline.
pub(crate) fn human_of(
    args: &RunArgs,
    pipeline: &Pipeline,
    vars: &IndexMap<String, Value>,
    env: &pipewright_engine::environment::Environment,
    redactor: &Redactor,
) -> Result<Arc<Chain>, String> {
    use std::io::IsTerminal;
    let answers = args.answers.as_deref().map(Answers::load).transpose()?;
    let provider = pipeline
        .sampling
        .as_ref()
        .map(|p| Provider::resolved(p, vars, env, redactor))
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

/// True when `run` must only plan: `--dry-run` or `--estimate-cost`. A
/// file that says `dry_run: true` (Fibe's) is planned too, which [`run`]
/// finds once it has loaded the file.
fn plans_only(args: &RunArgs) -> bool {
    args.spend.dry_run || args.spend.estimate_cost
}

/// Whether the loaded file asks to be planned, not run (`dry_run: true`).
fn file_plans_only(loaded: &Loaded) -> bool {
    loaded.pipeline.as_ref().is_some_and(|p| p.dry_run)
}

/// `run FILE`: runs the file here, or plans it (`--dry-run`,
/// `--estimate-cost`, a file that says `dry_run: true`), or has a worker
/// run it (`--on`); returns the exit code.
pub async fn run(args: RunArgs, settings: &Settings) -> u8 {
    if plans_only(&args) {
        return super::plan::plan(args, settings).await;
    }
    let (source, loaded) = match prepare::load(&args, settings) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if file_plans_only(&loaded) {
        eprintln!(
            "{}: `dry_run: true`: planning only, nothing is called (remove it to run)",
            args.file.display()
        );
        return super::plan::plan_loaded(args, source, loaded, settings).await;
    }
    let name = args.file.display().to_string();
    let pipeline = match prepare::checked(&name, &source, loaded, "run") {
        Ok(p) => p,
        Err(code) => return code,
    };
    match &args.on {
        Some(on) => on_restate(&args, on, (&name, &source, &pipeline), settings).await,
        None => local(&args, &source, pipeline, settings).await,
    }
}

/// Runs every chosen composition and case here, one session each, and
/// reports them: set up, connect and check, run, report.
async fn local(args: &RunArgs, source: &str, pipeline: Pipeline, settings: &Settings) -> u8 {
    // Masked now, from the file's own servers (`--servers-from` adds more
    // in `prepare`): the copy kept beside each saved run.
    let kept = (!args.no_save).then(|| store::KeptSource::of(source, &pipeline));
    let setup = match prepare::prepare(args, pipeline, settings) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let (timeout, human) = match run_options(args, &setup) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    // From here on a signal cancels rather than kills: servers are started.
    let mut watch = Watch {
        signals: Signals::listen(),
        live: None,
        id: None,
    };
    let prepared = match connect(args, &setup, source, settings, &mut watch.signals).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let grader = match pipewright_headless::grader(
        args.judge.flags(),
        &setup.pipeline,
        &prepared.pricing.table,
        &setup.redactor,
        prepared.judge_replay.clone(),
        prepared.recorder.clone(),
        settings,
    ) {
        Ok(g) => g,
        Err(e) => {
            close(prepared, &mut watch.signals).await;
            return usage(e);
        }
    };
    if let Some(b) = args
        .breaks
        .iter()
        .find(|b| setup.comps().iter().all(|c| c.index_of(b).is_none()))
    {
        return usage(format!(
            "--break `{b}`: no selected composition has a node `{b}`"
        ));
    }
    let local = Local {
        args,
        setup,
        prepared,
        grader,
        human,
        timeout,
        kept,
        data_dir: settings.data_dir.clone(),
        max_runs: settings.max_runs,
    };
    let (mut traces, cancelled) = local.run_each(&mut watch).await;
    super::output::aggregate_cases(&mut traces);
    local
        .report(source, traces, cancelled, settings, watch)
        .await
}

/// What only a local run takes beside the set-up, checked before any
/// server starts: the case `--case` names, `--timeout`, and who answers
/// the servers' questions. `Err` is a usage mistake.
fn run_options(
    args: &RunArgs,
    setup: &Setup,
) -> Result<(Option<std::time::Duration>, Arc<Chain>), String> {
    if let Some(case) = setup.case()
        && !setup
            .comps()
            .iter()
            .any(|c| c.cases.iter().any(|k| k.name == case))
    {
        return Err(format!(
            "no case named `{case}` in the selected compositions"
        ));
    }
    let timeout =
        pipewright_engine::options::duration_flag("timeout", args.flags.timeout.as_deref())?;
    let human = human_of(
        args,
        &setup.pipeline,
        &setup.file_vars(),
        &setup.env,
        &setup.redactor,
    )?;
    Ok((timeout, human))
}

/// Connects the servers (a stop signal first stops the set-up) and runs
/// preflight on every session to come: `Err` is the exit code, the
/// reason printed and the servers closed.
async fn connect(
    args: &RunArgs,
    setup: &Setup,
    source: &str,
    settings: &Settings,
    signals: &mut Signals,
) -> Result<Prepared, u8> {
    let connect = pipewright_headless::connect_options(settings);
    let prepared = tokio::select! {
        p = setup.connect(&args.spend, &connect) => p?,
        // Dropping the half-made connections kills the servers started.
        stop = signals.next() => {
            eprintln!("stopped before the run began");
            return Err(stop.code());
        }
    };
    let runs = super::spend::runs_of(
        &setup.pipeline,
        &setup.comps(),
        setup.case(),
        &setup.cli_vars,
    );
    let checked = super::spend::preflight(
        &setup.name,
        source,
        &runs,
        &prepared,
        &setup.env,
        setup.pinned.as_deref(),
        (args.spend.yes, true),
    );
    if let Err(code) = checked {
        close(prepared, signals).await;
        return Err(code);
    }
    Ok(prepared)
}

/// A local run under way: the set-up, the connections and what every
/// session of it shares.
struct Local<'a> {
    args: &'a RunArgs,
    setup: Setup,
    prepared: Prepared,
    grader: Grader,
    /// Who answers the servers' questions.
    human: Arc<Chain>,
    /// `--timeout`.
    timeout: Option<std::time::Duration>,
    /// The file's text kept beside each saved run (`None`: `--no-save`).
    kept: Option<store::KeptSource>,
    /// Where runs are kept.
    data_dir: Option<std::path::PathBuf>,
    /// `PIPEWRIGHT_MAX_RUNS`.
    max_runs: Option<usize>,
}

impl Local<'_> {
    /// Runs every chosen composition and case in turn: their traces, and
    /// whether a stop signal cancelled the rest.
    async fn run_each(&self, watch: &mut Watch) -> (Vec<Trace>, bool) {
        let stepping = Stepping {
            step: self.args.step,
            breaks: self.args.breaks.clone(),
        };
        let mut input = stepping.active().then(Input::stdin);
        let mut traces: Vec<Trace> = Vec::new();
        for comp in self.setup.comps() {
            for row in self.setup.rows(comp) {
                let (trace, stop) = self
                    .run_one(comp, row, (&stepping, input.as_mut()), watch)
                    .await;
                traces.push(trace);
                if stop {
                    return (traces, true);
                }
            }
        }
        (traces, false)
    }

    /// One session: runs `comp` with `row`'s vars, grades its `eval:`,
    /// saves the trace; the trace, and whether a stop signal came.
    async fn run_one(
        &self,
        comp: &Composition,
        row: Option<&Case>,
        stepping: (&Stepping, Option<&mut Input>),
        watch: &mut Watch,
    ) -> (Trace, bool) {
        let args = self.args;
        let redactor = &self.setup.redactor;
        let mut cfg = self.setup.config(comp, row, self.timeout);
        cfg.pricing = self.prepared.pricing.clone();
        cfg.max_cost_per_call_usd = args.spend.max_cost_per_call;
        cfg.human = Chain::for_run(&self.human, comp);
        if !args.no_save {
            watch.begin(
                comp,
                row.map(|r| r.name.as_str()),
                &self.setup.name,
                self.data_dir.as_deref(),
            );
        }
        // Resolved before the run: the judge's key is a secret of it.
        let judge = self.grader.judge_for(comp, &cfg.vars, redactor);
        let (budget, on_budget) = (cfg.budget, cfg.on_budget);
        let mut trace = drive(
            comp,
            self.prepared.caller.clone(),
            cfg,
            redactor.clone(),
            args.format == Format::Text,
            stepping,
            watch,
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
                tools: Some(&self.prepared.tools),
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
        if let Some(kept) = &self.kept {
            pipewright_headless::keep(&trace, Some(kept), self.data_dir.as_deref(), self.max_runs);
        }
        // Saved: the record of the run in progress goes.
        watch.live = None;
        (trace, stop)
    }

    /// Saves the cassette, prints the report, exports OTLP, closes the
    /// servers and gives the exit code of the whole command.
    async fn report(
        self,
        source: &str,
        traces: Vec<Trace>,
        cancelled: bool,
        settings: &Settings,
        mut watch: Watch,
    ) -> u8 {
        let Local {
            args,
            setup,
            prepared,
            ..
        } = self;
        if let Err(code) = super::spend::save_cassette(&args.spend, &prepared) {
            close(prepared, &mut watch.signals).await;
            return code;
        }
        super::output::print(
            args.format,
            &traces,
            &setup.name,
            Some((&setup.pipeline, source, args.dialect, settings.fibe)),
        );
        if let Some(code) =
            super::output::export_otlp(&traces, args.otlp.as_deref(), args.otlp_endpoint.as_deref())
                .await
        {
            close(prepared, &mut watch.signals).await;
            return code;
        }
        // The report is out and the traces saved before the servers get
        // their shutdown grace.
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
        exit_code(&traces)
    }
}

/// The exit code of runs that were not cancelled: 3 when one went over
/// its budget, 0 when every one passed, else 1.
fn exit_code(traces: &[Trace]) -> u8 {
    let over_budget = traces
        .iter()
        .any(|t| t.composition.status == RunStatus::BudgetExceeded);
    if over_budget {
        exit::BUDGET
    } else if traces.iter().all(Trace::passed) {
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
        (!args.flags.server.servers.is_empty(), "--server"),
        (args.flags.server.url.is_some(), "--url"),
        (!args.servers_from.is_empty(), "--servers-from"),
        (args.answers.is_some(), "--answers"),
        (args.flags.case.is_some(), "--case"),
        (args.flags.timeout.is_some(), "--timeout"),
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
        .filter(|c| args.flags.composition.as_ref().is_none_or(|n| &c.name == n))
        .collect();
    let comp = match comps.as_slice() {
        [c] => *c,
        [] => {
            return usage(format!(
                "no composition named `{}`",
                args.flags.composition.clone().unwrap_or_default()
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
    let vars = match parse_vars(&args.flags.vars) {
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
            data_dir: settings.data_dir.as_deref(),
            max_runs: settings.max_runs,
        },
    )
    .await
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
async fn close(prepared: Prepared, signals: &mut Signals) -> Option<Stop> {
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
