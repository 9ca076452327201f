//! The agent that called a served tool as the one who answers its nodes'
//! questions. An upstream server asks a node something (an elicitation
//! form or URL, or a sampling request — mid-call the 2025 way, or as an
//! input-required result); the node's [`AgentResponder`] hands it, as an
//! [`Asked`], to whoever carries questions to the agent: the call's
//! handler, which sends it to the agent as a request on its session
//! (2025-11-25) or returns it as an input-required result and parks the
//! run (2026-07-28). What the agent cannot answer (it did not declare the
//! capability) goes to the node's other answerers, which decline.
//!
//! The agent's answer is data: it is bounded in size and depth, checked
//! against the question's form by the engine, and nothing in it is
//! resolved (`${env.…}`, files).

use std::sync::Arc;

use futures::future::BoxFuture;
use rmcp::model::ClientCapabilities;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use pipewright_engine::mcp::human::provider::message_text;
use pipewright_engine::mcp::human::{Answer, Ask, Nobody, Question, Reply, Responder, Source};

/// The largest answer taken from an agent, as JSON text.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;
/// The deepest an agent's answer may nest.
pub const MAX_ANSWER_DEPTH: usize = 32;

/// A question waiting for the agent, and where its answer goes. Whoever
/// carries it to the agent — the call's handler, or later a durable run's
/// promise — sends the [`Answer`] on `reply` once it has one; dropping
/// `reply` unanswered cancels the question.
pub struct Asked {
    pub question: Question,
    pub reply: oneshot::Sender<Answer>,
    /// A durable run's question (`serve --on`): the run's id in Restate
    /// and the question's, so that any instance can answer it there.
    pub durable: Option<(String, String)>,
}

/// Which questions the agent's client said it answers (its capabilities
/// at `initialize`, or in a 2026-07-28 request's `_meta`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Can {
    pub form: bool,
    pub url: bool,
    pub sampling: bool,
}

impl Can {
    /// From the client's capabilities: `elicitation: {}` with neither mode
    /// named means forms.
    pub fn of(caps: Option<&ClientCapabilities>) -> Can {
        let Some(caps) = caps else {
            return Can::default();
        };
        #[allow(deprecated)]
        let sampling = caps.sampling.is_some();
        let (form, url) = match &caps.elicitation {
            None => (false, false),
            Some(e) => (e.form.is_some() || e.url.is_none(), e.url.is_some()),
        };
        Can {
            form,
            url,
            sampling,
        }
    }

    pub fn any(&self) -> bool {
        self.form || self.url || self.sampling
    }

    /// True when the agent answers questions like `ask`.
    pub fn answers(&self, ask: &Ask) -> bool {
        match ask {
            Ask::Form { .. } => self.form,
            Ask::Url { .. } => self.url,
            Ask::Sample { .. } => self.sampling,
        }
    }
}

/// Answers a node's questions by asking the agent, through `to_agent`;
/// what the agent cannot answer, or when nobody carries questions any
/// more, goes to `others`.
pub struct AgentResponder {
    to_agent: mpsc::Sender<Asked>,
    can: Can,
    others: Arc<dyn Responder>,
}

impl AgentResponder {
    /// The responder, and the questions it hands on.
    pub fn new(can: Can, others: Option<Arc<dyn Responder>>) -> (Self, mpsc::Receiver<Asked>) {
        let (tx, rx) = mpsc::channel(16);
        let me = AgentResponder {
            to_agent: tx,
            can,
            others: others.unwrap_or_else(|| Arc::new(Nobody)),
        };
        (me, rx)
    }
}

impl Responder for AgentResponder {
    fn respond<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, Answer> {
        Box::pin(async move {
            if !self.can.answers(&question.ask) {
                return self.others.respond(question).await;
            }
            let (tx, rx) = oneshot::channel();
            let asked = Asked {
                question: question.clone(),
                reply: tx,
                durable: None,
            };
            if self.to_agent.send(asked).await.is_err() {
                return self.others.respond(question).await;
            }
            rx.await.unwrap_or_else(|_| Answer {
                reply: Reply::Cancel,
                by: Source::Nobody,
                error: Some("the agent's call ended before it answered".to_owned()),
            })
        })
    }
}

/// The question as the agent's client gets it: an `elicitation/create` or
/// `sampling/createMessage` request (method and params).
pub fn request_of(ask: &Ask) -> Value {
    match ask {
        Ask::Sample { request } => json!({"method": "sampling/createMessage", "params": request}),
        _ => json!({"method": "elicitation/create", "params": ask.request_json()}),
    }
}

/// The agent's result for `ask` as a [`Reply`]; an answer too large or
/// deep, or not the shape the question's kind has, is an error saying so.
pub fn reply_of(ask: &Ask, result: &Value) -> Result<Reply, String> {
    let size = serde_json::to_string(result).map_or(usize::MAX, |t| t.len());
    if size > MAX_ANSWER_BYTES {
        return Err(format!(
            "the answer is {size} bytes; at most {MAX_ANSWER_BYTES} are taken"
        ));
    }
    if depth(result) > MAX_ANSWER_DEPTH {
        return Err(format!(
            "the answer nests deeper than {MAX_ANSWER_DEPTH} levels"
        ));
    }
    if let Ask::Sample { .. } = ask {
        let Some(model) = result.get("model").and_then(Value::as_str) else {
            return Err(
                "a sampling answer needs `model` and `content` (a CreateMessageResult)".to_owned(),
            );
        };
        if result.get("content").is_none() {
            return Err("a sampling answer needs `content`".to_owned());
        }
        return Ok(Reply::Sampled {
            text: message_text(result),
            model: model.to_owned(),
        });
    }
    match result.get("action").and_then(Value::as_str) {
        Some("accept") => Ok(Reply::Accept(
            result.get("content").cloned().unwrap_or(Value::Null),
        )),
        Some("decline") => Ok(Reply::Decline),
        Some("cancel") => Ok(Reply::Cancel),
        Some(other) => Err(format!(
            "an elicitation answer's `action` is accept, decline or cancel, not `{other}`"
        )),
        None => Err("an elicitation answer needs `action` (an ElicitResult)".to_owned()),
    }
}

/// How deep a value nests (a scalar is 0), counted without recursion.
fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|x| (x, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|x| (x, d + 1))),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> Ask {
        Ask::Form {
            message: "Name?".into(),
            schema: json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        }
    }

    #[test]
    fn answers_become_replies() {
        assert_eq!(
            reply_of(
                &form(),
                &json!({"action": "accept", "content": {"name": "Ada"}})
            ),
            Ok(Reply::Accept(json!({"name": "Ada"})))
        );
        assert_eq!(
            reply_of(&form(), &json!({"action": "decline"})),
            Ok(Reply::Decline)
        );
        let e = reply_of(&form(), &json!({"action": "yes"})).unwrap_err();
        assert!(e.contains("`yes`"), "{e}");
        let sample = Ask::Sample {
            request: json!({"messages": []}),
        };
        assert_eq!(
            reply_of(
                &sample,
                &json!({"role": "assistant", "model": "m", "content": {"type": "text", "text": "hi"}})
            ),
            Ok(Reply::Sampled {
                text: "hi".into(),
                model: "m".into()
            })
        );
        assert!(reply_of(&sample, &json!({"action": "accept"})).is_err());
    }

    #[test]
    fn answers_are_bounded() {
        let big = "x".repeat(MAX_ANSWER_BYTES);
        let e = reply_of(
            &form(),
            &json!({"action": "accept", "content": {"name": big}}),
        )
        .unwrap_err();
        assert!(e.contains("at most"), "{e}");
        let mut deep = json!("bottom");
        for _ in 0..40 {
            deep = json!([deep]);
        }
        let e = reply_of(
            &form(),
            &json!({"action": "accept", "content": {"name": deep}}),
        )
        .unwrap_err();
        assert!(e.contains("deeper"), "{e}");
    }

    #[test]
    fn capabilities_say_what_the_agent_answers() {
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {}})).expect("caps");
        let can = Can::of(Some(&caps));
        assert!(can.form && !can.url && !can.sampling);
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"url": {}}, "sampling": {}}))
                .expect("caps");
        let can = Can::of(Some(&caps));
        assert!(!can.form && can.url && can.sampling);
        assert!(!Can::of(None).any());
    }
}
