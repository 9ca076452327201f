//! The server-fault sweep (issue 25): servers that crash, hang, write junk,
//! cut a message short, send one huge line, flood notifications, exit
//! before `initialize`, or answer HTTP 500 and cut a stream. Each case runs
//! the real binary and checks that the run ends (a hang fails the test at
//! [`WALL`] instead of blocking it), with a sentence that names what
//! happened and no panic, that the trace of the nodes before the fault is
//! printed and saved, and that no server process outlives pipewright.
//!
//! The stdio servers are `tests/interop/faulty_server.py` and the HTTP ones
//! `tests/interop/faulty_http_server.py`: raw JSON-RPC written by hand,
//! since no SDK sends these bytes on request.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long any one pipewright command may take before the test calls it
/// a hang; far above what a healthy run needs.
const WALL: Duration = Duration::from_secs(60);

/// A test's own directories: every place pipewright reads or writes.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `pipewright ARGS…` with this home's directories and no limit taken
    /// from the user's environment.
    fn pw(&self, args: &[&str]) -> Command {
        let d = self.path();
        let mut c = common::pipewright_in(d);
        c.args(args)
            .env("XDG_CONFIG_HOME", d.join("config"))
            .env("XDG_DATA_HOME", d.join("xdg-data"))
            .env("XDG_STATE_HOME", d.join("state"))
            .env("NO_COLOR", "1")
            .env_remove("RUST_BACKTRACE");
        c
    }

    /// A pipeline over the faulty stdio server in `mode`: `first` echoes,
    /// `second` calls `fault` (with `timeout`, if given), `third` echoes.
    fn stdio_pipeline(&self, mode: &str, timeout: Option<&str>) -> PathBuf {
        let server = common::root().join("tests/interop/faulty_server.py");
        let pid = self.pid_file();
        let servers = format!(
            "servers:\n  faulty:\n    command: {}\n    args: [{}, {mode}, {}]\n",
            common::python().display(),
            server.display(),
            pid.display()
        );
        self.pipeline(&servers, timeout)
    }

    fn pipeline(&self, servers: &str, timeout: Option<&str>) -> PathBuf {
        let timeout = timeout.map(|t| format!("    timeout: {t}\n"));
        let text = format!(
            "{servers}pipe:\n  - id: first\n    tool: echo\n    args: {{message: hi}}\n  - id: second\n    tool: fault\n{}  - id: third\n    tool: echo\n    args: {{message: never}}\n",
            timeout.unwrap_or_default()
        );
        let file = self.path().join("faults.yml");
        std::fs::write(&file, text).expect("write the pipeline");
        file
    }

    fn pid_file(&self) -> PathBuf {
        self.path().join("server.pid")
    }

    /// `runs list --format json` in this home: the ids of the saved runs.
    fn saved_runs(&self) -> Vec<String> {
        let out = self
            .pw(&["runs", "list", "--format", "json"])
            .output()
            .expect("run `runs list`");
        assert!(out.status.success(), "{out:?}");
        let runs: Value = serde_json::from_slice(&out.stdout).expect("runs list prints JSON");
        runs.as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["id"].as_str().map(str::to_owned))
            .collect()
    }
}

/// How a command ended.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// The largest resident set pipewright reached, in KiB, as sampled from
    /// `/proc` while it ran (0 where there is no `/proc`).
    peak_rss_kib: u64,
}

impl Ended {
    fn trace(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not a JSON trace ({e}):\n{}", self.stdout))
    }

    fn error_of(&self, node: &str) -> String {
        let trace = self.trace();
        trace["nodes"][node]["error"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }
}

/// A pipewright started by [`Running::start`], its output going to files
/// (a pipe could fill and stall it).
struct Running {
    child: Child,
    started: Instant,
    out: PathBuf,
    err: PathBuf,
}

impl Running {
    fn start(mut cmd: Command, dir: &Path) -> Running {
        let out = dir.join("stdout.txt");
        let err = dir.join("stderr.txt");
        let file = |p: &Path| std::fs::File::create(p).expect("an output file");
        cmd.stdin(Stdio::null())
            .stdout(file(&out))
            .stderr(file(&err));
        Running {
            child: cmd.spawn().expect("start pipewright"),
            started: Instant::now(),
            out,
            err,
        }
    }

    /// Waits for the end, sampling memory, and fails the test if it takes
    /// longer than [`WALL`] (a hang is a failure, not a test that never
    /// ends) or pipewright panicked.
    fn finish(mut self) -> Ended {
        let mut peak = 0;
        let status = loop {
            peak = peak.max(peak_rss_kib(self.child.id()));
            if let Some(status) = self.child.try_wait().expect("wait for pipewright") {
                break status;
            }
            if self.started.elapsed() > WALL {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "pipewright hung: still running after {WALL:?}; stderr so far:\n{}",
                    std::fs::read_to_string(&self.err).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let read =
            |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap_or_default()).into_owned();
        let ended = Ended {
            code: status.code(),
            stdout: read(&self.out),
            stderr: read(&self.err),
            peak_rss_kib: peak,
        };
        assert!(
            !ended.stderr.contains("panicked") && !ended.stderr.contains("RUST_BACKTRACE"),
            "pipewright panicked:\n{}",
            ended.stderr
        );
        ended
    }
}

/// Runs `cmd` to its end; see [`Running::finish`].
fn run_bounded(cmd: Command, dir: &Path) -> Ended {
    Running::start(cmd, dir).finish()
}

/// The high-water mark of a process's resident set (`VmHWM`), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse().ok()
        })
        .unwrap_or(0)
}

/// True while `pid` runs (a zombie has exited: it only awaits its reaper).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// Fails unless the server whose pid is in `pid_file` is gone (given a
/// moment for the kernel to tear it down).
fn assert_server_gone(pid_file: &Path) {
    let pid = std::fs::read_to_string(pid_file).expect("the server wrote its pid");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(&pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(&pid), "server {pid} outlived pipewright");
}

/// Fails unless the run printed a trace where `first` answered, `second`
/// failed saying `says`, and `third` never ran, and saved it.
fn assert_trace_kept(home: &Home, ended: &Ended, says: &[&str]) {
    assert_eq!(
        ended.code,
        Some(1),
        "a failed run exits 1: {}",
        ended.stderr
    );
    let trace = ended.trace();
    assert_eq!(trace["nodes"]["first"]["status"], "ok", "{trace}");
    assert_eq!(trace["nodes"]["first"]["output"], "hi", "{trace}");
    assert_eq!(trace["nodes"]["second"]["status"], "failed", "{trace}");
    assert_eq!(trace["nodes"]["third"]["status"], "skipped", "{trace}");
    let error = ended.error_of("second");
    for part in says {
        assert!(
            error.contains(part),
            "`{part}` is not in the error: {error}"
        );
    }
    let id = trace["run_id"].as_str().expect("the trace has a run id");
    assert!(
        home.saved_runs().iter().any(|r| r == id),
        "run {id} is not in `runs list`"
    );
}

fn run_json(home: &Home, file: &Path, extra: &[&str]) -> Ended {
    let mut args = vec!["run", file.to_str().expect("a UTF-8 path")];
    args.extend(["--format", "json"]);
    args.extend(extra);
    run_bounded(home.pw(&args), home.path())
}

#[test]
fn a_server_that_crashes_mid_call_fails_the_node_and_keeps_the_trace() {
    let home = Home::new();
    let file = home.stdio_pipeline("crash", None);
    let ended = run_json(&home, &file, &[]);
    assert_trace_kept(
        &home,
        &ended,
        &[
            "server `faulty` closed the connection",
            "faulty: crashing in the middle of a call",
        ],
    );
    assert_server_gone(&home.pid_file());
}

#[test]
fn a_call_that_never_answers_ends_at_the_node_timeout() {
    let home = Home::new();
    let file = home.stdio_pipeline("hang", Some("1s"));
    let ended = run_json(&home, &file, &[]);
    assert_trace_kept(
        &home,
        &ended,
        &["`fault` on server `faulty` timed out after 1s"],
    );
    // It stopped reading its stdin: only a signal ends it.
    assert_server_gone(&home.pid_file());
}

#[test]
fn a_call_that_never_answers_ends_at_the_run_wide_timeout_flag() {
    let home = Home::new();
    let file = home.stdio_pipeline("hang", None);
    let ended = run_json(&home, &file, &["--timeout", "1s"]);
    assert_trace_kept(&home, &ended, &["timed out after 1s"]);
    assert_server_gone(&home.pid_file());
}

/// A hang with no timeout at all waits, as a slow tool may; Ctrl-C (and
/// the SIGTERM of a CI job's timeout) is the way out, and keeps the trace.
#[test]
fn a_call_that_never_answers_and_has_no_timeout_yields_to_a_signal() {
    for signal in ["INT", "TERM"] {
        let home = Home::new();
        let file = home.stdio_pipeline("hang", None);
        let mut cmd = home.pw(&["run", file.to_str().expect("a UTF-8 path")]);
        cmd.args(["--format", "json"]);
        let called = home.path().join("server.pid.fault");
        let ended = run_with_signal(cmd, home.path(), &called, signal);
        assert_ne!(ended.code, Some(0), "SIG{signal}: {}", ended.stderr);
        let trace = ended.trace();
        assert_eq!(
            trace["nodes"]["first"]["output"], "hi",
            "SIG{signal}: {trace}"
        );
        assert_ne!(
            trace["nodes"]["second"]["status"], "ok",
            "SIG{signal}: {trace}"
        );
        let id = trace["run_id"].as_str().expect("the trace has a run id");
        assert!(
            home.saved_runs().iter().any(|r| r == id),
            "SIG{signal}: run {id} is not in `runs list`"
        );
        assert_server_gone(&home.pid_file());
    }
}

/// Starts `cmd`, sends it `signal` once `called` exists (the server is in
/// the call), and waits for its end as [`run_bounded`] does.
fn run_with_signal(cmd: Command, dir: &Path, called: &Path, signal: &str) -> Ended {
    let running = Running::start(cmd, dir);
    while !called.exists() && running.started.elapsed() < WALL {
        std::thread::sleep(Duration::from_millis(10));
    }
    let sent = Command::new("kill")
        .args([format!("-{signal}"), running.child.id().to_string()])
        .status()
        .expect("run kill");
    assert!(sent.success(), "kill -{signal} failed");
    running.finish()
}

#[test]
fn junk_on_stdout_before_the_server_exits_is_quoted_in_the_error() {
    let home = Home::new();
    let file = home.stdio_pipeline("garbage", None);
    let ended = run_json(&home, &file, &[]);
    assert_trace_kept(
        &home,
        &ended,
        &[
            "server `faulty` closed the connection",
            "1 line to stdout that are not JSON-RPC",
            "Server listening... this line is not JSON",
        ],
    );
    assert_server_gone(&home.pid_file());
}

#[test]
fn junk_on_stdout_before_an_answer_is_skipped_and_the_call_succeeds() {
    let home = Home::new();
    let file = home.stdio_pipeline("garbage-answer", None);
    let ended = run_json(&home, &file, &[]);
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let trace = ended.trace();
    assert_eq!(trace["nodes"]["second"]["output"], "answered after garbage");
    assert_eq!(trace["nodes"]["third"]["output"], "never");
    assert_server_gone(&home.pid_file());
}

#[test]
fn an_answer_cut_off_by_the_end_of_stdout_is_named() {
    let home = Home::new();
    let file = home.stdio_pipeline("partial", None);
    let ended = run_json(&home, &file, &[]);
    assert_trace_kept(
        &home,
        &ended,
        &[
            "server `faulty` closed the connection",
            "its last message was cut off",
        ],
    );
    assert_server_gone(&home.pid_file());
}

#[test]
fn json_that_is_not_json_rpc_is_named_when_the_server_exits() {
    let home = Home::new();
    let file = home.stdio_pipeline("not-jsonrpc", None);
    let ended = run_json(&home, &file, &[]);
    // `{"hello": …}`, `[1, 2, 3]`, `42` and `"text"`: the array could be a
    // batch and is left to rmcp; the other three are not messages.
    assert_trace_kept(
        &home,
        &ended,
        &[
            "closed the connection",
            "3 lines to stdout that are not JSON-RPC",
            "the last: `\"text\"`",
        ],
    );
    assert_server_gone(&home.pid_file());
}

#[test]
fn an_answer_that_is_not_a_tool_result_fails_the_node() {
    let home = Home::new();
    let file = home.stdio_pipeline("bad-result", None);
    let ended = run_json(&home, &file, &[]);
    assert_trace_kept(
        &home,
        &ended,
        &["`fault` was answered with `\"not an object\"`, which is not a tool result"],
    );
    assert_server_gone(&home.pid_file());
}

/// An answer no JSON reader can read (bytes that are not UTF-8, a value
/// nested 200 deep, `NaN`) fails its call at once, naming the server, the
/// call and the first bad byte; the trace keeps what arrived, escaped. On
/// the code before, rmcp dropped such a line and the call waited for ever
/// (the run hung until [`WALL`]).
#[test]
fn an_answer_that_cannot_be_read_fails_its_call_at_once_and_is_kept_escaped() {
    for (mode, says, kept) in [
        ("bad-utf8", "byte 0xe9 is not UTF-8", r"caf\xe9 \xff\xfe"),
        (
            "deep",
            "nested more than 127 levels deep",
            "[[[[[[[[[[1]]]]",
        ),
        ("nan", "expected value", r#"{"score":NaN}"#),
    ] {
        let home = Home::new();
        let file = home.stdio_pipeline(mode, None);
        let started = Instant::now();
        let ended = run_json(&home, &file, &[]);
        eprintln!("{mode}: the run ended in {:?}", started.elapsed());
        assert_trace_kept(
            &home,
            &ended,
            &[
                "server `faulty` answered `tools/call fault` with a message pipewright cannot read",
                says,
                "at byte",
            ],
        );
        let trace = ended.trace();
        let received = trace["nodes"]["second"]["raw"]["unreadable"]["received"]
            .as_str()
            .unwrap_or_default();
        assert!(received.contains(kept), "{mode}: {received}");
        assert!(
            !received.chars().any(char::is_control),
            "{mode}: kept unescaped: {received:?}"
        );
        assert_eq!(
            trace["nodes"]["second"]["error_code"], "UNREADABLE_ANSWER",
            "{mode}"
        );
        assert_server_gone(&home.pid_file());
    }
}

/// A 100 MB line: read up to the limit (16 MiB), then the connection is
/// ended with a reason and a way to raise it, and memory stays bounded.
#[test]
fn a_100_mb_message_is_refused_at_the_limit_with_bounded_memory() {
    let home = Home::new();
    let file = home.stdio_pipeline("huge", None);
    let ended = run_json(&home, &file, &[]);
    eprintln!(
        "peak RSS of pipewright reading a 100 MB line: {} KiB",
        ended.peak_rss_kib
    );
    assert_trace_kept(
        &home,
        &ended,
        &[
            "talking to server `faulty` failed",
            "larger than 16 MiB",
            "PIPEWRIGHT_MAX_MESSAGE_MB=N",
        ],
    );
    // The line is dropped at 16 MiB, never held whole: far below 100 MB
    // (and its copies) even in a debug build.
    assert!(
        ended.peak_rss_kib < 256 * 1024,
        "peak RSS {} KiB",
        ended.peak_rss_kib
    );
    assert_server_gone(&home.pid_file());
}

#[test]
fn a_line_that_never_ends_is_refused_at_the_limit_and_the_server_stopped() {
    let home = Home::new();
    let file = home.stdio_pipeline("endless", None);
    let ended = run_json(&home, &file, &[]);
    assert_trace_kept(&home, &ended, &["larger than 16 MiB"]);
    // It sleeps after writing: only a signal ends it.
    assert_server_gone(&home.pid_file());
}

#[test]
fn the_message_limit_can_be_raised() {
    let home = Home::new();
    let file = home.stdio_pipeline("huge", None);
    let run = |limit: Option<&str>| {
        let mut cmd = home.pw(&["run", file.to_str().expect("a UTF-8 path"), "--no-save"]);
        cmd.env("FAULTY_HUGE_MB", "20");
        if let Some(mb) = limit {
            cmd.env("PIPEWRIGHT_MAX_MESSAGE_MB", mb);
        }
        run_bounded(cmd, home.path())
    };
    let refused = run(None);
    assert_eq!(refused.code, Some(1), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("larger than 16 MiB"),
        "{}",
        refused.stderr
    );
    let raised = run(Some("32"));
    assert_eq!(raised.code, Some(0), "{}", raised.stderr);
    assert_server_gone(&home.pid_file());
}

/// 100,000 log and progress notifications before the answer: the call
/// completes, and what is kept of them is bounded.
#[test]
fn a_notification_flood_before_the_answer_is_survived_with_bounded_memory() {
    let home = Home::new();
    let file = home.stdio_pipeline("flood", None);
    let ended = run_json(&home, &file, &["--log-level", "info"]);
    eprintln!(
        "peak RSS of pipewright through 100,000 notifications: {} KiB",
        ended.peak_rss_kib
    );
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let trace = ended.trace();
    let second = &trace["nodes"]["second"];
    assert_eq!(second["output"], "survived the flood", "{second}");
    let kept = |key: &str| second[key].as_array().map_or(0, Vec::len);
    assert!(kept("logs") <= 200 && kept("progress") <= 200, "{second}");
    assert!(
        ended.peak_rss_kib < 256 * 1024,
        "peak RSS {} KiB",
        ended.peak_rss_kib
    );
    assert_server_gone(&home.pid_file());
}

#[test]
fn a_server_that_exits_before_initialize_is_named_with_its_stderr() {
    let home = Home::new();
    let file = home.stdio_pipeline("early-exit", None);
    let file = file.to_str().expect("a UTF-8 path");
    let runs = run_bounded(home.pw(&["run", file, "--format", "json"]), home.path());
    let tools = run_bounded(home.pw(&["tools", "list", "--file", file]), home.path());
    for ended in [runs, tools] {
        // Exit 4: the server could not be reached; no node ran.
        assert_eq!(ended.code, Some(4), "{}", ended.stderr);
        for part in [
            "server `faulty` failed the MCP handshake",
            "exited",
            "before answering `initialize`",
            "faulty: cannot start: the setting FAULTY_TOKEN is missing",
        ] {
            assert!(ended.stderr.contains(part), "`{part}`: {}", ended.stderr);
        }
    }
    assert_server_gone(&home.pid_file());
}

/// A server that pages `tools/list` for ever (200 tools of 2 KB a page)
/// is stopped at the tool list's size limit, with a way to raise it; it
/// used to be read for 1000 pages, 1.1 GB, before giving up.
#[test]
fn an_endless_tool_list_is_refused_at_its_size_limit() {
    let home = Home::new();
    let file = home.stdio_pipeline("endless-tools", None);
    let file = file.to_str().expect("a UTF-8 path");
    let ended = run_bounded(home.pw(&["run", file, "--format", "json"]), home.path());
    assert_eq!(ended.code, Some(4), "{}", ended.stderr);
    for part in [
        "server `faulty` failed the MCP handshake",
        "tool list is larger than 16 MiB",
        "PIPEWRIGHT_MAX_TOOL_LIST_MB",
    ] {
        assert!(ended.stderr.contains(part), "`{part}`: {}", ended.stderr);
    }
    eprintln!("peak RSS {} KiB", ended.peak_rss_kib);
    assert_server_gone(&home.pid_file());
}

/// The faulty HTTP server in `mode`, killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(home: &Home, mode: &str) -> HttpServer {
        let script = common::root().join("tests/interop/faulty_http_server.py");
        let port_file = home.path().join(format!("{mode}.port"));
        let mut child = Command::new(common::python())
            .arg(script)
            .arg(mode)
            .arg(&port_file)
            .stdin(Stdio::null())
            .spawn()
            .expect("start the HTTP server");
        let started = Instant::now();
        let port = loop {
            if let Ok(port) = std::fs::read_to_string(&port_file) {
                break port;
            }
            if started.elapsed() > WALL || child.try_wait().ok().flatten().is_some() {
                let _ = child.kill();
                panic!("the HTTP server did not start");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{}/mcp", port.trim()),
        }
    }

    fn pipeline(&self, home: &Home) -> PathBuf {
        home.pipeline(&format!("servers:\n  x:\n    url: {}\n", self.url), None)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_http_500_to_a_call_fails_the_node_and_keeps_the_trace() {
    let home = Home::new();
    let server = HttpServer::start(&home, "500-call");
    let file = server.pipeline(&home);
    let ended = run_json(&home, &file, &[]);
    assert_trace_kept(
        &home,
        &ended,
        &["talking to server `x` failed: the server answered HTTP 500"],
    );
}

#[test]
fn an_http_500_to_initialize_is_named_by_run_and_tools_list() {
    let home = Home::new();
    let server = HttpServer::start(&home, "500-all");
    let file = server.pipeline(&home);
    let file = file.to_str().expect("a UTF-8 path");
    let runs = run_bounded(home.pw(&["run", file, "--format", "json"]), home.path());
    let tools = run_bounded(home.pw(&["tools", "list", "--file", file]), home.path());
    for ended in [runs, tools] {
        assert_eq!(ended.code, Some(4), "{}", ended.stderr);
        assert!(
            ended.stderr.contains("server `x` failed the MCP handshake")
                && ended.stderr.contains("the server answered HTTP 500"),
            "{}",
            ended.stderr
        );
    }
}

#[test]
fn an_event_stream_cut_mid_answer_fails_the_node_without_a_hang() {
    let home = Home::new();
    let server = HttpServer::start(&home, "cut-stream");
    let file = server.pipeline(&home);
    let ended = run_json(&home, &file, &[]);
    assert_trace_kept(
        &home,
        &ended,
        &["talking to server `x` failed: the response stream of `fault` ended before its answer"],
    );
}

#[test]
fn an_http_event_over_the_limit_says_so_and_how_to_raise_it() {
    let home = Home::new();
    let server = HttpServer::start(&home, "huge-event");
    let file = server.pipeline(&home);
    let ended = run_json(&home, &file, &[]);
    assert_trace_kept(
        &home,
        &ended,
        &[
            "larger than 16 MiB (one event of its event stream)",
            "PIPEWRIGHT_MAX_MESSAGE_MB",
        ],
    );
    let error = ended.error_of("second");
    assert!(!error.contains("cut it short"), "{error}");
}

/// An event whose answer cannot be read fails its call at once, over
/// HTTP as over stdio.
#[test]
fn an_http_answer_that_cannot_be_read_fails_its_call_at_once() {
    for (mode, says) in [
        ("nan-event", "expected value"),
        ("bad-utf8-event", "is not UTF-8"),
    ] {
        let home = Home::new();
        let server = HttpServer::start(&home, mode);
        let file = server.pipeline(&home);
        let ended = run_json(&home, &file, &[]);
        assert_trace_kept(&home, &ended, &["cannot read", says, "at byte"]);
    }
}

#[test]
fn a_100_mb_http_answer_is_refused_at_the_limit() {
    let home = Home::new();
    let server = HttpServer::start(&home, "huge-json");
    let file = server.pipeline(&home);
    let ended = run_json(&home, &file, &[]);
    eprintln!(
        "peak RSS of pipewright refusing a 100 MB HTTP body: {} KiB",
        ended.peak_rss_kib
    );
    assert_trace_kept(&home, &ended, &["exceeded the maximum size"]);
    assert!(
        ended.peak_rss_kib < 256 * 1024,
        "peak RSS {} KiB",
        ended.peak_rss_kib
    );
}
