//! What a checklist is made of: the options a doctor runs with, each
//! step's status and outcome, the steps as they are added, and the
//! report a driver shows.

use std::{path::PathBuf, time::Duration};

use serde::Serialize;
use tokio::time::Instant;

use super::lint::Finding;
use crate::environment::Environment;
use crate::mcp::ConnectOptions;

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
pub(super) enum Outcome {
    Ok(String),
    /// What was found, and what to do.
    Warn(String, String),
    Fail(String, String),
}

/// The steps so far.
#[derive(Default)]
pub(super) struct Checklist {
    pub(super) steps: Vec<Step>,
}

impl Checklist {
    /// Adds the step `name`, timed from `since`; true when it did not fail.
    pub(super) fn push(&mut self, name: &'static str, since: Instant, outcome: Outcome) -> bool {
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
    pub(super) fn push_took(
        &mut self,
        name: &'static str,
        took: Duration,
        outcome: Outcome,
    ) -> bool {
        let now = Instant::now();
        self.push(name, now.checked_sub(took).unwrap_or(now), outcome)
    }

    /// Adds each of `names` as skipped.
    pub(super) fn skip(&mut self, names: &[&'static str]) {
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
