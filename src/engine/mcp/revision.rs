//! `--protocol`: which MCP revision pipewright speaks to a server, and the
//! handshake that settles it. `auto` (the default) does what the official
//! SDKs do: it probes with `server/discover` (2026-07-28) and falls back to
//! `initialize` (2025-11-25) when the server answers that it does not know
//! the method.

use serde_json::{Map, Value};

use rmcp::{
    RoleClient, Service,
    model::ProtocolVersion,
    service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RunningService},
    transport::IntoTransport,
};

static PROTOCOL: std::sync::OnceLock<Protocol> = std::sync::OnceLock::new();

/// Sets the revision every later connection of the process negotiates
/// (`--protocol`, `PIPEWRIGHT_PROTOCOL`); the first call wins.
pub fn set_protocol(protocol: Protocol) {
    let _ = PROTOCOL.set(protocol);
}

/// The revision set by [`set_protocol`], else [`Protocol::Auto`].
pub(super) fn default_protocol() -> Protocol {
    PROTOCOL.get().copied().unwrap_or_default()
}

/// Which MCP revision to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Protocol {
    /// Probe with `server/discover`; fall back to `initialize` for a server
    /// that does not know it.
    #[default]
    Auto,
    /// Only 2026-07-28 (`server/discover`, per-request `_meta`): a server
    /// that does not speak it is an error.
    #[value(name = "2026-07-28")]
    Modern,
    /// Only 2025-11-25 and older (`initialize`).
    #[value(name = "2025-11-25")]
    Legacy,
}

impl Protocol {
    /// The value as written on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Auto => "auto",
            Protocol::Modern => "2026-07-28",
            Protocol::Legacy => "2025-11-25",
        }
    }

    /// The handshake that went unanswered within `within`, in words.
    pub(super) fn no_answer(self, within: impl std::fmt::Display) -> String {
        let handshake = match self {
            Protocol::Auto => "`server/discover` or `initialize`",
            Protocol::Modern => "`server/discover`",
            Protocol::Legacy => "`initialize`",
        };
        format!("no answer to {handshake} within {within}")
    }

    /// Does this revision's handshake over `transport`.
    pub(super) async fn serve<S, T, E, A>(
        self,
        client: S,
        transport: T,
    ) -> Result<RunningService<RoleClient, S>, ClientInitializeError>
    where
        S: Service<RoleClient>,
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        client
            .serve_with_lifecycle(transport, self.lifecycle())
            .await
    }

    fn lifecycle(self) -> ClientLifecycleMode {
        let modern = vec![ProtocolVersion::V_2026_07_28];
        match self {
            Protocol::Auto => ClientLifecycleMode::Auto {
                preferred_versions: modern,
                legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
            },
            Protocol::Modern => ClientLifecycleMode::Discover {
                preferred_versions: modern,
            },
            Protocol::Legacy => ClientLifecycleMode::Initialize,
        }
    }
}

/// True when an `auto` probe got an answer that is not a `server/discover`
/// result (some servers answer every unknown method with `{}`): such a
/// server does not speak 2026-07-28, so the connection is made again with
/// `initialize` alone.
pub(super) fn misread_probe(e: &ClientInitializeError, protocol: Protocol) -> bool {
    protocol == Protocol::Auto && matches!(e, ClientInitializeError::ExpectedInitResult(_))
}

/// The error that says most about a failed handshake: of an `auto` probe
/// whose fallback failed too, the fallback's (the legacy server's own
/// words); a rejected probe in `2026-07-28` mode as such.
pub(super) fn telling(e: &ClientInitializeError) -> &ClientInitializeError {
    match e {
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => telling(fallback),
        other => other,
    }
}

/// A failed handshake in words, where the revision is the reason.
pub(super) fn describe(e: &ClientInitializeError, protocol: Protocol) -> Option<String> {
    match telling(e) {
        ClientInitializeError::JsonRpcError(data) if protocol == Protocol::Modern => Some(format!(
            "it does not speak MCP 2026-07-28: it rejected `server/discover` with error {}: {} \
             (use `--protocol auto` to fall back to `initialize`)",
            data.code.0, data.message
        )),
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => {
            let spoken: Vec<&str> = server_supported.iter().map(|v| v.as_str()).collect();
            Some(format!(
                "it speaks MCP {} but not 2026-07-28 (use `--protocol auto` or `--protocol 2025-11-25`)",
                if spoken.is_empty() {
                    "revisions it did not name".to_owned()
                } else {
                    spoken.join(", ")
                }
            ))
        }
        _ => None,
    }
}

/// The `_meta` key that asks a 2026-07-28 server for log lines.
const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";

/// A call's `_meta` as sent: on a 2026-07-28 connection, where a server
/// sends log lines only to requests that ask (`io.modelcontextprotocol/logLevel`),
/// every call asks at `--log-level`, else at every level — as a 2025-11-25
/// server sends them unasked.
pub(super) fn log_meta(
    meta: Option<Map<String, Value>>,
    revision: &str,
) -> Option<Map<String, Value>> {
    if revision != Protocol::Modern.name() {
        return meta;
    }
    let level = super::level::LOG_LEVEL.get().map_or("debug", |l| l.name());
    let mut meta = meta.unwrap_or_default();
    meta.entry(LOG_LEVEL_KEY)
        .or_insert_with(|| Value::from(level));
    Some(meta)
}

/// A server's error message, with what to do when the server failed
/// because it tried to ask mid-call on a 2026-07-28 connection (servers
/// written for 2025-11-25 do; 2026-07-28 wants an input-required result).
pub(super) fn hint(revision: &str, message: String) -> String {
    let lower = message.to_lowercase();
    let mid_call = lower.contains("no back-channel")
        || lower.contains("server-to-client requests are not allowed");
    if revision != Protocol::Modern.name() || !mid_call {
        return message;
    }
    format!(
        "{message} (the tool asks its question mid-call, which MCP 2026-07-28 does not allow; \
         `--protocol 2025-11-25` talks to this server the 2025 way)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn protocol_values_are_the_revisions() {
        for p in Protocol::value_variants() {
            let parsed = Protocol::from_str(p.name(), false).expect("own name parses");
            assert_eq!(parsed, *p);
        }
        assert!(Protocol::from_str("2024-11-05", false).is_err());
        assert_eq!(Protocol::default(), Protocol::Auto);
    }

    #[test]
    fn a_question_refused_mid_call_says_what_to_do() {
        let refused = "Cannot send 'elicitation/create': this transport context has no \
                       back-channel for server-initiated requests."
            .to_owned();
        let shown = hint("2026-07-28", refused.clone());
        assert!(shown.starts_with(&refused) && shown.contains("--protocol 2025-11-25"));
        assert_eq!(hint("2025-11-25", refused.clone()), refused);
        assert_eq!(hint("2026-07-28", "boom".into()), "boom");
    }
}
