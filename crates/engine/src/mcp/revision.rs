//! `--protocol` and a server's `protocol:`: which MCP revision pipewright
//! speaks to a server, and the handshake that settles it. `auto` (the
//! default) sends `initialize` first: a server that answers it speaks the
//! 2025 era, where a tool may ask its question mid-call, and is spoken to
//! that way even if it speaks 2026-07-28 too (the official SDKs' servers
//! do both, and ask mid-call). A server that refuses `initialize` speaks
//! only 2026-07-28 and is asked `server/discover` next, on the same
//! connection (`handshake`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use rmcp::{
    RoleClient, Service,
    model::{ErrorCode, ProtocolVersion},
    service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt, RunningService},
    transport::IntoTransport,
};

/// What the command line chose: one revision for every server, and one
/// per server named (`--protocol NAME=REVISION`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choices {
    /// `--protocol REVISION` / `PIPEWRIGHT_PROTOCOL`.
    pub all: Protocol,
    /// `--protocol NAME=REVISION`, by server name.
    pub servers: BTreeMap<String, Protocol>,
}

impl Choices {
    /// The choices of `--protocol` values, in order (a later one wins).
    pub fn of(args: &[ProtocolArg]) -> Choices {
        let mut out = Choices::default();
        for arg in args {
            match &arg.server {
                Some(name) => {
                    out.servers.insert(name.clone(), arg.protocol);
                }
                None => out.all = arg.protocol,
            }
        }
        out
    }
}

/// One `--protocol` value: `REVISION` for every server, or
/// `NAME=REVISION` for the server `NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolArg {
    pub server: Option<String>,
    pub protocol: Protocol,
}

impl std::str::FromStr for ProtocolArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (server, revision) = match s.split_once('=') {
            Some((name, revision)) if !name.trim().is_empty() => {
                (Some(name.trim().to_owned()), revision.trim())
            }
            Some(_) => return Err(format!("`{s}` names no server before `=`")),
            None => (None, s.trim()),
        };
        let protocol = Protocol::parse(revision)
            .ok_or_else(|| format!("`{revision}` is not a revision: use {}", Protocol::listed()))?;
        Ok(ProtocolArg { server, protocol })
    }
}

pub use crate::file::protocol::Protocol;

impl Protocol {
    /// The handshake that went unanswered within `within`, in words.
    pub(super) fn no_answer(self, within: impl std::fmt::Display) -> String {
        let handshake = match self {
            Protocol::Auto => "`initialize` or `server/discover`",
            Protocol::V2026_07_28 => "`server/discover`",
            Protocol::V2025_11_25 => "`initialize`",
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

    /// The handshake itself; `auto`'s first one is `initialize` (see
    /// `handshake`, which makes the second).
    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Protocol::V2026_07_28 => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Protocol::Auto | Protocol::V2025_11_25 => ClientLifecycleMode::Initialize,
        }
    }
}

/// True when the server answered `initialize`, but not with an initialize
/// result: it does not speak the 2025 era, so `auto` asks
/// `server/discover` next. A server that closed the connection or could
/// not be reached is not asked again.
pub(super) fn refused(e: &ClientInitializeError) -> bool {
    matches!(
        e,
        ClientInitializeError::JsonRpcError(_)
            | ClientInitializeError::ExpectedInitResult(_)
            | ClientInitializeError::ExpectedInitResponse(_)
    )
}

/// An `auto` handshake whose `initialize` was refused and whose
/// `server/discover` failed too.
pub(super) fn both_failed(
    initialize: ClientInitializeError,
    discover: ClientInitializeError,
) -> ClientInitializeError {
    ClientInitializeError::LegacyFallbackFailed {
        discover: Box::new(discover),
        fallback: Box::new(initialize),
    }
}

/// True for a refusal that says the server speaks only revisions without
/// `initialize` (2026-07-28 and later): UNSUPPORTED_PROTOCOL_VERSION.
fn modern_only(e: &ClientInitializeError) -> bool {
    matches!(e, ClientInitializeError::JsonRpcError(data)
        if data.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION)
}

/// The error that says most about a failed handshake: of an `auto`
/// handshake where both failed, `initialize`'s (the 2025 server's own
/// words) unless the server said it speaks only 2026-07-28, then
/// `server/discover`'s.
pub(super) fn telling(e: &ClientInitializeError) -> &ClientInitializeError {
    match e {
        ClientInitializeError::LegacyFallbackFailed { fallback, discover } => {
            if modern_only(fallback) {
                telling(discover)
            } else {
                telling(fallback)
            }
        }
        other => other,
    }
}

/// A failed handshake in words, where the revision is the reason.
pub(super) fn describe(e: &ClientInitializeError, protocol: Protocol) -> Option<String> {
    let refused_first = matches!(e, ClientInitializeError::LegacyFallbackFailed { fallback, .. }
        if modern_only(fallback));
    match telling(e) {
        ClientInitializeError::JsonRpcError(data) if refused_first => Some(format!(
            "it refused `initialize` (it speaks only MCP {}) and rejected \
             `server/discover` with error {}: {}",
            Protocol::V2026_07_28,
            data.code.0,
            data.message
        )),
        ClientInitializeError::JsonRpcError(data) if protocol == Protocol::V2026_07_28 => {
            Some(format!(
                "it does not speak MCP {}: it rejected `server/discover` with error {}: {} \
             (give the server `protocol: auto` in the file, or pass `--protocol NAME=auto`)",
                Protocol::V2026_07_28,
                data.code.0,
                data.message
            ))
        }
        ClientInitializeError::JsonRpcError(data)
            if protocol == Protocol::V2025_11_25
                && data.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
        {
            let spoken = data
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .map(|v| {
                    v.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "only revisions without `initialize`".to_owned());
            Some(format!(
                "it does not speak MCP {}: it refused `initialize` with error {}: {} \
                 (it speaks {spoken}; give the server `protocol: auto` or `protocol: {}` \
                 in the file, or pass `--protocol NAME=auto`)",
                Protocol::V2025_11_25,
                data.code.0,
                data.message,
                Protocol::V2026_07_28
            ))
        }
        ClientInitializeError::JsonRpcError(data) if protocol == Protocol::V2025_11_25 => {
            Some(format!(
                "it rejected `initialize` with error {}: {} (a server that speaks only MCP \
             {} refuses it: give the server `protocol: auto` in the file, or pass \
             `--protocol NAME=auto`)",
                data.code.0,
                data.message,
                Protocol::V2026_07_28
            ))
        }
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => {
            let spoken: Vec<&str> = server_supported.iter().map(|v| v.as_str()).collect();
            Some(format!(
                "it speaks MCP {} but not {} (give the server `protocol: auto` or \
                 `protocol: {}` in the file, or pass `--protocol NAME=auto`)",
                if spoken.is_empty() {
                    "revisions it did not name".to_owned()
                } else {
                    spoken.join(", ")
                },
                Protocol::V2026_07_28,
                Protocol::V2025_11_25
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
    level: Option<super::level::LogLevel>,
) -> Option<Map<String, Value>> {
    if revision != Protocol::V2026_07_28.name() {
        return meta;
    }
    let level = level.map_or("debug", |l| l.name());
    let mut meta = meta.unwrap_or_default();
    meta.entry(LOG_LEVEL_KEY)
        .or_insert_with(|| Value::from(level));
    Some(meta)
}

/// A server's error message, with what to do when the server failed
/// because it tried to ask mid-call on a 2026-07-28 connection (servers
/// written for 2025-11-25 do; 2026-07-28 wants an input-required result).
/// Under `auto` a server that speaks 2025-11-25 is spoken to that way, so
/// this happens only where 2026-07-28 was chosen for `server`.
pub(super) fn hint(server: &str, revision: &str, message: String) -> String {
    let lower = message.to_lowercase();
    let mid_call = lower.contains("no back-channel")
        || lower.contains("server-to-client requests are not allowed");
    let v2026 = Protocol::V2026_07_28;
    if revision == v2026.name() && mid_call {
        return format!(
            "{message} (the tool asks its question mid-call, which MCP {v2026} does not allow; \
             give server `{server}` `protocol: auto` in the file, or pass `--protocol {server}=auto`, \
             to talk to it the 2025 way)"
        );
    }
    // The other way round: a server of both eras, spoken to the 2025 way
    // (auto's choice), whose tool answers with an input-required result,
    // which only 2026-07-28 has; the SDK turns it into an invalid result.
    if revision != v2026.name() && lower.contains("invalid result") {
        return format!(
            "{message} (if the tool answers the {v2026} way, with an input-required result, \
             give server `{server}` `protocol: {v2026}` in the file, or pass \
             `--protocol {server}={v2026}`)"
        );
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_refused_mid_call_says_what_to_do() {
        let refused = "Cannot send 'elicitation/create': this transport context has no \
                       back-channel for server-initiated requests."
            .to_owned();
        let shown = hint("h", "2026-07-28", refused.clone());
        assert!(shown.starts_with(&refused) && shown.contains("--protocol h=auto"));
        assert!(shown.contains("`protocol: auto`"), "{shown}");
        assert_eq!(hint("h", "2025-11-25", refused.clone()), refused);
        assert_eq!(hint("h", "2026-07-28", "boom".into()), "boom");
        let invalid = "Handler returned an invalid result".to_owned();
        let shown = hint("m", "2025-11-25", invalid.clone());
        assert!(shown.starts_with(&invalid) && shown.contains("--protocol m=2026-07-28"));
        assert_eq!(hint("m", "2026-07-28", invalid.clone()), invalid);
    }

    #[test]
    fn protocol_flags_name_every_server_or_one() {
        let parse = |s: &str| s.parse::<ProtocolArg>();
        let args = [
            parse("2025-11-25").expect("all"),
            parse("h=2026-07-28").expect("one"),
            parse(" m = auto ").expect("spaces"),
        ];
        let choices = Choices::of(&args);
        assert_eq!(choices.all, Protocol::V2025_11_25);
        assert_eq!(choices.servers["h"], Protocol::V2026_07_28);
        assert_eq!(choices.servers["m"], Protocol::Auto);
        let bad = parse("h=2024-11-05").expect_err("not a choice");
        assert!(bad.contains("`2024-11-05` is not a revision"), "{bad}");
        assert!(parse("=auto").is_err());
    }

    #[test]
    fn only_an_answered_refusal_of_initialize_leads_to_discover() {
        let unsupported = ClientInitializeError::JsonRpcError(rmcp::model::ErrorData::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "the initialize handshake is not accepted",
            Some(serde_json::json!({"supported": ["2026-07-28"]})),
        ));
        assert!(refused(&unsupported));
        assert!(!refused(&ClientInitializeError::ConnectionClosed(
            "gone".into()
        )));
        let said = describe(&unsupported, Protocol::V2025_11_25).expect("a reason");
        assert!(
            said.contains("does not speak MCP 2025-11-25") && said.contains("speaks 2026-07-28"),
            "{said}"
        );
        let discover = ClientInitializeError::JsonRpcError(rmcp::model::ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            "discover broke",
            None,
        ));
        let both = both_failed(unsupported, discover);
        assert!(
            matches!(telling(&both), ClientInitializeError::JsonRpcError(d) if d.message == "discover broke")
        );
        let said = describe(&both, Protocol::Auto).expect("a reason");
        assert!(
            said.contains("refused `initialize`") && said.contains("discover broke"),
            "{said}"
        );
    }
}
