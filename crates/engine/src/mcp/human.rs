//! When a server turns to a person in the middle of a tool call: it asks
//! for input (elicitation: a form, or a URL to open) or for a model's
//! completion (sampling). A [`Responder`] answers — an answers file, the
//! terminal, the workbench, a model provider, or nobody (decline) — and
//! every question with its reply is kept as an [`Interaction`], next to the
//! call's log lines and progress ([`CallExtras`]).

pub mod answers;
pub mod chain;
pub mod provider;

use std::sync::Arc;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub use super::task::record::{TaskNote, TaskRecord};

/// What a server asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Ask {
    /// Fill in a form (`elicitation/create`, form mode); `schema` is the
    /// requested schema: an object of flat, primitive properties.
    Form { message: String, schema: Value },
    /// Open a URL and come back (`elicitation/create`, URL mode).
    Url {
        message: String,
        url: String,
        elicitation_id: String,
    },
    /// Write the model's next message (`sampling/createMessage`); `request`
    /// holds the messages, system prompt, model preferences and limits as
    /// the server sent them.
    Sample { request: Value },
}

impl Ask {
    /// `elicitation` or `sampling`: the kind an [`Interaction`] records.
    pub fn kind(&self) -> &'static str {
        match self {
            Ask::Form { .. } | Ask::Url { .. } => "elicitation",
            Ask::Sample { .. } => "sampling",
        }
    }

    /// The request's params as JSON, as kept in the trace.
    pub fn request_json(&self) -> Value {
        match self {
            Ask::Form { message, schema } => {
                json!({"mode": "form", "message": message, "requestedSchema": schema})
            }
            Ask::Url {
                message,
                url,
                elicitation_id,
            } => {
                json!({"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id})
            }
            Ask::Sample { request } => request.clone(),
        }
    }
}

/// One question, with who asks and for which node.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// The server's name as declared.
    pub server: String,
    /// The node whose call the question is filed under (`None` when no
    /// call was in flight): its answers-file entries answer it, and its
    /// trace keeps the exchange.
    pub node: Option<String>,
    /// The nodes whose calls may have asked, when the question named no
    /// call and more than one was in flight (stdio names none); empty when
    /// `node` surely asks.
    pub candidates: Vec<String>,
    pub ask: Ask,
}

impl Question {
    /// Who asks, for a person, each node name wrapped in `quote`:
    /// "node a", or "one of: a, b" when it is not known which.
    pub fn who(&self, quote: &str) -> Option<String> {
        if self.candidates.len() > 1 {
            let names: Vec<String> = self
                .candidates
                .iter()
                .map(|n| format!("{quote}{n}{quote}"))
                .collect();
            return Some(format!("one of: {}", names.join(", ")));
        }
        self.node
            .as_ref()
            .map(|n| format!("node {quote}{n}{quote}"))
    }
}

/// The reply to a [`Question`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Accept: the form's content (an object), or `Null` for a URL.
    Accept(Value),
    /// Say no: the server may go on without it.
    Decline,
    /// Dismiss without choosing.
    Cancel,
    /// The model's message, as written by a person or a provider.
    Sampled { text: String, model: String },
}

impl Reply {
    /// The reply as sent to the server (and kept in the trace).
    pub fn json(&self) -> Value {
        match self {
            Reply::Accept(Value::Null) => json!({"action": "accept"}),
            Reply::Accept(content) => json!({"action": "accept", "content": content}),
            Reply::Decline => json!({"action": "decline"}),
            Reply::Cancel => json!({"action": "cancel"}),
            Reply::Sampled { text, model } => json!({
                "role": "assistant",
                "content": {"type": "text", "text": text},
                "model": model,
                "stopReason": "endTurn",
            }),
        }
    }

    /// `accept`, `decline`, `cancel` or `sampled`, for one-line summaries.
    pub fn action(&self) -> &'static str {
        match self {
            Reply::Accept(_) => "accept",
            Reply::Decline => "decline",
            Reply::Cancel => "cancel",
            Reply::Sampled { .. } => "sampled",
        }
    }
}

/// Who gave a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// An entry of `--answers FILE`.
    Answers,
    /// A person at the terminal (`run`).
    Terminal,
    /// A person in the workbench.
    Workbench,
    /// The configured sampling provider.
    Provider,
    /// The agent that called the served composition (`serve`).
    Agent,
    /// Nobody could answer: declined.
    Nobody,
    /// A person, with `pipewright runs answer`, to a question of a durable
    /// run that waited in Restate.
    RunsAnswer,
}

/// A reply and who gave it; `error` says why a reply was replaced (an
/// answer that did not fit the form is sent as `cancel`).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub reply: Reply,
    pub by: Source,
    pub error: Option<String>,
}

impl Answer {
    pub fn new(reply: Reply, by: Source) -> Self {
        Self {
            reply,
            by,
            error: None,
        }
    }
}

/// Who answers a server's questions for a run.
pub trait Responder: Send + Sync {
    /// The reply to `question`. It may take as long as a person needs; the
    /// call waits (its timeout still runs).
    fn respond<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer>;
}

/// The responder of a run, shared by every call; `None` declines.
#[derive(Clone, Default)]
pub struct Human(pub Option<Arc<dyn Responder>>);

impl std::fmt::Debug for Human {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Human(..)"
        } else {
            "Human(none)"
        })
    }
}

/// Declines everything: what happens with no terminal, no answers file and
/// no provider.
pub struct Nobody;

impl Responder for Nobody {
    fn respond<'a>(&'a self, _question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(async { Answer::new(Reply::Decline, Source::Nobody) })
    }
}

/// Why `reply` cannot be sent as the answer to `ask`; checked before any
/// reply leaves pipewright.
pub fn check_reply(ask: &Ask, reply: &Reply) -> Result<(), String> {
    match (ask, reply) {
        (_, Reply::Decline | Reply::Cancel) => Ok(()),
        (Ask::Form { schema, .. }, Reply::Accept(content)) => {
            let Value::Object(_) = content else {
                return Err("the form's answer must be an object of fields".to_owned());
            };
            let errors = form_errors(schema, content);
            if errors.is_empty() {
                Ok(())
            } else {
                Err(format!(
                    "the answer does not fit the form: {}",
                    errors.join("; ")
                ))
            }
        }
        (Ask::Url { .. }, Reply::Accept(_)) => Ok(()),
        (Ask::Sample { .. }, Reply::Sampled { .. }) => Ok(()),
        (Ask::Sample { .. }, Reply::Accept(_)) => {
            Err("a sampling request needs a message (`sample:`), not `accept:`".to_owned())
        }
        (_, Reply::Sampled { .. }) => {
            Err("an elicitation needs `accept:`, `decline` or `cancel`, not `sample:`".to_owned())
        }
    }
}

/// Every way `content` breaks the requested `schema`, as "field: message".
pub fn form_errors(schema: &Value, content: &Value) -> Vec<String> {
    let Ok(validator) = jsonschema::validator_for(schema) else {
        return Vec::new();
    };
    validator
        .iter_errors(content)
        .map(|e| {
            let path = e
                .instance_path()
                .as_str()
                .trim_start_matches('/')
                .to_owned();
            if path.is_empty() {
                e.to_string()
            } else {
                format!("{path}: {e}")
            }
        })
        .collect()
}

/// One field of a requested form, in the order the schema lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub kind: FieldKind,
    pub required: bool,
    pub default: Option<Value>,
}

/// What a form field holds.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    /// Free text; `format` is `email`, `uri`, `date` or `date-time` when set.
    Text {
        format: Option<String>,
    },
    Number,
    Integer,
    Boolean,
    /// One of `values`, each shown with its title.
    Choice {
        values: Vec<String>,
        titles: Vec<String>,
    },
}

/// The fields of a requested schema (`properties`, `required`).
pub fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(name, p)| Field {
            name: name.clone(),
            title: str_of(p, "title"),
            description: str_of(p, "description"),
            kind: kind_of(p),
            required: required.contains(&name.as_str()),
            default: p.get("default").cloned(),
        })
        .collect()
}

/// Fills the fields an accepted form's answer leaves out with the form's
/// defaults. A bare `accept` (no content, as an answers file may say) is an
/// empty answer, so a form whose fields all have defaults is accepted with
/// every default (SEP-1034).
pub fn with_defaults(schema: &Value, content: &mut Value) {
    if content.is_null() {
        *content = Value::Object(serde_json::Map::new());
    }
    let Some(content) = content.as_object_mut() else {
        return;
    };
    for field in fields(schema) {
        if let Some(d) = field.default
            && !content.contains_key(&field.name)
        {
            content.insert(field.name, d);
        }
    }
}

fn str_of(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn kind_of(p: &Value) -> FieldKind {
    // Enums come as `enum` (+ `enumNames`), or as `oneOf`/`anyOf` of
    // `{const, title}`.
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(plain).collect();
        let titles = p
            .get("enumNames")
            .and_then(Value::as_array)
            .map(|t| t.iter().map(plain).collect())
            .unwrap_or_else(|| values.clone());
        return FieldKind::Choice { values, titles };
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = p.get(key).and_then(Value::as_array)
            && options.iter().all(|o| o.get("const").is_some())
        {
            let values = options.iter().map(|o| plain(&o["const"])).collect();
            let titles = options
                .iter()
                .map(|o| str_of(o, "title").unwrap_or_else(|| plain(&o["const"])))
                .collect();
            return FieldKind::Choice { values, titles };
        }
    }
    match p.get("type").and_then(Value::as_str) {
        Some("number") => FieldKind::Number,
        Some("integer") => FieldKind::Integer,
        Some("boolean") => FieldKind::Boolean,
        _ => FieldKind::Text {
            format: str_of(p, "format"),
        },
    }
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Field {
    /// The field as the person sees it: its title, else its key.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

/// Whether `text` has the shape a string `format` asks (`email`, `uri`,
/// `date`, `date-time`); `None` when it fits or the format is not one of
/// these, else what it should look like.
fn misfit(format: &str, text: &str) -> Option<&'static str> {
    let fits = match format {
        "email" => text.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && !domain.contains('@')
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !text.chars().any(char::is_whitespace)
        }),
        "uri" => text.split_once(':').is_some_and(|(scheme, rest)| {
            scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                && !rest.is_empty()
                && !text.chars().any(char::is_whitespace)
        }),
        "date" => is_date(text),
        "date-time" => {
            time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
                .is_ok()
        }
        _ => true,
    };
    (!fits).then_some(match format {
        "email" => "an email address, like ada@example.com",
        "uri" => "a URI, like https://example.com/page",
        "date" => "a date, like 2026-11-26",
        _ => "a date and time, like 2026-11-26T14:30:00Z",
    })
}

/// `YYYY-MM-DD`, a day that exists.
fn is_date(text: &str) -> bool {
    let mut parts = text.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<i32>(), m.parse::<u8>(), d.parse::<u8>()) else {
        return false;
    };
    time::Month::try_from(m)
        .ok()
        .is_some_and(|m| time::Date::from_calendar_date(y, m, d).is_ok())
}

/// Turns typed text into the field's JSON value; `None` for an empty
/// optional field (left out of the answer). Errors name the field as the
/// person sees it (its title).
pub fn field_value(field: &Field, text: &str) -> Result<Option<Value>, String> {
    let text = text.trim();
    let label = field.label();
    if text.is_empty() {
        return if field.required {
            Err(format!("`{label}` is required"))
        } else {
            Ok(None)
        };
    }
    let value = match &field.kind {
        FieldKind::Text { format } => {
            if let Some(shape) = format.as_deref().and_then(|f| misfit(f, text)) {
                return Err(format!("`{label}` must be {shape}"));
            }
            Value::String(text.to_owned())
        }
        FieldKind::Number => text
            .parse::<f64>()
            .ok()
            .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
            .ok_or_else(|| format!("`{label}` must be a number"))?,
        FieldKind::Integer => text
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("`{label}` must be a whole number"))?,
        FieldKind::Boolean => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" | "1" | "on" => Value::Bool(true),
            "n" | "no" | "false" | "0" | "off" => Value::Bool(false),
            _ => return Err(format!("`{label}` must be yes or no")),
        },
        FieldKind::Choice { values, titles } => {
            let pick = values
                .iter()
                .zip(titles)
                .position(|(v, t)| v == text || t.eq_ignore_ascii_case(text))
                .or_else(|| {
                    text.parse::<usize>()
                        .ok()
                        .filter(|n| (1..=values.len()).contains(n))
                        .map(|n| n - 1)
                })
                .ok_or_else(|| format!("`{label}` must be one of: {}", titles.join(", ")))?;
            Value::String(values[pick].clone())
        }
    };
    Ok(Some(value))
}

/// A question and the reply it got, as kept in the trace and cassettes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Interaction {
    /// `elicitation` or `sampling`.
    pub kind: String,
    pub server: String,
    /// The request's params as the server sent them.
    pub request: Value,
    /// The result as sent back.
    pub reply: Value,
    pub by: Source,
    /// Why the reply differs from the answer given (e.g. it did not fit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One `notifications/message` from a server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogLine {
    /// `debug` … `emergency`.
    pub level: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    pub data: Value,
}

impl LogLine {
    /// `[level logger] data` on one line.
    pub fn text(&self) -> String {
        let data = match &self.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match &self.logger {
            Some(logger) => format!("[{} {logger}] {data}", self.level),
            None => format!("[{}] {data}", self.level),
        }
    }
}

/// One `notifications/progress` for a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgressNote {
    pub progress: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl ProgressNote {
    /// The fraction done, when the server gave a total.
    pub fn fraction(&self) -> Option<f64> {
        self.total
            .filter(|t| *t > 0.0)
            .map(|t| (self.progress / t).clamp(0.0, 1.0))
    }
}

/// At most this many log lines and progress notes are kept per call.
pub const MAX_KEPT: usize = 200;

/// What a call heard besides its result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CallExtras {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interactions: Vec<Interaction>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub logs: Vec<LogLine>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub progress: Vec<ProgressNote>,
    /// The task the call ran as, with its status history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskRecord>,
}

impl CallExtras {
    pub fn is_empty(&self) -> bool {
        self.interactions.is_empty()
            && self.logs.is_empty()
            && self.progress.is_empty()
            && self.task.is_none()
    }

    /// Adds a task status to the call's task record.
    pub fn task(&mut self, note: &TaskNote) {
        self.task.get_or_insert_default().note(note);
    }

    /// Adds a log line, dropping the oldest past [`MAX_KEPT`].
    pub fn log(&mut self, line: LogLine) {
        if self.logs.len() >= MAX_KEPT {
            self.logs.remove(0);
        }
        self.logs.push(line);
    }

    /// Adds a progress note; past [`MAX_KEPT`] the first is kept and the
    /// oldest after it dropped, so the start and the latest stay.
    pub fn progress(&mut self, note: ProgressNote) {
        if self.progress.len() >= MAX_KEPT {
            self.progress.remove(1);
        }
        self.progress.push(note);
    }
}

/// Something that happened during a call, told as it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    Progress(ProgressNote),
    Log(LogLine),
    /// A question was answered.
    Answered(Interaction),
    /// The call's task changed status (or pipewright sent `tasks/cancel`).
    Task(TaskNote),
}

/// Told about every [`Notice`] of a call.
pub type Notify = Arc<dyn Fn(Notice) + Send + Sync>;

/// Who a call belongs to and who answers for it.
#[derive(Clone, Default)]
pub struct CallScope {
    /// The node making the call.
    pub node: Option<String>,
    /// Answers questions; `None` declines them.
    pub responder: Option<Arc<dyn Responder>>,
    /// Hears progress, logs and answers as they come.
    pub notify: Option<Notify>,
    /// The node's `task:`: call as an MCP task (`Some(true)`), never
    /// (`Some(false)`), or as the tool and the timeout say (`None`).
    pub task: Option<bool>,
}

impl std::fmt::Debug for CallScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallScope")
            .field("node", &self.node)
            .field("responder", &self.responder.is_some())
            .finish()
    }
}

impl CallScope {
    /// Tells the notify hook, if any.
    pub fn tell(&self, notice: Notice) {
        if let Some(notify) = &self.notify {
            notify(notice);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name"},
                "age": {"type": "integer", "minimum": 0},
                "plan": {"type": "string", "enum": ["free", "pro"], "enumNames": ["Free", "Pro"]},
                "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
                "agree": {"type": "boolean", "default": false},
                "email": {"type": "string", "format": "email"}
            },
            "required": ["name", "agree"]
        })
    }

    #[test]
    fn fields_follow_the_schema() {
        let f = fields(&schema());
        assert_eq!(f.len(), 6);
        assert_eq!(f[0].name, "name");
        assert!(f[0].required);
        assert_eq!(f[0].title.as_deref(), Some("Your name"));
        assert_eq!(f[1].kind, FieldKind::Integer);
        assert_eq!(
            f[2].kind,
            FieldKind::Choice {
                values: vec!["free".into(), "pro".into()],
                titles: vec!["Free".into(), "Pro".into()]
            }
        );
        assert_eq!(
            f[3].kind,
            FieldKind::Choice {
                values: vec!["s".into(), "l".into()],
                titles: vec!["Small".into(), "Large".into()]
            }
        );
        assert_eq!(f[4].default, Some(json!(false)));
        assert_eq!(
            f[5].kind,
            FieldKind::Text {
                format: Some("email".into())
            }
        );
    }

    #[test]
    fn typed_text_becomes_typed_values() {
        let f = fields(&schema());
        assert_eq!(field_value(&f[0], " Ada "), Ok(Some(json!("Ada"))));
        assert!(field_value(&f[0], "").unwrap_err().contains("required"));
        assert_eq!(field_value(&f[1], ""), Ok(None));
        assert_eq!(field_value(&f[1], "36"), Ok(Some(json!(36))));
        assert!(field_value(&f[1], "3.5").is_err());
        assert_eq!(field_value(&f[2], "Pro"), Ok(Some(json!("pro"))));
        assert_eq!(field_value(&f[2], "1"), Ok(Some(json!("free"))));
        assert!(
            field_value(&f[2], "gold")
                .unwrap_err()
                .contains("Free, Pro")
        );
        assert_eq!(field_value(&f[4], "yes"), Ok(Some(json!(true))));
    }

    /// Issue 35, item 23: a format is checked as typed, and errors name
    /// the field by the title the person sees.
    #[test]
    fn formats_are_checked_and_errors_use_the_title() {
        let f = fields(&schema());
        assert_eq!(
            field_value(&f[0], "").unwrap_err(),
            "`Your name` is required"
        );
        let e = field_value(&f[5], "ada-at-example").unwrap_err();
        assert!(e.contains("must be an email address"), "{e}");
        assert_eq!(
            field_value(&f[5], "ada@example.com"),
            Ok(Some(json!("ada@example.com")))
        );
        for bad in [
            "ada@",
            "@example.com",
            "ada@example",
            "a da@example.com",
            "a@b@c.d",
        ] {
            assert!(field_value(&f[5], bad).is_err(), "{bad}");
        }
        let field = |format: &str| Field {
            name: "x".into(),
            title: None,
            description: None,
            kind: FieldKind::Text {
                format: Some(format.into()),
            },
            required: false,
            default: None,
        };
        assert!(field_value(&field("uri"), "https://example.com/a").is_ok());
        assert!(field_value(&field("uri"), "example dot com").is_err());
        assert!(field_value(&field("date"), "2026-02-28").is_ok());
        assert!(field_value(&field("date"), "2026-02-30").is_err());
        assert!(field_value(&field("date"), "26-2-3").is_err());
        assert!(field_value(&field("date-time"), "2026-11-26T14:30:00Z").is_ok());
        assert!(field_value(&field("date-time"), "tomorrow").is_err());
        assert!(field_value(&field("hostname"), "anything").is_ok());
        // Without a title the key names it.
        assert_eq!(
            field_value(&f[1], "x").unwrap_err(),
            "`age` must be a whole number"
        );
    }

    #[test]
    fn replies_are_checked_against_the_form() {
        let ask = Ask::Form {
            message: "who?".into(),
            schema: schema(),
        };
        assert!(check_reply(&ask, &Reply::Accept(json!({"name": "Ada", "agree": true}))).is_ok());
        let e = check_reply(&ask, &Reply::Accept(json!({"name": "Ada"}))).unwrap_err();
        assert!(e.contains("agree"), "{e}");
        let e = check_reply(&ask, &Reply::Accept(json!({"name": 3, "agree": true}))).unwrap_err();
        assert!(e.contains("name"), "{e}");
        assert!(check_reply(&ask, &Reply::Decline).is_ok());
        assert!(
            check_reply(
                &ask,
                &Reply::Sampled {
                    text: "x".into(),
                    model: "m".into()
                }
            )
            .is_err()
        );
        let sample = Ask::Sample { request: json!({}) };
        assert!(check_reply(&sample, &Reply::Accept(json!({}))).is_err());
    }

    #[test]
    fn a_bare_accept_of_a_form_takes_every_default() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "verified": {"type": "boolean", "default": true},
                "note": {"type": "string"}
            }
        });
        let mut bare = Value::Null;
        with_defaults(&schema, &mut bare);
        assert_eq!(
            bare,
            json!({"name": "John Doe", "age": 30, "verified": true})
        );
        let ask = Ask::Form {
            message: "defaults?".into(),
            schema: schema.clone(),
        };
        assert!(check_reply(&ask, &Reply::Accept(bare)).is_ok());
        let mut given = json!({"age": 41});
        with_defaults(&schema, &mut given);
        assert_eq!(given["age"], 41);
        assert_eq!(given["name"], "John Doe");
    }

    #[test]
    fn replies_serialise_as_the_protocol_wants() {
        assert_eq!(
            Reply::Accept(json!({"a": 1})).json(),
            json!({"action": "accept", "content": {"a": 1}})
        );
        assert_eq!(Reply::Cancel.json(), json!({"action": "cancel"}));
        let s = Reply::Sampled {
            text: "hi".into(),
            model: "human".into(),
        }
        .json();
        assert_eq!(s["content"]["text"], "hi");
        assert_eq!(s["role"], "assistant");
    }

    #[test]
    fn extras_stay_bounded() {
        let mut x = CallExtras::default();
        for i in 0..(MAX_KEPT + 10) {
            x.progress(ProgressNote {
                progress: i as f64,
                total: None,
                message: None,
            });
        }
        assert_eq!(x.progress.len(), MAX_KEPT);
        assert_eq!(x.progress[0].progress, 0.0);
        assert_eq!(x.progress.last().unwrap().progress, (MAX_KEPT + 9) as f64);
    }
}
