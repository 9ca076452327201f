//! From one or several recordings to the draft pipeline. Recordings of
//! different servers are one task across servers: their calls are put in
//! the order they were made. Recordings of the same server are the same
//! task done again: aligned call by call, the values that differ become
//! inputs (with one `cases:` row per recording) and the values that agree
//! stay literals.

use std::collections::HashMap;

use indexmap::IndexMap;
use serde_json::Value;

use super::calls::Recording;
use super::draft::{CaseOut, Choice, Draft, Leaf, Piece, ServerOut, Step, Template, Var, arg_path};
use super::infer::{self, Inferred, expect_of, rank};
use super::session::Server;
use crate::redact::MASK;

/// Why recordings could not be made one pipeline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    #[error("no recording to write a pipeline from")]
    Empty,
    #[error("{0}")]
    Diverge(String),
    #[error(
        "the recordings mix repeated sessions of one server with sessions of others ({0}); pass the recordings of one run of the task, or several runs of a one-server task"
    )]
    Mixed(String),
    #[error("no call to write: {0}")]
    NoCalls(String),
}

/// The draft pipeline named `name` of `recs`; several recordings of one
/// server are repeated runs of one task, recordings of several servers one
/// task across them. Returns the recordings as the draft's `CallRef`s
/// count them (several of different servers become one).
pub fn draft(recs: Vec<Recording>, name: &str) -> Result<(Draft, Vec<Recording>), MergeError> {
    if recs.is_empty() {
        return Err(MergeError::Empty);
    }
    let mut names: Vec<&str> = recs.iter().map(Recording::server).collect();
    names.sort_unstable();
    let distinct = {
        let mut d = names.clone();
        d.dedup();
        d
    };
    let recs = if recs.len() > 1 && distinct.len() == recs.len() {
        vec![interleave(recs)]
    } else if distinct.len() > 1 {
        return Err(MergeError::Mixed(names.join(", ")));
    } else {
        recs
    };
    let runs: Vec<Inferred> = recs
        .iter()
        .enumerate()
        .map(|(i, r)| infer::session(r, i))
        .collect();
    if runs.iter().all(|r| r.steps.is_empty()) {
        let why = runs
            .iter()
            .flat_map(|r| r.left_out.iter().cloned())
            .chain(recs.iter().flat_map(|r| r.notes.iter().cloned()))
            .next()
            .unwrap_or_else(|| "the recording made no `tools/call`".to_owned());
        return Err(MergeError::NoCalls(why));
    }
    let mut d = if runs.len() == 1 {
        let mut runs = runs;
        let one = runs.remove(0);
        Draft {
            steps: one.steps,
            vars: one.vars,
            left_out: one.left_out,
            ..Draft::default()
        }
    } else {
        merged(&recs, runs)?
    };
    d.name = name.to_owned();
    d.sources = recs.iter().map(|r| r.source.clone()).collect();
    d.servers = servers(&recs);
    for r in &recs {
        if let Some(p) = r.protocol.as_deref()
            && crate::file::protocol::Protocol::parse(p)
                .is_some_and(|p| p != crate::file::protocol::Protocol::Auto)
        {
            d.protocols
                .entry(r.server().to_owned())
                .or_insert_with(|| p.to_owned());
        }
    }
    d.output = d.steps.len().checked_sub(1);
    if d.cases.is_empty()
        && let Some(last) = d.steps.last()
    {
        let expect = expect_of(&output_of(&recs, last, 0));
        if d.vars.is_empty() {
            d.expect = expect;
        } else {
            // What the recording ended with holds for its own inputs: a
            // case row with them, so `run` checks it and a served call
            // with other arguments is not held to it.
            d.cases = vec![CaseOut {
                name: case_name(&recs[0].source, 0),
                vars: d
                    .vars
                    .iter()
                    .map(|(k, v)| (k.clone(), v.value.clone()))
                    .collect(),
                expect,
                session: 0,
            }];
        }
    }
    Ok((d, recs))
}

/// A step's output as recording `session` has it: its call's, or a
/// fan-out's list.
pub fn output_of(recs: &[Recording], step: &Step, session: usize) -> Value {
    let outs: Vec<Value> = step
        .calls_of(session)
        .filter_map(|c| recs.get(c.session)?.calls.get(c.call))
        .map(|c| c.output.tree().clone())
        .collect();
    if step.for_each.is_some() {
        Value::Array(outs)
    } else {
        outs.into_iter().next().unwrap_or(Value::Null)
    }
}

/// The sessions of several servers as one, calls in the order they were
/// made (by each session's start and the calls' times).
fn interleave(recs: Vec<Recording>) -> Recording {
    let start = |r: &Recording| {
        r.header
            .as_ref()
            .and_then(|h| {
                time::OffsetDateTime::parse(
                    &h.started,
                    &time::format_description::well_known::Rfc3339,
                )
                .ok()
            })
            .map_or(0.0, |t| (t.unix_timestamp_nanos() / 1_000_000) as f64)
    };
    let base = recs.iter().map(start).fold(f64::INFINITY, f64::min);
    let mut out = Recording {
        source: recs
            .iter()
            .map(|r| r.source.clone())
            .collect::<Vec<_>>()
            .join(" + "),
        header: recs.first().and_then(|r| r.header.clone()),
        ..Recording::default()
    };
    let mut headers = Vec::new();
    for r in recs {
        let offset = start(&r) - base;
        out.notes.extend(r.notes);
        out.headers.extend(r.headers);
        for (name, t) in r.tools {
            out.tools.entry(name).or_insert(t);
        }
        for mut c in r.calls {
            c.at_ms += offset;
            out.calls.push(c);
        }
        headers.extend(r.header);
    }
    out.calls.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
    out.servers = headers.into_iter().map(|h| h.server).collect();
    out
}

/// The servers the recordings talked to, as the pipeline declares them:
/// a masked value in a command's arguments or a URL becomes
/// `${env.NAME}`.
fn servers(recs: &[Recording]) -> IndexMap<String, ServerOut> {
    let mut out = IndexMap::new();
    for r in recs {
        let all = r.servers.iter().chain(r.header.as_ref().map(|h| &h.server));
        for s in all {
            if out.contains_key(s.name()) {
                continue;
            }
            let env_base = rank::var_name(s.name());
            let mut env = Vec::new();
            let mut unmask = |text: &str| -> String {
                if !text.contains(MASK) {
                    return text.to_owned();
                }
                let mut parts = text.split(MASK);
                let mut t = parts.next().unwrap_or_default().to_owned();
                for rest in parts {
                    let name = if env.is_empty() {
                        format!("{env_base}_SECRET")
                    } else {
                        format!("{env_base}_SECRET_{}", env.len() + 1)
                    };
                    t.push_str(&format!("${{env.{name}}}"));
                    t.push_str(rest);
                    env.push(name);
                }
                t
            };
            let decl = match s {
                Server::Stdio { command, args, .. } => ServerOut::Stdio {
                    command: unmask(command),
                    args: args.iter().map(|a| unmask(a)).collect(),
                    env: Vec::new(),
                },
                Server::Http { url, .. } => ServerOut::Http {
                    url: unmask(url),
                    headers: r.headers.get(s.name()).cloned().unwrap_or_default(),
                },
            };
            let decl = match decl {
                ServerOut::Stdio { command, args, .. } => ServerOut::Stdio { command, args, env },
                other => other,
            };
            out.insert(s.name().to_owned(), decl);
        }
    }
    out
}

/// Several runs of one task, aligned step by step.
fn merged(recs: &[Recording], runs: Vec<Inferred>) -> Result<Draft, MergeError> {
    let base = &runs[0];
    for (s, run) in runs.iter().enumerate().skip(1) {
        if let Some(why) = diverge(recs, base, run, s) {
            return Err(MergeError::Diverge(why));
        }
    }
    let mut d = Draft {
        left_out: runs
            .iter()
            .flat_map(|r| r.left_out.iter().cloned())
            .collect(),
        ..Draft::default()
    };
    // Each session-0 input, merged: the input it became, or none.
    let mut became: HashMap<String, Option<String>> = HashMap::new();
    let mut case_vars: Vec<IndexMap<String, Value>> = vec![IndexMap::new(); runs.len()];
    for (k, step) in base.steps.iter().enumerate() {
        let mut step = step.clone();
        step.calls = runs
            .iter()
            .flat_map(|r| r.steps[k].calls.iter().copied())
            .collect();
        let ids: Vec<String> = base.steps.iter().map(|s| s.id.clone()).collect();
        let wrapped: Vec<bool> = base.steps.iter().map(|s| s.wrapped).collect();
        for (at, leaf) in step.leaves.iter_mut().enumerate() {
            let all: Vec<&Leaf> = runs.iter().map(|r| &r.steps[k].leaves[at]).collect();
            let agree = all.iter().all(|l| l.literal == leaf.literal);
            let rendered = |c: &Choice| match c {
                Choice::Inferred { template, .. } => Some(template.render(&ids, &wrapped)),
                Choice::Item(p) => {
                    Some(Template::one(Piece::Item(p.clone())).render(&ids, &wrapped))
                }
                _ => None,
            };
            let same_ref = rendered(&leaf.choice).is_some_and(|r| {
                all.iter()
                    .all(|l| rendered(&l.choice).as_deref() == Some(r.as_str()))
            });
            let vars_kept = match &leaf.choice {
                Choice::Inferred { template, .. } => vars_of(template)
                    .iter()
                    .all(|v| became.get(*v).is_some_and(Option::is_some)),
                _ => true,
            };
            if same_ref && vars_kept {
                if let Choice::Inferred { template, .. } = &mut leaf.choice {
                    rename_vars(template, &became);
                }
                continue;
            }
            let origin = match &leaf.choice {
                Choice::Input { var, .. } => Some(var.clone()),
                _ => None,
            };
            let new = if agree {
                match leaf.choice {
                    Choice::Flagged => Choice::Flagged,
                    _ => Choice::Literal,
                }
            } else {
                let key = rank::last_field(&leaf.path).unwrap_or("value");
                let base_name = rank::var_name(key);
                let mut name = base_name.clone();
                let mut n = 2;
                while d.vars.contains_key(&name) {
                    name = format!("{base_name}_{n}");
                    n += 1;
                }
                d.vars.insert(
                    name.clone(),
                    Var {
                        value: leaf.literal.clone(),
                        from: format!("{}.{}", step.id, arg_path(&leaf.path)),
                    },
                );
                for (s, l) in all.iter().enumerate() {
                    case_vars[s].insert(name.clone(), l.literal.clone());
                }
                let shown: Vec<String> = all.iter().map(|l| l.literal.to_string()).collect();
                Choice::Input {
                    var: name,
                    note: Some(format!(
                        "differs across the recordings: {}",
                        shown.join(", ")
                    )),
                }
            };
            if let Some(origin) = origin {
                let to = match &new {
                    Choice::Input { var, .. } => Some(var.clone()),
                    _ => None,
                };
                became.insert(origin, to);
            }
            leaf.choice = new;
        }
        d.steps.push(step);
    }
    prune_derived(&mut d.steps);
    d.cases = recs
        .iter()
        .enumerate()
        .map(|(s, r)| CaseOut {
            name: case_name(&r.source, s),
            vars: case_vars[s].clone(),
            expect: runs[s]
                .steps
                .last()
                .map(|last| expect_of(&output_of(recs, last, s)))
                .unwrap_or_default(),
            session: s,
        })
        .collect();
    Ok(d)
}

/// Where run `s` first differs from run 0, in words.
fn diverge(recs: &[Recording], base: &Inferred, run: &Inferred, s: usize) -> Option<String> {
    let name = |session: usize| recs.get(session).map_or("?", |r| r.source.as_str());
    let at = |st: &Step| {
        st.calls
            .first()
            .and_then(|c| recs.get(c.session)?.calls.get(c.call))
            .map_or(0, |c| c.line)
    };
    for (k, (a, b)) in base.steps.iter().zip(&run.steps).enumerate() {
        let shape = |st: &Step| st.leaves.iter().map(|l| l.path.clone()).collect::<Vec<_>>();
        if a.tool != b.tool || a.for_each != b.for_each || shape(a) != shape(b) {
            let what = if a.tool != b.tool {
                format!("`{}` where {} called `{}`", b.tool, name(0), a.tool)
            } else if a.for_each != b.for_each {
                format!(
                    "`{}` over another list than {} did (or once where it went over a list)",
                    b.tool,
                    name(0)
                )
            } else {
                format!("`{}` with other arguments than {} gave it", b.tool, name(0))
            };
            return Some(format!(
                "{}:{}: call {} differs from the first recording: it called {what}; recordings of the same task must make the same calls in the same order",
                name(s),
                at(b),
                k + 1
            ));
        }
    }
    if base.steps.len() != run.steps.len() {
        let (longer, n, st) = if base.steps.len() > run.steps.len() {
            (0, run.steps.len(), &base.steps[run.steps.len()])
        } else {
            (s, base.steps.len(), &run.steps[base.steps.len()])
        };
        return Some(format!(
            "{}:{}: the recordings make {} and {} calls; this one goes on with `{}` after call {n}",
            name(longer),
            at(st),
            base.steps.len(),
            run.steps.len(),
            st.tool
        ));
    }
    None
}

fn vars_of(t: &Template) -> Vec<&str> {
    t.0.iter()
        .filter_map(|p| match p {
            Piece::Var(v) => Some(v.as_str()),
            _ => None,
        })
        .collect()
}

fn rename_vars(t: &mut Template, became: &HashMap<String, Option<String>>) {
    for p in &mut t.0 {
        if let Piece::Var(v) = p
            && let Some(Some(to)) = became.get(v.as_str())
        {
            *v = to.clone();
        }
    }
}

/// Drops the derived values no leaf reads any more.
pub fn prune_derived(steps: &mut [Step]) {
    let mut used: Vec<(usize, String)> = Vec::new();
    for s in steps.iter() {
        for l in &s.leaves {
            if let Choice::Inferred { template, .. } = &l.choice {
                for p in &template.0 {
                    if let Piece::Derived { step, key } = p {
                        used.push((*step, key.clone()));
                    }
                }
            }
        }
    }
    for (i, s) in steps.iter_mut().enumerate() {
        s.derived.retain(|d| used.contains(&(i, d.key.clone())));
        if s.derived.is_empty() {
            s.wrapped = false;
        }
    }
}

/// A case's name from its recording's file name.
fn case_name(source: &str, n: usize) -> String {
    let stem = std::path::Path::new(source)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if stem.is_empty() {
        format!("recording-{}", n + 1)
    } else {
        stem
    }
}

#[cfg(test)]
mod tests;
