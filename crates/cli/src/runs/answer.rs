//! `pipewright runs answer ID`: answers a question a durable run waits on.
//!
//! The question is read from the run's workflow in Restate (its
//! `questions` handler), shown, answered from the flags or on the
//! terminal, checked against the question here and again by the worker,
//! and given to the run through its `answer` handler; the run, on
//! whichever worker holds it, goes on with it.

use std::io::IsTerminal;

use clap::Args;
use serde_json::Value;

use pipewright_engine::mcp::human::{Ask, Reply, Responder, Source};
use pipewright_engine::options::exit;
use pipewright_engine::run::durable::ask::{Asked, Given};
use pipewright_engine::run::durable::client::{self, Failure, Journal, Restate, valid_id};

/// Arguments of `runs answer`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("reply").multiple(false)))]
pub struct AnswerArgs {
    /// The run id `run --on` printed.
    pub id: String,
    /// Restate's ingress, as given to `run --on`.
    #[arg(long, value_name = "restate://HOST:PORT")]
    pub on: String,
    /// Restate's admin API (default port 9070 of the --on host).
    #[arg(long, value_name = "URL", env = "PIPEWRIGHT_RESTATE_ADMIN")]
    pub restate_admin: Option<String>,
    /// Which question, by the id `runs answer` shows (`q0`…); the oldest
    /// waiting when not given.
    #[arg(long, value_name = "ID")]
    pub question: Option<String>,
    /// Accept: a form's fields as a JSON object (the form's defaults fill
    /// the rest); bare, a URL question's accept or a form's defaults.
    #[arg(long, value_name = "JSON", num_args = 0..=1, default_missing_value = "null", group = "reply")]
    pub accept: Option<String>,
    /// Decline the question.
    #[arg(long, group = "reply")]
    pub decline: bool,
    /// Cancel the question (dismiss it without choosing).
    #[arg(long, group = "reply")]
    pub cancel: bool,
    /// Answer a sampling request with this message, as the model.
    #[arg(long, value_name = "TEXT", group = "reply")]
    pub sample: Option<String>,
    /// Print the questions that wait, as JSON, and answer none.
    #[arg(long, group = "reply")]
    pub list: bool,
}

/// `runs answer`: the exit code.
pub async fn answer(a: &AnswerArgs) -> u8 {
    let fail = |code: u8, why: String| {
        eprintln!("error: {}", pipewright_engine::diag::printable(&why));
        code
    };
    if !valid_id(&a.id) {
        return fail(
            exit::INVALID,
            format!(
                "`{}` is not a run id (letters, digits and `-`, as `run --on` prints it)",
                a.id
            ),
        );
    }
    let r = match Restate::parse(&a.on, a.restate_admin.as_deref()) {
        Ok(r) => r,
        Err(e) => return fail(exit::INVALID, e),
    };
    let waiting = match client::questions(&r, &a.id).await {
        Ok(q) => q,
        Err((f, why)) => return fail(code_of(f), format!("run {}: {why}", a.id)),
    };
    if a.list {
        println!("{}", crate::json::pretty(&waiting));
        return exit::OK;
    }
    let Some(q) = pick(&waiting, a.question.as_deref()) else {
        let why = match (&a.question, waiting.is_empty()) {
            (Some(id), false) => format!(
                "run {} has no question `{id}` waiting; it waits on: {}",
                a.id,
                waiting
                    .iter()
                    .map(|q| q.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ if known(&r, &a.id).await => {
                format!("run {} has no question waiting for an answer", a.id)
            }
            _ => format!("Restate knows no run {}", a.id),
        };
        return fail(exit::INVALID, why);
    };
    show(q, waiting.len());
    let given = match given(a, q).await {
        Ok(g) => g,
        Err(why) => return fail(exit::INVALID, why),
    };
    if let Err(why) = given.check(q) {
        return fail(exit::INVALID, format!("question {}: {why}", q.id));
    }
    match client::answer(&r, &a.id, &q.id, &given).await {
        Ok(()) => {
            eprintln!("answered {} of run {}: {}", q.id, a.id, given.action);
            exit::OK
        }
        Err((f, why)) => fail(code_of(f), format!("question {}: {why}", q.id)),
    }
}

fn code_of(f: Failure) -> u8 {
    match f {
        Failure::Unreachable => exit::UNREACHABLE,
        Failure::Refused => exit::INVALID,
        Failure::Failed => exit::FAILED,
    }
}

/// The question asked for by id, else the oldest.
fn pick<'q>(waiting: &'q [Asked], id: Option<&str>) -> Option<&'q Asked> {
    match id {
        Some(id) => waiting.iter().find(|q| q.id == id),
        None => waiting.first(),
    }
}

/// True when Restate holds a run with this id (its admin API says so).
async fn known(r: &Restate, id: &str) -> bool {
    let j = Journal {
        invocation: None,
        next: 0,
    };
    j.find(r, id).await.is_some()
}

/// Says which question is answered, server text shown safely.
fn show(q: &Asked, of: usize) {
    let p = |s: &str| pipewright_engine::diag::printable(s).into_owned();
    let who = q
        .node
        .as_deref()
        .map_or("the run".to_owned(), |n| format!("node `{}`", p(n)));
    let more = if of > 1 {
        format!(" (1 of {of} waiting; --question picks another)")
    } else {
        String::new()
    };
    eprintln!(
        "question {}{more}: {who} · server {} asks ({})",
        q.id,
        p(&q.server),
        q.kind
    );
    match q.ask() {
        Ask::Form { message, .. } => eprintln!("  {}", p(&message)),
        Ask::Url { message, url, .. } => eprintln!("  {}\n  {}", p(&message), p(&url)),
        Ask::Sample { .. } => {}
    }
}

/// The answer the flags give, else the one typed on the terminal.
async fn given(a: &AnswerArgs, q: &Asked) -> Result<Given, String> {
    let reply = if let Some(text) = &a.accept {
        let content: Value =
            serde_json::from_str(text).map_err(|e| format!("--accept: not JSON ({e}): {text}"))?;
        if !(content.is_object() || content.is_null()) {
            return Err("--accept: expected a JSON object of the form's fields".into());
        }
        Reply::Accept(content)
    } else if a.decline {
        Reply::Decline
    } else if a.cancel {
        Reply::Cancel
    } else if let Some(text) = &a.sample {
        Reply::Sampled {
            text: text.clone(),
            model: "human".into(),
        }
    } else if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        let terminal = crate::ask::Terminal::new(None);
        terminal.respond(&q.question()).await.reply
    } else {
        return Err(
            "no answer given: pass --accept [JSON], --decline, --cancel or --sample TEXT, or run it on a terminal to be asked"
                .into(),
        );
    };
    Ok(Given::of(&reply, Source::RunsAnswer))
}
