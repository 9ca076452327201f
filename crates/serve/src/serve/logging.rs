//! `notifications/message` from `serve`: the level each session chose
//! (`logging/setLevel`, or `io.modelcontextprotocol/logLevel` in a
//! 2026-07-28 request's `_meta`), and what a served run says at which level.

// Logging is deprecated by SEP-2577 in 2026-07-28, but 2025-11-25 clients
// (and the conformance suite) still use it.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::{Peer, RequestContext};
use serde_json::{Value, json};

use pipewright_engine::run::events::Event;
use pipewright_engine::run::trace::NodeStatus;

/// A log level (`debug` … `emergency`).
pub type Level = LoggingLevel;

/// The logger name on every message `serve` sends.
const LOGGER: &str = "pipewright";

/// The level one session asked for; `None` until it asks (nothing is sent).
#[derive(Clone, Default)]
pub struct SessionLevel(Arc<Mutex<Option<LoggingLevel>>>);

impl SessionLevel {
    pub fn set(&self, level: LoggingLevel) {
        if let Ok(mut l) = self.0.lock() {
            *l = Some(level);
        }
    }

    pub fn get(&self) -> Option<LoggingLevel> {
        self.0.lock().ok().and_then(|l| *l)
    }

    /// The level for one request: its own `_meta` opt-in (2026-07-28)
    /// wins over the session's.
    pub fn for_request(&self, context: &RequestContext<RoleServer>) -> Option<LoggingLevel> {
        context.meta.log_level().or_else(|| self.get())
    }
}

/// Sends a run's log messages to one client at or above its level.
#[derive(Clone)]
pub struct RunLog {
    pub peer: Peer<RoleServer>,
    pub min: Option<LoggingLevel>,
}

impl RunLog {
    /// Sends what `ev` says, if it says something at or above the level.
    pub async fn event(&self, ev: &Event) {
        let Some(min) = self.min else { return };
        let Some((level, data)) = describe(ev) else {
            return;
        };
        if rank(level) < rank(min) {
            return;
        }
        let mut p = LoggingMessageNotificationParam::new(level, data);
        p.logger = Some(LOGGER.to_owned());
        let _ = self.peer.notify_logging_message(p).await;
    }
}

/// Severity order: `debug` lowest, `emergency` highest.
fn rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The level named by a server log line `[level logger] data`.
fn line_level(line: &str) -> LoggingLevel {
    let word = line
        .strip_prefix('[')
        .and_then(|r| r.split([' ', ']']).next())
        .unwrap_or("");
    match word {
        "debug" => LoggingLevel::Debug,
        "notice" => LoggingLevel::Notice,
        "warning" => LoggingLevel::Warning,
        "error" => LoggingLevel::Error,
        "critical" => LoggingLevel::Critical,
        "alert" => LoggingLevel::Alert,
        "emergency" => LoggingLevel::Emergency,
        _ => LoggingLevel::Info,
    }
}

/// What a run's event says as a log message: node starts (debug), ends
/// (info, or error when failed), retries and compensations, and the lines
/// the upstream servers logged (at their own level).
fn describe(ev: &Event) -> Option<(LoggingLevel, Value)> {
    Some(match ev {
        Event::RunStarted {
            composition, nodes, ..
        } => (
            LoggingLevel::Info,
            json!({ "event": "run_started", "composition": composition, "nodes": nodes,
                    "message": format!("run of `{composition}` started ({nodes} nodes)") }),
        ),
        Event::NodeStarted { id, attempt, .. } => (
            LoggingLevel::Debug,
            json!({ "event": "node_started", "node": id, "attempt": attempt,
                    "message": format!("node `{id}` started (attempt {attempt})") }),
        ),
        Event::Retrying { id, attempt, error } => (
            LoggingLevel::Warning,
            json!({ "event": "node_retrying", "node": id, "attempt": attempt, "error": error,
                    "message": format!("node `{id}` attempt {attempt} failed: {error}; retrying") }),
        ),
        Event::NodeFinished { id, record } => {
            let status = record.status.as_str();
            let failed = record.status == NodeStatus::Failed;
            let message = match (&record.error, failed) {
                (Some(e), true) => format!("node `{id}` failed: {e}"),
                _ => format!("node `{id}` finished: {status}"),
            };
            (
                if failed {
                    LoggingLevel::Error
                } else {
                    LoggingLevel::Info
                },
                json!({ "event": "node_finished", "node": id, "status": status,
                        "error": record.error, "message": message }),
            )
        }
        Event::Compensated { id, ok, error } => (
            if *ok {
                LoggingLevel::Notice
            } else {
                LoggingLevel::Error
            },
            json!({ "event": "compensated", "node": id, "ok": ok, "error": error,
                    "message": format!("compensation of node `{id}` {}",
                        if *ok { "ran" } else { "failed" }) }),
        ),
        Event::ServerLog { id, line } => (
            line_level(line),
            json!({ "event": "server_log", "node": id, "message": line }),
        ),
        Event::RunFinished { trace, .. } => (
            LoggingLevel::Info,
            json!({ "event": "run_finished", "run_id": trace.run_id,
                    "status": trace.composition.status.as_str(),
                    "message": format!("run ended {}", trace.composition.status.as_str()) }),
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_line_keeps_its_level() {
        assert_eq!(line_level("[warning db] slow"), LoggingLevel::Warning);
        assert_eq!(line_level("[error] boom"), LoggingLevel::Error);
        assert_eq!(line_level("no level"), LoggingLevel::Info);
    }

    #[test]
    fn levels_are_ordered() {
        assert!(rank(LoggingLevel::Debug) < rank(LoggingLevel::Info));
        assert!(rank(LoggingLevel::Error) < rank(LoggingLevel::Emergency));
    }
}
