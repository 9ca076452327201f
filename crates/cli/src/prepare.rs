//! What `run` and `plan` set up before anything is called, in one place:
//! the file loaded with the command line's servers announced, its
//! diagnostics reported, its servers resolved with `--server`, `--url`
//! and `--servers-from`, the compositions and cases chosen, the budget
//! the flags set, and then the connections ([`Setup::connect`]).

use indexmap::IndexMap;
use serde_json::Value;

use super::report::usage;
use super::run::args::RunArgs;
use super::spend::{Prepared, SpendArgs};
use pipewright_engine::environment::Environment;
use pipewright_engine::file::loader::Loaded;
use pipewright_engine::file::model::{Budget, Case, Composition, Pipeline};
use pipewright_engine::file::open::load_file_with;
use pipewright_engine::lock::Pinned;
use pipewright_engine::mcp::servers;
use pipewright_engine::mcp::{ConnectOptions, ServerSpec};
use pipewright_engine::options::{exit, parse_vars};
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::session::{BudgetMode, SessionConfig};
use pipewright_engine::settings::Settings;

/// The file `run` or `plan` was given, loaded once: `Err` is the exit
/// code of a usage mistake.
pub fn load(args: &RunArgs, settings: &Settings) -> Result<(String, Loaded), u8> {
    let names = servers::cli_server_names(
        &args.flags.server.servers,
        &args.servers_from,
        &settings.env,
    )
    .map_err(usage)?;
    let opts = settings.load_options(names);
    Ok(load_file_with(&args.file, args.dialect, &opts))
}

/// The pipeline of a load, its diagnostics printed; a file with errors is
/// not `verb` (`run`, `planned`): `Err` is its exit code.
pub(crate) fn checked(
    name: &str,
    source: &str,
    loaded: Loaded,
    verb: &str,
) -> Result<Pipeline, u8> {
    if pipewright_headless::report_diagnostics(name, source, &loaded) {
        eprintln!("{name}: not {verb}: the file has errors");
        return Err(exit::INVALID);
    }
    loaded.pipeline.ok_or(exit::INVALID)
}

/// A checked file set up for `run` or `plan`, before any server starts.
pub(crate) struct Setup {
    /// The file's name as the command line gave it.
    pub name: String,
    /// The pipeline, its `--servers-from` servers added and nodes that
    /// name no server pointed at the one they call.
    pub pipeline: Pipeline,
    /// `--var` values.
    pub cli_vars: IndexMap<String, Value>,
    /// Holds the servers' secrets, to mask what is printed and kept.
    pub redactor: Redactor,
    /// Every server, resolved.
    pub specs: IndexMap<String, ServerSpec>,
    /// The servers the chosen compositions call.
    pub needed: Vec<String>,
    /// The budget the flags set (`--max-cost`, `--max-tokens`,
    /// `--max-duration`); it wins over the file's.
    pub budget: Budget,
    /// What a tripped budget does (`--on-budget-exceeded`).
    pub on_budget: BudgetMode,
    /// `--composition`: only this one.
    composition: Option<String>,
    /// `--case`: only this case row.
    case: Option<String>,
    /// What `${env.X}` reads: the environment the driver read.
    pub env: Environment,
    /// Where runs are kept (the settings' data directory).
    pub data_dir: Option<std::path::PathBuf>,
    /// The lock the file is held to (`pipewright.lock` beside it), if any.
    pub pinned: Option<std::sync::Arc<Pinned>>,
}

/// Sets up `pipeline` (checked, from the file `args` name) for a run or a
/// plan: `Err` is the exit code, the usage mistake printed.
pub(crate) fn prepare(
    args: &RunArgs,
    mut pipeline: Pipeline,
    settings: &Settings,
) -> Result<Setup, u8> {
    let env = &settings.env;
    let Servers {
        cli_vars,
        redactor,
        specs,
    } = servers_of(args, &mut pipeline, env).map_err(usage)?;
    let pinned = super::lock::pinned(&args.file, &pipeline, args.locked)?.map(std::sync::Arc::new);
    let mut setup = Setup {
        name: args.file.display().to_string(),
        pipeline,
        cli_vars,
        redactor,
        specs,
        needed: Vec::new(),
        budget: Budget::default(),
        on_budget: args.on_budget_exceeded.mode(),
        composition: args.flags.composition.clone(),
        case: args.flags.case.clone(),
        env: env.clone(),
        data_dir: settings.data_dir.clone(),
        pinned,
    };
    if setup.comps().is_empty() {
        let names: Vec<&str> = setup
            .pipeline
            .compositions
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        return Err(usage(format!(
            "no composition named `{}`; the file has: {}",
            setup.composition.clone().unwrap_or_default(),
            names.join(", ")
        )));
    }
    setup.budget = cli_budget(args).map_err(usage)?;
    let mut needed: Vec<String> = Vec::new();
    for c in setup.comps() {
        for n in servers::needed(c, &setup.specs) {
            if !needed.contains(&n) {
                needed.push(n);
            }
        }
    }
    setup.needed = needed;
    Ok(setup)
}

impl Setup {
    /// The compositions chosen (`--composition`, else every one).
    pub fn comps(&self) -> Vec<&Composition> {
        self.pipeline
            .compositions
            .iter()
            .filter(|c| self.composition.as_ref().is_none_or(|n| &c.name == n))
            .collect()
    }

    /// `--case`, when given.
    pub fn case(&self) -> Option<&str> {
        self.case.as_deref()
    }

    /// The case rows of `comp` a run takes (`--case`, else every one); a
    /// composition without cases runs once, with none.
    pub fn rows<'c>(&self, comp: &'c Composition) -> Vec<Option<&'c Case>> {
        if comp.cases.is_empty() {
            return vec![None];
        }
        comp.cases
            .iter()
            .filter(|k| self.case.as_ref().is_none_or(|n| &k.name == n))
            .map(Some)
            .collect()
    }

    /// The file's `vars:` with `--var` over them.
    pub fn file_vars(&self) -> IndexMap<String, Value> {
        let mut vars = self.pipeline.vars.clone();
        vars.extend(self.cli_vars.clone());
        vars
    }

    /// The session of one row of `comp`: its vars (the file's, the row's,
    /// then `--var`), budget, expectations and default `timeout`.
    pub fn config(
        &self,
        comp: &Composition,
        row: Option<&Case>,
        timeout: Option<std::time::Duration>,
    ) -> SessionConfig {
        let mut vars = self.pipeline.vars.clone();
        if let Some(r) = row {
            vars.extend(r.vars.clone());
        }
        vars.extend(self.cli_vars.clone());
        SessionConfig {
            file: self.name.clone(),
            case: row.map(|r| r.name.clone()),
            vars,
            budget: self.budget.or(comp.budget).or(self.pipeline.budget),
            on_budget: self.on_budget,
            default_timeout: timeout,
            expect: Case::expectations(row, comp),
            env: self.env.clone(),
            pinned: self.pinned.clone(),
            ..SessionConfig::default()
        }
    }

    /// Connects the servers the chosen compositions need (or the
    /// cassette's stand-ins), priced by `--pricing-table` and the file's
    /// `pricing:`: `Err` is the exit code, the reason printed.
    pub async fn connect(
        &self,
        spend: &SpendArgs,
        connect: &ConnectOptions,
    ) -> Result<Prepared, u8> {
        let table = super::spend::pricing_table(spend, &self.pipeline).map_err(usage)?;
        super::spend::prepare(
            spend,
            table,
            &self.specs,
            &self.needed,
            (&self.redactor, connect),
        )
        .await
    }
}

/// The servers a run of `pipeline` talks to, with what resolving them used.
struct Servers {
    cli_vars: IndexMap<String, Value>,
    redactor: Redactor,
    specs: IndexMap<String, ServerSpec>,
}

/// Adds `--servers-from` files to the pipeline's servers, resolves them
/// with `--server` and `--url` (and the vars they use), and points nodes
/// that name no server at the one they call.
fn servers_of(
    args: &RunArgs,
    pipeline: &mut Pipeline,
    env: &Environment,
) -> Result<Servers, String> {
    let file_only = servers::only_declared(pipeline);
    for p in &args.servers_from {
        pipewright_engine::mcp::client_config::add_to(pipeline, p, env)?;
    }
    let cli_vars = parse_vars(&args.flags.vars)?;
    let redactor = Redactor::default();
    let mut file_vars = pipeline.vars.clone();
    file_vars.extend(cli_vars.clone());
    let specs = servers::resolve(
        pipeline,
        &args.flags.server.servers,
        args.flags.server.url.as_deref(),
        &file_vars,
        env,
        &redactor,
    )?;
    servers::assign_default(pipeline, file_only, &specs);
    Ok(Servers {
        cli_vars,
        redactor,
        specs,
    })
}

/// The budget the flags set (`--max-cost`, `--max-tokens`,
/// `--max-duration`).
fn cli_budget(args: &RunArgs) -> Result<Budget, String> {
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
