//! `run` on a terminal: a server's question (a form, a URL, a model
//! completion) is asked on the terminal, one at a time, on stderr, and the
//! reply read from stdin. Every answer is checked against the form before
//! it is sent; a bad value asks that field again.

use std::io::{BufRead, Write};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use pipewright_engine::mcp::human::provider::{Provider, messages_of};
use pipewright_engine::mcp::human::{
    Answer, Ask, Field, FieldKind, Question, Reply, Responder, Source, check_reply, field_value,
    fields, form_errors,
};

static ASKING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// True while a question is on the terminal: the live progress line waits.
pub fn asking() -> bool {
    ASKING.load(std::sync::atomic::Ordering::SeqCst)
}

/// Marks the terminal as asking until dropped, and clears the live line.
struct Turn;

impl Turn {
    fn take() -> Turn {
        ASKING.store(true, std::sync::atomic::Ordering::SeqCst);
        eprint!("\r\x1b[K");
        Turn
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        ASKING.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Asks on the terminal; `provider` is offered for sampling replies.
pub struct Terminal {
    one_at_a_time: tokio::sync::Mutex<()>,
    provider: Option<Provider>,
}

impl Terminal {
    pub fn new(provider: Option<Provider>) -> Arc<Terminal> {
        Arc::new(Terminal {
            one_at_a_time: tokio::sync::Mutex::new(()),
            provider,
        })
    }
}

impl Responder for Terminal {
    fn respond<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let _one = self.one_at_a_time.lock().await;
            let _turn = Turn::take();
            // Dropped when the question is given up: the reader stops.
            let guard = StopOnDrop(Stop::default());
            let stop = guard.0.clone();
            let q = question.clone();
            if let (Ask::Sample { request }, Some(p)) = (&q.ask, &self.provider) {
                return sample_with_provider(q.clone(), request.clone(), p.clone(), stop).await;
            }
            tokio::task::spawn_blocking(move || ask(&q, &mut Console::std(&stop)))
                .await
                .unwrap_or_else(|_| Answer::new(Reply::Cancel, Source::Terminal))
        })
    }
}

/// Sets the stop flag when the question's future is dropped.
struct StopOnDrop(Stop);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Sampling with a provider configured: the person may write the reply,
/// or type `:ai` to have the provider write it and then approve it.
async fn sample_with_provider(q: Question, request: Value, p: Provider, stop: Stop) -> Answer {
    let shown = q.clone();
    let first_stop = stop.clone();
    let first = tokio::task::spawn_blocking(move || {
        let stop = first_stop;
        let mut c = Console::std(&stop);
        show_sampling(&shown, &request, &mut c, true);
        read_reply(&mut c)
    })
    .await
    .unwrap_or(Typed::Cancel);
    match first {
        Typed::Text(text) => Answer::new(
            Reply::Sampled {
                text,
                model: "human".into(),
            },
            Source::Terminal,
        ),
        Typed::Decline => Answer::new(Reply::Decline, Source::Terminal),
        Typed::Cancel => Answer::new(Reply::Cancel, Source::Terminal),
        Typed::Provider => {
            let request = match &q.ask {
                Ask::Sample { request } => request.clone(),
                _ => Value::Null,
            };
            match p.complete(&request).await {
                Ok((text, model)) => tokio::task::spawn_blocking(move || {
                    let mut c = Console::std(&stop);
                    c.say(&format!("  {model} wrote:"));
                    for line in text.lines() {
                        c.say(&format!("  │ {line}"));
                    }
                    let ok = c.prompt("  Send it? [Y/n] ");
                    if matches!(ok.as_deref().map(str::trim), Some("" | "y" | "Y" | "yes")) {
                        Answer::new(Reply::Sampled { text, model }, Source::Provider)
                    } else {
                        Answer::new(Reply::Decline, Source::Terminal)
                    }
                })
                .await
                .unwrap_or_else(|_| Answer::new(Reply::Cancel, Source::Terminal)),
                Err(e) => {
                    eprintln!("  {e}; the request is declined");
                    Answer {
                        reply: Reply::Decline,
                        by: Source::Provider,
                        error: Some(e),
                    }
                }
            }
        }
    }
}

/// Where the questions are asked: stderr and stdin, or a script in tests.
pub struct Console<'a> {
    input: Box<dyn FnMut() -> Option<String> + Send + 'a>,
    output: Box<dyn Write + Send + 'a>,
}

/// Stdin's lines, read by one thread for the life of the process into a
/// queue, so a question given up (its call ended) stops waiting without
/// leaving a reader behind that would swallow the next answer.
struct Lines {
    /// The lines not taken yet, and whether stdin has ended.
    queue: std::sync::Mutex<(std::collections::VecDeque<String>, bool)>,
    ready: std::sync::Condvar,
}

fn stdin_lines() -> &'static Lines {
    static LINES: std::sync::OnceLock<Lines> = std::sync::OnceLock::new();
    LINES.get_or_init(|| {
        std::thread::spawn(|| {
            let lines = stdin_lines();
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if let Ok(mut q) = lines.queue.lock() {
                    q.0.push_back(line);
                }
                lines.ready.notify_all();
            }
            if let Ok(mut q) = lines.queue.lock() {
                q.1 = true;
            }
            lines.ready.notify_all();
        });
        Lines {
            queue: std::sync::Mutex::new((std::collections::VecDeque::new(), false)),
            ready: std::sync::Condvar::new(),
        }
    })
}

/// The next line for a question, `None` once it is given up or stdin has
/// ended. The stop is read under the queue's lock, before a line is taken:
/// a question given up never takes a line typed for the one after it (a
/// line that came while it waited stays for the next question).
fn next_line(stop: &Stop) -> Option<String> {
    let lines = stdin_lines();
    let mut q = lines.queue.lock().ok()?;
    loop {
        if stop.load(std::sync::atomic::Ordering::SeqCst) {
            return None;
        }
        if let Some(line) = q.0.pop_front() {
            return Some(line);
        }
        if q.1 {
            return None;
        }
        q = lines
            .ready
            .wait_timeout(q, std::time::Duration::from_millis(100))
            .ok()?
            .0;
    }
}

/// Set when the question is given up: the console stops reading.
pub type Stop = Arc<std::sync::atomic::AtomicBool>;

impl<'a> Console<'a> {
    fn std(stop: &Stop) -> Console<'static> {
        let stop = stop.clone();
        Console {
            input: Box::new(move || next_line(&stop)),
            output: Box::new(std::io::stderr()),
        }
    }

    /// A console reading `input` and writing to `output` (tests).
    #[cfg(test)]
    pub fn new(input: impl BufRead + Send + 'a, output: impl Write + Send + 'a) -> Console<'a> {
        let mut input = input;
        Console {
            input: Box::new(move || {
                let mut line = String::new();
                match input.read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line),
                }
            }),
            output: Box::new(output),
        }
    }

    fn say(&mut self, line: &str) {
        let _ = writeln!(self.output, "{}", clean(line));
    }

    /// One line, without its newline; `None` once input has ended.
    fn prompt(&mut self, text: &str) -> Option<String> {
        let _ = write!(self.output, "{}", clean(text));
        let _ = self.output.flush();
        (self.input)().map(|line| line.trim_end_matches(['\n', '\r']).to_owned())
    }
}

/// "server `s` (node `a`)", or "(one of: `a`, `b`)" when it is not known
/// which node's call asks.
fn asker(q: &Question) -> String {
    match q.who("`") {
        Some(who) => format!("server `{}` ({who})", q.server),
        None => format!("server `{}`", q.server),
    }
}

/// Asks `q` on `c` and returns the reply given.
pub fn ask(q: &Question, c: &mut Console<'_>) -> Answer {
    let who = asker(q);
    c.say("");
    let reply = match &q.ask {
        Ask::Form { message, schema } => {
            c.say(&format!("? {who} asks: {message}"));
            form(schema, c)
        }
        Ask::Url { message, url, .. } => {
            c.say(&format!("? {who} asks you to open a URL: {message}"));
            c.say(&format!("  {url}"));
            match c.prompt("  Open it and go on? [y]es / [n]o (decline) / [c]ancel: ") {
                Some(a) if matches!(a.trim(), "y" | "Y" | "yes") => Reply::Accept(Value::Null),
                Some(a) if matches!(a.trim(), "n" | "N" | "no") => Reply::Decline,
                _ => Reply::Cancel,
            }
        }
        Ask::Sample { request } => {
            show_sampling(q, request, c, false);
            match read_reply(c) {
                Typed::Text(text) => Reply::Sampled {
                    text,
                    model: "human".into(),
                },
                Typed::Decline | Typed::Provider => Reply::Decline,
                Typed::Cancel => Reply::Cancel,
            }
        }
    };
    c.say(&format!("  → {}", reply.action()));
    Answer::new(reply, Source::Terminal)
}

/// Fills a form field by field; `-` declines and `!` cancels at any field.
fn form(schema: &Value, c: &mut Console<'_>) -> Reply {
    let all = fields(schema);
    c.say("  (Enter keeps the [default]; `-` declines the form, `!` cancels it)");
    // A form that never fits (a schema requiring fields it does not
    // describe) is given up rather than asked forever.
    for _ in 0..3 {
        let mut content = Map::new();
        for field in &all {
            match field_answer(field, schema, c) {
                FieldAnswer::Value(Some(v)) => {
                    content.insert(field.name.clone(), v);
                }
                FieldAnswer::Value(None) => {}
                FieldAnswer::Decline => return Reply::Decline,
                FieldAnswer::Cancel => return Reply::Cancel,
            }
        }
        let reply = Reply::Accept(Value::Object(content));
        let ask = Ask::Form {
            message: String::new(),
            schema: schema.clone(),
        };
        match check_reply(&ask, &reply) {
            Ok(()) => return reply,
            Err(e) if all.is_empty() => {
                c.say(&format!("  {e}; the form cannot be filled in here"));
                return Reply::Cancel;
            }
            Err(e) => c.say(&format!("  {e}; once more:")),
        }
    }
    c.say("  the answer still does not fit; the form is cancelled");
    Reply::Cancel
}

/// Server text made safe to print (see [`super::output::printable`]).
fn clean(text: &str) -> String {
    super::output::printable(text).into_owned()
}

enum FieldAnswer {
    Value(Option<Value>),
    Decline,
    Cancel,
}

/// One field, asked until its value fits the field's own schema.
fn field_answer(field: &Field, schema: &Value, c: &mut Console<'_>) -> FieldAnswer {
    let label = field.title.clone().unwrap_or_else(|| field.name.clone());
    let mark = if field.required { "*" } else { "" };
    let kind = match &field.kind {
        FieldKind::Text { format: Some(f) } => f.clone(),
        FieldKind::Text { format: None } => "text".into(),
        FieldKind::Number => "number".into(),
        FieldKind::Integer => "whole number".into(),
        FieldKind::Boolean => "y/n".into(),
        FieldKind::Choice { titles, .. } => titles
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{} {t}", i + 1))
            .collect::<Vec<_>>()
            .join(", "),
    };
    if let Some(d) = &field.description {
        c.say(&format!("  {d}"));
    }
    let default = field.default.as_ref().map(|d| match d {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "y".into(),
        Value::Bool(false) => "n".into(),
        other => other.to_string(),
    });
    let shown_default = default
        .as_ref()
        .map(|d| format!(" [{d}]"))
        .unwrap_or_default();
    loop {
        let Some(typed) = c.prompt(&format!("  {label}{mark} ({kind}){shown_default}: ")) else {
            return FieldAnswer::Cancel;
        };
        let typed = match typed.trim() {
            "-" => return FieldAnswer::Decline,
            "!" => return FieldAnswer::Cancel,
            "" => default.clone().unwrap_or_default(),
            t => t.to_owned(),
        };
        match field_value(field, &typed) {
            Ok(Some(v)) => {
                let own = serde_json::json!({
                    "type": "object",
                    "properties": {(field.name.clone()): schema["properties"][&field.name].clone()}
                });
                let mut one = Map::new();
                one.insert(field.name.clone(), v.clone());
                match form_errors(&own, &Value::Object(one)).first() {
                    None => return FieldAnswer::Value(Some(v)),
                    Some(e) => c.say(&format!("  {e}")),
                }
            }
            Ok(None) => return FieldAnswer::Value(None),
            Err(e) => c.say(&format!("  {e}")),
        }
    }
}

fn show_sampling(q: &Question, request: &Value, c: &mut Console<'_>, provider: bool) {
    let who = asker(q);
    c.say(&format!("? {who} asks the model for a reply"));
    if let Some(system) = request.get("systemPrompt").and_then(Value::as_str) {
        c.say(&format!("  system: {system}"));
    }
    if let Some(prefs) = request.get("modelPreferences").filter(|p| !p.is_null()) {
        c.say(&format!("  model preferences: {prefs}"));
    }
    for (role, text) in messages_of(request) {
        for (i, line) in text.lines().enumerate() {
            let head = if i == 0 { role.as_str() } else { "" };
            c.say(&format!("  {head:>9} │ {line}"));
        }
    }
    if let Some(n) = request.get("maxTokens").and_then(Value::as_u64) {
        c.say(&format!("  (at most {n} tokens)"));
    }
    let ai = if provider {
        ", `:ai` asks the provider"
    } else {
        ""
    };
    c.say(&format!(
        "  Write the reply; an empty line ends it. `:decline`, `:cancel`{ai}."
    ));
}

enum Typed {
    Text(String),
    Decline,
    Cancel,
    Provider,
}

fn read_reply(c: &mut Console<'_>) -> Typed {
    let mut lines: Vec<String> = Vec::new();
    loop {
        let Some(line) = c.prompt("  > ") else {
            return if lines.is_empty() {
                Typed::Cancel
            } else {
                Typed::Text(lines.join("\n"))
            };
        };
        match (line.trim(), lines.is_empty()) {
            (":decline", true) => return Typed::Decline,
            (":cancel", true) => return Typed::Cancel,
            (":ai", true) => return Typed::Provider,
            ("", true) => {}
            ("", false) => return Typed::Text(lines.join("\n")),
            _ => lines.push(line),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(q: &Question, typed: &str) -> (Answer, String) {
        let mut out = Vec::new();
        let a = ask(q, &mut Console::new(typed.as_bytes(), &mut out));
        (a, String::from_utf8(out).unwrap())
    }

    fn form_q() -> Question {
        Question {
            server: "hitl".into(),
            node: Some("who".into()),
            candidates: Vec::new(),
            ask: Ask::Form {
                message: "Sign up".into(),
                schema: json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "title": "Your name"},
                        "age": {"type": "integer", "minimum": 0},
                        "plan": {"type": "string", "enum": ["free", "pro"], "default": "free"}
                    },
                    "required": ["name", "age"]
                }),
            },
        }
    }

    #[test]
    fn a_form_is_filled_field_by_field_and_bad_values_asked_again() {
        let (a, shown) = run(&form_q(), "Ada\nold\n-3\n36\ngold\n\n");
        assert_eq!(
            a.reply,
            Reply::Accept(json!({"name": "Ada", "age": 36, "plan": "free"})),
            "{shown}"
        );
        assert!(
            shown.contains("node `who`") && shown.contains("Sign up"),
            "{shown}"
        );
        assert!(shown.contains("Your name*"), "{shown}");
        assert!(shown.contains("must be a whole number"), "{shown}");
        // -3 is a whole number, but under the field's minimum.
        assert!(
            shown.contains("age: -3 is less than the minimum of 0"),
            "{shown}"
        );
        assert!(shown.contains("must be one of: free, pro"), "{shown}");
    }

    #[test]
    fn server_text_cannot_drive_the_terminal() {
        let mut q = form_q();
        q.ask = Ask::Url {
            message: "go\x1b[2J\rthere".into(),
            url: "http://a\x1b]8;;http://evil\x07".into(),
            elicitation_id: "e".into(),
        };
        let (a, shown) = run(&q, "n\n");
        assert_eq!(a.reply, Reply::Decline);
        assert!(
            !shown.contains('\x1b') && !shown.contains('\r'),
            "{shown:?}"
        );
        assert!(shown.contains("go?[2J?there"), "{shown}");
    }

    #[test]
    fn a_form_that_cannot_fit_is_given_up() {
        let mut q = form_q();
        q.ask = Ask::Form {
            message: "broken".into(),
            schema: json!({"type": "object", "required": ["ghost"]}),
        };
        assert_eq!(run(&q, "").0.reply, Reply::Cancel);
    }

    #[test]
    fn a_form_can_be_declined_or_cancelled() {
        assert_eq!(run(&form_q(), "-\n").0.reply, Reply::Decline);
        assert_eq!(run(&form_q(), "Ada\n!\n").0.reply, Reply::Cancel);
        assert_eq!(run(&form_q(), "").0.reply, Reply::Cancel);
    }

    #[test]
    fn a_sampling_reply_is_written_by_hand() {
        let q = Question {
            server: "hitl".into(),
            node: Some("sum".into()),
            candidates: Vec::new(),
            ask: Ask::Sample {
                request: json!({
                    "systemPrompt": "Be brief.",
                    "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize: x"}}],
                    "maxTokens": 50
                }),
            },
        };
        let (a, shown) = run(&q, "Short.\nVery.\n\n");
        assert_eq!(
            a.reply,
            Reply::Sampled {
                text: "Short.\nVery.".into(),
                model: "human".into()
            }
        );
        assert!(shown.contains("system: Be brief.") && shown.contains("Summarize: x"));
        assert_eq!(run(&q, ":decline\n").0.reply, Reply::Decline);
    }
}
