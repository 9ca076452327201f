//! A model to answer sampling requests with: any OpenAI-compatible
//! chat-completions endpoint (`sampling: {url, model, api_key}` in the
//! pipeline file or the workbench's config). The server's messages and
//! system prompt become the chat; the reply's first choice is the answer.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::file::model::Sampling;
use crate::lang::snapshot::Snapshot;
use crate::mcp::servers::setting_text;
use crate::redact::Redactor;

/// Where sampling requests go when no person writes the reply.
#[derive(Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    /// The chat-completions URL, or the API's base URL
    /// (`/chat/completions` is added).
    pub url: String,
    /// The model asked for, whatever the server prefers.
    pub model: String,
    /// Sent as `Authorization: Bearer …`; a secret (masked everywhere).
    #[serde(default)]
    pub api_key: Option<String>,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "***"))
            .finish()
    }
}

impl Provider {
    /// The provider `decl` names, with `${env.X}` (read in `env`) and
    /// `${var.X}` (from `vars`) resolved; the API key (and every env value
    /// used) becomes a secret of `redactor`.
    pub fn resolved(
        decl: &Sampling,
        vars: &indexmap::IndexMap<String, Value>,
        env: &crate::environment::Environment,
        redactor: &Redactor,
    ) -> Result<Provider, String> {
        let scope = Snapshot {
            vars: std::sync::Arc::new(vars.clone()),
            env: env.clone(),
            ..Snapshot::default()
        };
        let text = |s: &str| setting_text(s, &scope, redactor);
        let api_key = match &decl.api_key {
            Some(k) => {
                let k = text(k).map_err(|e| format!("`sampling.api_key`: {e}"))?;
                redactor.add(k.clone());
                Some(k)
            }
            None => None,
        };
        Ok(Provider {
            url: text(&decl.url).map_err(|e| format!("`sampling.url`: {e}"))?,
            model: text(&decl.model).map_err(|e| format!("`sampling.model`: {e}"))?,
            api_key,
        })
    }

    fn endpoint(&self) -> String {
        let base = self.url.trim_end_matches('/');
        if base.ends_with("/chat/completions") {
            base.to_owned()
        } else {
            format!("{base}/chat/completions")
        }
    }

    /// The chat-completions request for a `sampling/createMessage` request.
    pub fn body(&self, request: &Value) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = request.get("systemPrompt").and_then(Value::as_str) {
            messages.push(json!({"role": "system", "content": system}));
        }
        for (role, text) in messages_of(request) {
            messages.push(json!({"role": role, "content": text}));
        }
        let mut body = json!({"model": self.model, "messages": messages});
        if let Some(n) = request.get("maxTokens").and_then(Value::as_u64) {
            body["max_tokens"] = Value::from(n);
        }
        if let Some(t) = request.get("temperature").and_then(Value::as_f64) {
            body["temperature"] = json!(t);
        }
        if let Some(stop) = request.get("stopSequences").filter(|s| s.is_array()) {
            body["stop"] = stop.clone();
        }
        body
    }

    /// Asks the provider; the reply's text and the model that wrote it.
    pub async fn complete(&self, request: &Value) -> Result<(String, String), String> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        let mut req = client
            .post(self.endpoint())
            .json(&self.body(request))
            .timeout(std::time::Duration::from_secs(120));
        if let Some(key) = &self.api_key {
            req = req.bearer_auth(key);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| format!("the sampling provider did not answer: {}", e.without_url()))?;
        let status = resp.status();
        let body: Value = resp.json().await.map_err(|e| {
            format!(
                "the sampling provider's answer is not JSON: {}",
                e.without_url()
            )
        })?;
        if !status.is_success() {
            let why = body
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("no reason given");
            return Err(format!("the sampling provider answered {status}: {why}"));
        }
        let text = body
            .pointer("/choices/0/message/content")
            .and_then(Value::as_str)
            .ok_or("the sampling provider's answer has no `choices[0].message.content`")?;
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(&self.model);
        Ok((text.to_owned(), model.to_owned()))
    }
}

/// A sampling request's messages as (role, text), in order.
pub fn messages_of(request: &Value) -> Vec<(String, String)> {
    request
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|m| {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
            (role.to_owned(), message_text(m))
        })
        .collect()
}

/// A sampling message's text (image and audio parts are named, not sent).
pub fn message_text(m: &Value) -> String {
    let part = |c: &Value| match c.get("type").and_then(Value::as_str) {
        Some("text") => c
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        Some(other) => format!("[{other}]"),
        None => String::new(),
    };
    match m.get("content") {
        Some(Value::Array(parts)) => parts.iter().map(part).collect::<Vec<_>>().join("\n"),
        Some(c) => part(c),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampling_request_becomes_a_chat() {
        let p = Provider {
            url: "http://127.0.0.1:1/v1/".into(),
            model: "m".into(),
            api_key: Some("sk-secret".into()),
        };
        assert_eq!(p.endpoint(), "http://127.0.0.1:1/v1/chat/completions");
        let body = p.body(&json!({
            "systemPrompt": "Be brief.",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}],
            "maxTokens": 20
        }));
        assert_eq!(
            body,
            json!({"model": "m", "max_tokens": 20, "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"}
            ]})
        );
        assert!(!format!("{p:?}").contains("sk-secret"));
    }
}
