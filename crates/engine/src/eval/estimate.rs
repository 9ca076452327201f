//! What judging a run would cost, before it runs (`plan`, `run --dry-run`,
//! the workbench's estimate): each metric's prompt built as the judge
//! would get it, from the composition's last saved run when there is one
//! (its outputs, its calls) or else from the file alone (outputs not known
//! yet, so the figure is a floor), its tokens counted (o200k) and priced by
//! the pricing table's `models:`.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

use super::grade::reply_tokens;
use super::judge::{price_of, request};
use super::material::{self, Subject};
use super::metrics::{self, Prepared};
use super::provider::Endpoint;
use crate::cost::pricing::ModelPrice;
use crate::file::model::Composition;
use crate::json::Json;
use crate::mcp::ToolInfo;
use crate::run::trace::{NodeRecord, NodeStatus, Trace};

/// One metric's judge call as a plan shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeProjection {
    pub metric: String,
    /// The prompt and its version.
    pub prompt: String,
    /// The model that would judge (none when deferred).
    pub model: Option<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    /// `last run`, or `file only` (outputs not known yet: a floor).
    pub basis: String,
    /// Why no call would be made: deferred (no judge), or decided without
    /// the judge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_call: Option<String>,
}

/// The judge calls a run of `comp` (with `vars`) would make: `endpoint` is
/// the judge, or why no call is made (`deferred: …`, or answered from a
/// cassette); `last` the composition's newest saved run, if any.
pub fn project(
    comp: &Composition,
    vars: &IndexMap<String, Value>,
    endpoint: Result<&Endpoint, &str>,
    models: &IndexMap<String, ModelPrice>,
    lists: &IndexMap<String, Vec<ToolInfo>>,
    last: Option<&Trace>,
) -> Vec<JudgeProjection> {
    if comp.eval.is_empty() {
        return Vec::new();
    }
    let (trace, basis) = match last {
        Some(t) => (t.clone(), "last run"),
        None => (sketch(comp, vars), "file only"),
    };
    let tools = if lists.is_empty() {
        trace.eval_tools.clone()
    } else {
        material::tools_seen(&trace, lists)
    };
    let subject = Subject {
        trace: &trace,
        comp,
        tools: &tools,
    };
    comp.eval
        .metrics
        .iter()
        .map(|m| {
            let base = JudgeProjection {
                metric: m.name().to_owned(),
                prompt: String::new(),
                model: None,
                input_tokens: 0,
                output_tokens: 0,
                cost_usd: 0.0,
                basis: basis.to_owned(),
                no_call: None,
            };
            let e = match endpoint {
                Ok(e) => e,
                Err(why) => {
                    return JudgeProjection {
                        no_call: Some(why.to_owned()),
                        ..base
                    };
                }
            };
            match metrics::prepare(m, &subject) {
                Prepared::Decided(_) => JudgeProjection {
                    no_call: Some("decided without the judge".into()),
                    ..base
                },
                Prepared::Ask(ask) => {
                    let req = request(&ask.prompt, &ask.material, Some(e));
                    let items = ["criteria", "questions", "calls"]
                        .iter()
                        .filter_map(|k| ask.material.get(k).and_then(Value::as_array).map(Vec::len))
                        .sum();
                    let out = reply_tokens(m, items, e.max_tokens);
                    JudgeProjection {
                        prompt: ask.prompt.id.to_owned(),
                        model: Some(e.model.clone()),
                        input_tokens: req.tokens,
                        output_tokens: out,
                        cost_usd: price_of(models, &e.model)
                            .map_or(0.0, |p| p.cost(req.tokens, out)),
                        ..base
                    }
                }
            }
        })
        .collect()
}

/// A run as the file alone says it: every node called with its arguments
/// as written, no output yet.
fn sketch(comp: &Composition, vars: &IndexMap<String, Value>) -> Trace {
    let mut t = Trace::default();
    t.composition.name = comp.name.clone();
    t.composition.ran = true;
    t.composition.status = crate::run::trace::RunStatus::Completed;
    t.vars = vars.clone();
    for n in &comp.nodes {
        t.nodes.insert(
            n.id.clone(),
            NodeRecord {
                id: n.id.clone(),
                tool: n.tool.clone(),
                server: n.server.clone(),
                status: NodeStatus::Ok,
                args: Json::from_value(n.args.clone()),
                attempts: u32::from(n.mock.is_none()),
                mocked: n.mock.is_some(),
                ..NodeRecord::default()
            },
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::open::load_str;

    #[test]
    fn a_plan_prices_each_metric_from_the_file_alone() {
        let loaded = load_str(
            "compositions:\n  - name: judged\n    description: Find packages about a query.\n    nodes:\n      - id: search\n        tool: search_packages\n        args: { query: \"${var.query}\" }\n    output: search\n    eval:\n      mcp_task_completion: { threshold: 0.8 }\n      rubric:\n        criteria: [{ name: covers query, weight: 1.0 }]\n",
        );
        let p = loaded
            .valid()
            .unwrap_or_else(|| panic!("{:?}", loaded.diagnostics));
        let comp = &p.compositions[0];
        let mut models = IndexMap::new();
        models.insert(
            "gpt-4o-mini".to_owned(),
            ModelPrice {
                input_per_mtok: 0.15,
                output_per_mtok: 0.6,
            },
        );
        let e = Endpoint::new("http://127.0.0.1:9/v1", "gpt-4o-mini", None);
        let got = project(
            comp,
            &IndexMap::new(),
            Ok(&e),
            &models,
            &IndexMap::new(),
            None,
        );
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].prompt, "mcp_task_completion@1");
        assert!(got[0].input_tokens > 300, "{got:?}");
        assert!(got[0].cost_usd > 0.0);
        assert_eq!(got[0].basis, "file only");
        let none = project(
            comp,
            &IndexMap::new(),
            Err("deferred: no judge"),
            &models,
            &IndexMap::new(),
            None,
        );
        assert_eq!(none[1].no_call.as_deref(), Some("deferred: no judge"));
        assert_eq!(none[1].cost_usd, 0.0);
    }
}
