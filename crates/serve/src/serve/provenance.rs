//! Where a served answer came from, in its `_meta` under
//! [`KEY`]: the composition, the digests of its file and of the lock beside
//! it, the run id to open it with, and for each node that called a tool
//! the server (its name and version from the handshake), the tool, the
//! digest of the tool's definition and of the arguments it was called
//! with. Digests are the lock's ([`pipewright_engine::lock`]), so a tool
//! digest here is the one `pipewright.lock` holds.
//!
//! Bounded: one entry per node whatever its fan-out (`calls` counts the
//! iterations; their argument digests fold into one). Nothing secret:
//! argument values never appear, only the digest of the arguments as the
//! saved run records them (secrets masked as `***`), and a node whose
//! arguments read a `${env.X}` too short to be masked gets no argument
//! digest at all.

use serde_json::{Map, Value, json};

use pipewright_engine::environment::Environment;
use pipewright_engine::file::model::Composition;
use pipewright_engine::lang::reference::Root;
use pipewright_engine::lock;
use pipewright_engine::mcp::servers::ServerPool;
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::trace::{NodeRecord, NodeStatus, Trace};

use super::digests::ToolDigests;
use super::model::{Served, Upstream};

/// The `_meta` key a served result's provenance is under (a reverse-DNS
/// prefix, as the MCP spec asks of `_meta` keys since 2025-11-25).
pub const KEY: &str = "io.pipewright/provenance";

/// What a run's provenance says about where it came from, beyond its
/// trace.
pub struct Source<'a> {
    /// The tool the caller called (`run_pipeline` for an inline pipeline).
    pub served: &'a str,
    /// The composition that ran (its nodes' `${env.X}` are looked at).
    pub comp: &'a Composition,
    /// The file's name (not its path: a path says where the operator
    /// keeps things), `None` for an inline pipeline.
    pub file: Option<String>,
    /// `sha256:` digest of the file's bytes (of the inline text for
    /// `run_pipeline`).
    pub file_digest: &'a str,
    /// The lock beside the file: `Some(None)` when there is none, `None`
    /// for an inline pipeline (no lock applies).
    pub lock_digest: Option<Option<&'a str>>,
    /// The servers the run's calls went to (their live tool lists).
    pub pool: &'a ServerPool,
    /// The server of a node that names none.
    pub default_server: Option<&'a str>,
    /// The environment the run's `${env.X}` read.
    pub env: &'a Environment,
    /// What the run's records mask.
    pub redactor: &'a Redactor,
    /// The run was saved: `runs show` opens it.
    pub saved: bool,
    /// The served tool's digests already computed, if it keeps them.
    pub digests: Option<&'a ToolDigests>,
}

/// The provenance of a run of the served tool `served`; `saved` when the
/// run was kept.
pub fn of_served(trace: &Trace, served: &Served, env: &Environment, saved: bool) -> Value {
    let file = std::path::Path::new(&served.file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    of(
        trace,
        &Source {
            served: &served.name,
            comp: &served.comp,
            file,
            file_digest: &served.file_digest,
            lock_digest: Some(served.lock_digest.as_deref()),
            pool: &served.pool,
            default_server: served.pricing.default_server.as_deref(),
            env,
            redactor: &served.redactor,
            saved,
            digests: Some(&served.digests),
        },
    )
}

/// The provenance of a run of an inline pipeline (`text`, called as
/// `served`): as a served tool's, minus the file's name and the lock (the
/// caller sent the text; no lock applies to it).
pub fn of_inline(
    trace: &Trace,
    served: &str,
    comp: &Composition,
    text: &str,
    up: &Upstream,
    env: &Environment,
    saved: bool,
) -> Value {
    of(
        trace,
        &Source {
            served,
            comp,
            file: None,
            file_digest: &lock::digest_bytes(text.as_bytes()),
            lock_digest: None,
            pool: &up.pool,
            default_server: up.pricing.default_server.as_deref(),
            env,
            redactor: &up.redactor,
            saved,
            digests: None,
        },
    )
}

/// The provenance of the run `trace` of `src`.
pub fn of(trace: &Trace, src: &Source<'_>) -> Value {
    let nodes: Vec<Value> = trace
        .nodes
        .iter()
        .filter(|(_, rec)| called(rec))
        .map(|(id, rec)| node(id, rec, src))
        .collect();
    let mut out = Map::new();
    out.insert("served".into(), json!(src.served));
    out.insert("composition".into(), json!(trace.composition.name));
    if let Some(file) = &src.file {
        out.insert("file".into(), json!(file));
    }
    out.insert("fileDigest".into(), json!(src.file_digest));
    if let Some(lock) = src.lock_digest {
        out.insert("lockDigest".into(), json!(lock));
    }
    out.insert("runId".into(), json!(trace.run_id));
    if src.saved {
        out.insert(
            "open".into(),
            json!(format!("pipewright runs show {}", trace.run_id)),
        );
    }
    out.insert("nodes".into(), Value::Array(nodes));
    Value::Object(out)
}

/// True when the node sent a tool call (not mocked, not skipped, not
/// stopped before it began).
fn called(rec: &NodeRecord) -> bool {
    !rec.mocked
        && !rec.tool.is_empty()
        && matches!(
            rec.status,
            NodeStatus::Ok | NodeStatus::Failed | NodeStatus::Cancelled
        )
        && (rec.attempts > 0 || !rec.iterations.is_empty() || !rec.calls.is_empty())
}

/// One node's entry.
fn node(id: &str, rec: &NodeRecord, src: &Source<'_>) -> Value {
    let server = rec.server.as_deref().or(src.default_server);
    let conn = server.and_then(|s| src.pool.get(s));
    let info = conn.map(|c| c.server_info()).unwrap_or(Value::Null);
    let tool_digest = match (server, conn, src.digests) {
        (Some(s), Some(c), Some(known)) => known.of(s, c, &rec.tool),
        _ => conn
            .and_then(|c| c.tool(&rec.tool))
            .map(|t| lock::digest(&lock::definition(&t))),
    };
    let calls = rec.iterations.len().max(1);
    let mut out = json!({
        "id": id,
        "server": server,
        "serverInfo": {
            "name": info.pointer("/serverInfo/name"),
            "version": info.pointer("/serverInfo/version"),
        },
        "protocolVersion": info.get("protocolVersion"),
        "tool": rec.tool,
        "toolDigest": tool_digest,
        "calls": calls,
    });
    match unmasked_env(id, src) {
        Some(name) => {
            out["argsDigest"] = Value::Null;
            out["argsWithheld"] = json!(format!(
                "the arguments read `${{env.{name}}}`, too short to mask: a digest of them could be guessed"
            ));
        }
        None => out["argsDigest"] = json!(args_digest(rec)),
    }
    out
}

/// The digest of the node's arguments as its record keeps them (secrets
/// masked): of the arguments of its one call, or for a fan-out of the
/// list of its iterations' argument digests, in iteration order.
fn args_digest(rec: &NodeRecord) -> String {
    if rec.iterations.is_empty() {
        return lock::digest(rec.args.tree());
    }
    let each: Vec<Value> = rec
        .iterations
        .iter()
        .map(|it| Value::String(lock::digest(it.args.tree())))
        .collect();
    lock::digest(&Value::Array(each))
}

/// The first `${env.X}` the node reads whose value the run's records do
/// not mask (too short to be a secret the redactor looks for): a digest
/// over it would let a caller try every short value.
fn unmasked_env(id: &str, src: &Source<'_>) -> Option<String> {
    let node = src.comp.nodes.iter().find(|n| n.id == id)?;
    node.refs().find_map(|site| match &site.reference.root {
        Root::Env(name) => {
            let value = src.env.var(name)?;
            (src.redactor.text(value) == value).then(|| name.clone())
        }
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipewright_engine::json::Json;
    use pipewright_engine::run::trace::IterationRecord;

    fn rec(args: Value) -> NodeRecord {
        NodeRecord {
            tool: "t".into(),
            status: NodeStatus::Ok,
            attempts: 1,
            args: Json::from_value(args),
            ..NodeRecord::default()
        }
    }

    #[test]
    fn one_call_digests_its_arguments_as_the_lock_digests_a_value() {
        let r = rec(json!({"b": 1, "a": "x"}));
        assert_eq!(args_digest(&r), lock::digest(&json!({"a": "x", "b": 1})));
        assert!(called(&r));
    }

    #[test]
    fn a_fan_out_folds_its_iterations_into_one_digest() {
        let mut r = rec(Value::Null);
        r.iterations = (0..10_000)
            .map(|i| IterationRecord {
                index: i,
                args: Json::from_value(json!({ "i": i })),
                ..IterationRecord::default()
            })
            .collect();
        let d = args_digest(&r);
        let each: Vec<Value> = (0..10_000)
            .map(|i| Value::String(lock::digest(&json!({ "i": i }))))
            .collect();
        assert_eq!(d, lock::digest(&Value::Array(each)));
        assert_eq!(d.len(), "sha256:".len() + 64);
    }

    #[test]
    fn a_node_that_made_no_call_is_not_named() {
        let mut r = rec(Value::Null);
        r.mocked = true;
        assert!(!called(&r));
        let mut r = rec(Value::Null);
        r.status = NodeStatus::Skipped;
        assert!(!called(&r));
    }
}
