//! The dry-run plan of a composition: execution order and waves, every call
//! with its arguments resolved as far as they can be before anything runs,
//! projected cost and tokens per call and in total, and the budget verdict.
//! Nothing is called. The CLI's `plan` prints it; the workbench's dry-run
//! view draws it.

use std::collections::HashMap;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use crate::cost::pricing::{Figures, Pricing, Source};
use crate::environment::Environment;
use crate::file::model::{Budget, Case, Composition, Pipeline};
use crate::lang::reference;
use crate::plan::preflight::{self, ToolLists, dry_scope};
use crate::redact::Redactor;
use crate::run::budget::{self, Breach, Caps, Projection, Spent};

/// One node of the plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedCall {
    pub id: String,
    /// Index of the wave the node runs in (0 first).
    pub wave: usize,
    /// The server it calls (`None`: mocked, or the only server).
    pub server: Option<String>,
    pub tool: String,
    /// Arguments resolved as far as possible: `<from find.users[0].id>`
    /// waits on a node, `<env.X>` is a secret left out.
    pub args: Value,
    /// References that wait on nodes that have not run.
    pub pending: usize,
    /// References that would fail at run time.
    pub errors: Vec<String>,
    pub mocked: bool,
    /// The `for_each` source, when the node fans out.
    pub for_each: Option<String>,
    /// Projected calls, cost and tokens.
    pub projection: Projection,
}

/// The budget a composition runs under, as the plan shows it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct BudgetView {
    pub max_cost_usd: Option<f64>,
    pub max_tokens: Option<u64>,
    pub max_duration_ms: Option<u64>,
    pub max_cost_per_call_usd: Option<f64>,
}

/// Whether the projected run stays within its budget.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Verdict {
    pub within_budget: bool,
    /// Every cap the projection would trip, at the node it trips at, in
    /// run order (the first one is what a run would report).
    pub breaches: Vec<NodeBreach>,
}

/// A cap tripped at a node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeBreach {
    pub node: String,
    #[serde(flatten)]
    pub breach: Breach,
}

/// The plan of one composition (or one case of it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompositionPlan {
    pub name: String,
    pub case: Option<String>,
    /// Node ids in the order a sequential run dispatches them.
    pub order: Vec<String>,
    /// Node ids grouped by wave: a wave's nodes can run together.
    pub waves: Vec<Vec<String>>,
    /// Every node, in `order`.
    pub calls: Vec<PlannedCall>,
    pub cost_total: f64,
    pub tokens_total: u64,
    /// Tool calls (fan-out iterations counted, mocks not).
    pub calls_total: usize,
    pub budget: BudgetView,
    pub verdict: Verdict,
    /// The judge's calls for `eval:`, after the nodes' (in the totals and
    /// the verdict; see [`crate::plan::judging`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub judge: Vec<crate::eval::estimate::JudgeProjection>,
}

/// The plan of a whole file: each composition (and case) and what
/// preflight found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub file: String,
    pub compositions: Vec<CompositionPlan>,
    pub preflight: crate::plan::preflight::Preflight,
}

impl Plan {
    /// True when every composition's projection stays within its budget.
    pub fn within_budget(&self) -> bool {
        self.compositions.iter().all(|c| c.verdict.within_budget)
    }
}

/// One run of a composition as a plan sees it.
#[derive(Debug, Clone)]
pub struct PlannedRun<'a> {
    /// The case row it runs, if any.
    pub case: Option<String>,
    /// Its `${var.X}` values.
    pub vars: &'a IndexMap<String, Value>,
    /// What its `${env.X}` read (only whether each is set shows).
    pub env: &'a Environment,
    /// The budget in force.
    pub budget: Budget,
    /// `--max-cost-per-call`: a per-call cap for nodes that set none.
    pub max_cost_per_call: Option<f64>,
}

/// Plans `comp` run as `run` says. Values of `${env.X}` never appear.
pub fn plan_composition(
    comp: &Composition,
    run: PlannedRun<'_>,
    pricing: &Pricing,
    redactor: &Redactor,
) -> CompositionPlan {
    let PlannedRun {
        case,
        vars,
        env,
        budget,
        max_cost_per_call,
    } = run;
    let mut wave_of = vec![0; comp.nodes.len()];
    for (w, wave) in comp.waves.iter().enumerate() {
        for &i in wave {
            wave_of[i] = w;
        }
    }
    let mut calls = Vec::with_capacity(comp.nodes.len());
    let mut spent = Spent::default();
    let mut breaches: Vec<NodeBreach> = Vec::new();
    let mut calls_total = 0;
    let ids = preflight::ids(comp);
    let vars = Arc::new(vars.clone());
    for &i in &comp.order {
        let node = &comp.nodes[i];
        let scope = dry_scope(comp, i, &vars, env, &ids);
        let partial = reference::resolve_value_partial(&node.args, &scope);
        let projection = budget::project_node(pricing, node, &scope, budget::max_items(budget));
        let caps = Caps::of(node, budget, max_cost_per_call);
        for b in budget::breaches(&node.id, caps, spent, &projection) {
            if !breaches.iter().any(|x| x.breach.cap == b.cap) {
                breaches.push(NodeBreach {
                    node: node.id.clone(),
                    breach: b,
                });
            }
        }
        spent.cost_usd += projection.total.cost_usd;
        spent.tokens += projection.total.tokens;
        calls_total += projection.calls;
        calls.push(PlannedCall {
            id: node.id.clone(),
            wave: wave_of[i],
            server: node
                .mock
                .is_none()
                .then(|| pricing.server(node.server.as_deref()).map(str::to_owned))
                .flatten(),
            tool: node.tool.clone(),
            args: redactor.value(&partial.value),
            pending: partial.pending,
            errors: partial
                .errors
                .iter()
                .map(|e| redactor.text(&e.to_string()))
                .collect(),
            mocked: node.mock.is_some(),
            for_each: node.for_each.as_ref().map(|f| f.source.clone()),
            projection,
        });
    }
    let ids =
        |v: &[usize]| -> Vec<String> { v.iter().map(|&i| comp.nodes[i].id.clone()).collect() };
    CompositionPlan {
        name: comp.name.clone(),
        case,
        order: ids(&comp.order),
        waves: comp.waves.iter().map(|w| ids(w)).collect(),
        calls,
        cost_total: spent.cost_usd,
        tokens_total: spent.tokens,
        calls_total,
        budget: BudgetView {
            max_cost_usd: budget.max_cost_usd,
            max_tokens: budget.max_tokens,
            max_duration_ms: budget.max_duration.map(|d| d.as_millis() as u64),
            max_cost_per_call_usd: max_cost_per_call,
        },
        verdict: Verdict {
            within_budget: breaches.is_empty(),
            breaches,
        },
        judge: Vec::new(),
    }
}

/// Plans every composition and case of `pipeline` as a driver without
/// flags would run it (file `vars:` < case row < `vars`; composition
/// `budget:` over the file's), with preflight against `tools` (each
/// server's `tools/list`). The workbench's dry-run view draws this.
pub fn plan_pipeline(
    file: &str,
    pipeline: &Pipeline,
    vars: &IndexMap<String, Value>,
    env: &Environment,
    tools: &ToolLists,
    pricing: &Pricing,
    redactor: &Redactor,
) -> Plan {
    let mut runs: Vec<(&Composition, Option<String>, IndexMap<String, Value>)> = Vec::new();
    for comp in &pipeline.compositions {
        let rows: Vec<Option<&Case>> = if comp.cases.is_empty() {
            vec![None]
        } else {
            comp.cases.iter().map(Some).collect()
        };
        for row in rows {
            let mut v = pipeline.vars.clone();
            if let Some(r) = row {
                v.extend(r.vars.clone());
            }
            v.extend(vars.clone());
            runs.push((comp, row.map(|r| r.name.clone()), v));
        }
    }
    let checks: Vec<(&Composition, IndexMap<String, Value>)> =
        runs.iter().map(|(c, _, v)| (*c, v.clone())).collect();
    let preflight = preflight::check(&checks, tools, pricing.default_server.as_deref(), env);
    let compositions = runs
        .into_iter()
        .map(|(comp, case, v)| {
            let budget = comp.budget.or(pipeline.budget);
            let run = PlannedRun {
                case,
                vars: &v,
                env,
                budget,
                max_cost_per_call: None,
            };
            plan_composition(comp, run, pricing, redactor)
        })
        .collect();
    Plan {
        file: file.to_owned(),
        compositions,
        preflight,
    }
}

/// Per-call figures an earlier run recorded, by node id, read from its
/// trace envelope: what `plan` projects with before the pricing table.
/// Mocked, replayed and never-called nodes are left out.
pub fn recorded_figures(trace: &Value) -> HashMap<String, Figures> {
    let mut out = HashMap::new();
    let Some(nodes) = trace.get("nodes").and_then(Value::as_object) else {
        return out;
    };
    for (id, rec) in nodes {
        let flag = |k: &str| rec.get(k).and_then(Value::as_bool).unwrap_or(false);
        let attempts = rec.get("attempts").and_then(Value::as_u64).unwrap_or(0);
        if flag("mocked") || flag("replayed") || attempts == 0 {
            continue;
        }
        let calls = rec
            .get("iterations")
            .and_then(Value::as_array)
            .map_or(1, |a| a.len().max(1)) as f64;
        let cost = rec.get("cost_usd").and_then(Value::as_f64).unwrap_or(0.0);
        let tokens = rec.get("tokens").and_then(Value::as_u64).unwrap_or(0);
        out.insert(
            id.clone(),
            Figures {
                cost_usd: cost / calls,
                tokens: (tokens as f64 / calls).ceil() as u64,
                model: rec.get("model").and_then(Value::as_str).map(str::to_owned),
                source: Source::Recorded,
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::pricing::PricingTable;
    use crate::file::open::load_str;
    use serde_json::json;

    #[test]
    fn plans_waves_args_costs_and_verdict() {
        let loaded = load_str(
            "budget: {max_cost_usd: 0.25}\ncompositions:\n  - name: c\n    nodes:\n      - id: a\n        mock: {result: {ids: [1, 2, 3]}}\n      - id: b\n        needs: [a]\n        tool: paid\n        for_each: \"${a.ids}\"\n        args: {id: \"${item}\"}\n      - id: c\n        needs: [b]\n        tool: paid\n        args: {first: \"${b[0].x}\", q: \"${var.Q}\"}\n",
        );
        let p = loaded
            .valid()
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let table = PricingTable::parse("tools:\n  paid: {cost_usd: 0.1}\n", "t")
            .unwrap_or_else(|e| panic!("{e}"));
        let pricing = Pricing::new(table, Some("demo".into()));
        let mut vars = IndexMap::new();
        vars.insert("Q".into(), json!("alice"));
        let comp = &p.compositions[0];
        let plan = plan_composition(
            comp,
            PlannedRun {
                case: None,
                vars: &vars,
                env: &Environment::default(),
                budget: p.budget,
                max_cost_per_call: None,
            },
            &pricing,
            &Redactor::default(),
        );
        assert_eq!(plan.waves, [vec!["a"], vec!["b"], vec!["c"]]);
        assert_eq!(plan.calls[1].projection.calls, 3);
        assert_eq!(
            plan.calls[2].args,
            json!({"first": "<from b[0].x>", "q": "alice"})
        );
        assert_eq!(plan.calls[2].pending, 1);
        assert_eq!(plan.calls_total, 4);
        assert!((plan.cost_total - 0.4).abs() < 1e-9);
        assert!(!plan.verdict.within_budget);
        assert_eq!(
            plan.verdict.breaches[0].node, "b",
            "three calls of 0.1 pass 0.25"
        );
        assert_eq!(plan.verdict.breaches[0].breach.cap, "max_cost_usd");
    }

    #[test]
    fn plans_a_whole_pipeline_with_preflight() {
        let loaded = load_str(
            "compositions:\n  - name: c\n    nodes:\n      - id: a\n        tool: serch\n        args: {q: \"${var.Q}\"}\n      - id: b\n        needs: [a]\n        tool: wipe\n        args: {id: \"${a.id}\"}\n    cases:\n      - {name: one, vars: {Q: x}}\n      - {name: two, vars: {Q: y}}\n",
        );
        let p = loaded
            .valid()
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let tool = |name: &str, destructive: bool| {
            crate::mcp::ToolInfo::from_json(json!({
                "name": name,
                "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}},
                "annotations": {"destructiveHint": destructive}
            }))
            .unwrap_or_else(|| panic!("tool"))
        };
        let mut tools = ToolLists::new();
        tools.insert(
            "demo".into(),
            vec![tool("search", false), tool("wipe", true)],
        );
        let pricing = Pricing::new(PricingTable::default(), Some("demo".into()));
        let plan = plan_pipeline(
            "f.yml",
            p,
            &IndexMap::new(),
            &Environment::default(),
            &tools,
            &pricing,
            &Redactor::default(),
        );
        assert_eq!(plan.compositions.len(), 2);
        assert_eq!(plan.compositions[1].calls[0].args, json!({"q": "y"}));
        // One problem however many cases share it; the hint names the tool.
        assert_eq!(plan.preflight.problems.len(), 1, "{:?}", plan.preflight);
        assert_eq!(
            plan.preflight.problems[0].hint.as_deref(),
            Some("did you mean `search`?")
        );
        assert_eq!(plan.preflight.destructive.len(), 1);
        assert_eq!(plan.preflight.destructive[0].node, "b");
        assert!(plan.within_budget());
    }

    #[test]
    fn recorded_figures_are_per_call() {
        let t = json!({"nodes": {
            "a": {"attempts": 1, "cost_usd": 0.3, "tokens": 30, "iterations": [{}, {}, {}]},
            "m": {"attempts": 1, "mocked": true, "cost_usd": 0.0},
            "s": {"attempts": 0}
        }});
        let r = recorded_figures(&t);
        assert_eq!(r.len(), 1);
        assert!((r["a"].cost_usd - 0.1).abs() < 1e-9);
        assert_eq!(r["a"].tokens, 10);
    }
}
