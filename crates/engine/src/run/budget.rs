//! Budget gates checked before a call is dispatched: the projected figures
//! of the next call (every fan-out iteration included) against the per-call
//! caps, and the running totals plus the projection against the run's caps.
//! The session trips on the first cap that fires; `plan` reports every one.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::cost::pricing::{Figures, Pricing};
use crate::file::model::{Budget, Node};
use crate::lang::reference::{self, resolve_value_partial};
use crate::lang::snapshot::{ItemScope, Snapshot, resolve_args};

/// The projected figures of dispatching one node.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Projection {
    /// How many calls the node makes (fan-out iterations; 0 when mocked).
    pub calls: usize,
    /// False when a fan-out's item count is not known yet (counted as 1).
    pub calls_known: bool,
    /// The dearest single call (highest cost and highest tokens).
    pub per_call: Figures,
    /// Every call together.
    pub total: Figures,
}

/// Projects node `node` as `scope` sees it now. A fan-out over more than
/// `max_items` items is not projected item by item (it will be refused
/// before any call): only its count is known.
pub fn project_node(
    pricing: &Pricing,
    node: &Node,
    scope: &Snapshot,
    max_items: usize,
) -> Projection {
    if node.mock.is_some() {
        return Projection {
            calls_known: true,
            ..Projection::default()
        };
    }
    let resolved = node
        .for_each
        .as_ref()
        .map(|fe| reference::resolve_reference_shared(&fe.site.reference, scope));
    let (items, calls_known): (Vec<Option<(usize, &Value)>>, bool) = match resolved.as_ref() {
        None => (vec![None], true),
        Some(Ok(items)) => match items.as_ref() {
            Value::Array(items) if items.len() > max_items => {
                return Projection {
                    calls: items.len(),
                    calls_known: true,
                    ..Projection::default()
                };
            }
            Value::Array(items) => (items.iter().enumerate().map(Some).collect(), true),
            _ => (vec![None], false),
        },
        Some(Err(_)) => (vec![None], false),
    };
    let mut out = Projection {
        calls: items.len(),
        calls_known,
        ..Projection::default()
    };
    for item in items {
        // Each item seen through the node's snapshot, borrowed: nothing of
        // it is copied per item.
        let item_scope = item.map(|(index, item)| ItemScope {
            base: scope,
            item,
            index,
            aligned: &node.aligned,
        });
        let seen: &dyn reference::Scope = match &item_scope {
            Some(s) => s,
            None => scope,
        };
        let (args, resolved) = match resolve_args(&node.args, seen) {
            Ok(map) => (Value::Object(map), true),
            Err(_) => (resolve_value_partial(&node.args, seen).value, false),
        };
        let f = pricing.project(
            &node.id,
            node.server.as_deref(),
            &node.tool,
            &args,
            resolved,
        );
        out.total.cost_usd += f.cost_usd;
        out.total.tokens += f.tokens;
        out.total.source = f.source;
        if out.total.model.is_none() {
            out.total.model = f.model.clone();
        }
        out.per_call.cost_usd = out.per_call.cost_usd.max(f.cost_usd);
        out.per_call.tokens = out.per_call.tokens.max(f.tokens);
        out.per_call.source = f.source;
        out.per_call.model = out.total.model.clone();
    }
    out
}

/// The most items one fan-out may have under `budget`: its
/// `max_iterations` (run-wide), else the default cap of one node.
pub fn max_items(budget: Budget) -> usize {
    budget
        .max_iterations
        .map_or(crate::run::exec::DEFAULT_MAX_FOR_EACH, |m| {
            usize::try_from(m).unwrap_or(usize::MAX)
        })
}

/// What a run has spent so far.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spent {
    pub cost_usd: f64,
    pub tokens: u64,
    pub elapsed: Duration,
}

/// The caps that apply to one node's calls.
#[derive(Debug, Clone, Copy, Default)]
pub struct Caps {
    pub run: Budget,
    /// The node's `max_cost_per_call_usd`, else `--max-cost-per-call`.
    pub per_call_cost: Option<f64>,
    pub per_call_tokens: Option<u64>,
}

impl Caps {
    /// The caps of `node` under the run's budget and per-call flag.
    pub fn of(node: &Node, run: Budget, max_cost_per_call: Option<f64>) -> Self {
        Caps {
            run,
            per_call_cost: node.max_cost_per_call_usd.or(max_cost_per_call),
            per_call_tokens: node.max_tokens_per_call,
        }
    }
}

/// A cap that a projection would exceed: its name (as in `budget_tripped`)
/// and a sentence saying why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Breach {
    pub cap: String,
    pub detail: String,
}

/// Every cap that dispatching node `id` with projection `p` would exceed,
/// given what was `spent`.
pub fn breaches(id: &str, caps: Caps, spent: Spent, p: &Projection) -> Vec<Breach> {
    let mut out = Vec::new();
    let mut push = |cap: &str, detail: String| {
        out.push(Breach {
            cap: cap.to_owned(),
            detail,
        })
    };
    if let Some(max) = caps.run.max_duration
        && spent.elapsed >= max
    {
        push(
            "max_duration_ms",
            format!("the run has taken {:?}, its cap is {max:?}", spent.elapsed),
        );
    }
    if let Some(cap) = caps.per_call_cost.filter(|c| p.per_call.cost_usd > *c) {
        push(
            "max_cost_per_call_usd",
            format!(
                "a call of `{id}` is projected at ${:.4}, over the per-call cap of ${cap:.4}",
                p.per_call.cost_usd
            ),
        );
    }
    if let Some(cap) = caps.per_call_tokens.filter(|c| p.per_call.tokens > *c) {
        push(
            "max_tokens_per_call",
            format!(
                "a call of `{id}` is projected at {} tokens, over the per-call cap of {cap}",
                p.per_call.tokens
            ),
        );
    }
    if let Some(max) = caps
        .run
        .max_cost_usd
        .filter(|m| spent.cost_usd + p.total.cost_usd > *m)
    {
        push(
            "max_cost_usd",
            format!(
                "${:.4} spent plus ${:.4} projected for `{id}` would exceed the cap of ${max:.4}",
                spent.cost_usd, p.total.cost_usd
            ),
        );
    }
    if let Some(max) = caps
        .run
        .max_tokens
        .filter(|m| spent.tokens + p.total.tokens > *m)
    {
        push(
            "max_tokens",
            format!(
                "{} tokens used plus {} projected for `{id}` would exceed the cap of {max}",
                spent.tokens, p.total.tokens
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proj(cost: f64, tokens: u64) -> Projection {
        let f = Figures {
            cost_usd: cost,
            tokens,
            ..Figures::default()
        };
        Projection {
            calls: 1,
            calls_known: true,
            per_call: f.clone(),
            total: f,
        }
    }

    #[test]
    fn each_cap_fires_on_its_own() {
        let caps = Caps {
            run: Budget {
                max_cost_usd: Some(1.0),
                max_tokens: Some(100),
                max_duration: Some(Duration::from_secs(5)),
                max_iterations: None,
            },
            per_call_cost: Some(0.5),
            per_call_tokens: Some(50),
        };
        let spent = Spent {
            cost_usd: 0.6,
            tokens: 60,
            elapsed: Duration::from_secs(1),
        };
        let names = |p: Projection, s: Spent| -> Vec<String> {
            breaches("n", caps, s, &p)
                .into_iter()
                .map(|b| b.cap)
                .collect()
        };
        assert!(names(proj(0.1, 10), spent).is_empty());
        assert_eq!(names(proj(0.45, 10), spent), ["max_cost_usd"]);
        assert_eq!(names(proj(0.1, 45), spent), ["max_tokens"]);
        let fresh = Spent::default();
        assert_eq!(names(proj(0.6, 0), fresh), ["max_cost_per_call_usd"]);
        assert_eq!(names(proj(0.0, 60), fresh), ["max_tokens_per_call"]);
        let late = Spent {
            elapsed: Duration::from_secs(6),
            ..fresh
        };
        assert_eq!(names(proj(0.0, 0), late), ["max_duration_ms"]);
    }
}
