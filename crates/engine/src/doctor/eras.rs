//! The handshake in each era, through the client a run uses: 2025-11-25
//! (`initialize`) and 2026-07-28 (`server/discover`). A server of one era
//! only warns, naming the `protocol:` that skips the refused attempt; a
//! server of neither fails.

use tokio::time::Instant;

use super::checklist::{Checklist, DoctorOptions, Outcome};
use crate::mcp::{Connection, McpError, Protocol, ServerSpec};

/// The steps, in order.
pub(super) const STEPS: &[&str] = &["handshake-2025-11-25", "handshake-2026-07-28"];

/// Each era's handshake; the connection of one that worked (the first),
/// the others closed.
pub(super) async fn handshakes(
    name: &str,
    spec: &ServerSpec,
    opts: &DoctorOptions,
    list: &mut Checklist,
) -> Option<Connection> {
    let eras = [
        (STEPS[0], Protocol::V2025_11_25),
        (STEPS[1], Protocol::V2026_07_28),
    ];
    let mut tried = Vec::new();
    for (step, protocol) in eras {
        let (since, result) = connect(name, spec, opts, protocol).await;
        tried.push((step, protocol, since, result));
    }
    let working: Vec<Protocol> = tried
        .iter()
        .filter(|(.., r)| r.is_ok())
        .map(|(_, p, ..)| *p)
        .collect();
    let mut kept = None;
    for (step, protocol, since, result) in tried {
        let outcome = match result {
            Ok(conn) => {
                let outcome = Outcome::Ok(spoken(&conn));
                match kept {
                    None => kept = Some(conn),
                    Some(_) => conn.close().await,
                }
                outcome
            }
            Err(e) => match working.first() {
                Some(other) => Outcome::Warn(
                    format!("it does not speak {protocol}: {e}"),
                    format!(
                        "this server speaks only {other}; `protocol: auto` finds it, and `protocol: {other}` on the server (or `--protocol {name}={other}`) skips the refused attempt"
                    ),
                ),
                None => Outcome::Fail(e.to_string(), fix_for(&e, spec)),
            },
        };
        // Each era is timed alone, though both ran before either is added.
        list.push_took(step, since.1 - since.0, outcome);
    }
    kept
}

/// Connects under exactly `protocol`, timing it: `(start, done)`.
async fn connect(
    name: &str,
    spec: &ServerSpec,
    opts: &DoctorOptions,
    protocol: Protocol,
) -> ((Instant, Instant), Result<Connection, McpError>) {
    let start = Instant::now();
    let mut spec = spec.clone();
    match &mut spec {
        ServerSpec::Stdio { protocol: p, .. } | ServerSpec::Http { protocol: p, .. } => {
            *p = Some(protocol);
        }
    }
    let mut connect = opts.connect.clone();
    connect.protocol.servers.clear();
    let result = Connection::connect(name, &spec, &connect).await;
    ((start, Instant::now()), result)
}

/// What the server said it is and speaks.
fn spoken(conn: &Connection) -> String {
    let info = conn.server_info();
    let text = |pointer: &str| {
        info.pointer(pointer)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let server = match (text("/serverInfo/name"), text("/serverInfo/version")) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => n,
        _ => "the server".to_owned(),
    };
    format!("{server} speaks MCP {}", conn.protocol_version())
}

/// What to do when neither era's handshake worked.
fn fix_for(e: &McpError, spec: &ServerSpec) -> String {
    let text = e.to_string();
    if text.contains("auth login") || text.contains("401") {
        return "log in first: `pipewright auth login URL` (see the `login` step)".to_owned();
    }
    match spec {
        ServerSpec::Stdio { .. } => "read the server's stderr above; run its command by hand to see it start, and check it speaks MCP over stdio (some servers need a `stdio` argument)".to_owned(),
        ServerSpec::Http { .. } => "check the URL is the server's MCP endpoint and read the server's own log for this request".to_owned(),
    }
}
