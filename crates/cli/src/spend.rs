//! What `run` and `plan` share about spending before a call is made: the
//! pricing table, cassettes (`--record`, `--replay`), preflight checks and
//! destructive-tool confirmation.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;
use indexmap::IndexMap;
use serde_json::Value;

use pipewright_engine::cost::pricing::{FreeCalls, Pricing, PricingTable};
use pipewright_engine::file::model::{Composition, Pipeline};
use pipewright_engine::lock::Pinned;
use pipewright_engine::mcp::caller::Caller;
use pipewright_engine::mcp::servers::ServerPool;
use pipewright_engine::mcp::{ConnectOptions, ServerSpec, ToolInfo};
use pipewright_engine::options::exit;
use pipewright_engine::plan::preflight::{self, Preflight, ToolLists};
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::cassette::{Cassette, Recorder, Replayer};

/// Flags about pricing, cassettes and preflight (flattened into `run`).
#[derive(Debug, Clone, Default, Args)]
pub struct SpendArgs {
    /// Replace the bundled pricing.yaml with this table (the file's
    /// `pricing:` block still applies on top).
    #[arg(long, value_name = "PATH")]
    pub pricing_table: Option<PathBuf>,
    /// Per-call USD ceiling for nodes that set no `max_cost_per_call_usd`.
    #[arg(long, value_name = "USD")]
    pub max_cost_per_call: Option<f64>,
    /// Save every call and its result to this cassette file.
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Answer calls from this cassette, with no server (replayed calls are
    /// free).
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// With --replay: call the live server for calls not in the cassette.
    #[arg(long, requires = "replay")]
    pub replay_fallthrough: bool,
    /// Allow calls of tools annotated `destructiveHint: true`.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Plan only: show order, resolved arguments, projected cost and the
    /// budget verdict; call nothing (same as `pipewright plan`).
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: the cost projection (always part of the plan).
    #[arg(long)]
    pub estimate_cost: bool,
}

/// The pricing table a run uses: `--pricing-table` or the bundled one,
/// with the file's `pricing:` laid over it.
pub fn pricing_table(spend: &SpendArgs, pipeline: &Pipeline) -> Result<PricingTable, String> {
    let base = match &spend.pricing_table {
        Some(p) => PricingTable::load(p).map_err(|e| e.to_string())?,
        None => PricingTable::bundled(),
    };
    match &pipeline.pricing {
        Some(v) => Ok(base.overlay(PricingTable::from_value(v).map_err(|e| e.to_string())?)),
        None => Ok(base),
    }
}

/// Everything a run calls through, ready to use.
pub struct Prepared {
    pub caller: Arc<dyn Caller>,
    /// The live servers, to close at the end (none when only replaying).
    pub pool: Option<Arc<ServerPool>>,
    pub pricing: Arc<Pricing>,
    pub recorder: Option<Arc<Recorder>>,
    /// What each server listed (live, or recorded in the cassette).
    pub tools: ToolLists,
    /// The judge calls of the cassette replayed (`--replay`), for `eval:`.
    pub judge_replay: Option<pipewright_engine::eval::Replay>,
}

/// Connects (unless a cassette answers everything), wraps the caller for
/// recording or replay, and prices calls. `Err` is the exit code, the
/// reason already printed.
pub async fn prepare(
    spend: &SpendArgs,
    table: PricingTable,
    specs: &IndexMap<String, ServerSpec>,
    needed: &[String],
    (redactor, connect): (&Redactor, &ConnectOptions),
) -> Result<Prepared, u8> {
    let default = pipewright_engine::mcp::servers::default_server(specs);
    let mut pricing = Pricing::new(table, default.clone());
    let cassette = match &spend.replay {
        Some(path) => Some(Cassette::load(path).map_err(|e| fail(exit::INVALID, &e))?),
        None => None,
    };
    let live = cassette.is_none() || spend.replay_fallthrough;
    let pool = if live {
        match ServerPool::connect(specs, needed, connect).await {
            Ok(p) => Some(Arc::new(p)),
            Err(e) => {
                let code = if e.is_unreachable() {
                    exit::UNREACHABLE
                } else {
                    exit::INVALID
                };
                return Err(fail(code, &redactor.text(&e.to_string())));
            }
        }
    } else {
        None
    };
    let judge_replay = cassette
        .as_ref()
        .zip(spend.replay.as_ref())
        .map(|(c, path)| {
            pipewright_engine::eval::Replay::new(
                path.display().to_string(),
                c.judge.clone(),
                spend.replay_fallthrough,
            )
        });
    let mut tools: ToolLists = IndexMap::new();
    if let Some(p) = &pool {
        for c in p.connections() {
            tools.insert(c.name().to_owned(), c.tools().to_vec());
        }
    }
    let mut caller: Option<Arc<dyn Caller>> = pool.clone().map(|p| p as Arc<dyn Caller>);
    if let (Some(c), Some(path)) = (&cassette, &spend.replay) {
        for (server, list) in &c.tools {
            tools.entry(server.clone()).or_insert_with(|| {
                list.iter()
                    .cloned()
                    .filter_map(ToolInfo::from_json)
                    .collect()
            });
        }
        let replayer = Arc::new(Replayer::new(
            c,
            path.display().to_string(),
            default.clone().unwrap_or_default(),
            redactor.clone(),
            caller.take(),
        ));
        pricing.free = Some(replayer.clone() as Arc<dyn FreeCalls>);
        caller = Some(replayer);
    }
    let pricing = Arc::new(pricing);
    let mut caller = caller.unwrap_or_else(|| Arc::new(ServerPool::default()));
    let recorder = spend.record.as_ref().map(|_| {
        let raw = tools
            .iter()
            .map(|(k, v)| (k.clone(), v.iter().map(|t| t.raw.clone()).collect()))
            .collect();
        Arc::new(Recorder::new(
            caller.clone(),
            default.clone().unwrap_or_default(),
            redactor.clone(),
            pricing.clone(),
            raw,
        ))
    });
    if let Some(r) = &recorder {
        caller = r.clone();
    }
    Ok(Prepared {
        caller,
        pool,
        pricing,
        recorder,
        tools,
        judge_replay,
    })
}

/// Stops the live servers (every wrapper holding them is dropped first).
pub async fn close(prepared: Prepared) {
    let Prepared {
        caller,
        pool,
        pricing,
        recorder,
        tools,
        judge_replay,
    } = prepared;
    drop((caller, pricing, recorder, tools, judge_replay));
    if let Some(pool) = pool.and_then(|p| Arc::try_unwrap(p).ok()) {
        pool.close().await;
    }
}

fn fail(code: u8, msg: &dyn std::fmt::Display) -> u8 {
    eprintln!("error: {msg}");
    code
}

/// Runs preflight on `comps` (their `${env.X}` read in `env`), and
/// against the lock when `pinned`, and prints what it found; `Err` is
/// exit code 2 (a problem, a change since a strict lock, or a destructive
/// call without `--yes` when `need_yes`).
pub fn preflight(
    name: &str,
    source: &str,
    runs: &[(&Composition, IndexMap<String, Value>)],
    prepared: &Prepared,
    env: &pipewright_engine::environment::Environment,
    pinned: Option<&Pinned>,
    (yes, need_yes): (bool, bool),
) -> Result<Preflight, u8> {
    let default = prepared.pricing.default_server.as_deref();
    let mut report = preflight::check(runs, &prepared.tools, default, env);
    if let Some(pinned) = pinned {
        let mut pinned = pinned.clone();
        if let Some(pool) = &prepared.pool {
            pinned.handshakes = super::lock::handshakes(pool);
        }
        let mut comps: Vec<&Composition> = Vec::new();
        for (c, _) in runs {
            if !comps.iter().any(|k| std::ptr::eq(*k, *c)) {
                comps.push(c);
            }
        }
        preflight::pinned::check_lock(&mut report, &comps, &prepared.tools, default, &pinned);
    }
    for d in report.problems.iter().chain(&report.warnings) {
        eprintln!("{}\n", d.render(name, Some(source)));
    }
    if !report.ok() {
        eprintln!(
            "{name}: preflight failed: {} problem(s); nothing was called",
            report.problems.len()
        );
        return Err(exit::INVALID);
    }
    if need_yes && !yes && !report.destructive.is_empty() {
        for d in &report.destructive {
            eprintln!(
                "error: node `{}` calls `{}` on server `{}`, which is marked destructive",
                d.node, d.tool, d.server
            );
        }
        eprintln!("{name}: not run: pass --yes to allow destructive tools; nothing was called");
        return Err(exit::INVALID);
    }
    Ok(report)
}

/// Each composition with the `${var.X}` values of each case row it runs
/// with (file `vars:` < case row < `--var`).
pub fn runs_of<'a>(
    pipeline: &Pipeline,
    comps: &[&'a Composition],
    case: Option<&str>,
    cli_vars: &IndexMap<String, Value>,
) -> Vec<(&'a Composition, IndexMap<String, Value>)> {
    let mut out = Vec::new();
    for comp in comps {
        let mut base = pipeline.vars.clone();
        if comp.cases.is_empty() {
            base.extend(cli_vars.clone());
            out.push((*comp, base));
            continue;
        }
        for row in comp
            .cases
            .iter()
            .filter(|k| case.is_none_or(|n| k.name == n))
        {
            let mut vars = base.clone();
            vars.extend(row.vars.clone());
            vars.extend(cli_vars.clone());
            out.push((*comp, vars));
        }
    }
    out
}

/// Writes the recorded cassette, if recording.
pub fn save_cassette(spend: &SpendArgs, prepared: &Prepared) -> Result<(), u8> {
    let (Some(path), Some(r)) = (&spend.record, &prepared.recorder) else {
        return Ok(());
    };
    r.cassette()
        .save(Path::new(path))
        .map_err(|e| fail(exit::FAILED, &e))
}
