//! A sampling request in the workbench: what the server asks the model
//! (messages, system prompt, model preferences, token limit), and the reply
//! being written — by the person ("human as the model"), or by the
//! configured provider and then approved or edited by the person.

use serde_json::Value;

use pipewright_engine::mcp::human::provider::messages_of;
use pipewright_engine::mcp::human::{Answer, Reply, Source};

use super::text::TextInput;

/// The model name sent with a reply a person wrote.
pub const HUMAN_MODEL: &str = "human";

/// A sampling request being answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// The `sampling/createMessage` params as the server sent them.
    pub request: Value,
    /// The reply being written.
    pub reply: TextInput,
    /// What the provider wrote, and its model, once it answered: sent as
    /// the provider's when the reply is left as it is.
    pub provided: Option<(String, String)>,
    /// The provider was asked and has not answered yet.
    pub waiting: bool,
    /// Why the provider could not answer, or why the reply cannot be sent.
    pub error: Option<String>,
}

impl Sample {
    pub fn new(request: Value) -> Sample {
        Sample {
            request,
            reply: TextInput::area(""),
            provided: None,
            waiting: false,
            error: None,
        }
    }

    /// The provider's answer: its text goes into the reply for approval.
    pub fn provided(&mut self, result: Result<(String, String), String>) {
        self.waiting = false;
        match result {
            Ok((text, model)) => {
                self.reply.set_text(&text);
                self.provided = Some((text, model));
                self.error = None;
            }
            Err(e) => self.error = Some(format!("the provider failed: {e}")),
        }
    }

    /// The answer to send: the provider's when its text was left as it is,
    /// else the person's. `None` (with the reason in `error`) when nothing
    /// was written.
    pub fn answer(&mut self) -> Option<Answer> {
        let text = self.reply.text();
        if text.trim().is_empty() {
            self.error = Some("write the reply first (or decline)".into());
            return None;
        }
        Some(match &self.provided {
            Some((t, model)) if *t == text => Answer::new(
                Reply::Sampled {
                    text,
                    model: model.clone(),
                },
                Source::Provider,
            ),
            _ => Answer::new(
                Reply::Sampled {
                    text,
                    model: HUMAN_MODEL.into(),
                },
                Source::Workbench,
            ),
        })
    }

    /// The system prompt, if any.
    pub fn system(&self) -> Option<&str> {
        self.request.get("systemPrompt").and_then(Value::as_str)
    }

    /// `maxTokens`, if given.
    pub fn max_tokens(&self) -> Option<u64> {
        self.request.get("maxTokens").and_then(Value::as_u64)
    }

    /// The messages as (role, text).
    pub fn messages(&self) -> Vec<(String, String)> {
        messages_of(&self.request)
    }

    /// The model preferences in one line: hints, then the priorities
    /// (`cost 0.3 · speed 0.5 · intelligence 0.9`); `None` when not given.
    pub fn preferences(&self) -> Option<String> {
        let prefs = self.request.get("modelPreferences")?;
        let mut parts = Vec::new();
        let hints: Vec<&str> = prefs
            .get("hints")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|h| h.get("name").and_then(Value::as_str))
            .collect();
        if !hints.is_empty() {
            parts.push(format!("hints {}", hints.join(", ")));
        }
        for (key, word) in [
            ("costPriority", "cost"),
            ("speedPriority", "speed"),
            ("intelligencePriority", "intelligence"),
        ] {
            if let Some(p) = prefs.get(key).and_then(Value::as_f64) {
                parts.push(format!("{word} {p}"));
            }
        }
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_unedited_provider_reply_is_the_providers_and_an_edited_one_the_persons() {
        let mut s = Sample::new(json!({"messages": []}));
        assert!(s.answer().is_none());
        assert!(s.error.is_some());
        s.provided(Ok(("short".into(), "m1".into())));
        let a = s.answer().unwrap();
        assert_eq!(a.by, Source::Provider);
        assert_eq!(
            a.reply,
            Reply::Sampled {
                text: "short".into(),
                model: "m1".into()
            }
        );
        s.reply.insert("er");
        let a = s.answer().unwrap();
        assert_eq!(a.by, Source::Workbench);
        assert_eq!(
            a.reply,
            Reply::Sampled {
                text: "shorter".into(),
                model: HUMAN_MODEL.into()
            }
        );
    }

    #[test]
    fn the_request_reads_as_lines() {
        let s = Sample::new(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
            "systemPrompt": "be brief",
            "maxTokens": 50,
            "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5}
        }));
        assert_eq!(s.messages(), vec![("user".into(), "hi".into())]);
        assert_eq!(s.system(), Some("be brief"));
        assert_eq!(s.max_tokens(), Some(50));
        assert_eq!(s.preferences().as_deref(), Some("hints claude · speed 0.5"));
    }
}
