//! A stdio server's first moments looked at directly, for `pipewright
//! doctor`: started, still alive after a moment, and what its stdout says
//! to one `initialize` (JSON-RPC, or log lines that are not). The process
//! runs in its own group and the group is killed when the probe ends.

use std::{collections::BTreeMap, path::Path, process::Stdio, time::Duration};

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use super::child::kill_group;
use super::log::{ServerLog, pump};
use super::stdout::{LineReader, Stdout, StdoutNotes, quote};

/// How long a started server is watched before it counts as running.
pub const ALIVE_WAIT: Duration = Duration::from_millis(300);
/// How long a probe waits for the last stderr lines of a server that exited.
const STDERR_SETTLE: Duration = Duration::from_millis(500);
/// Lines and bytes of stderr kept for a report.
const TAIL_LINES: usize = 20;
const TAIL_BYTES: usize = 4 * 1024;

/// What a probe of a stdio server saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// It could not be started at all.
    NotStarted { reason: String },
    /// It started and exited within [`ALIVE_WAIT`], before it was sent
    /// anything.
    ExitedAtOnce {
        status: String,
        stderr_tail: String,
        /// How long starting it took.
        spawn: Duration,
    },
    /// It ran; what its stdout said to `initialize`, and how long starting
    /// it and reading the answer took.
    Ran {
        pid: Option<u32>,
        stdout: StdoutSeen,
        spawn: Duration,
        reading: Duration,
    },
}

/// What a running server's stdout showed after one `initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StdoutSeen {
    /// It answered `initialize` with a JSON-RPC message (a result or an
    /// error: `Some(true)` for an error).
    pub answered: Option<bool>,
    /// Lines that are not JSON-RPC, and the first of them, quoted.
    pub junk_lines: usize,
    pub first_junk: Option<String>,
    /// It exited before answering, with this status.
    pub exited: Option<String>,
    /// The last lines it wrote to stderr, when it exited or did not answer.
    pub stderr_tail: String,
}

/// Starts `command` with `args` (as given, no shell) and `env` added,
/// watches it for [`ALIVE_WAIT`], sends it one 2025-11-25 `initialize` and
/// reads its stdout for up to `wait`, line by line through `limit` bytes.
pub async fn stdio(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&Path>,
    wait: Duration,
    limit: usize,
) -> Probe {
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(args).envs(env);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let start = std::time::Instant::now();
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Probe::NotStarted {
                reason: e.to_string(),
            };
        }
    };
    let spawn = start.elapsed();
    let group = child.id();
    let log = ServerLog::default();
    let stderr_done = CancellationToken::new();
    match child.stderr.take() {
        Some(stderr) => {
            tokio::spawn(pump(stderr, log.clone(), stderr_done.clone()));
        }
        None => stderr_done.cancel(),
    }
    let tail = || async {
        let _ = tokio::time::timeout(STDERR_SETTLE, stderr_done.cancelled()).await;
        log.tail(TAIL_LINES, TAIL_BYTES)
    };
    let probe = async {
        tokio::time::sleep(ALIVE_WAIT).await;
        if let Ok(Some(status)) = child.try_wait() {
            return Probe::ExitedAtOnce {
                status: status.to_string(),
                stderr_tail: tail().await,
                spawn,
            };
        }
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Probe::NotStarted {
                reason: "its stdio could not be piped".to_owned(),
            };
        };
        let initialize = serde_json::json!({
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "pipewright-doctor", "version": env!("CARGO_PKG_VERSION")},
            },
        });
        let mut line = initialize.to_string().into_bytes();
        line.push(b'\n');
        // A server that already exited shows as the end of its stdout.
        let _ = stdin.write_all(&line).await;
        let _ = stdin.flush().await;
        let reading_since = std::time::Instant::now();
        let mut reader = LineReader::new(stdout, limit, StdoutNotes::default(), log.clone());
        let mut seen = StdoutSeen::default();
        let reading = async {
            loop {
                match reader.next().await {
                    Stdout::Line(line) => match json_rpc(&line) {
                        Some(Reply::Answer { error }) => {
                            seen.answered = Some(error);
                            return;
                        }
                        Some(Reply::Other) => {}
                        None if line.trim_ascii().is_empty() => {}
                        None => {
                            seen.junk_lines += 1;
                            if seen.first_junk.is_none() {
                                seen.first_junk = Some(quote(line.trim_ascii()));
                            }
                        }
                    },
                    Stdout::End | Stdout::TooLarge | Stdout::Failed(_) => {
                        let status = tokio::time::timeout(STDERR_SETTLE, child.wait()).await;
                        seen.exited = Some(match status {
                            Ok(Ok(status)) => status.to_string(),
                            _ => "its stdout closed".to_owned(),
                        });
                        return;
                    }
                }
            }
        };
        let answered = tokio::time::timeout(wait, reading).await.is_ok();
        let reading = reading_since.elapsed();
        if !answered || seen.exited.is_some() {
            seen.stderr_tail = tail().await;
        }
        drop(stdin);
        Probe::Ran {
            pid: group,
            stdout: seen,
            spawn,
            reading,
        }
    }
    .await;
    kill_group(group);
    let _ = child.start_kill();
    probe
}

/// What one line of a server's stdout is, as JSON-RPC.
enum Reply {
    /// The answer to the probe's `initialize` (id 0); `error` when refused.
    Answer { error: bool },
    /// Another JSON-RPC message (a notification, a request, a batch).
    Other,
}

/// The line as JSON-RPC, or `None` when it is not.
fn json_rpc(line: &[u8]) -> Option<Reply> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    match serde_json::from_slice::<Value>(line).ok()? {
        Value::Object(m) if m.get("jsonrpc").and_then(Value::as_str) == Some("2.0") => {
            Some(match m.get("id") {
                Some(id) if id.as_u64() == Some(0) && !m.contains_key("method") => Reply::Answer {
                    error: m.contains_key("error"),
                },
                _ => Reply::Other,
            })
        }
        Value::Array(items) if !items.is_empty() => Some(Reply::Other),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_told_apart() {
        assert!(matches!(
            json_rpc(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#),
            Some(Reply::Answer { error: false })
        ));
        assert!(matches!(
            json_rpc(br#"{"jsonrpc":"2.0","id":0,"error":{"code":1,"message":"no"}}"#),
            Some(Reply::Answer { error: true })
        ));
        assert!(matches!(
            json_rpc(br#"{"jsonrpc":"2.0","method":"notifications/message"}"#),
            Some(Reply::Other)
        ));
        assert!(json_rpc(b"Server listening on stdio").is_none());
        assert!(json_rpc(br#"{"level":"info"}"#).is_none());
    }
}
