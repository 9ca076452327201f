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

mod eras;
mod http;
pub mod lint;
mod stdio;

use std::{path::PathBuf, time::Duration};

use serde::Serialize;
use tokio::time::Instant;

use crate::environment::Environment;
use crate::mcp::{ConnectOptions, Connection, ServerSpec};

pub use lint::Finding;

/// The tool list's token cost over which the `tool-list` step warns.
const TOOL_LIST_TOKENS_WARN: u64 = 10_000;

/// What a doctor needs besides the server: how to connect (logins never
/// prompt here), the process's environment (its `PATH`), and where the
/// saved logins are.
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    pub connect: ConnectOptions,
    pub env: Environment,
    /// The data directory, whose token store holds the saved logins.
    pub data_dir: Option<PathBuf>,
    /// How long a probe waits for an answer (a stdio server's first
    /// message, an HTTP request).
    pub wait: Duration,
}

impl DoctorOptions {
    /// The options over `connect`, `env` and `data_dir`, waiting 10 s.
    pub fn new(connect: ConnectOptions, env: Environment, data_dir: Option<PathBuf>) -> Self {
        Self {
            connect,
            env,
            data_dir,
            wait: Duration::from_secs(10),
        }
    }
}

/// How a step went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Ok,
    Warn,
    Fail,
    /// Not run: an earlier step it needs failed.
    Skipped,
}

impl Status {
    /// Its mark in a checklist: `✓`, `!`, `✗`, `-`.
    pub fn mark(self) -> &'static str {
        match self {
            Status::Ok => "✓",
            Status::Warn => "!",
            Status::Fail => "✗",
            Status::Skipped => "-",
        }
    }

    /// The word in a report: `ok`, `warn`, `fail`, `skipped`.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Skipped => "skipped",
        }
    }
}

/// One step of a checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// A stable name: `command`, `started`, `alive`, `stdout`, `dns`,
    /// `tcp`, `tls`, `endpoint`, `origin`, `protected-resource`,
    /// `authorization-server`, `registration`, `login`,
    /// `handshake-2025-11-25`, `handshake-2026-07-28`, `capabilities`,
    /// `tools`, `tool-list`, `lint`.
    pub name: &'static str,
    pub status: Status,
    /// What was found, in a sentence.
    pub detail: String,
    /// What to do, where the step fails or warns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    pub elapsed_ms: u64,
}

/// One server's checklist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub server: String,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// The command line or the URL (without credentials).
    pub target: String,
    pub steps: Vec<Step>,
    /// The lint's findings, in tool order.
    pub findings: Vec<Finding>,
}

impl Report {
    /// True when a step failed.
    pub fn failed(&self) -> bool {
        self.steps.iter().any(|s| s.status == Status::Fail)
    }

    /// The step called `name`, if the checklist has it.
    pub fn step(&self, name: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.name == name)
    }

    /// The first step that failed.
    pub fn first_failure(&self) -> Option<&Step> {
        self.steps.iter().find(|s| s.status == Status::Fail)
    }

    /// The checklist as lines of text, as `pipewright doctor` prints it and
    /// the workbench shows it: a heading, a line a step (`✓`, `!`, `✗`,
    /// `-`, its name, what was found and its time), the fix under a step
    /// that fails or warns, then the lint's findings.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "{} ({} {})",
            self.server, self.transport, self.target
        )];
        let width = self.steps.iter().map(|s| s.name.len()).max().unwrap_or(0);
        for step in &self.steps {
            let mut lines = step.detail.lines();
            let first = lines.next().unwrap_or("");
            let time = match step.status {
                Status::Skipped => String::new(),
                _ => format!(" ({} ms)", step.elapsed_ms),
            };
            out.push(format!(
                "  {} {:width$}  {first}{time}",
                step.status.mark(),
                step.name
            ));
            for line in lines {
                out.push(format!("      | {line}"));
            }
            if let Some(fix) = &step.fix {
                out.push(format!("      fix: {fix}"));
            }
        }
        for f in &self.findings {
            let at = match &f.argument {
                Some(a) => format!("{}.{a}", f.tool),
                None => f.tool.clone(),
            };
            out.push(format!(
                "    {} [{}] {at}: {}",
                Status::Warn.mark(),
                f.rule,
                f.message
            ));
        }
        out
    }
}

/// How a step came out, before it is timed.
pub(crate) enum Outcome {
    Ok(String),
    /// What was found, and what to do.
    Warn(String, String),
    Fail(String, String),
}

/// The steps so far.
#[derive(Default)]
pub(crate) struct Checklist {
    steps: Vec<Step>,
}

impl Checklist {
    /// Adds the step `name`, timed from `since`; true when it did not fail.
    pub(crate) fn push(&mut self, name: &'static str, since: Instant, outcome: Outcome) -> bool {
        let elapsed_ms = u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (status, detail, fix) = match outcome {
            Outcome::Ok(detail) => (Status::Ok, detail, None),
            Outcome::Warn(detail, fix) => (Status::Warn, detail, Some(fix)),
            Outcome::Fail(detail, fix) => (Status::Fail, detail, Some(fix)),
        };
        self.steps.push(Step {
            name,
            status,
            detail,
            fix,
            elapsed_ms,
        });
        status != Status::Fail
    }

    /// Adds the step `name` that took `took`; true when it did not fail.
    pub(crate) fn push_took(
        &mut self,
        name: &'static str,
        took: Duration,
        outcome: Outcome,
    ) -> bool {
        let now = Instant::now();
        self.push(name, now.checked_sub(took).unwrap_or(now), outcome)
    }

    /// Adds each of `names` as skipped.
    pub(crate) fn skip(&mut self, names: &[&'static str]) {
        for name in names {
            self.steps.push(Step {
                name,
                status: Status::Skipped,
                detail: "skipped: an earlier step failed".to_owned(),
                fix: None,
                elapsed_ms: 0,
            });
        }
    }
}

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
