//! What serving a pipeline as one tool saves the agent that would make its
//! calls itself: calls, round trips (the model's turns), and tokens — the
//! definitions of the tools it used and the intermediate results it read,
//! less the served tool's own definition — counted with the engine's
//! tokenizer, as `plan` counts outputs.

use std::collections::HashMap;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::calls::Recording;
use super::draft::Draft;
use crate::cost::tokens;
use crate::file::model::{Composition, OutputSpec, Pipeline};
use crate::lang::reference::Root;
use crate::mcp::ToolInfo;
use crate::plan::dry_run::CompositionPlan;

/// The figure, for one pipeline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Savings {
    /// The calls the agent makes (served: one).
    pub calls: usize,
    /// The model turns those calls take (calls made together share one).
    pub round_trips: usize,
    /// Tokens of the definitions of the tools used.
    pub definition_tokens: u64,
    /// Tokens of the results before the last, which the agent no longer
    /// reads; `None` when not known (no run or recording to count).
    pub intermediate_tokens: Option<u64>,
    /// Tokens of the served tool's definition.
    pub served_tokens: u64,
    /// What is left: definitions and intermediate results, less the
    /// served definition (negative when serving costs more).
    pub tokens_saved: i64,
}

impl Savings {
    fn new(
        calls: usize,
        round_trips: usize,
        defs: u64,
        inter: Option<u64>,
        served: u64,
    ) -> Savings {
        let saved = defs as i64 + inter.unwrap_or(0) as i64 - served as i64;
        Savings {
            calls,
            round_trips: round_trips.max(usize::from(calls > 0)),
            definition_tokens: defs,
            intermediate_tokens: inter,
            served_tokens: served,
            tokens_saved: saved,
        }
    }

    /// One sentence.
    pub fn line(&self) -> String {
        let inter = match self.intermediate_tokens {
            Some(n) => format!("{n} of intermediate results"),
            None => "intermediate results not counted (no recorded run)".to_owned(),
        };
        format!(
            "served as one tool it saves an agent {} → 1 calls, {} → 1 round trips and {} tokens ({} of tool definitions, {inter}, less {} for the served tool)",
            self.calls,
            self.round_trips,
            self.tokens_saved,
            self.definition_tokens,
            self.served_tokens
        )
    }
}

/// The `tools/list` entry `serve` gives a composition named `name` that
/// chains `tools` and reads `params` (each with its default), as
/// `pipewright serve` writes it.
pub fn served_definition(
    name: &str,
    description: Option<&str>,
    tools: &[&str],
    params: &[(String, Option<Value>)],
) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for (p, default) in params {
        let kind = match default {
            Some(Value::Bool(_)) => "boolean",
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => "integer",
            Some(Value::Number(_)) => "number",
            Some(Value::Array(_)) => "array",
            Some(Value::Object(_)) => "object",
            _ => "string",
        };
        let mut prop = json!({"type": kind});
        match default {
            Some(d) => prop["default"] = d.clone(),
            None => required.push(Value::from(p.clone())),
        }
        props.insert(p.clone(), prop);
    }
    let description = description.map_or_else(
        || {
            format!(
                "Runs the pipeline `{name}` as one call: {}.",
                tools.join(" → ")
            )
        },
        str::to_owned,
    );
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": props, "required": required, "additionalProperties": false},
        "annotations": {"title": name},
    })
}

/// What serving the pipeline `d` written from `recs` saves, as the first
/// recording made its calls.
pub fn of_draft(d: &Draft, recs: &[Recording]) -> Savings {
    let last = d.output.unwrap_or(usize::MAX);
    let mut times = Vec::new();
    let mut used: Vec<(&str, &str)> = Vec::new();
    let mut inter = 0;
    for (k, step) in d.steps.iter().enumerate() {
        for cr in step.calls_of(0) {
            let Some(call) = recs.get(cr.session).and_then(|r| r.calls.get(cr.call)) else {
                continue;
            };
            times.push((call.at_ms, call.at_ms + call.duration_ms));
            if k != last {
                inter += tokens::count_json(&call.output);
            }
            if !used.contains(&(call.server.as_str(), call.tool.as_str())) {
                used.push((call.server.as_str(), call.tool.as_str()));
            }
        }
    }
    let defs = used
        .iter()
        .filter_map(|(_, tool)| recs.iter().find_map(|r| r.tools.get(*tool)))
        .map(tokens::count_value)
        .sum();
    let chain: Vec<&str> = d.steps.iter().map(|s| s.tool.as_str()).collect();
    let params: Vec<(String, Option<Value>)> = d
        .vars
        .iter()
        .map(|(k, v)| (k.clone(), Some(v.value.clone())))
        .collect();
    let served = tokens::count_value(&served_definition(&d.name, None, &chain, &params));
    Savings::new(
        times.len(),
        round_trips(&mut times),
        defs,
        Some(inter),
        served,
    )
}

/// How many turns calls made at these `(start, end)` times took: a call
/// that starts before every earlier one ended was made in the same turn.
pub fn round_trips(times: &mut [(f64, f64)]) -> usize {
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut turns = 0;
    let mut open_until = f64::NEG_INFINITY;
    for (start, end) in times.iter() {
        if *start >= open_until {
            turns += 1;
            open_until = *end;
        } else {
            open_until = open_until.max(*end);
        }
    }
    turns
}

/// What serving composition `comp` (planned as `plan`) saves an agent
/// that makes its calls wave by wave; `tools` are the servers' lists, and
/// `outputs` each node's output tokens from a recorded run, when one is
/// known.
pub fn of_plan(
    pipeline: &Pipeline,
    comp: &Composition,
    plan: &CompositionPlan,
    tools: &IndexMap<String, Vec<ToolInfo>>,
    outputs: Option<&HashMap<String, u64>>,
) -> Savings {
    let only = (tools.len() == 1).then(|| tools.keys().next()).flatten();
    let mut used: Vec<(&str, &str)> = Vec::new();
    for n in comp.nodes.iter().filter(|n| n.mock.is_none()) {
        let server = n
            .server
            .as_deref()
            .or(only.map(String::as_str))
            .unwrap_or("");
        if !used.contains(&(server, n.tool.as_str())) {
            used.push((server, n.tool.as_str()));
        }
    }
    let defs = used
        .iter()
        .filter_map(|(s, t)| tools.get(*s)?.iter().find(|x| x.name == *t))
        .map(|t| tokens::count_value(&t.raw))
        .sum();
    let last = match &comp.output {
        Some(OutputSpec::Node { id, .. }) => Some(id.as_str()),
        _ => comp.order.last().map(|&i| comp.nodes[i].id.as_str()),
    };
    let inter = outputs.map(|o| {
        comp.nodes
            .iter()
            .filter(|n| Some(n.id.as_str()) != last)
            .filter_map(|n| o.get(&n.id))
            .sum()
    });
    let mut params: Vec<(String, Option<Value>)> = Vec::new();
    for site in comp.nodes.iter().flat_map(|n| n.refs()) {
        if let Root::Var(name) = &site.reference.root
            && !params.iter().any(|(p, _)| p == name)
        {
            params.push((name.clone(), pipeline.vars.get(name).cloned()));
        }
    }
    let chain: Vec<&str> = comp.nodes.iter().map(|n| n.tool.as_str()).collect();
    let served = tokens::count_value(&served_definition(
        &comp.name,
        comp.description.as_deref(),
        &chain,
        &params,
    ));
    // A wave of mocks calls nothing: no turn of the agent's.
    let mut waves: Vec<usize> = plan
        .calls
        .iter()
        .filter(|c| !c.mocked)
        .map(|c| c.wave)
        .collect();
    waves.sort_unstable();
    waves.dedup();
    Savings::new(plan.calls_total, waves.len(), defs, inter, served)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::merge;
    use crate::record::testing::{Script, tool};

    #[test]
    fn calls_made_together_share_a_round_trip() {
        assert_eq!(
            round_trips(&mut [(0.0, 5.0), (1.0, 3.0), (6.0, 7.0), (7.0, 9.0)]),
            3
        );
        assert_eq!(round_trips(&mut []), 0);
    }

    #[test]
    fn a_recordings_savings_count_definitions_and_intermediate_results() {
        let mut s = Script::new(
            "2025-11-25",
            vec![
                tool(
                    "search_users",
                    json!({"query": {"type": "string", "description": "Text to find in a name or email."}}),
                ),
                tool("send_email", json!({"to": {"type": "string"}})),
            ],
        );
        s.call(
            "search_users",
            json!({"query": "alice"}),
            json!({"users": [{"id": "u1", "email": "alice@example.com"}]}),
        );
        s.call(
            "send_email",
            json!({"to": "alice@example.com"}),
            json!({"status": "queued"}),
        );
        let (d, recs) = merge::draft(vec![s.recording()], "notify").unwrap();
        let got = of_draft(&d, &recs);
        assert_eq!(got.calls, 2);
        assert_eq!(got.round_trips, 2);
        let defs: u64 = recs[0].tools.values().map(tokens::count_value).sum();
        assert_eq!(got.definition_tokens, defs);
        assert_eq!(
            got.intermediate_tokens,
            Some(tokens::count_value(
                &json!({"users": [{"id": "u1", "email": "alice@example.com"}]})
            ))
        );
        assert!(got.served_tokens > 0);
        assert_eq!(
            got.tokens_saved,
            (defs + got.intermediate_tokens.unwrap_or(0)) as i64 - got.served_tokens as i64
        );
        assert!(
            got.line()
                .starts_with("served as one tool it saves an agent 2 → 1 calls, 2 → 1 round trips"),
            "{}",
            got.line()
        );
    }
}
