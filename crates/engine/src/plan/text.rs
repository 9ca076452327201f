//! The plan as text, the same words wherever it is shown: `pipewright
//! plan` prints it and the workbench's dry-run and estimate views draw it.

use crate::cost::pricing::Source;
use crate::plan::dry_run::{CompositionPlan, PlannedCall};

/// One composition's plan: a header, a line per node (wave, id, call,
/// calls, projected cost and tokens, where the figure comes from), its
/// arguments and problems, the totals and the budget verdict.
pub fn composition(file: &str, c: &CompositionPlan) -> String {
    composition_as(file, c, View::Full)
}

/// Which part of the plan to show: `plan` prints it all; the workbench's
/// dry run (`d`) shows the waves and resolved args, its estimate (`e`)
/// the cost of each call, the totals and the budget verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Everything, as `pipewright plan` prints it.
    Full,
    /// The waves, each node's call and its resolved args; no prices.
    DryRun,
    /// Each call's projected cost and tokens, the totals and the budget.
    Estimate,
}

/// The plan of one composition as `view` shows it, in `plan`'s words.
pub fn composition_as(file: &str, c: &CompositionPlan, view: View) -> String {
    let mut out = String::new();

    let case = c
        .case
        .as_ref()
        .map(|k| format!(" [{k}]"))
        .unwrap_or_default();
    out.push_str(&format!(
        "plan {file} · {}{case} · {} wave(s)\n",
        c.name,
        c.waves.len()
    ));
    let id_w = c.calls.iter().map(|n| n.id.len()).max().unwrap_or(0);
    let tool_w = c
        .calls
        .iter()
        .map(|n| call_name(n).chars().count())
        .max()
        .unwrap_or(0);
    let mut wave = usize::MAX;
    for n in &c.calls {
        if view == View::DryRun && n.wave != wave {
            wave = n.wave;
            let ids = c.waves.get(wave).map(|w| w.join(", ")).unwrap_or_default();
            out.push_str(&format!("  wave {wave}: {ids}\n"));
        }
        let p = &n.projection;
        let calls = match (n.mocked, p.calls_known, p.calls) {
            (true, _, _) => "mock".to_owned(),
            (_, false, _) => "×?".to_owned(),
            (_, true, k) => format!("×{k}"),
        };
        let price = if n.mocked || view == View::DryRun {
            String::new()
        } else {
            format!(
                "${:.4} {:>6} tok  ({})",
                p.total.cost_usd,
                p.total.tokens,
                source_label(p.total.source)
            )
        };
        let line = format!(
            "  {}  {:<id_w$}  {:<tool_w$}  {:<4}  {}",
            n.wave,
            n.id,
            call_name(n),
            calls,
            price
        );
        out.push_str(line.trim_end());
        out.push('\n');
        if !n.mocked && view != View::Estimate {
            out.push_str(&format!("       args {}\n", n.args));
        }
        for e in &n.errors {
            out.push_str(&format!("       ! {e}\n"));
        }
    }
    if view == View::DryRun {
        out.push_str(&format!(
            "  total {} call(s) in {} wave(s)\n",
            c.calls_total,
            c.waves.len()
        ));
        return out;
    }
    for j in &c.judge {
        let line = match &j.no_call {
            Some(why) => format!("  eval  {}  {why}", j.metric),
            None => format!(
                "  eval  {}  judge {}  ${:.4} {:>6} tok  ({}, {})",
                j.metric,
                j.model.as_deref().unwrap_or("?"),
                j.cost_usd,
                j.input_tokens + j.output_tokens,
                j.prompt,
                j.basis
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    let judged = c.judge.iter().filter(|j| j.no_call.is_none()).count();
    let judge_calls = if judged > 0 {
        format!(" + {judged} judge call(s)")
    } else {
        String::new()
    };
    out.push_str(&format!(
        "  total {} call(s){judge_calls} · ${:.4} · {} tok\n",
        c.calls_total, c.cost_total, c.tokens_total
    ));
    let b = &c.budget;
    let mut caps = Vec::new();
    if let Some(v) = b.max_cost_usd {
        caps.push(format!("max_cost_usd ${v:.4}"));
    }
    if let Some(v) = b.max_tokens {
        caps.push(format!("max_tokens {v}"));
    }
    if let Some(v) = b.max_duration_ms {
        caps.push(format!("max_duration {v} ms"));
    }
    if let Some(v) = b.max_cost_per_call_usd {
        caps.push(format!("max_cost_per_call ${v:.4}"));
    }
    let caps = if caps.is_empty() {
        "no caps".to_owned()
    } else {
        caps.join(" · ")
    };
    if c.verdict.within_budget {
        out.push_str(&format!("  budget {caps} → within budget\n"));
    } else {
        out.push_str(&format!("  budget {caps} → OVER BUDGET\n"));
        for b in &c.verdict.breaches {
            out.push_str(&format!(
                "    {} trips at `{}`: {}\n",
                b.breach.cap, b.node, b.breach.detail
            ));
        }
    }
    out
}

fn call_name(n: &PlannedCall) -> String {
    match (&n.server, n.mocked) {
        (_, true) => n.tool.clone(),
        (Some(s), false) => format!("{s}/{}", n.tool),
        (None, false) => n.tool.clone(),
    }
}

fn source_label(s: Source) -> &'static str {
    match s {
        Source::Meta => "server _meta",
        Source::Table => "pricing table",
        Source::Recorded => "last run",
        Source::Cassette => "cassette, free",
        Source::None => "no price",
    }
}
