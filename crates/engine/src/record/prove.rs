//! The proof by replay: before a pipeline written from a recording is
//! kept, every step's arguments are resolved against the recorded outputs
//! with the engine's own resolution (what a run would send), and a
//! reference that does not give back the recorded argument is demoted to
//! the literal, with why. Then the pipeline is run through the engine's
//! session against its cassette, offline: it must make the recorded calls
//! in the recorded order, get the recorded results, and meet its
//! `expect:`. A draft that cannot be made to pass is replaced by the
//! recording's calls with literal arguments, which always replays.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use indexmap::IndexMap;
use serde_json::Value;

use super::calls::Recording;
use super::draft::{CaseOut, Choice, Draft, Step, leaves_of};
use super::emit;
use super::infer::{expect_of, rank};
use super::merge::{output_of, prune_derived};
use crate::file::model::{Case, Composition, Pipeline};
use crate::json::Json;
use crate::lang::snapshot::{Seen, Snapshot};
use crate::mcp::caller::{CallRequest, Caller};
use crate::mcp::{CallOutcome, McpError};
use crate::redact::Redactor;
use crate::run::cassette::{Cassette, Replayer, canonical};
use crate::run::events::Event;
use crate::run::session::{self, Command, SessionConfig};
use crate::run::trace::RunStatus;

/// How many rounds of demotion the proof makes before it falls back.
const MAX_ROUNDS: usize = 8;
/// The longest a replay may take (a hang guard: a replay makes no call).
const REPLAY_LIMIT: Duration = Duration::from_secs(60);

/// What the proof did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Proof {
    /// References demoted to literals, each `step.arg: why`.
    pub demoted: Vec<String>,
    /// Replays run (one per recording with several), each of which made
    /// the recorded calls in order with the recorded results.
    pub replays: usize,
    /// Calls checked across the replays.
    pub calls: usize,
    /// Why the inferred pipeline was replaced by the literal one, if it
    /// was.
    pub fallback: Option<String>,
}

/// Why not even the literal pipeline replayed (a bug, said as such).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the pipeline written from the recording does not replay it: {0}")]
pub struct ProveError(pub String);

/// Proves `d` against `recs` (demoting what does not replay; falling back
/// to literals when that is not enough); `d` is left as it will be
/// written.
pub async fn prove(d: &mut Draft, recs: &[Recording]) -> Result<Proof, ProveError> {
    let mut proof = Proof::default();
    let mut why = String::new();
    for _ in 0..MAX_ROUNDS {
        match round(d, recs, &mut proof).await {
            Ok(true) => return Ok(proof),
            Ok(false) => continue,
            Err(e) => {
                why = e;
                break;
            }
        }
    }
    if why.is_empty() {
        why = format!("it still differed after {MAX_ROUNDS} rounds of demotion");
    }
    let mut literal = literal_draft(d, recs);
    let mut second = Proof {
        fallback: Some(why.clone()),
        ..Proof::default()
    };
    match round(&mut literal, recs, &mut second).await {
        Ok(true) => {
            *d = literal;
            Ok(second)
        }
        Ok(false) => Err(ProveError(format!(
            "{why}; written with literal arguments it still differs ({})",
            second.demoted.join("; ")
        ))),
        Err(e) => Err(ProveError(format!(
            "{why}; written with literal arguments: {e}"
        ))),
    }
}

/// One round: resolves every step statically, demoting what differs
/// (`Ok(false)`: go again); when nothing differs, replays every run
/// (`Ok(true)`: proved). `Err`: this draft cannot be proved.
async fn round(d: &mut Draft, recs: &[Recording], proof: &mut Proof) -> Result<bool, String> {
    let text = emit::pipeline(d, "cassette.json", None);
    let loaded = crate::file::open::load_str(&text);
    let Some(pipeline) = loaded
        .pipeline
        .filter(|_| !loaded.diagnostics.iter().any(|x| x.is_error()))
    else {
        let first = loaded
            .diagnostics
            .iter()
            .find(|x| x.is_error())
            .map_or_else(String::new, |x| {
                format!("line {}: {}", x.span.start.line, x.message)
            });
        return Err(format!("it does not load ({first})"));
    };
    let Some(comp) = pipeline.compositions.first() else {
        return Err("it has no composition".to_owned());
    };
    let runs = runs_of(d);
    let mut demoted = false;
    for (session, case) in &runs {
        let vars = vars_of(&pipeline, case.as_ref());
        demoted |= resolve_all(d, recs, comp, &vars, *session, proof)?;
    }
    if demoted {
        prune_derived(&mut d.steps);
        return Ok(false);
    }
    let cassette = emit::cassette(d, recs);
    for (session, case) in &runs {
        replay(d, recs, &pipeline, comp, &cassette, *session, case.as_ref()).await?;
        proof.replays += 1;
        proof.calls += d
            .steps
            .iter()
            .map(|s| s.calls_of(*session).count())
            .sum::<usize>();
    }
    Ok(true)
}

/// Each run to check: its recording and its case row, if any.
fn runs_of(d: &Draft) -> Vec<(usize, Option<CaseOut>)> {
    if d.cases.is_empty() {
        vec![(0, None)]
    } else {
        d.cases
            .iter()
            .map(|c| (c.session, Some(c.clone())))
            .collect()
    }
}

/// The `${var.X}` values of a run: the file's, with the case row's over
/// them.
fn vars_of(pipeline: &Pipeline, case: Option<&CaseOut>) -> IndexMap<String, Value> {
    let mut vars = pipeline.vars.clone();
    if let Some(c) = case {
        vars.extend(c.vars.clone());
    }
    vars
}

/// Resolves every step as a run of recording `session` would, against
/// the recorded outputs; demotes each reference that gives back something
/// else. `Err` when a fan-out does not go over the recorded items.
fn resolve_all(
    d: &mut Draft,
    recs: &[Recording],
    comp: &Composition,
    vars: &IndexMap<String, Value>,
    session: usize,
    proof: &mut Proof,
) -> Result<bool, String> {
    let mut scope = Snapshot {
        vars: Arc::new(vars.clone()),
        ..Snapshot::default()
    };
    let mut demoted = false;
    for (k, node) in comp.nodes.iter().enumerate() {
        let Some(step) = d.steps.get(k) else {
            return Err(format!("step `{}` is missing from the draft", node.id));
        };
        let recorded: Vec<Value> = step
            .calls_of(session)
            .filter_map(|c| recs.get(c.session)?.calls.get(c.call))
            .map(|c| Value::Object(c.args.clone()))
            .collect();
        let resolved = crate::run::exec::preview_args(node, &scope);
        let pairs: Vec<(Value, Value)> = if node.for_each.is_some() {
            let Value::Array(got) = resolved else {
                return Err(format!(
                    "the for_each of `{}` does not resolve to a list",
                    node.id
                ));
            };
            if got.len() != recorded.len() {
                return Err(format!(
                    "the for_each of `{}` goes over {} items; the recording made {} calls",
                    node.id,
                    got.len(),
                    recorded.len()
                ));
            }
            got.into_iter().zip(recorded).collect()
        } else {
            recorded
                .into_iter()
                .map(|r| (resolved.clone(), r))
                .collect()
        };
        for (got, want) in pairs {
            if got == want {
                continue;
            }
            demoted |= demote(&mut d.steps[k], &got, &want, proof)?;
        }
        let output = output_of(recs, &d.steps[k], session);
        let seen = match &node.transform {
            Some(t) => t.run_one(&output).map_err(|e| {
                format!(
                    "the transform of `{}` fails on its recorded output: {e}",
                    node.id
                )
            })?,
            None => output,
        };
        scope
            .nodes
            .insert(node.id.clone(), Seen::Output(Json::from_value(seen)));
    }
    Ok(demoted)
}

/// Demotes the leaves of `step` where `got` (what a run would send)
/// differs from `want` (what was recorded). `Err` when what differs is not
/// a reference (a fan-out's item, or a literal written wrong).
fn demote(step: &mut Step, got: &Value, want: &Value, proof: &mut Proof) -> Result<bool, String> {
    let want_leaves = leaves_of(want);
    let got_leaves: HashMap<String, Value> = leaves_of(got)
        .into_iter()
        .map(|(p, v)| (super::draft::arg_path(&p), v))
        .collect();
    let mut any = false;
    for (path, w) in want_leaves {
        let at = super::draft::arg_path(&path);
        let g = got_leaves.get(&at).cloned().unwrap_or(Value::Null);
        if g == w {
            continue;
        }
        let Some(leaf) = step.leaves.iter_mut().find(|l| l.path == path) else {
            return Err(format!("`{}.{at}` is not written as recorded", step.id));
        };
        let rule = match &leaf.choice {
            Choice::Inferred { rule, .. } => *rule,
            Choice::Item(_) => {
                return Err(format!(
                    "the for_each item `{}.{at}` gives {} where {} was recorded",
                    step.id,
                    short(&g),
                    short(&w)
                ));
            }
            _ => {
                return Err(format!(
                    "`{}.{at}` resolves to {} where {} was recorded",
                    step.id,
                    short(&g),
                    short(&w)
                ));
            }
        };
        let why = format!("it gives {} where {} was recorded", short(&g), short(&w));
        proof
            .demoted
            .push(format!("{}.{at} ({}): {why}", step.id, rule.name()));
        leaf.choice = Choice::Demoted { rule, why };
        any = true;
    }
    Ok(any)
}

fn short(v: &Value) -> String {
    let t = v.to_string();
    if t.chars().count() > 60 {
        format!("{}…", t.chars().take(60).collect::<String>())
    } else {
        t
    }
}

/// The calls a replay made, with the results it got.
#[derive(Default)]
struct Heard {
    calls: Vec<(String, String, Value, Json)>,
}

/// A replayer that keeps every call it answers, in order.
struct Tap {
    inner: Replayer,
    default_server: String,
    seen: Mutex<Heard>,
}

impl Caller for Tap {
    fn call<'a>(
        &'a self,
        request: CallRequest<'a>,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        Box::pin(async move {
            let key = (
                request.server.unwrap_or(&self.default_server).to_owned(),
                request.tool.to_owned(),
                canonical(&Value::Object(request.args.clone())),
            );
            let out = self.inner.call(request).await;
            if let Ok(seen) = self.seen.lock().as_deref_mut() {
                let result = out
                    .as_ref()
                    .map_or_else(|_| Json::null(), |o| o.result.clone());
                seen.calls.push((key.0, key.1, key.2, result));
            }
            out
        })
    }
}

/// Runs the pipeline (case row `case`) against the cassette through the
/// engine's session, offline, and checks it made recording `session`'s
/// calls in order with its results and met its expectations.
async fn replay(
    d: &Draft,
    recs: &[Recording],
    pipeline: &Pipeline,
    comp: &Composition,
    cassette: &Cassette,
    session: usize,
    case: Option<&CaseOut>,
) -> Result<(), String> {
    let default_server = d
        .servers
        .keys()
        .next()
        .cloned()
        .unwrap_or_else(|| crate::mcp::servers::DEMO.to_owned());
    let tap = Arc::new(Tap {
        inner: Replayer::new(
            cassette,
            "the recording's cassette",
            default_server.clone(),
            Redactor::default(),
            None,
        ),
        default_server,
        seen: Mutex::new(Heard::default()),
    });
    let row: Option<&Case> = case.and_then(|c| comp.cases.iter().find(|k| k.name == c.name));
    let cfg = SessionConfig {
        file: "(proof)".to_owned(),
        case: row.map(|r| r.name.clone()),
        vars: vars_of(pipeline, case),
        expect: Case::expectations(row, comp),
        ..SessionConfig::default()
    };
    let mut s = session::start(
        Arc::new(comp.clone()),
        tap.clone() as Arc<dyn Caller>,
        cfg,
        Redactor::default(),
    );
    s.handle.send(Command::Run);
    let trace = tokio::time::timeout(REPLAY_LIMIT, async {
        while let Some(ev) = s.events.recv().await {
            if let Event::RunFinished { trace, .. } = ev {
                return Some(*trace);
            }
        }
        None
    })
    .await
    .map_err(|_| format!("the replay did not finish in {} s", REPLAY_LIMIT.as_secs()))?
    .ok_or("the replay ended without a trace")?;
    let seen = tap
        .seen
        .lock()
        .map(|mut s| std::mem::take(&mut s.calls))
        .map_err(|_| "the replay's calls were lost")?;
    let want: Vec<_> = d
        .steps
        .iter()
        .flat_map(|st| st.calls_of(session))
        .filter_map(|c| recs.get(c.session)?.calls.get(c.call))
        .collect();
    for (n, w) in want.iter().enumerate() {
        let Some((server, tool, args, result)) = seen.get(n) else {
            return Err(format!(
                "the replay stopped after {n} of {} calls: {}",
                want.len(),
                why_stopped(&trace)
            ));
        };
        let args_want = canonical(&Value::Object(w.args.clone()));
        if server != &w.server || tool != &w.tool || args != &args_want {
            return Err(format!(
                "call {} was `{tool}` {} where the recording made `{}` {}",
                n + 1,
                short(args),
                w.tool,
                short(&args_want)
            ));
        }
        if result.tree() != w.result.tree() {
            return Err(format!(
                "call {} (`{tool}`) got another result than the recording's",
                n + 1
            ));
        }
    }
    if seen.len() > want.len() {
        return Err(format!(
            "the replay made {} calls where the recording made {}",
            seen.len(),
            want.len()
        ));
    }
    if trace.composition.status != RunStatus::Completed {
        return Err(format!("the replay ended {}", why_stopped(&trace)));
    }
    if let Some(e) = trace.expect.iter().find(|e| !e.pass) {
        return Err(format!(
            "its expectation on `{}` failed on the recorded run{}",
            e.target,
            e.message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        ));
    }
    Ok(())
}

/// Why a replay's run stopped, from its trace.
fn why_stopped(trace: &crate::run::trace::Trace) -> String {
    trace
        .nodes
        .values()
        .find_map(|n| n.error.as_ref().map(|e| format!("`{}` failed: {e}", n.id)))
        .unwrap_or_else(|| format!("{:?}", trace.composition.status).to_lowercase())
}

/// The recording's calls as steps with the arguments as recorded: what
/// is written when the inferred pipeline cannot be proved.
fn literal_draft(d: &Draft, recs: &[Recording]) -> Draft {
    let mut out = Draft {
        name: d.name.clone(),
        sources: d.sources.clone(),
        servers: d.servers.clone(),
        left_out: d.left_out.clone(),
        ..Draft::default()
    };
    let mut ids: Vec<String> = Vec::new();
    for step in &d.steps {
        for (n, cr) in step.calls_of(0).enumerate() {
            let Some(call) = recs.get(cr.session).and_then(|r| r.calls.get(cr.call)) else {
                continue;
            };
            let args = Value::Object(call.args.clone());
            let base = if step.calls_of(0).count() > 1 {
                format!("{}_{}", step.id, n + 1)
            } else {
                step.id.clone()
            };
            let mut id = base.clone();
            let mut k = 2;
            while ids.contains(&id) {
                id = format!("{base}_{k}");
                k += 1;
            }
            ids.push(id.clone());
            let leaves = leaves_of(&args)
                .into_iter()
                .map(|(path, literal)| {
                    let key = rank::last_field(&path).unwrap_or("value");
                    let choice = if rank::server_made(key, &literal) {
                        Choice::Flagged
                    } else {
                        Choice::Literal
                    };
                    super::draft::Leaf {
                        path,
                        literal,
                        choice,
                    }
                })
                .collect();
            let answers = call
                .extras
                .interactions
                .iter()
                .filter_map(|i| super::infer::answer_of(&i.reply, &i.kind))
                .collect();
            out.steps.push(Step {
                id,
                server: call.server.clone(),
                tool: call.tool.clone(),
                calls: vec![cr],
                args,
                leaves,
                for_each: None,
                derived: Vec::new(),
                wrapped: false,
                answers,
                task: call.extras.task.is_some(),
                notes: Vec::new(),
            });
        }
    }
    out.output = out.steps.len().checked_sub(1);
    if let Some(last) = out.steps.last() {
        out.expect = expect_of(&output_of(recs, last, 0));
    }
    out
}

#[cfg(test)]
mod tests;
