//! The judge's calls a cassette keeps (`judge:`), beside the tool calls:
//! each request as sent (the key is a header, never part of it) and the
//! chat completion that answered it, found again on replay by the SHA-256
//! of the request's messages, so a replayed run is judged as the recorded
//! one was, with no endpoint and for free.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One recorded judge call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeEntry {
    pub metric: String,
    /// The prompt and its version, e.g. `rubric@1`.
    pub prompt: String,
    /// SHA-256 of the request's `messages`: what a replay matches on.
    pub request_sha256: String,
    /// The model asked.
    pub model: String,
    /// The chat-completions request (secrets masked).
    pub request: Value,
    /// The endpoint's answer (secrets masked).
    pub response: Value,
    #[serde(default)]
    pub duration_ms: u64,
}
