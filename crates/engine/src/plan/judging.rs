//! The judge's calls in a plan: each `eval:` metric's projected call
//! (from `engine::eval::estimate`) added after the nodes', counted in the
//! plan's cost and tokens and checked against its budget like a node.

use crate::cost::pricing::Figures;
use crate::eval::estimate::JudgeProjection;
use crate::file::model::Budget;
use crate::plan::dry_run::{CompositionPlan, NodeBreach};
use crate::run::budget::{self, Caps, Projection, Spent};

/// Adds `judge` to `plan`: its totals, and a breach for each cap a judge
/// call would trip.
pub fn add(plan: &mut CompositionPlan, judge: Vec<JudgeProjection>, budget: Budget) {
    let mut spent = Spent {
        cost_usd: plan.cost_total,
        tokens: plan.tokens_total,
        elapsed: std::time::Duration::ZERO,
    };
    for j in judge.iter().filter(|j| j.no_call.is_none()) {
        let f = Figures {
            cost_usd: j.cost_usd,
            tokens: j.input_tokens + j.output_tokens,
            model: j.model.clone(),
            ..Figures::default()
        };
        let p = Projection {
            calls: 1,
            calls_known: true,
            per_call: f.clone(),
            total: f,
        };
        let caps = Caps {
            run: budget,
            per_call_cost: None,
            per_call_tokens: None,
        };
        let id = format!("eval {}", j.metric);
        for b in budget::breaches(&id, caps, spent, &p) {
            if !plan.verdict.breaches.iter().any(|x| x.breach.cap == b.cap) {
                plan.verdict.breaches.push(NodeBreach {
                    node: id.clone(),
                    breach: b,
                });
            }
        }
        spent.cost_usd += p.total.cost_usd;
        spent.tokens += p.total.tokens;
    }
    plan.cost_total = spent.cost_usd;
    plan.tokens_total = spent.tokens;
    plan.verdict.within_budget = plan.verdict.breaches.is_empty();
    plan.judge = judge;
}
