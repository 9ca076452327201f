//! What a node task is given (its own inputs, so it never touches the
//! session's state), and what the parts of running it share: masking a
//! value once, the code of an unresolved reference, the time.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::cost::pricing::Pricing;
use crate::file::model::Composition;
use crate::json::Json;
use crate::lang::snapshot::Snapshot;
use crate::mcp::caller::Caller;
use crate::mcp::human::Responder;
use crate::redact::Redactor;
use crate::run::events::Event;

/// Everything a node task needs; it owns its inputs so it never touches the
/// session's state.
pub struct NodeJob {
    pub comp: Arc<Composition>,
    pub idx: usize,
    pub scope: Snapshot,
    pub caller: Arc<dyn Caller>,
    pub cancel: CancellationToken,
    /// True while the session is paused: no new fan-out iteration starts.
    pub paused: watch::Receiver<bool>,
    pub events: mpsc::Sender<Event>,
    pub redactor: Redactor,
    pub default_timeout: Option<Duration>,
    /// Prices each call when its server reports no cost.
    pub pricing: Arc<Pricing>,
    /// Fan-out iterations this run has started so far, and the cap on them.
    pub iterations: Option<(Arc<AtomicU64>, u64)>,
    /// Answers the servers' questions (`None`: they are declined).
    pub responder: Option<Arc<dyn Responder>>,
}

/// `v` with secrets masked, to be shared; no copy when the run has no
/// secrets.
pub(super) fn redacted(redactor: &Redactor, v: Value) -> Json {
    if redactor.is_empty() {
        Json::from_value(v)
    } else {
        Json::from_value(redactor.value(&v))
    }
}

/// The code of a failure to resolve a node's references (Discord's name).
pub const INTERPOLATION_FAILED: &str = "INTERPOLATION_FAILED";

/// The current time as RFC 3339 (UTC).
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
