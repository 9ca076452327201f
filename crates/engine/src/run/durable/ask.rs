//! Questions in a durable run: a server's elicitation or sampling request
//! is journaled and waits in Restate for an answer given from anywhere
//! (`pipewright runs answer`), instead of on the worker's terminal.
//!
//! A question is known by the call that asked it (the call's journal key)
//! and how many questions that call asked before it, so a run started
//! again after a crash finds the answer to the same question of the same
//! call, whatever else the run did meanwhile. The worker's journal loop
//! writes the question, waits on a durable promise named by its
//! [`Asked::id`], and hands the answer back to the call.

use std::sync::atomic::{AtomicU32, Ordering};

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::mcp::human::{Answer, Ask, Question, Reply, Responder, Source, check_reply};

/// The most questions one durable run may ask: each is a promise kept in
/// Restate, and a server that asks without end must not grow the journal
/// without end.
pub const MAX_QUESTIONS: usize = 256;

/// The most bytes an answer may have (a sampled message included).
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

/// A question as journaled, and as `runs answer` reads it back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Asked {
    /// The name of the promise its answer resolves: `q0`, `q1`… in the
    /// order the run asked.
    pub id: String,
    /// The asking call's journal key and the question's rank in that call.
    pub key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub server: String,
    /// `elicitation` or `sampling`.
    pub kind: String,
    /// The request's params as the server sent them (masked).
    pub request: Value,
    pub worker: String,
    /// When it was asked (RFC 3339, UTC).
    pub at: String,
}

impl Asked {
    /// The question, as the answerers take it.
    pub fn question(&self) -> Question {
        Question {
            server: self.server.clone(),
            node: self.node.clone(),
            candidates: Vec::new(),
            ask: self.ask(),
        }
    }

    /// The [`Ask`] the request stands for.
    pub fn ask(&self) -> Ask {
        let text = |k: &str| self.request[k].as_str().unwrap_or("").to_owned();
        if self.kind == "sampling" {
            return Ask::Sample {
                request: self.request.clone(),
            };
        }
        match self.request["mode"].as_str() {
            Some("url") => Ask::Url {
                message: text("message"),
                url: text("url"),
                elicitation_id: text("elicitationId"),
            },
            _ => Ask::Form {
                message: text("message"),
                schema: self.request["requestedSchema"].clone(),
            },
        }
    }
}

/// An answer as it travels through Restate: the reply and who gave it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Given {
    /// `accept`, `decline`, `cancel` or `sampled`.
    pub action: String,
    /// A form's fields (`accept`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
    /// The model's message (`sampled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub by: Source,
}

impl Given {
    /// The wire form of `reply`, given by `by`.
    pub fn of(reply: &Reply, by: Source) -> Given {
        let mut g = Given {
            action: reply.action().to_owned(),
            content: None,
            text: None,
            model: None,
            by,
        };
        match reply {
            Reply::Accept(Value::Null) | Reply::Decline | Reply::Cancel => {}
            Reply::Accept(content) => g.content = Some(content.clone()),
            Reply::Sampled { text, model } => {
                g.text = Some(text.clone());
                g.model = Some(model.clone());
            }
        }
        g
    }

    /// The reply it carries, or why it is none.
    pub fn reply(&self) -> Result<Reply, String> {
        Ok(match self.action.as_str() {
            "accept" => Reply::Accept(self.content.clone().unwrap_or(Value::Null)),
            "decline" => Reply::Decline,
            "cancel" => Reply::Cancel,
            "sampled" => Reply::Sampled {
                text: self.text.clone().unwrap_or_default(),
                model: self.model.clone().unwrap_or_else(|| "human".to_owned()),
            },
            other => {
                return Err(format!(
                    "`{other}` is not an answer: accept, decline, cancel or sampled"
                ));
            }
        })
    }

    /// Why this cannot answer `asked`: too big, not an answer, or not what
    /// the question asks for (a form's schema, a sampled message).
    pub fn check(&self, asked: &Asked) -> Result<Reply, String> {
        let size = serde_json::to_vec(self).map_or(usize::MAX, |b| b.len());
        if size > MAX_ANSWER_BYTES {
            return Err(format!(
                "the answer has {size} bytes; at most {MAX_ANSWER_BYTES} are taken"
            ));
        }
        let mut reply = self.reply()?;
        if let (Ask::Form { schema, .. }, Reply::Accept(content)) = (asked.ask(), &mut reply) {
            if content.is_null() {
                *content = json!({});
            }
            crate::mcp::human::with_defaults(&schema, content);
        }
        check_reply(&asked.ask(), &reply)?;
        Ok(reply)
    }
}

/// A question a call asks, on its way to the journal loop; `reply` gets
/// the answer.
pub struct AskRequest {
    pub key: String,
    pub question: Question,
    pub reply: oneshot::Sender<Answer>,
}

/// The answerer of one durable call: every question goes to the journal
/// loop under the call's key.
pub struct CallAsker {
    key: String,
    /// How many questions the call asked so far.
    asked: AtomicU32,
    tx: mpsc::UnboundedSender<AskRequest>,
}

impl CallAsker {
    pub fn new(key: String, tx: mpsc::UnboundedSender<AskRequest>) -> Self {
        CallAsker {
            key,
            asked: AtomicU32::new(0),
            tx,
        }
    }
}

impl Responder for CallAsker {
    fn respond<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let n = self.asked.fetch_add(1, Ordering::SeqCst);
            let (reply, answer) = oneshot::channel();
            let req = AskRequest {
                key: format!("{}/{n}", self.key),
                question: question.clone(),
                reply,
            };
            if self.tx.send(req).is_err() {
                return lost();
            }
            answer.await.unwrap_or_else(|_| lost())
        })
    }
}

/// The answer of a question whose run this worker no longer holds.
fn lost() -> Answer {
    Answer {
        reply: Reply::Cancel,
        by: Source::Nobody,
        error: Some("this worker no longer holds the run: the question waits for the next".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> Asked {
        Asked {
            id: "q0".into(),
            key: "k-0/0".into(),
            node: Some("greet".into()),
            server: "modern".into(),
            kind: "elicitation".into(),
            request: json!({"mode": "form", "message": "What is your name?", "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "tone": {"type": "string", "default": "warm"}},
                "required": ["name"]
            }}),
            worker: "w".into(),
            at: "2026-01-01T00:00:00Z".into(),
        }
    }

    #[test]
    fn answers_are_checked_against_the_question_and_survive_the_wire() {
        let asked = form();
        assert_eq!(
            Ask::Form {
                message: "What is your name?".into(),
                schema: asked.request["requestedSchema"].clone()
            },
            asked.ask()
        );
        let ok = Given::of(&Reply::Accept(json!({"name": "Ada"})), Source::RunsAnswer);
        let back: Given = serde_json::from_value(serde_json::to_value(&ok).unwrap()).unwrap();
        assert_eq!(back, ok);
        // Defaults fill what the answer leaves out.
        assert_eq!(
            back.check(&asked).unwrap(),
            Reply::Accept(json!({"name": "Ada", "tone": "warm"}))
        );
        let missing = Given::of(&Reply::Accept(json!({})), Source::RunsAnswer);
        let e = missing.check(&asked).unwrap_err();
        assert!(e.contains("name"), "{e}");
        let sampled = Given::of(
            &Reply::Sampled {
                text: "hi".into(),
                model: "m".into(),
            },
            Source::RunsAnswer,
        );
        assert!(sampled.check(&asked).is_err());
        let odd = Given {
            action: "maybe".into(),
            ..Given::of(&Reply::Decline, Source::RunsAnswer)
        };
        assert!(odd.check(&asked).unwrap_err().contains("maybe"));
        let big = Given::of(
            &Reply::Accept(json!({"name": "x".repeat(MAX_ANSWER_BYTES)})),
            Source::RunsAnswer,
        );
        assert!(big.check(&asked).unwrap_err().contains("bytes"));
        assert_eq!(
            Given::of(&Reply::Decline, Source::RunsAnswer)
                .check(&asked)
                .unwrap(),
            Reply::Decline
        );
    }

    #[test]
    fn a_question_survives_the_journal() {
        let e = super::super::Entry::Question { question: form() };
        let text = serde_json::to_string(&e).unwrap();
        let back: super::super::Entry = serde_json::from_str(&text).unwrap();
        assert_eq!(back, e);
    }

    #[tokio::test]
    async fn a_calls_questions_are_keyed_by_the_call_and_their_rank() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let asker = std::sync::Arc::new(CallAsker::new("call-0".into(), tx));
        let q = form().question();
        let a = asker.clone();
        let q1 = q.clone();
        let first = tokio::spawn(async move { a.respond(&q1).await });
        let req = rx.recv().await.unwrap();
        assert_eq!(req.key, "call-0/0");
        req.reply
            .send(Answer::new(Reply::Decline, Source::RunsAnswer))
            .unwrap();
        assert_eq!(first.await.unwrap().by, Source::RunsAnswer);
        let a = asker.clone();
        let second = tokio::spawn(async move { a.respond(&q).await });
        let req = rx.recv().await.unwrap();
        assert_eq!(req.key, "call-0/1");
        // The loop went away: the call hears why.
        drop(req);
        drop(rx);
        let got = second.await.unwrap();
        assert_eq!(got.reply, Reply::Cancel);
        assert!(got.error.unwrap().contains("no longer holds"));
    }
}
