//! `pipewright doctor`: one server's ordered checklist, from finding its
//! command (or resolving its host) to its tool list, each step timed, with
//! a status and, where it fails or warns, what to do. A step that cannot
//! run because an earlier one failed is `skipped`. The steps are reached
//! through the MCP client (`mcp`: the handshake in each era, the stdio
//! probe, the token store) and plain HTTP requests; the lint of the tool
//! definitions is [`lint`]. Nothing here prints: the driver shows the
//! [`Report`].
//!
//! ```text
//! ServerSpec ──▶ stdio: command, started, alive, stdout ┐
//!           └──▶ http: dns, tcp, tls, endpoint, origin, │──▶ handshakes ──▶ capabilities,
//!                oauth metadata, registration, login   ┘    (each era)      tools, lint
//! ```

mod checklist;
mod eras;
mod http;
pub mod lint;
mod stdio;

use tokio::time::Instant;

use crate::mcp::{Connection, ServerSpec};
use checklist::{Checklist, Outcome};

pub use checklist::{DoctorOptions, Report, Status, Step};
pub use lint::Finding;

/// The tool list's token cost over which the `tool-list` step warns.
const TOOL_LIST_TOKENS_WARN: u64 = 10_000;

/// The steps that follow a handshake, for both transports.
const AFTER_HANDSHAKE: &[&str] = &["capabilities", "tools", "tool-list", "lint"];

/// Runs the checklist of the server `name`.
pub async fn examine(name: &str, spec: &ServerSpec, opts: &DoctorOptions) -> Report {
    let mut list = Checklist::default();
    let (transport, target, reached) = match spec {
        ServerSpec::Stdio { command, args, .. } => {
            let mut target = command.clone();
            for a in args {
                target.push(' ');
                target.push_str(a);
            }
            ("stdio", target, stdio::examine(spec, opts, &mut list).await)
        }
        ServerSpec::Http { url, .. } => (
            "http",
            crate::mcp::redact_url(url),
            http::examine(name, spec, opts, &mut list).await,
        ),
    };
    let mut findings = Vec::new();
    let conn = match reached {
        true => eras::handshakes(name, spec, opts, &mut list).await,
        false => {
            list.skip(eras::STEPS);
            None
        }
    };
    match conn {
        Some(conn) => {
            findings = after_handshake(&conn, &mut list);
            conn.close().await;
        }
        None => list.skip(AFTER_HANDSHAKE),
    }
    Report {
        server: name.to_owned(),
        transport,
        target,
        steps: list.steps,
        findings,
    }
}

/// Capabilities, tool count, the tool list's size and tokens, the lint.
fn after_handshake(conn: &Connection, list: &mut Checklist) -> Vec<Finding> {
    let since = Instant::now();
    let info = conn.server_info();
    let capabilities: Vec<String> = info
        .get("capabilities")
        .and_then(serde_json::Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let has_tools = capabilities.iter().any(|c| c == "tools");
    list.push(
        "capabilities",
        since,
        match (capabilities.is_empty(), has_tools) {
            (_, true) => Outcome::Ok(capabilities.join(", ")),
            (true, false) => Outcome::Warn(
                "it declares no capabilities".to_owned(),
                "declare `tools` in the server's capabilities, or pipewright has nothing to call"
                    .to_owned(),
            ),
            (false, false) => Outcome::Warn(
                format!("{} (no `tools`)", capabilities.join(", ")),
                "declare `tools` in the server's capabilities, or pipewright has nothing to call"
                    .to_owned(),
            ),
        },
    );
    let since = Instant::now();
    let tools = conn.tools();
    list.push(
        "tools",
        since,
        match tools.len() {
            0 => Outcome::Warn(
                "it lists no tools".to_owned(),
                "a pipeline calls tools: check the server's configuration (a feature flag, a missing API key) and its logs".to_owned(),
            ),
            1 => Outcome::Ok("1 tool".to_owned()),
            n => Outcome::Ok(format!("{n} tools")),
        },
    );
    let since = Instant::now();
    let raw = serde_json::Value::Array(tools.iter().map(|t| t.raw.clone()).collect());
    let text = raw.to_string();
    let tokens = crate::cost::tokens::count(&text);
    let detail = format!(
        "{} bytes, {tokens} tokens (o200k) an agent reads on every turn",
        text.len()
    );
    list.push(
        "tool-list",
        since,
        if tokens > TOOL_LIST_TOKENS_WARN {
            Outcome::Warn(
                detail,
                format!("over {TOOL_LIST_TOKENS_WARN} tokens: shorten descriptions and schemas, or split the server so an agent loads only the tools it needs"),
            )
        } else {
            Outcome::Ok(detail)
        },
    );
    let since = Instant::now();
    let findings = lint::lint(&tools);
    list.push(
        "lint",
        since,
        match findings.len() {
            0 => Outcome::Ok("no findings".to_owned()),
            n => Outcome::Warn(
                format!(
                    "{n} finding{} in the tool definitions",
                    if n == 1 { "" } else { "s" }
                ),
                "see each finding below; agents choose and fill tools from their definitions alone"
                    .to_owned(),
            ),
        },
    );
    findings
}
