//! `pipewright plan FILE` (also `run --dry-run --estimate-cost`): what a run
//! would do and cost, with nothing called. Connects and reads each server's
//! `tools/list` for preflight (or reads it from `--replay CASSETTE`).
//!
//! Projections come from, per node: the cassette (free), else the latest
//! saved run of the same file and composition (`runs/` in the data dir),
//! else the pricing table. Exit codes: 0 within budget, 2 invalid file or a
//! failed preflight, 3 the projection exceeds a budget cap (unless
//! `--on-budget-exceeded warn`), 4 a server could not be reached.

use super::flags::OnBudget;
use super::output::Format;
use super::prepare::Setup;
use super::report::usage;
use super::run::args::RunArgs;
use super::spend::Prepared;
use pipewright_engine::cost::pricing::Pricing;
use pipewright_engine::eval::Grader;
use pipewright_engine::file::loader::Loaded;
use pipewright_engine::file::model::{Case, Composition};
use pipewright_engine::options::exit;
use pipewright_engine::plan::dry_run::{
    CompositionPlan, Plan, PlannedRun, plan_composition, recorded_figures,
};
use pipewright_engine::record::savings::Savings;
use pipewright_engine::redact::Redactor;
use pipewright_engine::settings::Settings;

/// Plans the file; returns the exit code.
pub async fn plan(args: RunArgs, settings: &Settings) -> u8 {
    match super::prepare::load(&args, settings) {
        Ok((source, loaded)) => plan_loaded(args, source, loaded, settings).await,
        Err(code) => code,
    }
}

/// [`plan`] of the file `run` loaded already (one that says `dry_run:
/// true`), with the command line's servers announced.
pub async fn plan_loaded(args: RunArgs, source: String, loaded: Loaded, settings: &Settings) -> u8 {
    let name = args.file.display().to_string();
    let pipeline = match super::prepare::checked(&name, &source, loaded, "planned") {
        Ok(p) => p,
        Err(code) => return code,
    };
    if args.format == Format::Junit {
        return usage("plan prints text or json, not junit");
    }
    let setup = match super::prepare::prepare(&args, pipeline, settings) {
        Ok(s) => s,
        Err(code) => return code,
    };
    register_env_secrets(&setup.comps(), &setup.redactor);
    // A plan never records: it calls nothing.
    let mut spend = args.spend.clone();
    spend.record = None;
    let connect = pipewright_headless::connect_options(settings);
    let prepared = match setup.connect(&spend, &connect).await {
        Ok(p) => p,
        Err(code) => return code,
    };
    let preflight = match super::spend::preflight(
        &name,
        &source,
        &super::spend::runs_of(
            &setup.pipeline,
            &setup.comps(),
            setup.case(),
            &setup.cli_vars,
        ),
        &prepared,
        &setup.env,
        setup.pinned.as_deref(),
        (true, false),
    ) {
        Ok(p) => p,
        Err(code) => {
            super::spend::close(prepared).await;
            return code;
        }
    };
    let grader = match pipewright_headless::grader(
        args.judge.flags(),
        &setup.pipeline,
        &prepared.pricing.table,
        &setup.redactor,
        prepared.judge_replay.clone(),
        None,
        settings,
    ) {
        Ok(g) => g,
        Err(e) => {
            super::spend::close(prepared).await;
            return usage(e);
        }
    };
    let mut plans = Vec::new();
    let mut saves = Vec::new();
    for comp in setup.comps() {
        for row in setup.rows(comp) {
            let (plan, saved) = plan_one(&args, &setup, &prepared, &grader, (comp, row));
            plans.push(plan);
            saves.push(saved);
        }
    }
    super::spend::close(prepared).await;
    let plan = Plan {
        file: name,
        compositions: plans,
        preflight,
    };
    match args.format {
        Format::Json | Format::Fibe | Format::Discord => {
            println!("{}", crate::json::pretty(&with_savings(&plan, &saves)))
        }
        _ => {
            let mut text = render(&plan);
            for (c, s) in plan.compositions.iter().zip(&saves) {
                let case = c
                    .case
                    .as_ref()
                    .map(|k| format!(" [{k}]"))
                    .unwrap_or_default();
                text.push_str(&format!("savings · {}{case}: {}\n", c.name, s.line()));
            }
            print!("{}", super::output::printable(&text));
        }
    }
    if plan.within_budget() || args.on_budget_exceeded == OnBudget::Warn {
        exit::OK
    } else {
        exit::BUDGET
    }
}

/// The plan of one composition and case row: projected from the cassette,
/// else the latest saved run of it, else the pricing table; the judge's
/// projection added; and what serving it saves an agent.
fn plan_one(
    args: &RunArgs,
    setup: &Setup,
    prepared: &Prepared,
    grader: &Grader,
    (comp, row): (&Composition, Option<&Case>),
) -> (CompositionPlan, Savings) {
    let cfg = setup.config(comp, row, None);
    let mut pricing: Pricing = (*prepared.pricing).clone();
    let last = pipewright_engine::run::store::Runs::open(setup.data_dir.as_deref())
        .and_then(|r| r.latest_of(&setup.name, &comp.name, cfg.case.as_deref()));
    if args.spend.replay.is_none()
        && let Some(t) = &last
    {
        pricing.recorded = recorded_figures(t);
    }
    let run = PlannedRun {
        case: cfg.case.clone(),
        vars: &cfg.vars,
        env: &setup.env,
        budget: cfg.budget,
        max_cost_per_call: args.spend.max_cost_per_call,
    };
    let mut plan = plan_composition(comp, run, &pricing, &setup.redactor);
    let judge = grader.judge_for(comp, &cfg.vars, &setup.redactor);
    let last: Option<pipewright_engine::run::trace::Trace> =
        last.and_then(|v| serde_json::from_value(v).ok());
    let projected = pipewright_engine::eval::estimate::project(
        comp,
        &cfg.vars,
        pipewright_engine::eval::Judge::projected(&judge)
            .as_ref()
            .map_err(String::as_str)
            .copied(),
        &prepared.pricing.table.models,
        &prepared.tools,
        last.as_ref(),
    );
    pipewright_engine::plan::judging::add(&mut plan, projected, cfg.budget);
    let outputs = last.as_ref().map(|t| {
        t.nodes
            .iter()
            .map(|(id, n)| (id.clone(), n.output_tokens))
            .collect()
    });
    let saved = pipewright_engine::record::savings::of_plan(
        &setup.pipeline,
        comp,
        &plan,
        &prepared.tools,
        outputs.as_ref(),
    );
    (plan, saved)
}

/// The plan's JSON with `savings`, one entry per planned composition (and
/// case): what serving it saves an agent. Added beside the plan's keys, so
/// readers of the rest see what they saw.
fn with_savings(plan: &Plan, saves: &[Savings]) -> serde_json::Value {
    let mut v = serde_json::to_value(plan).unwrap_or_default();
    let rows: Vec<serde_json::Value> = plan
        .compositions
        .iter()
        .zip(saves)
        .map(|(c, s)| {
            let mut row = serde_json::to_value(s).unwrap_or_default();
            if let Some(m) = row.as_object_mut() {
                m.insert("composition".into(), c.name.clone().into());
                m.insert("case".into(), c.case.clone().into());
            }
            row
        })
        .collect();
    if let Some(m) = v.as_object_mut() {
        m.insert("savings".into(), rows.into());
    }
    v
}

/// Every `${env.X}` value the plan could show is masked.
fn register_env_secrets(comps: &[&Composition], redactor: &Redactor) {
    for comp in comps {
        for node in &comp.nodes {
            for site in node.refs() {
                if let pipewright_engine::lang::reference::Root::Env(name) = &site.reference.root
                    && let Ok(v) = std::env::var(name)
                {
                    redactor.add(v);
                }
            }
        }
    }
}

/// The plan as text, one line per node.
pub fn render(plan: &Plan) -> String {
    let mut out = String::new();
    for c in &plan.compositions {
        out.push_str(&pipewright_engine::plan::text::composition(&plan.file, c));
    }
    let p = &plan.preflight;
    out.push_str(&format!("preflight: {} problem(s)", p.problems.len()));
    if p.destructive.is_empty() {
        out.push_str("; no destructive tools\n");
    } else {
        let list: Vec<String> = p
            .destructive
            .iter()
            .map(|d| format!("{} ({})", d.node, d.tool))
            .collect();
        out.push_str(&format!(
            "; destructive, `run` needs --yes: {}\n",
            list.join(", ")
        ));
    }
    out
}
