//! A session's messages paired into the calls the agent made: each
//! `tools/call` and its result become one [`Call`], in the order they were
//! made, with the node output computed as a run computes it
//! ([`crate::mcp::output_of`]).
//!
//! Folded into one call: the rounds of a 2026-07-28 input-required call
//! (the same tool and arguments called again with `inputResponses`), the
//! questions a 2025-11-25 server asked while the call was open
//! (`elicitation/create`, `sampling/createMessage`) with the client's
//! replies, and a task's polls (`tasks/get`, `tasks/result`). Dropped:
//! `initialize`, `server/discover`, pings, listings and notifications (a
//! call's progress and log lines stay with it).

use std::collections::HashMap;
use std::path::Path;

use indexmap::IndexMap;
use serde_json::{Map, Value};

use super::session::{Header, Line, Reader, Side};
use crate::json::Json;
use crate::mcp::human::CallExtras;
use crate::mcp::output_of;

/// One `tools/call` the agent made, folded.
#[derive(Debug, Clone)]
pub struct Call {
    /// The server's name (the session header's).
    pub server: String,
    pub tool: String,
    /// The arguments as the agent sent them (without `inputResponses`,
    /// `requestState` or `task`, which belong to the protocol).
    pub args: Map<String, Value>,
    /// The final `CallToolResult` as the server sent it.
    pub result: Json,
    /// The node output of `result`, as a run computes it.
    pub output: Json,
    /// `isError: true`.
    pub is_error: bool,
    /// When the call (its first round) was sent, in ms since the session
    /// started.
    pub at_ms: f64,
    /// From the first request to the final result.
    pub duration_ms: f64,
    /// The questions answered during the call (`interactions`), its log
    /// lines and progress, and the task it ran as.
    pub extras: CallExtras,
    /// How many input-required rounds it took (0: none).
    pub rounds: usize,
    /// The line of the session file where the call was sent.
    pub line: usize,
}

/// What a session holds besides its calls, and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// The file it was read from, as errors and notes name it.
    pub source: String,
    pub header: Option<Header>,
    /// The revision the client and server settled on, when the session
    /// shows it (`initialize`'s result).
    pub protocol: Option<String>,
    /// The server's tools as its last `tools/list` gave them, by name.
    pub tools: IndexMap<String, Value>,
    /// Every call, in the order they were sent.
    pub calls: Vec<Call>,
    /// How many messages of each dropped kind the session had.
    pub dropped: Dropped,
    /// What a reader should know: a call with no answer, a message over
    /// the limit; each with its line.
    pub notes: Vec<String>,
    /// Every server of a recording made of several servers' sessions
    /// (empty: the header's alone).
    pub servers: Vec<super::session::Server>,
    /// Per server, the credential headers the client sent (known from a
    /// HAR file), each with the `${env.NAME}` that stands for its value.
    pub headers: IndexMap<String, Vec<(String, String)>>,
}

impl Recording {
    /// The server's name, as the pipeline written from it names it.
    pub fn server(&self) -> &str {
        self.header.as_ref().map_or("default", |h| h.server.name())
    }
}

/// Counts of what pairing left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Dropped {
    /// `initialize`, `server/discover`.
    pub discovery: usize,
    pub pings: usize,
    /// `tools/list`, `resources/list`, `prompts/list`, … and reads.
    pub listings: usize,
    /// Notifications not kept with a call.
    pub notifications: usize,
    /// Input-required rounds and task polls folded into their calls.
    pub folded: usize,
}

/// A session that could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SessionError {
    pub file: String,
    /// 1-based; 0 for the file as a whole.
    pub line: usize,
    pub what: String,
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.what)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.what)
        }
    }
}

/// Reads the session file at `path` (lines up to `limit` bytes) and pairs
/// its calls.
pub fn open(path: &Path, limit: usize) -> Result<Recording, SessionError> {
    let file = path.display().to_string();
    let reader = Reader::open(path, limit).map_err(|e| SessionError {
        file: file.clone(),
        line: e.line,
        what: e.what,
    })?;
    read(reader, &file)
}

/// Pairs the calls of a session being read by `reader`; `file` names it
/// in errors.
pub fn read<R: std::io::BufRead>(
    mut reader: Reader<R>,
    file: &str,
) -> Result<Recording, SessionError> {
    let mut p = Pairing::new(reader.header().clone(), file);
    while let Some(line) = reader.next() {
        let line = line.map_err(|e| SessionError {
            file: file.to_owned(),
            line: e.line,
            what: e.what,
        })?;
        p.push(line, reader.line())?;
    }
    Ok(p.finish())
}

/// Pairs `lines` (each with its line number) as one session with `header`.
pub fn pair(
    header: Header,
    file: &str,
    lines: impl IntoIterator<Item = (Line, usize)>,
) -> Result<Recording, SessionError> {
    let mut p = Pairing::new(header, file);
    for (line, n) in lines {
        p.push(line, n)?;
    }
    Ok(p.finish())
}

/// A session paired as its lines come, for a reader that follows a file
/// being written (the workbench's recording view): each line goes in as
/// it is read, and the calls finished so far can be read at any time.
#[derive(Clone)]
pub struct Live(Pairing);

impl Live {
    /// Pairing for a session with `header`; `file` names it in errors.
    pub fn new(header: Header, file: &str) -> Live {
        Live(Pairing::new(header, file))
    }

    /// Takes in line number `n`.
    pub fn push(&mut self, line: Line, n: usize) -> Result<(), SessionError> {
        self.0.push(line, n)
    }

    /// The calls finished so far, in the order their results came.
    pub fn calls(&self) -> &[Call] {
        &self.0.rec.calls
    }

    /// The session as [`read`] would give it if it ended now: the calls
    /// finished so far, in the order they were sent; a call still waiting
    /// is left out with a note.
    pub fn recording(&self) -> Recording {
        self.0.clone().finish()
    }
}

/// A request waiting for its answer.
#[derive(Debug, Clone)]
struct Pending {
    method: String,
    params: Value,
    at_ms: f64,
    line: usize,
}

/// A `tools/call` sent and not yet finished (waiting for its answer, for
/// another round, or for its task).
#[derive(Debug, Clone)]
struct Open {
    tool: String,
    args: Map<String, Value>,
    at_ms: f64,
    line: usize,
    extras: CallExtras,
    rounds: usize,
    progress: Option<String>,
    /// The questions of the last input-required answer, by key.
    questions: Map<String, Value>,
}

/// The state of pairing one session.
#[derive(Clone)]
struct Pairing {
    file: String,
    rec: Recording,
    server: String,
    /// Requests the client sent that are not calls, by id.
    client: HashMap<String, Pending>,
    /// Requests the server sent, by id.
    asked: HashMap<String, Pending>,
    /// Calls in flight, by request id, in the order sent.
    calls: IndexMap<String, Open>,
    /// Calls answered with questions, waiting to be called again.
    waiting: Vec<Open>,
    /// Calls that became tasks, by task id.
    tasks: IndexMap<String, Open>,
}

/// A JSON-RPC id as a map key (`1` and `"1"` differ).
fn id_key(id: &Value) -> String {
    id.to_string()
}

impl Pairing {
    fn new(header: Header, file: &str) -> Pairing {
        Pairing {
            file: file.to_owned(),
            server: header.server.name().to_owned(),
            rec: Recording {
                source: file.to_owned(),
                header: Some(header),
                ..Recording::default()
            },
            client: HashMap::new(),
            asked: HashMap::new(),
            calls: IndexMap::new(),
            waiting: Vec::new(),
            tasks: IndexMap::new(),
        }
    }

    fn err(&self, line: usize, what: impl Into<String>) -> SessionError {
        SessionError {
            file: self.file.clone(),
            line,
            what: what.into(),
        }
    }

    fn note(&mut self, line: usize, what: impl std::fmt::Display) {
        self.rec.notes.push(format!("{}:{line}: {what}", self.file));
    }

    fn push(&mut self, line: Line, n: usize) -> Result<(), SessionError> {
        match line {
            Line::Message {
                at_ms,
                from,
                message,
                ..
            } => self.message(from, message.tree(), at_ms, n),
            Line::TooLarge { from, bytes, .. } => {
                let who = match from {
                    Side::Client => "the client",
                    Side::Server => "the server",
                };
                self.note(
                    n,
                    format!(
                        "a message from {who} of {bytes} bytes was over the limit and not kept; a call may be missing"
                    ),
                );
                Ok(())
            }
            Line::Unreadable { error, .. } => {
                self.note(
                    n,
                    format!("a message that is not JSON ({error}) was skipped"),
                );
                Ok(())
            }
            Line::Stderr { .. } | Line::End { .. } => Ok(()),
        }
    }

    fn message(
        &mut self,
        from: Side,
        msg: &Value,
        at_ms: f64,
        n: usize,
    ) -> Result<(), SessionError> {
        // A batch (2025-03-26 allowed them): each message in turn.
        if let Value::Array(items) = msg {
            for item in items {
                self.message(from, item, at_ms, n)?;
            }
            return Ok(());
        }
        let Value::Object(m) = msg else {
            return Err(self.err(n, "a message that is not a JSON-RPC object"));
        };
        let method = m.get("method").and_then(Value::as_str);
        let id = m.get("id").filter(|i| !i.is_null());
        let params = m.get("params").cloned().unwrap_or(Value::Null);
        match (from, method, id) {
            (Side::Client, Some(method), Some(id)) => {
                self.client_request(method, id, params, at_ms, n)
            }
            (Side::Server, Some(method), Some(id)) => {
                self.asked.insert(
                    id_key(id),
                    Pending {
                        method: method.to_owned(),
                        params,
                        at_ms,
                        line: n,
                    },
                );
                Ok(())
            }
            (_, Some(method), None) => {
                self.notification(from, method, &params);
                Ok(())
            }
            (Side::Server, None, Some(id)) => {
                self.server_answer(id, m, at_ms, n);
                Ok(())
            }
            (Side::Client, None, Some(id)) => {
                self.client_answer(id, m);
                Ok(())
            }
            (_, None, None) => Err(self.err(
                n,
                "a message with neither `method` nor `id` is not JSON-RPC",
            )),
        }
    }

    fn client_request(
        &mut self,
        method: &str,
        id: &Value,
        params: Value,
        at_ms: f64,
        n: usize,
    ) -> Result<(), SessionError> {
        // A stateless 2026-07-28 client need not discover: each request
        // names its revision in `_meta`. `initialize` or `server/discover`,
        // when answered, say it instead.
        if self.rec.protocol.is_none()
            && let Some(v) = params
                .pointer("/_meta/io.modelcontextprotocol~1protocolVersion")
                .and_then(Value::as_str)
        {
            self.rec.protocol = Some(v.to_owned());
        }
        if method != "tools/call" {
            self.client.insert(
                id_key(id),
                Pending {
                    method: method.to_owned(),
                    params,
                    at_ms,
                    line: n,
                },
            );
            return Ok(());
        }
        let Some(tool) = params.get("name").and_then(Value::as_str) else {
            return Err(self.err(n, "a `tools/call` without a tool `name`"));
        };
        let args = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(other) => {
                return Err(self.err(
                    n,
                    format!(
                        "the `arguments` of a `tools/call` of `{tool}` are {}, not an object",
                        kind(other)
                    ),
                ));
            }
        };
        let progress = params
            .pointer("/_meta/progressToken")
            .filter(|t| !t.is_null())
            .map(id_key);
        let responses = params.get("inputResponses").and_then(Value::as_object);
        let again = params.get("requestState").is_some() || responses.is_some();
        let open = match again.then(|| self.take_waiting(tool, &args)).flatten() {
            Some(mut open) => {
                self.rec.dropped.folded += 1;
                if let Some(responses) = responses {
                    for (key, reply) in responses {
                        let Some(asked) = open.questions.get(key) else {
                            continue;
                        };
                        if let Some(i) = Self::interaction(&self.server, asked, reply) {
                            open.extras.interactions.push(i);
                        }
                    }
                }
                open.questions = Map::new();
                open.progress = progress;
                open
            }
            None => Open {
                tool: tool.to_owned(),
                args,
                at_ms,
                line: n,
                extras: CallExtras::default(),
                rounds: 0,
                progress,
                questions: Map::new(),
            },
        };
        self.calls.insert(id_key(id), open);
        Ok(())
    }

    /// The call waiting for another round with this tool and these
    /// arguments.
    fn take_waiting(&mut self, tool: &str, args: &Map<String, Value>) -> Option<Open> {
        let at = self
            .waiting
            .iter()
            .rposition(|w| w.tool == tool && &w.args == args)?;
        Some(self.waiting.remove(at))
    }

    /// The server's answer to a client request.
    fn server_answer(&mut self, id: &Value, m: &Map<String, Value>, at_ms: f64, n: usize) {
        let key = id_key(id);
        if let Some(open) = self.calls.shift_remove(&key) {
            self.call_answer(open, m, at_ms, n);
            return;
        }
        let Some(pending) = self.client.remove(&key) else {
            self.note(
                n,
                format!("an answer to request {id} that was never sent; skipped"),
            );
            return;
        };
        let result = m.get("result");
        match pending.method.as_str() {
            "initialize" | "server/discover" => {
                self.rec.dropped.discovery += 1;
                // `initialize` says the version; `server/discover` lists
                // them, and the client asked for one in its `_meta`.
                let asked = pending
                    .params
                    .pointer("/_meta/io.modelcontextprotocol~1protocolVersion")
                    .and_then(Value::as_str);
                let listed: Vec<&str> = result
                    .and_then(|r| r.get("supportedVersions"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let version = result
                    .and_then(|r| r.get("protocolVersion"))
                    .and_then(Value::as_str)
                    .or_else(|| asked.filter(|a| listed.contains(a)))
                    .or_else(|| listed.iter().max().copied());
                if let Some(v) = version {
                    self.rec.protocol = Some(v.to_owned());
                }
            }
            "ping" => self.rec.dropped.pings += 1,
            "tools/list" => {
                self.rec.dropped.listings += 1;
                let first_page = pending.params.get("cursor").is_none();
                if first_page {
                    self.rec.tools.clear();
                }
                for tool in result
                    .and_then(|r| r.get("tools"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(name) = tool.get("name").and_then(Value::as_str) {
                        self.rec.tools.insert(name.to_owned(), tool.clone());
                    }
                }
            }
            "tasks/get" | "tasks/result" => {
                self.rec.dropped.folded += 1;
                self.task_answer(&pending, result, m.get("error"), at_ms);
            }
            _ => self.rec.dropped.listings += 1,
        }
    }

    /// The answer to a `tools/call`: a result, questions (another round
    /// follows), or a task.
    fn call_answer(&mut self, mut open: Open, m: &Map<String, Value>, at_ms: f64, n: usize) {
        let Some(result) = m.get("result") else {
            let why = m
                .get("error")
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .unwrap_or("no reason given");
            self.note(
                n,
                format!(
                    "`{}` (line {}) was answered with a protocol error ({why}); left out",
                    open.tool, open.line
                ),
            );
            return;
        };
        let result_type = result.get("resultType").and_then(Value::as_str);
        if result_type == Some("input_required")
            || (result_type.is_none()
                && result.get("content").is_none()
                && (result.get("inputRequests").is_some() || result.get("requestState").is_some()))
        {
            open.rounds += 1;
            open.questions = result
                .get("inputRequests")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            self.waiting.push(open);
            return;
        }
        if let Some(task) = Self::task_of(result) {
            let id = task
                .get("taskId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            open.extras.task(&Self::task_note(&id, task));
            self.tasks.insert(id, open);
            return;
        }
        self.finish_call(open, result.clone(), at_ms);
    }

    fn finish_call(&mut self, open: Open, result: Value, at_ms: f64) {
        let result = Json::from_value(result);
        let is_error = crate::mcp::is_error(&result);
        self.rec.calls.push(Call {
            server: self.server.clone(),
            tool: open.tool,
            args: open.args,
            output: output_of(&result),
            result,
            is_error,
            at_ms: open.at_ms,
            duration_ms: (at_ms - open.at_ms).max(0.0),
            extras: open.extras,
            rounds: open.rounds,
            line: open.line,
        });
    }

    fn finish(mut self) -> Recording {
        let open: Vec<Open> = self
            .calls
            .drain(..)
            .map(|(_, o)| o)
            .chain(self.tasks.drain(..).map(|(_, o)| o))
            .collect();
        for o in open {
            self.note(o.line, format!("`{}` got no result; left out", o.tool));
        }
        for o in std::mem::take(&mut self.waiting) {
            self.note(
                o.line,
                format!(
                    "`{}` asked for input and was not called again with the answers; left out",
                    o.tool
                ),
            );
        }
        self.rec.calls.sort_by(|a, b| {
            a.at_ms
                .total_cmp(&b.at_ms)
                .then_with(|| a.line.cmp(&b.line))
        });
        self.rec
    }
}

/// A JSON value's kind, in words.
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

mod fold;

#[cfg(test)]
mod tests;
