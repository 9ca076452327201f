//! Cassettes: every call of a run recorded to a file (`--record`), and a
//! run answered from that file with no server (`--replay`).
//!
//! Both are [`Caller`] wrappers, so the session and the executor do not know
//! whether a server, a recording or a replay is behind them.
//!
//! # File format (version 1)
//!
//! Pretty-printed JSON, written in a stable order so two recordings diff
//! line by line:
//!
//! ```json
//! {
//!   "version": 1,
//!   "tools": { "demo": [ { "name": "echo", "inputSchema": {…}, … } ] },
//!   "calls": [
//!     { "server": "demo", "tool": "echo", "args": { "message": "hi" },
//!       "result": { "content": […], "structuredContent": {…} },
//!       "is_error": false, "duration_ms": 3,
//!       "cost_usd": 0.0, "tokens": 0, "model": null }
//!   ]
//! }
//! ```
//!
//! - `tools`: each server's `tools/list` at recording time, so preflight
//!   checks work offline.
//! - `calls`: sorted by server, tool and canonical arguments (object keys
//!   sorted); calls with the same key keep the order they were made in, and
//!   a replay answers the n-th such call with the n-th entry (the last entry
//!   once they run out, so retries and re-runs replay too).
//! - Arguments and results are redacted as the trace is: header values and
//!   `${env.X}` values read `***`. A replay matches on redacted arguments.
//! - Calls that got no answer (transport errors, timeouts) are not recorded.
//! - `judge`: the judge's calls for `eval:` (see [`judge`]), matched on
//!   replay by the SHA-256 of the request's messages.
//! - What the server asked during a call (elicitation, sampling) and the
//!   reply it got are kept in the entry's `interactions`, with its log lines
//!   (`logs`) and progress (`progress`): a replay hands them back as they
//!   were, so it answers the same way with no person and no provider.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::cost::pricing::{FreeCalls, Pricing};
use crate::json::Json;
use crate::mcp::caller::{CallRequest, Caller};
use crate::mcp::human::{CallExtras, Interaction, LogLine, Notice, ProgressNote};
use crate::mcp::{CallOutcome, McpError, ToolInfo, meta_of, output_of};
use crate::redact::Redactor;

pub mod export;
pub(crate) mod judge;

pub use judge::JudgeEntry;

/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// A whole cassette file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cassette {
    pub version: u32,
    #[serde(default)]
    pub tools: IndexMap<String, Vec<Value>>,
    #[serde(default)]
    pub calls: Vec<Entry>,
    /// The judge's calls (`eval:`), in the order of their requests' hashes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judge: Vec<JudgeEntry>,
}

/// One recorded call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub server: String,
    pub tool: String,
    /// Canonical: object keys sorted at every level.
    pub args: Value,
    pub result: Json,
    #[serde(default)]
    pub is_error: bool,
    #[serde(default)]
    pub duration_ms: u64,
    #[serde(default)]
    pub cost_usd: f64,
    #[serde(default)]
    pub tokens: u64,
    #[serde(default)]
    pub model: Option<String>,
    /// The server's questions during the call and the replies given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interactions: Vec<Interaction>,
    /// The server's log lines during the call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<LogLine>,
    /// The server's progress notes during the call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub progress: Vec<ProgressNote>,
    /// The task the call ran as (its id and status history); a replay
    /// gives the recorded result without polling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<crate::mcp::human::TaskRecord>,
}

impl Entry {
    fn extras(&self) -> CallExtras {
        CallExtras {
            interactions: self.interactions.clone(),
            logs: self.logs.clone(),
            progress: self.progress.clone(),
            task: self.task.clone(),
        }
    }
}

/// `extras` with every secret masked.
pub fn redacted_extras(redactor: &Redactor, extras: &CallExtras) -> CallExtras {
    let mut out = extras.clone();
    if extras.is_empty() || redactor.is_empty() {
        return out;
    }
    for i in &mut out.interactions {
        i.request = redactor.value(&i.request);
        i.reply = redactor.value(&i.reply);
        i.error = i.error.as_deref().map(|e| redactor.text(e));
    }
    for l in &mut out.logs {
        l.data = redactor.value(&l.data);
        l.logger = l.logger.as_deref().map(|x| redactor.text(x));
    }
    for p in &mut out.progress {
        p.message = p.message.as_deref().map(|m| redactor.text(m));
    }
    if let Some(t) = &mut out.task {
        t.message = t.message.as_deref().map(|m| redactor.text(m));
        for step in &mut t.history {
            step.message = step.message.as_deref().map(|m| redactor.text(m));
        }
    }
    out
}

/// Why a cassette could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
    #[error("cannot read cassette {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot write cassette {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("cassette {path} is not valid: {message}")]
    Invalid { path: String, message: String },
}

impl Cassette {
    /// Reads a cassette file.
    pub fn load(path: &Path) -> Result<Self, CassetteError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| CassetteError::Read {
            path: name.clone(),
            source,
        })?;
        let c: Cassette = serde_json::from_str(&text).map_err(|e| CassetteError::Invalid {
            path: name.clone(),
            message: e.to_string(),
        })?;
        if c.version != VERSION {
            return Err(CassetteError::Invalid {
                path: name,
                message: format!("version {} (this pipewright reads {VERSION})", c.version),
            });
        }
        Ok(c)
    }

    /// Writes the cassette, calls in their stable order.
    pub fn save(&self, path: &Path) -> Result<(), CassetteError> {
        let mut sorted = self.clone();
        sorted
            .calls
            .sort_by_cached_key(|e| key(&e.server, &e.tool, &e.args));
        sorted
            .judge
            .sort_by(|a, b| a.request_sha256.cmp(&b.request_sha256));
        let mut text = serde_json::to_string_pretty(&sorted).unwrap_or_default();
        text.push('\n');
        std::fs::write(path, text).map_err(|source| CassetteError::Write {
            path: path.display().to_string(),
            source,
        })
    }
}

/// `v` with object keys sorted at every level.
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), canonical(&map[k])))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// The key a call is matched by.
fn key(server: &str, tool: &str, args: &Value) -> String {
    format!("{server}\u{0}{tool}\u{0}{}", canonical(args))
}

/// Records every answered call of an inner caller.
pub struct Recorder {
    inner: Arc<dyn Caller>,
    default_server: String,
    redactor: Redactor,
    pricing: Arc<Pricing>,
    cassette: Mutex<Cassette>,
}

impl Recorder {
    /// Wraps `inner`; `tools` is each server's `tools/list` (raw entries).
    pub fn new(
        inner: Arc<dyn Caller>,
        default_server: String,
        redactor: Redactor,
        pricing: Arc<Pricing>,
        tools: IndexMap<String, Vec<Value>>,
    ) -> Self {
        Self {
            inner,
            default_server,
            pricing,
            cassette: Mutex::new(Cassette {
                version: VERSION,
                tools: tools
                    .into_iter()
                    .map(|(k, v)| (k, v.iter().map(|t| redactor.value(t)).collect()))
                    .collect(),
                calls: Vec::new(),
                judge: Vec::new(),
            }),
            redactor,
        }
    }

    /// Keeps a judge call (already masked) in the cassette.
    pub fn add_judge(&self, entry: JudgeEntry) {
        if let Ok(mut c) = self.cassette.lock() {
            c.judge.push(entry);
        }
    }

    /// The cassette as recorded so far.
    pub fn cassette(&self) -> Cassette {
        self.cassette.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

impl Caller for Recorder {
    fn call<'a>(
        &'a self,
        request: CallRequest<'a>,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        let (server, tool) = (request.server, request.tool);
        let args = request.args.clone();
        Box::pin(async move {
            let out = self.inner.call(request).await;
            if let Ok(o) = &out
                && !o.replayed
            {
                let meta = meta_of(&o.result);
                let figures =
                    self.pricing
                        .actual(server, tool, &args, meta.as_ref(), &output_of(&o.result));
                let extras = redacted_extras(&self.redactor, &o.extras);
                let entry = Entry {
                    server: server.unwrap_or(&self.default_server).to_owned(),
                    tool: tool.to_owned(),
                    args: canonical(&self.redactor.value(&Value::Object(args))),
                    result: self.redactor.json(&o.result),
                    is_error: o.is_error,
                    duration_ms: o.duration.as_millis() as u64,
                    cost_usd: figures.cost_usd,
                    tokens: figures.tokens,
                    model: figures.model,
                    interactions: extras.interactions,
                    logs: extras.logs,
                    progress: extras.progress,
                    task: extras.task,
                };
                if let Ok(mut c) = self.cassette.lock() {
                    c.calls.push(entry);
                }
            }
            out
        })
    }

    fn inner(&self) -> Option<&dyn Caller> {
        Some(self.inner.as_ref())
    }
}

/// Answers calls from a cassette; calls it lacks go to `fallthrough` when
/// there is one, else fail naming the call.
pub struct Replayer {
    name: String,
    default_server: String,
    redactor: Redactor,
    by_key: HashMap<String, Vec<Entry>>,
    used: Mutex<HashMap<String, usize>>,
    fallthrough: Option<Arc<dyn Caller>>,
}

impl std::fmt::Debug for Replayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replayer")
            .field("cassette", &self.name)
            .field("calls", &self.by_key.len())
            .finish_non_exhaustive()
    }
}

impl Replayer {
    /// A replayer of `cassette` (named `name` in errors).
    pub fn new(
        cassette: &Cassette,
        name: impl Into<String>,
        default_server: String,
        redactor: Redactor,
        fallthrough: Option<Arc<dyn Caller>>,
    ) -> Self {
        let mut by_key: HashMap<String, Vec<Entry>> = HashMap::new();
        for e in &cassette.calls {
            by_key
                .entry(key(&e.server, &e.tool, &e.args))
                .or_default()
                .push(e.clone());
        }
        Self {
            name: name.into(),
            default_server,
            redactor,
            by_key,
            used: Mutex::new(HashMap::new()),
            fallthrough,
        }
    }

    fn key_of(&self, server: Option<&str>, tool: &str, args: &Map<String, Value>) -> String {
        let args = self.redactor.value(&Value::Object(args.clone()));
        key(server.unwrap_or(&self.default_server), tool, &args)
    }

    /// The recorded answer to this call, if any (the n-th for the n-th ask).
    fn answer(&self, k: &str) -> Option<Entry> {
        let entries = self.by_key.get(k)?;
        let mut used = self.used.lock().ok()?;
        let n = used.entry(k.to_owned()).or_insert(0);
        let e = entries.get(*n).or(entries.last()).cloned();
        *n += 1;
        e
    }
}

impl FreeCalls for Replayer {
    fn answers(&self, server: Option<&str>, tool: &str, args: &Map<String, Value>) -> bool {
        self.by_key.contains_key(&self.key_of(server, tool, args))
    }
}

impl Caller for Replayer {
    fn call<'a>(
        &'a self,
        request: CallRequest<'a>,
    ) -> BoxFuture<'a, Result<CallOutcome, McpError>> {
        let (server, tool, scope) = (request.server, request.tool, request.scope);
        Box::pin(async move {
            let k = self.key_of(server, tool, &request.args);
            if let Some(e) = self.answer(&k) {
                let extras = e.extras();
                for p in &extras.progress {
                    scope.tell(Notice::Progress(p.clone()));
                }
                for l in &extras.logs {
                    scope.tell(Notice::Log(l.clone()));
                }
                for i in &extras.interactions {
                    scope.tell(Notice::Answered(i.clone()));
                }
                if let Some(t) = &extras.task {
                    for step in &t.history {
                        scope.tell(Notice::Task(crate::mcp::human::TaskNote {
                            task: t.id.clone(),
                            status: step.status.clone(),
                            message: step.message.clone(),
                        }));
                    }
                }
                return Ok(CallOutcome {
                    request: json!({
                        "jsonrpc": "2.0",
                        "method": "tools/call",
                        "params": { "name": tool, "arguments": e.args },
                    })
                    .into(),
                    result: e.result,
                    is_error: e.is_error,
                    duration: Duration::ZERO,
                    replayed: true,
                    extras,
                });
            }
            if let Some(live) = &self.fallthrough {
                return live.call(request).await;
            }
            let shown = self
                .redactor
                .value(&canonical(&Value::Object(request.args)));
            Err(McpError::Transport {
                server: server.unwrap_or(&self.default_server).to_owned(),
                reason: format!(
                    "the call `{tool}` with arguments {shown} is not in cassette {}; \
                     record it again, or pass --replay-fallthrough to call the live server",
                    self.name
                ),
            })
        })
    }

    fn logs(&self) -> IndexMap<String, String> {
        self.fallthrough
            .as_ref()
            .map(|f| f.logs())
            .unwrap_or_default()
    }

    fn tool_lists(&self) -> IndexMap<String, Vec<ToolInfo>> {
        self.fallthrough
            .as_ref()
            .map(|f| f.tool_lists())
            .unwrap_or_default()
    }

    fn tools_changed(&self) -> bool {
        self.fallthrough.as_ref().is_some_and(|f| f.tools_changed())
    }

    fn reread_tools(&self) -> BoxFuture<'_, Option<IndexMap<String, Vec<ToolInfo>>>> {
        match &self.fallthrough {
            Some(f) => f.reread_tools(),
            None => Box::pin(async { None }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::human::CallScope;
    use tokio_util::sync::CancellationToken;

    #[test]
    fn canonical_sorts_keys_everywhere() {
        let v = json!({"b": 1, "a": [{"d": 1, "c": 2}]});
        assert_eq!(canonical(&v).to_string(), r#"{"a":[{"c":2,"d":1}],"b":1}"#);
    }

    #[tokio::test]
    async fn replays_in_order_and_names_missing_calls() {
        let entry = |n: i64| Entry {
            server: "demo".into(),
            tool: "echo".into(),
            args: json!({"m": "x"}),
            result: json!({"structuredContent": {"n": n}}).into(),
            is_error: false,
            duration_ms: 1,
            cost_usd: 0.5,
            tokens: 1,
            model: None,
            interactions: Vec::new(),
            logs: Vec::new(),
            progress: Vec::new(),
            task: None,
        };
        let c = Cassette {
            version: VERSION,
            tools: IndexMap::new(),
            calls: vec![entry(1), entry(2)],
            judge: Vec::new(),
        };
        let r = Replayer::new(&c, "c.json", "demo".into(), Redactor::default(), None);
        let cancel = CancellationToken::new();
        let mut args = Map::new();
        args.insert("m".into(), json!("x"));
        let mut got = Vec::new();
        for _ in 0..3 {
            let o = r
                .call(CallRequest {
                    server: None,
                    tool: "echo",
                    args: args.clone(),
                    meta: None,
                    timeout: None,
                    cancel: &cancel,
                    scope: &CallScope::default(),
                })
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(o.replayed);
            got.push(o.result["structuredContent"]["n"].clone());
        }
        assert_eq!(got, [json!(1), json!(2), json!(2)]);
        assert!(r.answers(Some("demo"), "echo", &args));
        let e = r
            .call(CallRequest {
                server: None,
                tool: "nope",
                args: Map::new(),
                meta: None,
                timeout: None,
                cancel: &cancel,
                scope: &CallScope::default(),
            })
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains("`nope`") && e.contains("c.json"), "{e}");
    }
}
