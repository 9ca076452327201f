//! `--log-level`: the level servers are asked to log at
//! (`logging/setLevel`), as `ConnectOptions::log_level` says.

use rmcp::{Peer, RoleClient};
use serde_json::Value;
use tokio::time::Instant;

use super::log::ServerLog;

/// A level of `logging/setLevel` (RFC 5424 names, lowest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    /// Every level, lowest first.
    pub const ALL: &[LogLevel] = &[
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The level's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }
}

/// Sends `logging/setLevel`; a server that refuses is noted in its log.
#[expect(deprecated, reason = "logging is still spoken by servers today")]
pub(super) async fn set_level(
    peer: &Peer<RoleClient>,
    level: LogLevel,
    log: &ServerLog,
    deadline: Instant,
) {
    let Ok(level) = serde_json::from_value::<rmcp::model::LoggingLevel>(Value::from(level.name()))
    else {
        return;
    };
    let sent = tokio::time::timeout_at(
        deadline,
        peer.set_level(rmcp::model::SetLevelRequestParams::new(level)),
    )
    .await;
    if !matches!(sent, Ok(Ok(()))) {
        log.push("[pipewright] the server did not accept `logging/setLevel`");
    }
}
