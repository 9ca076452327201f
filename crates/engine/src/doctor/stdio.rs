//! A stdio server's steps before the handshake: its command found (on the
//! `PATH` of the environment handed in, or as a path that exists and can
//! run), started, alive after a moment, and its stdout speaking JSON-RPC.

use std::path::{Path, PathBuf};

use tokio::time::Instant;

use super::checklist::{Checklist, DoctorOptions, Outcome};
use crate::mcp::ServerSpec;
use crate::mcp::probe::{self, ALIVE_WAIT, Probe};

/// The steps, in order.
const STEPS: &[&str] = &["command", "started", "alive", "stdout"];

/// Runs the steps; true when the handshakes can be tried.
pub(super) async fn examine(spec: &ServerSpec, opts: &DoctorOptions, list: &mut Checklist) -> bool {
    let ServerSpec::Stdio {
        command,
        args,
        env,
        cwd,
        ..
    } = spec
    else {
        return false;
    };
    let since = Instant::now();
    let path = env
        .get("PATH")
        .map(String::as_str)
        .or_else(|| opts.env.var("PATH"));
    let base = cwd.as_deref().or_else(|| opts.env.working_dir());
    let shown = command_line(command, args);
    // Without a PATH in the environment handed in, the system looks the
    // command up when it starts: the `started` step says.
    let unknown = path.is_none() && !command.contains(std::path::MAIN_SEPARATOR);
    let ok = list.push(
        "command",
        since,
        match find(command, path, base) {
            _ if unknown => Outcome::Ok(format!(
                "`{command}` is looked up on pipewright's PATH when it starts"
            )),
            Ok(at) => Outcome::Ok(format!("`{command}` is {}", at.display())),
            Err((detail, fix)) => Outcome::Fail(detail, fix),
        },
    );
    if !ok {
        list.skip(&STEPS[1..]);
        return false;
    }
    let since = Instant::now();
    let limit = opts.connect.limits.max_message_bytes();
    let seen = probe::stdio(command, args, env, cwd.as_deref(), opts.wait, limit).await;
    let (stdout, reading) = match seen {
        Probe::NotStarted { reason } => {
            list.push(
                "started",
                since,
                Outcome::Fail(
                    format!("`{shown}` could not be started: {reason}"),
                    format!("check that `{command}` is installed and can run here: its full path, its permissions, its interpreter (`#!` line) and the server's `cwd:`"),
                ),
            );
            list.skip(&STEPS[2..]);
            return false;
        }
        Probe::ExitedAtOnce {
            status,
            stderr_tail,
            spawn,
        } => {
            list.push_took("started", spawn, Outcome::Ok(format!("`{shown}` started")));
            list.push_took(
                "alive",
                ALIVE_WAIT,
                Outcome::Fail(
                    format!(
                        "it exited within {} ms ({status}) before it was sent anything{}",
                        ALIVE_WAIT.as_millis(),
                        tail(&stderr_tail)
                    ),
                    format!("a stdio server keeps running and reads requests from its stdin: run `{shown}` by hand to see why it stops (a missing argument, a missing variable in `env:`)"),
                ),
            );
            list.skip(&STEPS[3..]);
            return false;
        }
        Probe::Ran {
            pid,
            stdout,
            spawn,
            reading,
        } => {
            let pid = pid.map(|p| format!(" as process {p}")).unwrap_or_default();
            list.push_took(
                "started",
                spawn,
                Outcome::Ok(format!("`{shown}` started{pid}")),
            );
            list.push_took(
                "alive",
                ALIVE_WAIT,
                Outcome::Ok(format!("still running after {} ms", ALIVE_WAIT.as_millis())),
            );
            (stdout, reading)
        }
    };
    let wait = opts.wait.as_secs();
    let (outcome, go_on) = match (&stdout.exited, stdout.answered, &stdout.first_junk) {
        (Some(status), _, _) => (
            Outcome::Fail(
                format!(
                    "it exited ({status}) before answering `initialize`{}{}",
                    junk_clause(stdout.junk_lines, stdout.first_junk.as_deref()),
                    tail(&stdout.stderr_tail)
                ),
                format!("the server stops when it is sent `initialize`: its stderr above says why; run `{shown}` by hand and paste an `initialize` request into it"),
            ),
            false,
        ),
        (None, None, first) => (
            Outcome::Fail(
                format!(
                    "no answer to `initialize` within {wait} s{}{}",
                    junk_clause(stdout.junk_lines, first.as_deref()),
                    tail(&stdout.stderr_tail)
                ),
                "a stdio server answers JSON-RPC on its stdout: check it is not waiting for something else (a `stdio` argument, a port, a prompt)".to_owned(),
            ),
            false,
        ),
        (None, Some(_), Some(first)) => (
            Outcome::Fail(
                format!(
                    "it writes logs to stdout: {} before its answer to `initialize`, the first: `{first}`",
                    match stdout.junk_lines {
                        1 => "1 line that is not JSON-RPC".to_owned(),
                        n => format!("{n} lines that are not JSON-RPC"),
                    }
                ),
                "send the server's logs to stderr: its stdout must carry only JSON-RPC messages (pipewright skips other lines; other clients break on them)".to_owned(),
            ),
            true,
        ),
        (None, Some(refused), None) => (
            Outcome::Ok(if refused {
                "it answered `initialize` with a JSON-RPC error (a server of 2026-07-28 alone does)".to_owned()
            } else {
                "it answered `initialize` with JSON-RPC".to_owned()
            }),
            true,
        ),
    };
    list.push_took("stdout", reading, outcome);
    go_on
}

/// `command args…`, as a user would type it.
fn command_line(command: &str, args: &[String]) -> String {
    std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `; its stderr ends:\n…`, or nothing.
fn tail(stderr: &str) -> String {
    match stderr.trim_end() {
        "" => "; it wrote nothing to stderr".to_owned(),
        tail => format!("; its stderr ends:\n{tail}"),
    }
}

/// A clause naming lines that were not JSON-RPC, or nothing.
fn junk_clause(lines: usize, first: Option<&str>) -> String {
    match first {
        Some(first) => format!(
            "; it wrote {lines} line{} to stdout that {} not JSON-RPC, the first: `{first}`",
            if lines == 1 { "" } else { "s" },
            if lines == 1 { "is" } else { "are" }
        ),
        None => String::new(),
    }
}

/// Where `command` is: a path that exists and can run, or the first
/// match on `path`. `Err` is what is wrong and what to do.
fn find(
    command: &str,
    path: Option<&str>,
    base: Option<&Path>,
) -> Result<PathBuf, (String, String)> {
    if command.trim().is_empty() {
        return Err((
            "the server has no command".to_owned(),
            "give the server a `command:`".to_owned(),
        ));
    }
    if command.contains(std::path::MAIN_SEPARATOR) {
        let at = match (Path::new(command).is_absolute(), base) {
            (false, Some(base)) => base.join(command),
            _ => PathBuf::from(command),
        };
        return match runnable(&at) {
            Some(true) => Ok(at),
            Some(false) => Err((
                format!("`{}` exists but is not executable", at.display()),
                format!("make it executable (`chmod +x {}`), or name its interpreter as the command", at.display()),
            )),
            None => Err((
                format!("`{}` does not exist", at.display()),
                "check the path in the server's `command:` (a relative path is read from the server's `cwd:`, else the working directory)".to_owned(),
            )),
        };
    }
    let dirs: Vec<&str> = path
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .collect();
    for dir in &dirs {
        let at = Path::new(dir).join(command);
        if runnable(&at) == Some(true) {
            return Ok(at);
        }
    }
    Err((
        format!(
            "`{command}` is not on PATH ({} director{} searched)",
            dirs.len(),
            if dirs.len() == 1 { "y" } else { "ies" }
        ),
        format!(
            "install `{command}`, or give its full path as the server's `command:`, or add its directory to PATH"
        ),
    ))
}

/// `Some(true)` for an executable file, `Some(false)` for a file that is
/// not executable, `None` when nothing is there.
fn runnable(at: &Path) -> Option<bool> {
    let meta = std::fs::metadata(at).ok()?;
    if !meta.is_file() {
        return Some(false);
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Some(meta.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_found_on_path_or_named_missing() {
        let found = find("sh", Some("/nonexistent:/bin:/usr/bin"), None);
        assert!(found.is_ok(), "{found:?}");
        let Err((detail, fix)) = find("no-such-server-xyz", Some("/bin:/usr/bin"), None) else {
            panic!("found a missing command");
        };
        assert!(detail.contains("not on PATH (2 directories"), "{detail}");
        assert!(fix.contains("install `no-such-server-xyz`"), "{fix}");
        let Err((detail, _)) = find("./nope/server", None, Some(Path::new("/tmp"))) else {
            panic!("found a missing path");
        };
        assert!(
            detail.contains("/tmp/./nope/server` does not exist"),
            "{detail}"
        );
    }
}
