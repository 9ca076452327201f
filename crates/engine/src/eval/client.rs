//! One request to the judge: a chat-completions POST with its timeout, a
//! 429 or 5xx tried again after `Retry-After` (or a short backoff), and the
//! answer read up to its size limit and checked for depth before any tree
//! is built. Every failure is a sentence for the metric's `error` row; the
//! key never appears in one (errors show the URL without its query).

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::Value;

use super::provider::Endpoint;
use crate::json::Json;

/// The judge's answer is read up to this many KiB when nothing says
/// (`PIPEWRIGHT_JUDGE_MAX_REPLY_KB`).
pub const DEFAULT_MAX_REPLY_KB: usize = 1024;
/// The longest wait a `Retry-After` is obeyed for.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(30);

/// The most bytes of an answer read: `PIPEWRIGHT_JUDGE_MAX_REPLY_KB` as
/// the driver's settings give it (`max_reply_kb`), else
/// [`DEFAULT_MAX_REPLY_KB`].
pub fn max_reply_bytes(max_reply_kb: Option<usize>) -> usize {
    max_reply_kb
        .unwrap_or(DEFAULT_MAX_REPLY_KB)
        .saturating_mul(1024)
}

/// What the endpoint answered.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The chat completion (`choices`, `model`, `usage` …).
    pub body: Value,
    pub attempts: u32,
    pub duration: Duration,
}

/// POSTs `request` to the judge; `Err` is why there is no answer.
pub async fn post(
    (client, max_reply_kb): (&reqwest::Client, Option<usize>),
    endpoint: &Endpoint,
    request: &Value,
) -> Result<Answer, String> {
    let started = Instant::now();
    let shown = endpoint.shown_url();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let mut req = client
            .post(&endpoint.url)
            .json(request)
            .timeout(endpoint.timeout);
        if let Some(key) = endpoint.api_key() {
            req = req.bearer_auth(key);
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() => {
                return Err(format!(
                    "the judge did not answer within {} ({shown}); raise the provider's `timeout`",
                    human(endpoint.timeout)
                ));
            }
            Err(e) => {
                return Err(format!(
                    "could not reach the judge at {shown}: {}",
                    source_text(&e.without_url())
                ));
            }
        };
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = read_bounded(resp, endpoint, max_reply_kb).await;
        if status.is_success() {
            let body = body?;
            return Ok(Answer {
                body,
                attempts,
                duration: started.elapsed(),
            });
        }
        let why = body
            .ok()
            .and_then(|b| {
                b.pointer("/error/message")
                    .or_else(|| b.get("error"))
                    .and_then(Value::as_str)
                    .map(|s| cut(s, 300))
            })
            .unwrap_or_else(|| "no reason given".into());
        let again = status.as_u16() == 429 || status.is_server_error();
        if again && attempts <= endpoint.retries {
            let backoff = Duration::from_millis(500u64 << attempts.min(6));
            tokio::time::sleep(retry_after.unwrap_or(backoff).min(MAX_RETRY_WAIT)).await;
            continue;
        }
        let tries = if attempts > 1 {
            format!(" ({attempts} attempts)")
        } else {
            String::new()
        };
        let hint = if status.as_u16() == 429 {
            "; the judge is rate limited: lower the pace, or raise the provider's `retries`"
        } else if status.as_u16() == 401 || status.as_u16() == 403 {
            "; check the key the provider's `api_key` names"
        } else {
            ""
        };
        return Err(format!(
            "the judge at {shown} answered {status}: {why}{tries}{hint}"
        ));
    }
}

/// The body, read up to the limit and checked before parsing.
async fn read_bounded(
    resp: reqwest::Response,
    endpoint: &Endpoint,
    max_reply_kb: Option<usize>,
) -> Result<Value, String> {
    let limit = max_reply_bytes(max_reply_kb);
    let mut buf: Vec<u8> = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            if e.is_timeout() {
                format!(
                    "the judge did not finish its answer within {}",
                    human(endpoint.timeout)
                )
            } else {
                format!(
                    "the judge's answer was cut off: {}",
                    source_text(&e.without_url())
                )
            }
        })?;
        if buf.len() + chunk.len() > limit {
            return Err(format!(
                "the judge's answer is larger than {} KiB, so pipewright stopped reading it; PIPEWRIGHT_JUDGE_MAX_REPLY_KB=N raises the limit",
                limit / 1024
            ));
        }
        buf.extend_from_slice(&chunk);
    }
    let text =
        String::from_utf8(buf).map_err(|_| "the judge's answer is not UTF-8 text".to_owned())?;
    Json::parse(text)
        .map(Json::into_value)
        .map_err(|e| format!("the judge's answer is not JSON: {e}"))
}

/// A reqwest error and its causes, as one line.
fn source_text(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let t = c.to_string();
        if !out.contains(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        cause = c.source();
    }
    out
}

/// A duration as `60s` or `1.5s`.
pub fn human(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// `s` cut to `max` characters.
pub fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}
