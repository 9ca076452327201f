//! Asking the judge: the request a metric's question becomes, and where
//! its answer comes from: an answer already given in this process to the
//! same messages (another case asking the same; free), the cassette being
//! replayed (free, no endpoint), or the endpoint (recorded into the
//! cassette being written, masked). What every judge of a process shares
//! is a [`Bench`]; a [`Judge`] is the bench and one composition's endpoint.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::client;
use super::prompts::{self, Prompt};
use super::provider::Endpoint;
use crate::cost::pricing::{ModelPrice, PricingTable};
use crate::redact::Redactor;
use crate::run::cassette::{JudgeEntry, canonical};

/// Where recorded judge calls go (the cassette being written).
pub type Sink = Arc<dyn Fn(JudgeEntry) + Send + Sync>;

/// A cassette's judge calls, being replayed.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    /// The cassette's file, named in errors.
    pub name: String,
    by_sha: HashMap<String, JudgeEntry>,
    /// `--replay-fallthrough`: ask the endpoint for what is not recorded.
    pub fallthrough: bool,
}

impl Replay {
    pub fn new(name: impl Into<String>, entries: Vec<JudgeEntry>, fallthrough: bool) -> Replay {
        Replay {
            name: name.into(),
            by_sha: entries
                .into_iter()
                .map(|e| (e.request_sha256.clone(), e))
                .collect(),
            fallthrough,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.by_sha.is_empty()
    }
}

/// What every judge of one process shares.
pub struct Bench {
    client: reqwest::Client,
    /// Answers given in this process, by request hash.
    memo: Mutex<HashMap<String, Value>>,
    replay: Option<Replay>,
    record: Option<Sink>,
    models: IndexMap<String, ModelPrice>,
    redactor: Redactor,
    /// `PIPEWRIGHT_JUDGE_MAX_REPLY_KB` as the driver's settings give it.
    max_reply_kb: Option<usize>,
}

impl Bench {
    /// A bench pricing judge calls with `pricing`'s `models:`, masking
    /// with `redactor` what it records.
    pub fn new(
        pricing: &PricingTable,
        redactor: Redactor,
        replay: Option<Replay>,
        record: Option<Sink>,
    ) -> Bench {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Bench {
            client: reqwest::Client::new(),
            memo: Mutex::new(HashMap::new()),
            replay,
            record,
            models: pricing.models.clone(),
            redactor,
            max_reply_kb: None,
        }
    }

    /// The same bench, reading a judge's answer up to `max_reply_kb` KiB
    /// (`None`: the default).
    pub fn with_max_reply_kb(mut self, max_reply_kb: Option<usize>) -> Bench {
        self.max_reply_kb = max_reply_kb;
        self
    }

    /// The price of `model`: its entry, else the longest entry it starts
    /// with (`gpt-4o-mini-2024-07-18` is `gpt-4o-mini`).
    pub fn price(&self, model: &str) -> Option<ModelPrice> {
        price_of(&self.models, model)
    }

    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// True when a cassette is replayed that holds judge calls.
    pub fn replays(&self) -> bool {
        self.replay.as_ref().is_some_and(|r| !r.is_empty())
    }

    /// True when a cassette answers every judge call (no fallthrough).
    pub fn replays_only(&self) -> bool {
        self.replay.as_ref().is_some_and(|r| !r.fallthrough)
    }

    /// True when the answer to `sha` costs nothing (given already, or in
    /// the cassette).
    pub fn free(&self, sha: &str) -> bool {
        self.memo.lock().is_ok_and(|m| m.contains_key(sha))
            || self
                .replay
                .as_ref()
                .is_some_and(|r| r.by_sha.contains_key(sha))
    }
}

/// The price of `model` in `models`.
pub fn price_of(models: &IndexMap<String, ModelPrice>, model: &str) -> Option<ModelPrice> {
    if let Some(p) = models.get(model) {
        return Some(*p);
    }
    models
        .iter()
        .filter(|(k, _)| model.starts_with(k.as_str()))
        .max_by_key(|(k, _)| k.len())
        .map(|(_, p)| *p)
}

/// A bench and the endpoint of one composition (none when only a cassette
/// answers).
#[derive(Clone)]
pub struct Judge {
    pub bench: Arc<Bench>,
    pub endpoint: Option<Endpoint>,
}

/// A question's request, ready to send.
#[derive(Debug, Clone)]
pub struct Request {
    pub body: Value,
    /// SHA-256 of `body.messages`, hex.
    pub sha: String,
    /// The messages' tokens (o200k), for projections and when the endpoint
    /// reports no usage.
    pub tokens: u64,
}

/// The request `prompt` with `material` becomes, for `endpoint` (the model
/// and settings) or a replay.
pub fn request(prompt: &Prompt, material: &Value, endpoint: Option<&Endpoint>) -> Request {
    // Compact: indentation would be a third of the prompt's tokens.
    let user = format!("<material>\n{material}\n</material>");
    let messages = json!([
        { "role": "system", "content": prompts::system(prompt) },
        { "role": "user", "content": user },
    ]);
    let sha = hex::encode(Sha256::digest(canonical(&messages).to_string().as_bytes()));
    let tokens = crate::cost::tokens::count_value(&messages);
    let mut body = json!({
        "model": endpoint.map_or("", |e| e.model.as_str()),
        "messages": messages,
        "response_format": { "type": "json_object" },
    });
    if let Some(e) = endpoint {
        body["temperature"] = json!(e.temperature);
        body["max_tokens"] = json!(e.max_tokens);
    }
    Request { body, sha, tokens }
}

/// The answer to a request, and where it came from.
#[derive(Debug, Clone)]
pub struct Answered {
    pub body: Value,
    /// The model asked (the endpoint's, or the recorded one).
    pub model: String,
    pub attempts: u32,
    pub duration: Duration,
    pub replayed: bool,
    pub reused: bool,
}

impl Judge {
    /// Why this judge cannot answer at all, if it cannot.
    pub fn unavailable(&self) -> Option<String> {
        (self.endpoint.is_none() && !self.bench.replays())
            .then(|| super::provider::NO_JUDGE.to_owned())
    }

    /// The model named in reports.
    pub fn model(&self) -> String {
        self.endpoint
            .as_ref()
            .map_or_else(|| "(cassette)".to_owned(), |e| e.model.clone())
    }

    /// Asks `req` for `metric` (`prompt`); `Err` is why there is no answer.
    pub async fn ask(
        &self,
        metric: &str,
        prompt: &Prompt,
        req: &Request,
    ) -> Result<Answered, String> {
        let b = &self.bench;
        if let Some(body) = b.memo.lock().ok().and_then(|m| m.get(&req.sha).cloned()) {
            return Ok(Answered {
                body,
                model: self.model(),
                attempts: 0,
                duration: Duration::ZERO,
                replayed: false,
                reused: true,
            });
        }
        if let Some(r) = &b.replay {
            if let Some(e) = r.by_sha.get(&req.sha) {
                return Ok(Answered {
                    body: e.response.clone(),
                    model: e.model.clone(),
                    attempts: 0,
                    duration: Duration::ZERO,
                    replayed: true,
                    reused: false,
                });
            }
            if !r.fallthrough || self.endpoint.is_none() {
                return Err(format!(
                    "the judge call for `{metric}` ({}) is not in cassette {}: the prompt differs from the recorded one (the run, the rubric or the prompt version changed); record it again, or pass --replay-fallthrough to ask the judge",
                    prompt.id, r.name
                ));
            }
        }
        let Some(endpoint) = &self.endpoint else {
            return Err(super::provider::NO_JUDGE.into());
        };
        let a = client::post((&b.client, b.max_reply_kb), endpoint, &req.body).await?;
        if let Some(sink) = &b.record {
            sink(JudgeEntry {
                metric: metric.to_owned(),
                prompt: prompt.id.to_owned(),
                request_sha256: req.sha.clone(),
                model: endpoint.model.clone(),
                request: b.redactor.value(&req.body),
                response: b.redactor.value(&a.body),
                duration_ms: a.duration.as_millis() as u64,
            });
        }
        if let Ok(mut m) = b.memo.lock() {
            m.insert(req.sha.clone(), a.body.clone());
        }
        Ok(Answered {
            body: a.body,
            model: endpoint.model.clone(),
            attempts: a.attempts,
            duration: a.duration,
            replayed: false,
            reused: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dated_model_takes_its_family_price() {
        let mut models = IndexMap::new();
        models.insert(
            "gpt-4o".to_owned(),
            ModelPrice {
                input_per_mtok: 2.5,
                output_per_mtok: 10.0,
            },
        );
        models.insert(
            "gpt-4o-mini".to_owned(),
            ModelPrice {
                input_per_mtok: 0.15,
                output_per_mtok: 0.6,
            },
        );
        let p = price_of(&models, "gpt-4o-mini-2024-07-18").unwrap_or_default();
        assert_eq!(p.input_per_mtok, 0.15);
        assert!(price_of(&models, "llama3.1").is_none());
    }

    #[test]
    fn the_request_hash_is_of_the_messages_only() {
        let m = json!({"output": 1});
        let a = request(
            &prompts::RUBRIC,
            &m,
            Some(&Endpoint::new("http://h/v1", "a", None)),
        );
        let b = request(
            &prompts::RUBRIC,
            &m,
            Some(&Endpoint::new("http://h/v1", "b", None)),
        );
        let c = request(&prompts::TASK_COMPLETION, &m, None);
        assert_eq!(a.sha, b.sha);
        assert_ne!(a.sha, c.sha);
        assert_eq!(a.body["response_format"]["type"], "json_object");
        assert!(
            a.body["messages"][1]["content"]
                .as_str()
                .unwrap_or_default()
                .starts_with("<material>")
        );
    }
}
