//! The workbench as a session's [`Responder`]: a server's question goes to
//! the app loop as a [`Message`] with a one-shot channel for the answer, and
//! the call waits on that channel. A channel dropped unanswered (the app
//! quit, the session was dropped) answers cancel, so no server hangs.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::inbox::Message;
use pipewright_engine::mcp::human::chain::Chain;
use pipewright_engine::mcp::human::{Answer, Human, Question, Reply, Responder, Source};

/// Sends questions to the workbench's loop.
pub struct Asker {
    tx: mpsc::UnboundedSender<Message>,
    /// The session the questions belong to (the loop's count of started
    /// sessions): questions of a dropped session are cancelled.
    generation: u64,
}

impl Asker {
    pub fn new(tx: mpsc::UnboundedSender<Message>, generation: u64) -> Asker {
        Asker { tx, generation }
    }

    /// The session's responder: the person in the workbench answers.
    pub fn human(self) -> Human {
        Human(Some(Arc::new(Chain {
            answers: None,
            person: Some(Arc::new(self)),
            provider: None,
        })))
    }
}

/// The answer when the workbench could not be asked or went away.
pub fn cancelled(why: &str) -> Answer {
    Answer {
        reply: Reply::Cancel,
        by: Source::Workbench,
        error: Some(why.to_owned()),
    }
}

impl Responder for Asker {
    fn respond<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let msg = Message::Question {
                question: question.clone(),
                reply,
                generation: self.generation,
            };
            if self.tx.send(msg).is_err() {
                return cancelled("the workbench was closed");
            }
            answer
                .await
                .unwrap_or_else(|_| cancelled("the workbench closed the question unanswered"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pipewright_engine::mcp::human::Ask;
    use serde_json::json;

    fn question() -> Question {
        Question {
            server: "hitl".into(),
            node: Some("who".into()),
            candidates: Vec::new(),
            ask: Ask::Form {
                message: "name?".into(),
                schema: json!({"type": "object"}),
            },
        }
    }

    #[tokio::test]
    async fn the_loop_answers_through_the_channel() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let asker = Asker::new(tx, 3);
        let q = question();
        let answering = async {
            let Some(Message::Question {
                reply, generation, ..
            }) = rx.recv().await
            else {
                panic!("no question")
            };
            assert_eq!(generation, 3);
            reply
                .send(Answer::new(Reply::Decline, Source::Workbench))
                .unwrap();
        };
        let (answer, ()) = tokio::join!(asker.respond(&q), answering);
        assert_eq!(answer.reply, Reply::Decline);
    }

    #[tokio::test]
    async fn a_dropped_question_or_a_closed_loop_cancels() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let asker = Asker::new(tx, 1);
        let q = question();
        let dropping = async {
            drop(rx.recv().await);
        };
        let (answer, ()) = tokio::join!(asker.respond(&q), dropping);
        assert_eq!(answer.reply, Reply::Cancel);
        drop(rx);
        assert_eq!(asker.respond(&q).await.reply, Reply::Cancel);
    }
}
