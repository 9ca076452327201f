//! What a person watching `pipewright record` on a terminal sees: one
//! [`CallLine`] per `tools/call` as its answer arrives (the tool, its
//! arguments masked and cut short, ok or the error, how long it took and
//! how big the answer was, the questions the server asked on the way), and
//! the [`Summary`] at the end. Produced as values from the messages a
//! session file keeps; the command line prints them.

use std::collections::HashMap;
use std::fmt;
use std::time::Instant;

use pipewright_engine::record::session::Side;
use pipewright_engine::redact::Redactor;
use serde::Deserialize;
use serde_json::value::RawValue;

/// How much of a call's arguments a line shows.
const ARGS_SHOWN: usize = 80;
/// How much of an error a line shows.
const ERROR_SHOWN: usize = 120;
/// Calls kept waiting for an answer at once; past it the oldest are
/// forgotten (a client that never hears back must not grow the recorder).
const MAX_OPEN: usize = 4096;

/// One `tools/call`, answered.
#[derive(Debug, Clone, PartialEq)]
pub struct CallLine {
    /// When the answer came, `HH:MM:SS.mmm` in UTC.
    pub time: String,
    /// The server's name.
    pub server: String,
    pub tool: String,
    /// The arguments as compact JSON, secrets masked, cut to a line.
    pub args: String,
    pub outcome: Outcome,
    /// From the request to the answer.
    pub ms: f64,
    /// The answer's size on the wire.
    pub bytes: usize,
    /// Questions the server asked the client during the call.
    pub questions: usize,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// A JSON-RPC error or a result with `isError`: its text.
    Error(String),
    /// A 2026-07-28 input-required result: the client asks, then calls
    /// again with the answers.
    InputRequired,
    /// The call was made a task; its result comes through `tasks/result`.
    Task,
    /// The client cancelled it.
    Cancelled,
}

impl fmt::Display for CallLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}  {}  {} {} → ",
            self.time, self.server, self.tool, self.args
        )?;
        match &self.outcome {
            Outcome::Ok => write!(f, "ok")?,
            Outcome::Error(e) => write!(f, "error: {e}")?,
            Outcome::InputRequired => write!(f, "input required")?,
            Outcome::Task => write!(f, "task")?,
            Outcome::Cancelled => write!(f, "cancelled")?,
        }
        write!(f, " {} {}", duration(self.ms), size(self.bytes))?;
        match self.questions {
            0 => Ok(()),
            1 => write!(f, " · asked 1 question"),
            n => write!(f, " · asked {n} questions"),
        }
    }
}

fn duration(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else if ms < 10_000.0 {
        format!("{ms:.0} ms")
    } else {
        format!("{:.1} s", ms / 1000.0)
    }
}

fn size(bytes: usize) -> String {
    match bytes {
        b if b < 1024 => format!("{b} B"),
        b if b < 1024 * 1024 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{:.1} MB", b as f64 / (1024.0 * 1024.0)),
    }
}

/// What a recording held, for the line at its end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// `tools/call`s (a call answered again after its input-required
    /// round counts once).
    pub calls: usize,
    /// Calls that ended in an error.
    pub errors: usize,
    /// Questions servers asked.
    pub questions: usize,
    /// Session files written.
    pub sessions: usize,
}

impl Summary {
    /// Adds another session's figures.
    pub fn add(&mut self, other: &Summary) {
        self.calls += other.calls;
        self.errors += other.errors;
        self.questions += other.questions;
        self.sessions += other.sessions;
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "recorded {} call{} ({} error{}, {} question{}) in {} session{}",
            self.calls,
            s(self.calls),
            self.errors,
            s(self.errors),
            self.questions,
            s(self.questions),
            self.sessions,
            s(self.sessions)
        )
    }
}

/// A message, read only as far as a line needs.
#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(default)]
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
struct CallParams<'a> {
    #[serde(default)]
    name: String,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "inputResponses", borrow, default)]
    input_responses: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CallResult {
    #[serde(rename = "isError", default)]
    is_error: bool,
    #[serde(default)]
    content: Vec<Content>,
    #[serde(rename = "resultType", default)]
    result_type: Option<String>,
    #[serde(rename = "inputRequests", default)]
    input_requests: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default)]
    task: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct Content {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct Cancelled<'a> {
    #[serde(rename = "requestId", borrow)]
    request_id: &'a RawValue,
}

/// A call waiting for its answer.
struct Open {
    tool: String,
    args: String,
    at: Instant,
    questions: usize,
    /// A call carrying the answers of an input-required round: the same
    /// call again, not a new one.
    again: bool,
    /// Order of arrival, to find the latest call open.
    seq: u64,
}

/// Follows one session's messages and says when a call is answered.
pub struct Tracker {
    server: String,
    redactor: Redactor,
    /// Calls waiting, by the text of their request id.
    open: HashMap<String, Open>,
    seq: u64,
    /// Requests the server sent the client, by id: questions count when
    /// they are asked.
    summary: Summary,
    /// A wall clock and the instant it was read, to stamp lines.
    clock: (Instant, time::OffsetDateTime),
}

impl Tracker {
    /// A tracker for a session with `server`; arguments shown are masked
    /// with `redactor`.
    pub fn new(server: &str, redactor: Redactor) -> Tracker {
        Tracker {
            server: server.to_owned(),
            redactor,
            open: HashMap::new(),
            seq: 0,
            summary: Summary {
                sessions: 1,
                ..Summary::default()
            },
            clock: (Instant::now(), time::OffsetDateTime::now_utc()),
        }
    }

    /// The session's figures so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// One message as it crossed at `at`; the line of the call it answers,
    /// if it answers one.
    pub fn see(&mut self, from: Side, text: &[u8], at: Instant) -> Option<CallLine> {
        let msg: Message<'_> = serde_json::from_slice(text).ok()?;
        match (from, msg.method.as_deref(), msg.id) {
            (Side::Client, Some("tools/call"), Some(id)) => {
                self.called(id.get(), msg.params, at);
                None
            }
            (Side::Client, Some("notifications/cancelled"), None) => {
                let c: Cancelled<'_> = serde_json::from_str(msg.params?.get()).ok()?;
                let open = self.open.remove(c.request_id.get())?;
                Some(self.line(open, Outcome::Cancelled, at, 0))
            }
            (Side::Server, Some(method), Some(_)) if asks(method) => {
                self.summary.questions += 1;
                let latest = self.open.values_mut().max_by_key(|o| o.seq)?;
                latest.questions += 1;
                None
            }
            (Side::Server, None, Some(id)) => {
                let open = self.open.remove(id.get())?;
                let outcome = match (msg.result, msg.error) {
                    (_, Some(e)) => Outcome::Error(cut(&e.message, ERROR_SHOWN)),
                    (Some(result), None) => self.outcome(result.get()),
                    (None, None) => Outcome::Ok,
                };
                Some(self.line(open, outcome, at, text.len()))
            }
            _ => None,
        }
    }

    fn called(&mut self, id: &str, params: Option<&RawValue>, at: Instant) {
        let params = params.and_then(|p| serde_json::from_str::<CallParams<'_>>(p.get()).ok());
        let (tool, args, again) = match params {
            Some(p) => (
                p.name,
                p.arguments.map_or("{}", RawValue::get).to_owned(),
                p.input_responses.is_some(),
            ),
            None => (String::from("?"), String::from("{}"), false),
        };
        if self.open.len() >= MAX_OPEN
            && let Some(oldest) = self
                .open
                .iter()
                .min_by_key(|(_, o)| o.seq)
                .map(|(k, _)| k.clone())
        {
            self.open.remove(&oldest);
        }
        self.seq += 1;
        self.open.insert(
            id.to_owned(),
            Open {
                tool,
                args,
                at,
                questions: 0,
                again,
                seq: self.seq,
            },
        );
    }

    fn outcome(&mut self, result: &str) -> Outcome {
        let Ok(r) = serde_json::from_str::<CallResult>(result) else {
            return Outcome::Ok;
        };
        if r.result_type.as_deref() == Some("input_required") || r.input_requests.is_some() {
            return Outcome::InputRequired;
        }
        if r.task.is_some() {
            return Outcome::Task;
        }
        if r.is_error {
            let text = r
                .content
                .iter()
                .find_map(|c| c.text.as_deref())
                .unwrap_or("the tool reported an error");
            return Outcome::Error(cut(text, ERROR_SHOWN));
        }
        Outcome::Ok
    }

    fn line(&mut self, open: Open, outcome: Outcome, at: Instant, bytes: usize) -> CallLine {
        if let Outcome::InputRequired = outcome {
            // The questions travel in the result: each key one.
            self.summary.questions += 1;
        }
        if !open.again {
            self.summary.calls += 1;
        }
        if let Outcome::Error(_) = outcome {
            self.summary.errors += 1;
        }
        let questions = open.questions + usize::from(outcome == Outcome::InputRequired);
        let args = cut(&self.redactor.text(&open.args), ARGS_SHOWN);
        CallLine {
            time: self.wall(at),
            server: self.server.clone(),
            tool: open.tool,
            args,
            outcome,
            ms: at.saturating_duration_since(open.at).as_secs_f64() * 1000.0,
            bytes,
            questions,
        }
    }

    fn wall(&self, at: Instant) -> String {
        let (then, wall) = self.clock;
        let t = wall + at.saturating_duration_since(then);
        format!(
            "{:02}:{:02}:{:02}.{:03}",
            t.hour(),
            t.minute(),
            t.second(),
            t.millisecond()
        )
    }
}

/// Whether a request from the server is a question for the client's user
/// or model.
fn asks(method: &str) -> bool {
    matches!(method, "elicitation/create" | "sampling/createMessage")
}

/// `text` on one line, cut to `max` characters with `…`.
fn cut(text: &str, max: usize) -> String {
    let one: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one.chars().count() <= max {
        return one;
    }
    let mut s: String = one.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(t: &mut Tracker, from: Side, text: &str) -> Option<CallLine> {
        t.see(from, text.as_bytes(), Instant::now())
    }

    #[test]
    fn a_call_and_its_answer_make_one_line() {
        let r = Redactor::default();
        r.add("s3cret-key");
        let mut t = Tracker::new("demo", r);
        assert!(seen(&mut t, Side::Client, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_users","arguments":{"query":"alice","key":"s3cret-key"}}}"#).is_none());
        assert!(
            seen(
                &mut t,
                Side::Server,
                r#"{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{}}"#
            )
            .is_none()
        );
        let line = seen(
            &mut t,
            Side::Server,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
        )
        .expect("a line");
        assert_eq!(line.tool, "search_users");
        assert_eq!(line.args, r#"{"query":"alice","key":"***"}"#);
        assert_eq!(line.outcome, Outcome::Ok);
        assert_eq!(line.questions, 1);
        let text = line.to_string();
        assert!(
            text.contains("demo  search_users {\"query\":\"alice\",\"key\":\"***\"} → ok"),
            "{text}"
        );
        assert!(text.ends_with("· asked 1 question"), "{text}");

        seen(
            &mut t,
            Side::Client,
            r#"{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"fail"}}"#,
        );
        let line = seen(&mut t, Side::Server, r#"{"jsonrpc":"2.0","id":"b","result":{"isError":true,"content":[{"type":"text","text":"no\nway"}]}}"#).expect("a line");
        assert_eq!(line.outcome, Outcome::Error("no way".into()));
        assert!(
            line.to_string().contains("fail {} → error: no way"),
            "{line}"
        );

        seen(
            &mut t,
            Side::Client,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}"#,
        );
        let line = seen(
            &mut t,
            Side::Client,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
        )
        .expect("a line");
        assert_eq!(line.outcome, Outcome::Cancelled);
        assert_eq!(
            t.summary(),
            &Summary {
                calls: 3,
                errors: 1,
                questions: 1,
                sessions: 1
            }
        );
    }

    #[test]
    fn an_input_required_round_is_one_call() {
        let mut t = Tracker::new("demo", Redactor::default());
        seen(
            &mut t,
            Side::Client,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm_send","arguments":{}}}"#,
        );
        let line = seen(&mut t, Side::Server, r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"answer":{}}}}"#).expect("a line");
        assert_eq!(line.outcome, Outcome::InputRequired);
        seen(
            &mut t,
            Side::Client,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm_send","arguments":{},"inputResponses":{"answer":{}}}}"#,
        );
        seen(
            &mut t,
            Side::Server,
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#,
        )
        .expect("a line");
        assert_eq!(t.summary().calls, 1);
        assert_eq!(t.summary().questions, 1);
    }

    #[test]
    fn long_arguments_are_cut() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(duration(3.25), "3.2 ms");
        assert_eq!(size(1300), "1.3 KB");
    }
}
