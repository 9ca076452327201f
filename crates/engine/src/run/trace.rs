//! What a run leaves behind: per-node records, the run's status and the JSON
//! trace envelope of SPEC §4 that `expect:` targets address.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::file::model::{Expectation, Matcher};
use crate::json::Json;
use crate::lang::reference::{self, Root};
use crate::mcp::human::CallExtras;

pub(crate) mod eval;

pub use eval::{EvalAggregate, EvalRow, EvalStatus};

/// Where a node is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NodeStatus {
    #[default]
    Pending,
    Running,
    Ok,
    Failed,
    Skipped,
    /// Its definition (or an ancestor's) changed since its output was recorded.
    Stale,
    Cancelled,
}

impl NodeStatus {
    /// Finished, one way or another: children may look at it.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            NodeStatus::Ok | NodeStatus::Failed | NodeStatus::Skipped | NodeStatus::Cancelled
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NodeStatus::Pending => "pending",
            NodeStatus::Running => "running",
            NodeStatus::Ok => "ok",
            NodeStatus::Failed => "failed",
            NodeStatus::Skipped => "skipped",
            NodeStatus::Stale => "stale",
            NodeStatus::Cancelled => "cancelled",
        }
    }
}

/// One element of a fan-out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct IterationRecord {
    pub index: usize,
    pub status: NodeStatus,
    pub args: Json,
    /// Shared with the node's output (a list of its iterations' outputs).
    pub output: Json,
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_status: Option<u16>,
    pub attempts: u32,
    /// When this iteration's first call started (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    pub duration_ms: u64,
    /// The server's questions and the replies, its log lines and progress.
    #[serde(flatten)]
    pub extras: CallExtras,
}

/// One attempt of one call: a node's own call, or one fan-out iteration's
/// (`iteration`), kept so that the Raw and Timing tabs can say which call
/// each exchange was, when it started, how long it took and how it ended.
/// Runs saved before these were kept have none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct AttemptRecord {
    /// The fan-out iteration it belongs to; none for a node's own call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<usize>,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// How many attempts its call made in all.
    pub of: u32,
    /// When it started (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    pub duration_ms: u64,
    /// `ok`, `failed` or `cancelled`.
    pub status: NodeStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Its request and response; the response's result is
    /// `{"$ref": "#/raw"}`, this attempt's `raw`.
    #[serde(skip_serializing_if = "Json::is_null")]
    pub rpc: Json,
    /// Its result as the server sent it, kept for every attempt but a
    /// node's own last one (that is the record's `raw`, saved once). A
    /// fan-out iteration's last attempt keeps it too: the iteration's
    /// output is only what was cut out of it. Runs saved before kept none
    /// for an iteration that succeeded.
    #[serde(skip_serializing_if = "Json::is_null")]
    pub raw: Json,
}

/// Where a record's JSON-RPC exchange (`rpc.response.result`) and its
/// saved form refer to a value kept elsewhere in the same record, instead
/// of holding a second copy: `{"$ref": "#/raw"}`.
pub const RAW_REF: &str = "#/raw";

/// `{"$ref": "#/raw"}`: the call's result is the record's `raw`.
pub fn raw_ref() -> Value {
    let mut m = serde_json::Map::new();
    m.insert("$ref".into(), Value::from(RAW_REF));
    Value::Object(m)
}

/// The value a `{"$ref": …}` names in `rec`, if `v` is such a reference.
pub fn resolve_ref<'a>(rec: &'a NodeRecord, v: &Value) -> Option<&'a Value> {
    let target = v
        .as_object()
        .filter(|m| m.len() == 1)?
        .get("$ref")?
        .as_str()?;
    match target {
        RAW_REF => Some(rec.raw.tree()),
        "#/raw/structuredContent" => rec.raw.tree().get("structuredContent"),
        _ => None,
    }
}

/// The result of a record as the server sent it (a text block kept as a
/// reference to the structured content written out again), for showing.
pub fn raw_as_sent(rec: &NodeRecord) -> Value {
    crate::mcp::grown(&rec.raw).into_value()
}

/// The call's exchange as it went over the wire: the request, what the
/// server sent during the call (progress and log notifications), and the
/// response with its result.
pub fn wire_messages(rec: &NodeRecord) -> Value {
    if rec.rpc.is_null() {
        return raw_as_sent(rec);
    }
    let mut out = Vec::new();
    let rpc = rec.rpc.tree();
    if let Some(req) = rpc.get("request") {
        out.push(req.clone());
    }
    notifications(rpc, &rec.extras, &mut out);
    if let Some(resp) = rpc.get("response") {
        let mut resp = resp.clone();
        if let Some(r) = resp.get_mut("result")
            && resolve_ref(rec, r).is_some()
        {
            *r = raw_as_sent(rec);
        }
        out.push(resp);
    }
    Value::Array(out)
}

/// What the server sent during a call, as the notifications it was: its
/// progress (under the request's token) and its log lines.
fn notifications(rpc: &Value, extras: &CallExtras, out: &mut Vec<Value>) {
    let token = rpc
        .pointer("/request/params/_meta/progressToken")
        .cloned()
        .unwrap_or(Value::Null);
    for p in &extras.progress {
        out.push(serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": { "progressToken": token, "progress": p.progress, "total": p.total, "message": p.message },
        }));
    }
    for l in &extras.logs {
        out.push(serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": { "level": l.level, "logger": l.logger, "data": l.data },
        }));
    }
}

/// One attempt's exchange as it went over the wire: its request, the
/// notifications of its call (with its call's last attempt) and its
/// response, whose result is the attempt's own `raw`, the record's `raw`
/// for the node's last attempt, or (in a run saved before iterations kept
/// their `raw`) the iteration's output, said to be so.
pub fn attempt_messages(rec: &NodeRecord, call: &AttemptRecord) -> Value {
    let last = call.attempt == call.of;
    let mut out = Vec::new();
    let rpc = call.rpc.tree();
    if let Some(req) = rpc.get("request") {
        out.push(req.clone());
    }
    let extras = match call.iteration {
        Some(i) => rec.iterations.get(i).map(|it| &it.extras),
        None => Some(&rec.extras),
    };
    if let (true, Some(extras)) = (last, extras) {
        notifications(rpc, extras, &mut out);
    }
    if let Some(resp) = rpc.get("response") {
        let mut resp = resp.clone();
        if let Some(r) = resp.get_mut("result") {
            if !call.raw.is_null() {
                *r = crate::mcp::grown(&call.raw).into_value();
            } else if call.iteration.is_none() && resolve_ref(rec, r).is_some() {
                *r = raw_as_sent(rec);
            } else if let Some(it) = call.iteration.and_then(|i| rec.iterations.get(i)) {
                *r = serde_json::json!({ "recorded as the iteration's output": it.output.tree() });
            }
        }
        out.push(resp);
    } else if !call.raw.is_null() {
        out.push(crate::mcp::grown(&call.raw).into_value());
    }
    Value::Array(out)
}

/// Everything known about one node of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeRecord {
    /// The node's id (also the key of `nodes` in a trace).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The tool the node calls, and on which server (as resolved).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub status: NodeStatus,
    /// Resolved arguments (secrets redacted), shared.
    pub args: Json,
    /// What the node produced; held once and shared (see [`Json`]).
    pub output: Json,
    /// The raw `tools/call` result (the last attempt's), as the server
    /// sent it; an answer that could not be read is kept as
    /// `{"unreadable": …}` with what arrived, escaped.
    pub raw: Json,
    pub error: Option<String>,
    /// What kind of failure `error` is: `INTERPOLATION_FAILED`, `TIMEOUT`,
    /// `TOOL_ERROR`, or the code the server put in its error result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// The status (HTTP-like) the server put in its error result, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_status: Option<u16>,
    /// Why the node was skipped, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    pub attempts: u32,
    pub started_at: Option<String>,
    pub duration_ms: u64,
    pub cost_usd: f64,
    pub tokens: u64,
    pub model: Option<String>,
    /// Tokens (o200k) of `output`: what it would put into an agent's context.
    pub output_tokens: u64,
    pub mocked: bool,
    /// Answered from a cassette (`--replay`), not by a server.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
    pub iterations: Vec<IterationRecord>,
    /// The JSON-RPC request and response of the last attempt, shared.
    #[serde(skip_serializing_if = "Json::is_null")]
    pub rpc: Json,
    /// What the server asked during the call and the replies it got
    /// (`interactions`), its log lines (`logs`) and progress (`progress`),
    /// over every attempt; secrets redacted.
    #[serde(flatten)]
    pub extras: CallExtras,
    /// Every attempt of every call it made, in iteration then attempt
    /// order; empty for a mocked node and in runs saved before they were
    /// kept.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<AttemptRecord>,
}

impl Default for NodeRecord {
    fn default() -> Self {
        Self {
            id: String::new(),
            tool: String::new(),
            server: None,
            status: NodeStatus::Pending,
            args: Json::null(),
            output: Json::null(),
            raw: Json::null(),
            error: None,
            error_code: None,
            error_status: None,
            skip_reason: None,
            attempts: 0,
            started_at: None,
            duration_ms: 0,
            cost_usd: 0.0,
            tokens: 0,
            model: None,
            output_tokens: 0,
            mocked: false,
            replayed: false,
            iterations: Vec::new(),
            rpc: Json::null(),
            extras: CallExtras::default(),
            calls: Vec::new(),
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every node ran or was skipped; failures, if any, were `continue`d.
    Completed,
    /// A node failed after others had completed.
    Partial,
    /// A node failed before anything completed.
    #[default]
    Failed,
    BudgetExceeded,
    Cancelled,
    /// The process running it ended before the run did (SIGKILL, a crash,
    /// the machine stopping): the nodes that had finished are kept.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
            RunStatus::BudgetExceeded => "budget_exceeded",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }

    /// How the run ended, in words for a sentence (`run stopped over
    /// budget: …`), where [`as_str`](Self::as_str) is the trace's code.
    pub fn phrase(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Partial => "partly failed",
            RunStatus::Failed => "failed",
            RunStatus::BudgetExceeded => "stopped over budget",
            RunStatus::Cancelled => "cancelled",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

/// The result of one expectation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct ExpectResult {
    pub target: String,
    pub matcher: Value,
    pub pass: bool,
    pub actual: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One `compensate:` call made after the run failed (a saga's undo).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Compensation {
    /// The node whose work it undoes.
    pub node: String,
    pub tool: String,
    /// `ok` or `failed`.
    pub status: String,
    pub args: Json,
    pub output: Json,
    pub error: Option<String>,
    pub duration_ms: u64,
}

/// A finished (or stopped) run of one composition, or one case of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Trace {
    /// Short, unique and sortable by time: `20261122-153012-a3f9`.
    pub run_id: String,
    pub file: String,
    pub composition: RunSummary,
    /// The `${var.X}` values the run used (file `vars:`, case row, `--var`).
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub vars: IndexMap<String, Value>,
    pub nodes: IndexMap<String, NodeRecord>,
    pub completed_step_ids: Vec<String>,
    pub failed_step: Option<String>,
    pub output: Json,
    pub expect: Vec<ExpectResult>,
    /// The undo calls made after a failure, newest completed node first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compensations: Vec<Compensation>,
    /// The judged `eval:` metrics, one row each: graded by a judge after
    /// the run (`engine::eval`), `deferred` when none is configured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub eval: Vec<EvalRow>,
    /// Each metric over every case of the composition (reports fill it in
    /// once every case has run).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub eval_aggregate: Vec<EvalAggregate>,
    /// The run this one re-judged (`pipewright eval RUN`): the same calls,
    /// graded again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged_from: Option<String>,
    /// What the judge was shown of the servers' tools (`server/tool`: its
    /// description, and the `inputSchema` of each tool the run called),
    /// kept so a saved run can be judged again without its servers.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub eval_tools: IndexMap<String, eval::ToolSeen>,
    /// Captured stderr of the servers, by server name.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub server_logs: IndexMap<String, String>,
    /// The MCP revision each server spoke (`2026-07-28`, `2025-11-25` …),
    /// by server name; empty for a replayed run.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub server_protocols: IndexMap<String, String>,
    /// Where a durable run ran (`run --on restate://…`): absent for a
    /// local run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub durable: Option<Durable>,
}

/// A durable run: the Restate it was submitted to and each execution of it
/// by a worker (a second one is a resumption after the first died).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct Durable {
    /// `restate://HOST:PORT`, as given to `--on`.
    pub restate: String,
    /// The run's id in Restate: its workflow key (`runs attach ID`).
    pub run: String,
    pub attempts: Vec<Attempt>,
}

/// One execution of a run by a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Random, new for each execution: tells the entry this execution
    /// wrote from one an earlier execution left.
    pub nonce: String,
    pub worker: String,
    /// When the execution started (RFC 3339, UTC).
    pub at: String,
    /// How many call outcomes this execution journaled.
    #[serde(default)]
    pub calls: usize,
    /// How many calls this execution answered from the journal (for one
    /// that did not finish the run: as many as it had when it last wrote
    /// to the journal, which a resumed execution does before its first
    /// new call).
    #[serde(default)]
    pub replayed_calls: usize,
    /// When its last journaled call ended (RFC 3339): what the run had
    /// reached when this execution stopped, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_at: Option<String>,
}

/// The `composition` block of the envelope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct RunSummary {
    pub name: String,
    /// When the run started (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    pub case: Option<String>,
    pub ran: bool,
    pub status: RunStatus,
    pub budget_tripped: Option<String>,
    pub cost_total: f64,
    pub tokens_total: u64,
    /// Wall time of the run, less the time it spent paused (a breakpoint,
    /// `p`, a step waiting for the next key).
    pub duration_ms: u64,
    /// The time the run spent paused, left out of `duration_ms`.
    #[serde(skip_serializing_if = "is_zero")]
    pub paused_ms: u64,
    /// Each pause: when it began (milliseconds of wall time from the
    /// start) and how long it lasted; the timeline labels its gap.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pauses: Vec<PauseSpan>,
    /// Tokens (o200k) of the run's `output`: what the pipeline hands an agent.
    pub output_tokens: u64,
    /// Tokens of every node's output together: what returning every
    /// intermediate result would have cost in context instead.
    pub output_tokens_all: u64,
}

/// One pause of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PauseSpan {
    /// Wall-clock milliseconds from the run's start to the pause.
    pub at_ms: u64,
    /// How long it lasted.
    pub ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A new run id: the UTC start time to the second, then four random hex
/// digits, so ids sort by time and two runs in one second differ.
pub fn new_run_id() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}-{:04x}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        crate::random::number() & 0xffff
    )
}

impl Trace {
    /// The trace with each result as the server sent it (a text block kept
    /// as a reference to the structured content written out again), for
    /// printing; everything else shared.
    pub fn as_sent(&self) -> Trace {
        let mut shown = self.clone();
        for rec in shown.nodes.values_mut() {
            rec.raw = crate::mcp::grown(&rec.raw);
        }
        shown
    }

    /// Passed: the run completed, every expectation held and no judged
    /// metric failed or could not be scored.
    pub fn passed(&self) -> bool {
        self.composition.status == RunStatus::Completed
            && self.expect.iter().all(|e| e.pass)
            && self.eval.iter().all(EvalRow::holds)
    }

    /// The envelope as JSON, with the `cost.total` / `tokens.total` aliases
    /// that expectations may address.
    pub fn envelope(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.insert("cost".into(), json!({"total": self.composition.cost_total}));
            map.insert(
                "tokens".into(),
                json!({"total": self.composition.tokens_total}),
            );
        }
        v
    }

    /// Evaluates `expectations` against this trace and stores the results.
    pub fn check(&mut self, expectations: &[Expectation]) {
        if expectations.is_empty() {
            // The envelope is a copy of the whole trace: skip it when
            // nothing reads it.
            self.expect = Vec::new();
            return;
        }
        let envelope = self.envelope();
        self.expect = expectations
            .iter()
            .map(|e| evaluate(e, &envelope))
            .collect();
    }
}

/// The value at an expectation target such as `nodes.find.output.users[0]`;
/// `None` when the path does not exist.
pub fn lookup(envelope: &Value, target: &str) -> Option<Value> {
    let template = reference::parse_template(&format!("${{{target}}}")).ok()?;
    let r = template.single_ref()?;
    let Root::Node(first) = &r.root else {
        return None;
    };
    let root = envelope.get(first)?;
    reference::resolve_path(root, &r.path).ok()
}

fn evaluate(e: &Expectation, envelope: &Value) -> ExpectResult {
    let actual = lookup(envelope, &e.target);
    let (pass, message) = match (&e.matcher, &actual) {
        (Matcher::Exists(want), a) => (a.is_some() == *want, None),
        (_, None) => (
            false,
            Some(format!("`{}` does not exist in the trace", e.target)),
        ),
        (m, Some(a)) => matches(m, a),
    };
    ExpectResult {
        target: e.target.clone(),
        matcher: e.matcher.to_json(),
        pass,
        actual: actual.unwrap_or(Value::Null),
        message,
    }
}

fn matches(m: &Matcher, a: &Value) -> (bool, Option<String>) {
    let compare = |ok: fn(f64, f64) -> bool, n: f64| match a.as_f64() {
        Some(x) => (ok(x, n), None),
        None => (false, Some("the value is not a number".to_owned())),
    };
    match m {
        Matcher::Exact(want) => (json_eq(want, a), None),
        Matcher::Lte(n) => compare(|x, n| x <= n, *n),
        Matcher::Lt(n) => compare(|x, n| x < n, *n),
        Matcher::Gte(n) => compare(|x, n| x >= n, *n),
        Matcher::Gt(n) => compare(|x, n| x > n, *n),
        Matcher::Contains(want) => (contains(a, want), None),
        Matcher::Regex(re) => match a {
            Value::String(s) => (re.is_match(s), None),
            other => (re.is_match(&other.to_string()), None),
        },
        Matcher::Length(n) => {
            let len = match a {
                Value::String(s) => Some(s.chars().count()),
                Value::Array(v) => Some(v.len()),
                Value::Object(m) => Some(m.len()),
                _ => None,
            };
            match len {
                Some(l) => (l as u64 == *n, None),
                None => (false, Some("the value has no length".to_owned())),
            }
        }
        Matcher::Type(t) => (type_name(a) == t, None),
        Matcher::Exists(_) => (true, None),
        Matcher::Jq(p) => match p.test(a) {
            Ok(b) => (b, None),
            Err(e) => (false, Some(e.to_string())),
        },
    }
}

/// JSON equality where `1` equals `1.0`.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn contains(haystack: &Value, needle: &Value) -> bool {
    match (haystack, needle) {
        (Value::String(h), Value::String(n)) => h.contains(n.as_str()),
        (Value::Array(items), n) => items.iter().any(|i| json_eq(i, n) || contains_subset(i, n)),
        (Value::Object(_), Value::Object(_)) => contains_subset(haystack, needle),
        (h, n) => json_eq(h, n),
    }
}

fn contains_subset(h: &Value, n: &Value) -> bool {
    match (h, n) {
        (Value::Object(hm), Value::Object(nm)) => nm.iter().all(|(k, v)| {
            hm.get(k)
                .is_some_and(|hv| json_eq(hv, v) || contains_subset(hv, v))
        }),
        _ => false,
    }
}

/// The JSON type name used by the `type` matcher.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_covers_strings_arrays_and_objects() {
        assert!(contains(&json!("hello world"), &json!("lo w")));
        assert!(contains(&json!([1, 2, 3]), &json!(2)));
        assert!(contains(
            &json!({"a": 1, "b": {"c": 2}}),
            &json!({"b": {"c": 2}})
        ));
        assert!(!contains(&json!({"a": 1}), &json!({"a": 2})));
        assert!(contains(&json!([{"id": 1, "n": "x"}]), &json!({"id": 1})));
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_eq(&json!(1), &json!(1.0)));
        assert!(!json_eq(&json!(1), &json!("1")));
    }

    #[test]
    fn lookup_walks_the_envelope() {
        let env = json!({"nodes": {"a": {"status": "ok", "output": {"xs": [1, 2]}}}, "cost": {"total": 0.5}});
        assert_eq!(lookup(&env, "nodes.a.status"), Some(json!("ok")));
        assert_eq!(lookup(&env, "nodes.a.output.xs[1]"), Some(json!(2)));
        assert_eq!(lookup(&env, "cost.total"), Some(json!(0.5)));
        assert_eq!(lookup(&env, "nodes.b.status"), None);
    }
}
