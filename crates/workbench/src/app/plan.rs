//! What the workbench asks the engine about the plan on screen: the
//! vars, prices, budget and plan `run` and `plan` would use for the same
//! file, composition and case.

use super::*;

impl App {
    /// The case row in use: `--case`, else the composition's first.
    pub(crate) fn case_row<'c>(
        &self,
        comp: &'c Composition,
    ) -> Option<&'c pipewright_engine::file::model::Case> {
        match &self.opts.case {
            Some(name) => comp.cases.iter().find(|c| &c.name == name),
            None => comp.cases.first(),
        }
    }

    /// `${var.X}` values: file `vars:` < case row < `--var`.
    pub(crate) fn vars(&self, pipeline: &Pipeline, comp: &Composition) -> IndexMap<String, Value> {
        let mut vars = pipeline.vars.clone();
        if let Some(r) = self.case_row(comp) {
            vars.extend(r.vars.clone());
        }
        vars.extend(self.opts.vars.clone());
        vars
    }

    pub(super) fn session_config(&self, pipeline: &Pipeline, comp: &Composition) -> SessionConfig {
        let row = self.case_row(comp);
        let vars = self.vars(pipeline, comp);
        let expect = pipewright_engine::file::model::Case::expectations(row, comp);
        SessionConfig {
            pricing: Arc::new(self.pricing(pipeline, comp)),
            file: self.opts.file.display().to_string(),
            case: row.map(|r| r.name.clone()),
            vars,
            budget: comp.budget.or(pipeline.budget),
            default_timeout: self.opts.timeout,
            expect,
            env: self.opts.settings.env.clone(),
            // A tool list read again mid-run is checked against the lock.
            pinned: pipewright_engine::lock::Lock::read_for(self.editor.path())
                .ok()
                .flatten()
                .map(|lock| {
                    Arc::new(pipewright_engine::lock::Pinned {
                        lock,
                        strict: pipeline.lock_strict,
                        handshakes: Default::default(),
                    })
                }),
            ..SessionConfig::default()
        }
    }

    /// The prices a run is checked against, built as `run` and `plan`
    /// build them: the bundled table with the file's `pricing:` over it (a
    /// bad inline table is the loader's to report), and the server that
    /// nodes naming none call.
    pub(crate) fn pricing(&self, pipeline: &Pipeline, comp: &Composition) -> Pricing {
        let base = PricingTable::bundled();
        let table = match pipeline.pricing.as_ref().map(PricingTable::from_value) {
            Some(Ok(over)) => base.overlay(over),
            _ => base,
        };
        let vars = self.vars(pipeline, comp);
        let default = pipewright_engine::mcp::servers::resolve(
            pipeline,
            &self.opts.servers,
            self.opts.url.as_deref(),
            &vars,
            &self.opts.settings.env,
            &pipewright_engine::redact::Redactor::default(),
        )
        .ok()
        .and_then(|specs| pipewright_engine::mcp::servers::default_server(&specs));
        Pricing::new(table, default)
    }

    /// What `pipewright plan` says of the composition and case on screen:
    /// the same function on the same inputs (prices, the recorded figures
    /// of this file's latest saved run, the vars, the budget in force).
    pub fn plan_model(&self) -> Option<pipewright_engine::plan::dry_run::CompositionPlan> {
        let (p, c) = (self.pipeline.as_deref()?, self.comp.as_deref()?);
        let mut pricing = self.pricing(p, c);
        let case = self.case_row(c).map(|r| r.name.clone());
        let file = self.opts.file.display().to_string();
        let last = self.dirs.data().and_then(|d| {
            pipewright_engine::run::store::Runs::at(d.join("runs")).latest_of(
                &file,
                &c.name,
                case.as_deref(),
            )
        });
        if let Some(t) = &last {
            pricing.recorded = pipewright_engine::plan::dry_run::recorded_figures(t);
        }
        let vars = self.vars(p, c);
        let run = pipewright_engine::plan::dry_run::PlannedRun {
            case,
            vars: &vars,
            env: &self.opts.settings.env,
            budget: self.budget(),
            max_cost_per_call: None,
        };
        let mut plan = pipewright_engine::plan::dry_run::plan_composition(
            c,
            run,
            &pricing,
            &pipewright_engine::redact::Redactor::default(),
        );
        if !c.eval.is_empty() {
            let last: Option<Trace> = last.and_then(|v| serde_json::from_value(v).ok());
            let endpoint = pipewright_engine::eval::Sources::of(
                self.opts.judge.clone(),
                p,
                self.dirs.config(),
                &self.opts.settings.env,
            )
            .and_then(|s| s.endpoint(c, &vars, &pipewright_engine::redact::Redactor::default()))
            .map_err(|e| format!("deferred: {e}"));
            let judge = pipewright_engine::eval::estimate::project(
                c,
                &vars,
                endpoint.as_ref().map_err(String::as_str),
                &pricing.table.models,
                &IndexMap::new(),
                last.as_ref(),
            );
            pipewright_engine::plan::judging::add(&mut plan, judge, self.budget());
        }
        Some(plan)
    }

    /// The budget in force, for the status bar.
    pub fn budget(&self) -> Budget {
        match (&self.pipeline, &self.comp) {
            (Some(p), Some(c)) => c.budget.or(p.budget),
            _ => Budget::default(),
        }
    }
}
