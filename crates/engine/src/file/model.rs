//! The pipeline model: what a loaded, validated pipeline file means.
//!
//! A `pipe:` and every entry of `compositions:` become a [`Composition`]; a
//! pipe is a composition whose step k depends on step k-1.

use std::time::Duration;

use indexmap::IndexMap;
use serde_json::Value;

use crate::diag::{Pos, Span};
use crate::lang::jq::JqProgram;
use crate::lang::reference::Reference;

pub mod answer;
pub(crate) mod auth;
pub mod eval;
pub(crate) mod grant;

pub use answer::Answer;
pub use auth::{AuthConfig, DpopMode};
pub use eval::EvalSpec;
pub use grant::{AssertionGrant, AssertionSource, IdentityProvider};

/// A whole pipeline file.
#[derive(Debug, Clone, Default)]
pub struct Pipeline {
    pub version: Option<u64>,
    pub servers: IndexMap<String, ServerDecl>,
    /// Defaults for `${var.X}`; `--var` and case rows win.
    pub vars: IndexMap<String, Value>,
    pub budget: Budget,
    /// An inline pricing table (same shape as `pricing.yaml`).
    pub pricing: Option<Value>,
    /// `dry_run: true`: `run` plans and calls nothing.
    pub dry_run: bool,
    /// `lock: strict`: a tool changed since `pipewright.lock` is an error,
    /// as with `--locked` (`lock: warn`, the default, warns).
    pub lock_strict: bool,
    /// `sampling: {url, model, api_key}`: the model that answers servers'
    /// sampling requests when no person does (strings may hold `${env.X}`).
    pub sampling: Option<Sampling>,
    pub compositions: Vec<Composition>,
}

impl Pipeline {
    pub fn composition(&self, name: &str) -> Option<&Composition> {
        self.compositions.iter().find(|c| c.name == name)
    }
}

/// `sampling: {url, model, api_key}` as written (strings may hold
/// `${env.X}`).
#[derive(Clone, PartialEq)]
pub struct Sampling {
    pub url: String,
    pub model: String,
    pub api_key: Option<String>,
}

impl std::fmt::Debug for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampling")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "…"))
            .finish()
    }
}

/// A server a node can call, as declared under `servers:`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerDecl {
    pub name: String,
    pub source: ServerSource,
    pub span: Span,
    /// The `auth:` block of an HTTP server.
    pub auth: Option<AuthConfig>,
    /// `protocol:`: the MCP revision to speak to this server (unset: the
    /// command line's).
    pub protocol: Option<crate::file::protocol::Protocol>,
}

/// Where a server comes from. Strings may hold `${env.X}` / `${var.X}`
/// references, resolved when connecting.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerSource {
    /// Streamable HTTP.
    Http {
        url: String,
        headers: IndexMap<String, String>,
    },
    /// A child process speaking MCP over stdio; `args` is passed as is, no shell.
    Stdio {
        command: String,
        args: Vec<String>,
        env: IndexMap<String, String>,
        cwd: Option<String>,
    },
    /// An entry of another client's config file (`mcpServers` / `servers`).
    Import { from: String, name: Option<String> },
}

/// Caps on a run; an unset field disables that gate.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    pub max_cost_usd: Option<f64>,
    pub max_tokens: Option<u64>,
    pub max_duration: Option<Duration>,
    /// Fan-out iterations the whole run may make (Fibe's
    /// `FIBE_MCP_PIPELINE_MAX_ITERATIONS`).
    pub max_iterations: Option<u64>,
}

impl Budget {
    /// `self` with every unset field taken from `other`.
    pub fn or(self, other: Budget) -> Budget {
        Budget {
            max_cost_usd: self.max_cost_usd.or(other.max_cost_usd),
            max_tokens: self.max_tokens.or(other.max_tokens),
            max_duration: self.max_duration.or(other.max_duration),
            max_iterations: self.max_iterations.or(other.max_iterations),
        }
    }
}

/// Whether a composition came from `pipe:` or `compositions:`; it decides
/// how a skipped step affects the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Linear: a skipped step does not skip the next; only a failure stops.
    Pipe,
    /// DAG: a skipped or failed parent skips its children.
    Dag,
}

/// One DAG of nodes with its graph already computed.
#[derive(Debug, Clone)]
pub struct Composition {
    pub name: String,
    pub description: Option<String>,
    pub kind: Kind,
    pub nodes: Vec<Node>,
    pub output: Option<OutputSpec>,
    pub expect: Vec<Expectation>,
    pub cases: Vec<Case>,
    /// mcptest's judged metrics (`eval:`): graded by an LLM judge after a
    /// run (`engine::eval`), deferred when no judge is configured.
    pub eval: EvalSpec,
    pub budget: Budget,
    pub span: Span,
    /// `parents[i]`: indices of the nodes node `i` waits for.
    pub parents: Vec<Vec<usize>>,
    /// `children[i]`: indices of the nodes that wait for node `i`.
    pub children: Vec<Vec<usize>>,
    /// A topological order (declaration order breaks ties).
    pub order: Vec<usize>,
    /// Nodes grouped by longest-path depth: each wave can run together.
    pub waves: Vec<Vec<usize>>,
}

impl Composition {
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// Whether an undefined `${var.X}` passes through unchanged: in a
    /// composition with no `cases:` (mcptest), never in a pipe.
    pub fn passes_vars_through(&self) -> bool {
        self.kind == Kind::Dag && self.cases.is_empty()
    }

    pub fn node(&self, id: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// The nodes whose outputs node `i`'s references may read: its parents;
    /// in a pipe, the earlier steps it names (or every earlier step when its
    /// `when:` has no subject). `index` finds a node by id.
    pub fn visible(&self, i: usize, index: impl Fn(&str) -> Option<usize>) -> Vec<usize> {
        let node = &self.nodes[i];
        match self.kind {
            Kind::Dag => self.parents[i].clone(),
            Kind::Pipe if node.when.as_ref().is_some_and(|w| w.subject.is_none()) => {
                (0..i).collect()
            }
            // Only the steps it names: copying every earlier output for each
            // step would make a long pipe quadratic.
            Kind::Pipe => {
                let mut named: Vec<usize> = node
                    .refs()
                    .filter_map(|site| match &site.reference.root {
                        crate::lang::reference::Root::Node(id) => index(id).filter(|&p| p < i),
                        _ => None,
                    })
                    .collect();
                named.sort_unstable();
                named.dedup();
                named
            }
        }
    }

    /// Every node reachable from `i` through children, `i` excluded, in
    /// topological order.
    pub fn descendants(&self, i: usize) -> Vec<usize> {
        self.reach(i, &self.children)
    }

    /// Every node `i` depends on, directly or not, in topological order.
    pub fn ancestors(&self, i: usize) -> Vec<usize> {
        self.reach(i, &self.parents)
    }

    fn reach(&self, i: usize, edges: &[Vec<usize>]) -> Vec<usize> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = vec![i];
        while let Some(n) = stack.pop() {
            for &next in &edges[n] {
                if !seen[next] {
                    seen[next] = true;
                    stack.push(next);
                }
            }
        }
        self.order.iter().copied().filter(|&n| seen[n]).collect()
    }
}

/// One MCP call in a composition (or one step of a pipe).
#[derive(Debug, Clone)]
pub struct Node {
    pub id: String,
    /// The whole node mapping in the file.
    pub span: Span,
    pub id_span: Span,
    pub needs: Vec<Need>,
    pub server: Option<String>,
    pub server_span: Span,
    pub tool: String,
    pub tool_span: Span,
    /// Arguments as written; strings may hold references.
    pub args: Value,
    /// Every reference found in `args`, with where it is.
    pub arg_refs: Vec<RefSite>,
    /// Where each value under `args` is written, by JSON pointer (`/a`,
    /// `/to/0`; `""` is the `args:` key), in file order: what preflight
    /// marks when the value breaks the tool's `inputSchema`.
    pub arg_spans: Vec<(String, Span)>,
    pub transform: Option<JqProgram>,
    pub when: Option<When>,
    pub on_error: OnError,
    pub for_each: Option<ForEach>,
    /// Fanned-out parents read element-wise: in iteration k, `${p}` is
    /// element k of `p`'s output (Fibe's inner steps of one `for_each`).
    pub aligned: Vec<String>,
    pub max_concurrency: usize,
    pub mock: Option<Mock>,
    pub timeout: Option<Duration>,
    /// `task:`: call the tool as an MCP task (`true`), never (`false`),
    /// or as the tool and the timeout say (unset).
    pub task: Option<bool>,
    /// Where `task:` is written; the whole node when it is not.
    pub task_span: Span,
    pub max_cost_per_call_usd: Option<f64>,
    pub max_tokens_per_call: Option<u64>,
    pub compensate: Option<Compensate>,
    /// Extra request `_meta` sent with the call (imports use it for
    /// idempotency keys).
    pub meta: Option<Value>,
    /// `answers:`: replies to the server's questions during the call, in
    /// order, used after the `--answers` file's and before asking a person.
    pub answers: Vec<Answer>,
    /// SHA-256 of the node's definition; a changed hash makes the node stale.
    pub hash: String,
}

impl Node {
    /// Every reference the node makes, wherever it is written.
    pub fn refs(&self) -> impl Iterator<Item = &RefSite> {
        self.arg_refs
            .iter()
            .chain(self.for_each.iter().map(|f| &f.site))
            .chain(self.when.iter().filter_map(|w| w.subject.as_ref()))
            .chain(self.compensate.iter().flat_map(|c| c.arg_refs.iter()))
    }
}

/// A parent named under `needs:`.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    pub id: String,
    pub span: Span,
}

/// A reference and the file position of its `${`.
#[derive(Debug, Clone, PartialEq)]
pub struct RefSite {
    pub reference: Reference,
    pub pos: Pos,
    /// Where in the node it was found, e.g. `args.user_id`.
    pub at: String,
}

/// A guard: `${ref} | filter` (the filter sees the referenced value) or a
/// bare jq predicate over `{parents: {id: output}}`.
#[derive(Debug, Clone)]
pub struct When {
    pub source: String,
    pub subject: Option<RefSite>,
    pub filter: Option<JqProgram>,
    pub span: Span,
}

/// What a failed call does to the run.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "policy")]
pub enum OnError {
    /// Stop dispatching; the run fails.
    Stop,
    /// Record the failure and go on; children still run.
    Continue,
    /// Call again up to `max` more times, waiting `backoff`, doubling each
    /// time; then behave like `Stop`.
    Retry { max: u32, backoff: Duration },
}

/// Default wait before the first retry.
pub const DEFAULT_BACKOFF: Duration = Duration::from_millis(100);

/// A fan-out: run the node once per element of an array.
#[derive(Debug, Clone)]
pub struct ForEach {
    pub source: String,
    pub site: RefSite,
}

/// A fixture that replaces the call.
#[derive(Debug, Clone, PartialEq)]
pub enum Mock {
    Result(Value),
    Error(Value),
}

/// An undo call run for a completed node when the run fails.
#[derive(Debug, Clone)]
pub struct Compensate {
    pub server: Option<String>,
    pub tool: String,
    pub args: Value,
    pub arg_refs: Vec<RefSite>,
}

/// The composition's combined output.
#[derive(Debug, Clone)]
pub enum OutputSpec {
    /// One node's output verbatim.
    Node { id: String, span: Span },
    /// A jq program over `{nodes: {id: output}}`.
    Assemble(JqProgram),
}

/// One row of a `cases:` dataset.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    pub vars: IndexMap<String, Value>,
    pub golden: Option<Value>,
    /// Replaces the composition's `expect:` for this case when present.
    pub expect: Option<Vec<Expectation>>,
    pub span: Span,
}

impl Case {
    /// What a run of `row` (or of the composition, with no row) asserts:
    /// the row's `expect:` (else the composition's), and its `golden:` as
    /// the exact `output`.
    pub fn expectations(row: Option<&Case>, comp: &Composition) -> Vec<Expectation> {
        let mut expect = row
            .and_then(|r| r.expect.clone())
            .unwrap_or_else(|| comp.expect.clone());
        if let Some(r) = row
            && let Some(golden) = &r.golden
        {
            expect.push(Expectation {
                target: "output".into(),
                matcher: Matcher::Exact(golden.clone()),
                span: r.span,
            });
        }
        expect
    }
}

/// An assertion over the trace envelope.
#[derive(Debug, Clone)]
pub struct Expectation {
    pub target: String,
    pub matcher: Matcher,
    pub span: Span,
}

/// How an expectation compares the target's value.
#[derive(Debug, Clone)]
pub enum Matcher {
    Exact(Value),
    Lte(f64),
    Lt(f64),
    Gte(f64),
    Gt(f64),
    /// Substring of a string, element of an array, or key/value subset of an object.
    Contains(Value),
    Regex(regex::Regex),
    /// Length of a string, array or object.
    Length(u64),
    /// JSON type name: null, boolean, number, string, array, object.
    Type(String),
    Exists(bool),
    /// A jq predicate run on the value.
    Jq(JqProgram),
}

/// A bound as the author wrote it: `gte: 5` shows as `5`, not `5.0` (the
/// bound is held as a float; a whole one within 2^53 is shown whole).
fn as_written(n: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if n.fract() == 0.0 && n.abs() < EXACT {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

impl Matcher {
    /// The matcher as JSON, for the trace.
    pub fn to_json(&self) -> Value {
        use serde_json::json;
        match self {
            Matcher::Exact(v) => json!({"exact": v}),
            Matcher::Lte(n) => json!({"lte": as_written(*n)}),
            Matcher::Lt(n) => json!({"lt": as_written(*n)}),
            Matcher::Gte(n) => json!({"gte": as_written(*n)}),
            Matcher::Gt(n) => json!({"gt": as_written(*n)}),
            Matcher::Contains(v) => json!({"contains": v}),
            Matcher::Regex(r) => json!({"regex": r.as_str()}),
            Matcher::Length(n) => json!({"length": n}),
            Matcher::Type(t) => json!({"type": t}),
            Matcher::Exists(b) => json!({"exists": b}),
            Matcher::Jq(p) => json!({"jq": p.source()}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_show_as_written() {
        assert_eq!(Matcher::Gte(5.0).to_json().to_string(), r#"{"gte":5}"#);
        assert_eq!(Matcher::Lt(-3.0).to_json().to_string(), r#"{"lt":-3}"#);
        assert_eq!(Matcher::Lte(0.25).to_json().to_string(), r#"{"lte":0.25}"#);
        assert_eq!(Matcher::Gt(1e300).to_json()["gt"], Value::from(1e300));
    }
}
