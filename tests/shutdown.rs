//! The MCP stdio shutdown at the end of a run: pipewright saves the trace,
//! closes the server's stdin, waits `--shutdown-grace`, SIGTERMs the
//! server's process group, waits again, then SIGKILLs it. The servers here
//! are the real demo server wrapped in a shell that outlives the end of its
//! input and leaves a child of its own behind.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod common;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pipewright"))
}

/// A stdio server that answers MCP (the demo server) until its stdin closes,
/// then notes which traces were saved, starts a `sleep` and waits for it.
/// With `ignore_term` it also ignores SIGTERM, so only SIGKILL ends it.
fn lingering_server(dir: &Path, ignore_term: bool) -> PathBuf {
    lingering_server_then(dir, ignore_term, "")
}

/// [`lingering_server`], running `after_eof` once its stdin has closed.
fn lingering_server_then(dir: &Path, ignore_term: bool, after_eof: &str) -> PathBuf {
    let on_term = if ignore_term {
        "trap '' TERM".to_owned()
    } else {
        format!("trap 'echo term > {0}/term; exit 0' TERM", dir.display())
    };
    let script = format!(
        "#!/bin/sh\n{on_term}\necho $$ > {d}/pid\n\"{pw}\" demo-server\nls {d}/data/runs > {d}/at_eof 2>&1\n{after_eof}\nsleep 30 &\necho $! > {d}/sleep_pid\nwait\nwait\n",
        d = dir.display(),
        pw = bin().display()
    );
    let path = dir.join("server.sh");
    std::fs::write(&path, script).expect("write the server script");
    let file = dir.join("pipe.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  linger:\n    command: sh\n    args: [{}]\npipe:\n  - id: find\n    tool: search_users\n    args: {{ query: carol }}\n",
            path.display()
        ),
    )
    .expect("write the pipeline");
    file
}

fn alive(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    // A zombie has exited; it only waits for its parent to reap it.
    stat.is_ok_and(|s| {
        !s.split(") ")
            .nth(1)
            .is_some_and(|rest| rest.starts_with('Z'))
    })
}

fn gone_soon(pid: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn run(dir: &Path, file: &Path, grace: &str) -> Duration {
    let started = Instant::now();
    let out = common::pipewright_in(dir)
        .args(["run", "--shutdown-grace", grace])
        .arg(file)
        .output()
        .expect("spawn pipewright");
    let took = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn a_server_that_ignores_eof_is_terminated_after_the_grace_and_leaves_nothing_behind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = lingering_server(dir.path(), false);
    let took = run(dir.path(), &file, "200ms");
    // The trace was on disk when the server's stdin closed.
    assert!(
        read(dir.path(), "at_eof").contains(".json"),
        "{}",
        read(dir.path(), "at_eof")
    );
    // SIGTERM came (the shell's trap ran), and neither the shell nor the
    // child it started is left: pipewright did not wait out the `sleep 30`.
    assert_eq!(read(dir.path(), "term").trim(), "term");
    assert!(gone_soon(&read(dir.path(), "pid")));
    assert!(gone_soon(&read(dir.path(), "sleep_pid")));
    assert!(took < Duration::from_secs(20), "the run waited {took:?}");
}

#[test]
fn a_server_that_ignores_sigterm_too_is_killed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = lingering_server(dir.path(), true);
    let took = run(dir.path(), &file, "200ms");
    assert!(read(dir.path(), "at_eof").contains(".json"));
    assert!(!dir.path().join("term").exists());
    assert!(gone_soon(&read(dir.path(), "pid")));
    assert!(gone_soon(&read(dir.path(), "sleep_pid")));
    // Two graces (after EOF, after SIGTERM), not the sleep's 30 s.
    assert!(took < Duration::from_secs(20), "the run waited {took:?}");
    assert!(
        took >= Duration::from_millis(400),
        "no grace was given: {took:?}"
    );
}

#[test]
fn a_server_that_asks_something_after_eof_is_terminated_without_waiting_out_the_grace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let request = r#"echo '{"jsonrpc":"2.0","id":99,"method":"roots/list"}'"#;
    let file = lingering_server_then(dir.path(), false, request);
    // A grace far longer than the run: only the request can end it early.
    let took = run(dir.path(), &file, "30s");
    assert_eq!(read(dir.path(), "term").trim(), "term");
    assert!(gone_soon(&read(dir.path(), "pid")));
    assert!(took < Duration::from_secs(20), "the run waited {took:?}");
}
