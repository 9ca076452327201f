//! The process side of the security sweep: signals during a fan-out
//! (SIGINT and SIGTERM cancel, save and stop the servers; after SIGKILL the
//! servers still go and the run is listed as interrupted), ten `run`s at
//! once sharing one history, and run ids that try to reach files outside
//! the history directory. The servers are the real demo server over stdio.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

mod common;

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pipewright"))
}

/// A temp dir holding the data dir and every XDG dir a run could read.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().expect("a temp dir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn data(&self) -> PathBuf {
        self.path().join("data")
    }

    fn runs_dir(&self) -> PathBuf {
        self.data().join("runs")
    }

    fn pw(&self) -> Command {
        let mut c = common::pipewright_in(self.path());
        c.current_dir(self.path())
            .env("XDG_CONFIG_HOME", self.path().join("xdg/config"))
            .env("XDG_DATA_HOME", self.path().join("xdg/data"))
            .env("XDG_STATE_HOME", self.path().join("xdg/state"))
            .env("NO_COLOR", "1")
            .stdin(Stdio::null());
        c
    }

    fn output(&self, args: &[&str]) -> Output {
        self.pw().args(args).output().expect("pipewright runs")
    }

    /// The saved runs, newest first, as `runs list --format json` gives them.
    fn listed(&self) -> Vec<Value> {
        let out = self.output(&["runs", "list", "--format", "json", "--limit", "1000"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        match serde_json::from_slice(&out.stdout) {
            Ok(Value::Array(rows)) => rows,
            other => panic!("runs list --format json: {other:?}"),
        }
    }

    /// A saved run as `runs show ID --format json` gives it.
    fn shown(&self, id: &str) -> Value {
        let out = self.output(&["runs", "show", id, "--format", "json"]);
        assert!(
            out.status.success(),
            "runs show {id}: {}",
            text(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("runs show prints JSON")
    }

    fn files_ending(&self, suffix: &str) -> Vec<String> {
        std::fs::read_dir(self.runs_dir())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(suffix))
            .collect()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

// ---------------------------------------------------------------------
// Signals during a fan-out
// ---------------------------------------------------------------------

/// A node that finishes, a mock, then twenty 5-second `slow` calls two at
/// a time: fifty seconds of calls if nothing stops them.
fn fan_out(home: &Home) -> PathBuf {
    let items: Vec<String> = (1..=20).map(|i| i.to_string()).collect();
    let file = home.path().join("fan.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  demo: {{command: {pw}, args: [demo-server]}}\ncompositions:\n  - name: fan\n    nodes:\n      - id: first\n        server: demo\n        tool: echo\n        args: {{message: hello}}\n      - id: items\n        needs: [first]\n        mock: {{result: [{items}]}}\n      - id: wait\n        needs: [items]\n        server: demo\n        for_each: \"${{items}}\"\n        max_concurrency: 2\n        tool: slow\n        args: {{ms: 5000}}\n",
            pw = bin().display(),
            items = items.join(", ")
        ),
    )
    .expect("write the pipeline");
    file
}

/// The processes whose parent is `pid` (from `/proc/*/stat`).
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            // Field 4, after the command in parentheses and the state.
            stat.rsplit_once(") ")
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok())
                == Some(pid)
        })
        .collect()
}

/// Exists and has not exited (a zombie only waits to be reaped).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'))
    })
}

/// Waits (generously) for `pids` to be gone; returns those still there.
fn still_alive_after(pids: &[u32], wait: Duration) -> Vec<u32> {
    let deadline = Instant::now() + wait;
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `pipewright run` of the fan-out, caught once its servers run and the
/// fan-out's calls are in flight.
struct Running {
    child: Child,
    servers: Vec<u32>,
    stderr: PathBuf,
}

fn start_fan_out(home: &Home) -> Running {
    let file = fan_out(home);
    let stderr = home.path().join("stderr.txt");
    let child = home
        .pw()
        .arg("run")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).expect("stderr file"))
        .spawn()
        .expect("pipewright run starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    // `items` is printed when it finishes, just before the fan-out starts.
    while !std::fs::read_to_string(&stderr).is_ok_and(|s| s.contains("✓ items")) {
        assert!(
            Instant::now() < deadline,
            "the fan-out never started: {}",
            std::fs::read_to_string(&stderr).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let servers = children_of(child.id());
    assert!(!servers.is_empty(), "the demo server is not a child");
    Running {
        child,
        servers,
        stderr,
    }
}

impl Running {
    fn signal(&self, signal: Signal) {
        let pid = i32::try_from(self.child.id()).expect("a pid");
        kill(Pid::from_raw(pid), signal).expect("the signal is sent");
    }

    /// Waits for pipewright to exit; a run that ignores the signal is
    /// killed after `wait` (well under the fifty seconds of calls) and
    /// fails the test.
    fn exit_code(&mut self, wait: Duration) -> Option<i32> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "pipewright ran on for {wait:?} after the signal: {}",
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

/// The one run a signal stopped: its list row and its trace.
fn the_stopped_run(home: &Home) -> (Value, Value) {
    let rows = home.listed();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let id = rows[0]["id"].as_str().expect("an id").to_owned();
    (rows[0].clone(), home.shown(&id))
}

fn node_status(trace: &Value, id: &str) -> String {
    trace["nodes"][id]["status"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A signal that cancels: exit `code`, the servers gone, the run saved as
/// cancelled with the nodes that had finished, no record in progress left.
fn a_signal_cancels_the_run(signal: Signal, code: i32) {
    let home = Home::new();
    let mut run = start_fan_out(&home);
    run.signal(signal);
    assert_eq!(run.exit_code(Duration::from_secs(20)), Some(code));
    let left = still_alive_after(&run.servers, Duration::from_secs(10));
    assert!(left.is_empty(), "server processes left behind: {left:?}");
    let err = run.stderr();
    assert!(err.contains("cancelling…"), "{err}");
    let (row, trace) = the_stopped_run(&home);
    assert_eq!(row["status"], "cancelled", "{row:#?}");
    assert_eq!(trace["composition"]["status"], "cancelled");
    assert_eq!(node_status(&trace, "first"), "ok", "{trace:#?}");
    assert_eq!(node_status(&trace, "items"), "ok");
    assert_eq!(node_status(&trace, "wait"), "cancelled");
    assert_eq!(trace["nodes"]["first"]["output"], "hello");
    assert!(home.files_ending(".running").is_empty());
}

#[test]
fn sigint_during_a_fan_out_cancels_saves_the_finished_nodes_stops_the_servers_and_exits_130() {
    a_signal_cancels_the_run(Signal::SIGINT, 130);
}

#[test]
fn sigterm_during_a_fan_out_cancels_saves_the_finished_nodes_stops_the_servers_and_exits_143() {
    a_signal_cancels_the_run(Signal::SIGTERM, 143);
}

#[test]
fn a_second_signal_quits_at_once_and_the_servers_still_go() {
    let home = Home::new();
    let mut run = start_fan_out(&home);
    run.signal(Signal::SIGTERM);
    run.signal(Signal::SIGINT);
    let code = run.exit_code(Duration::from_secs(20));
    // The second signal wins when it comes before the cancel is done.
    assert!(matches!(code, Some(130 | 143)), "{code:?}");
    // Their stdin closed; the demo server lets its calls drain (5 s at most).
    let left = still_alive_after(&run.servers, Duration::from_secs(30));
    assert!(left.is_empty(), "server processes left behind: {left:?}");
    let rows = home.listed();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let status = rows[0]["status"].as_str().unwrap_or_default();
    assert!(
        status == "cancelled" || status == "interrupted",
        "{rows:#?}"
    );
}

#[test]
fn after_sigkill_the_servers_exit_and_the_run_is_listed_as_interrupted_with_its_finished_nodes() {
    let home = Home::new();
    let mut run = start_fan_out(&home);
    run.signal(Signal::SIGKILL);
    let _ = run.exit_code(Duration::from_secs(20));
    // Nothing ran in pipewright: the servers see their stdin close.
    let left = still_alive_after(&run.servers, Duration::from_secs(30));
    assert!(left.is_empty(), "server processes left behind: {left:?}");
    let (row, trace) = the_stopped_run(&home);
    assert_eq!(row["status"], "interrupted", "{row:#?}");
    assert_eq!(trace["composition"]["status"], "interrupted");
    assert_eq!(node_status(&trace, "first"), "ok", "{trace:#?}");
    assert_eq!(node_status(&trace, "items"), "ok");
    assert!(trace["nodes"].get("wait").is_none(), "{trace:#?}");
    assert_eq!(
        trace["completed_step_ids"],
        serde_json::json!(["first", "items"])
    );
    let table = home.output(&["runs", "list"]);
    assert!(has(&table.stdout, "interrupted"));
    // It is a run like any other: shown, diffed, pruned.
    let id = row["id"].as_str().unwrap_or_default();
    let shown = home.output(&["runs", "show", id]);
    assert!(shown.status.success(), "{}", text(&shown.stderr));
    assert!(has(&shown.stdout, "status interrupted"));
    let pruned = home.output(&["runs", "prune", "--keep", "0"]);
    assert!(pruned.status.success(), "{}", text(&pruned.stderr));
    assert!(home.listed().is_empty());
    assert!(home.files_ending(".running").is_empty());
}

fn has(bytes: &[u8], needle: &str) -> bool {
    String::from_utf8_lossy(bytes).contains(needle)
}

#[test]
fn a_signal_while_the_servers_start_stops_them_and_saves_nothing() {
    let home = Home::new();
    // A server that never answers `initialize`, and says who it is.
    let pid_file = home.path().join("server.pid");
    let script = home.path().join("mute.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > {}\nexec sleep 60\n",
            pid_file.display()
        ),
    )
    .expect("write the server");
    let file = home.path().join("mute.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  mute: {{command: sh, args: [{}]}}\npipe:\n  - id: a\n    tool: echo\n    args: {{message: hi}}\n",
            script.display()
        ),
    )
    .expect("write the pipeline");
    let stderr = home.path().join("stderr.txt");
    let child = home
        .pw()
        .arg("run")
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).expect("stderr file"))
        .spawn()
        .expect("pipewright run starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    let server = loop {
        let pid = std::fs::read_to_string(&pid_file).unwrap_or_default();
        if let Ok(pid) = pid.trim().parse::<u32>() {
            break pid;
        }
        assert!(Instant::now() < deadline, "the server never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut run = Running {
        child,
        servers: vec![server],
        stderr,
    };
    run.signal(Signal::SIGTERM);
    assert_eq!(run.exit_code(Duration::from_secs(20)), Some(143));
    assert!(run.stderr().contains("stopped before the run began"));
    let left = still_alive_after(&run.servers, Duration::from_secs(10));
    assert!(left.is_empty(), "server processes left behind: {left:?}");
    assert!(home.listed().is_empty());
}

// ---------------------------------------------------------------------
// Ten runs at once, one history
// ---------------------------------------------------------------------

fn mock_pipeline(home: &Home) -> PathBuf {
    let file = home.path().join("mock.yml");
    std::fs::write(
        &file,
        "pipe:\n  - id: a\n    mock: {result: {n: 1}}\n  - id: b\n    mock: {result: [1, 2]}\n",
    )
    .expect("write the pipeline");
    file
}

/// Starts ten `run`s of `file` at once and waits for them; every one must
/// exit 0.
fn ten_at_once(home: &Home, file: &Path, max_runs: Option<&str>) {
    let children: Vec<Child> = (0..10)
        .map(|_| {
            let mut c = home.pw();
            if let Some(cap) = max_runs {
                c.env("PIPEWRIGHT_MAX_RUNS", cap);
            }
            c.arg("run")
                .arg(file)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("pipewright run starts")
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().expect("wait");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
}

/// Every listed run once, each one loads, and the directory holds exactly
/// their traces (no trace the index lost, no index line without a trace).
fn history_is_whole(home: &Home, expected: usize) {
    let rows = home.listed();
    let mut ids: Vec<&str> = rows.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(ids.len(), expected, "{rows:#?}");
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), expected, "an id is listed twice: {rows:#?}");
    for id in &ids {
        let out = home.output(&["runs", "show", id]);
        assert!(
            out.status.success(),
            "runs show {id}: {}",
            text(&out.stderr)
        );
    }
    let mut traces = home.files_ending(".json");
    traces.sort_unstable();
    assert_eq!(traces.len(), expected, "trace files: {traces:?}");
    assert!(home.files_ending(".running").is_empty());
    assert!(home.files_ending(".tmp").is_empty());
}

#[test]
fn ten_runs_at_once_are_each_listed_once_and_each_loads() {
    let home = Home::new();
    let file = mock_pipeline(&home);
    ten_at_once(&home, &file, None);
    history_is_whole(&home, 10);
    let index = std::fs::read_to_string(home.runs_dir().join("index.jsonl")).unwrap_or_default();
    assert_eq!(index.lines().count(), 10, "{index}");
}

#[test]
fn ten_runs_at_once_over_a_small_cap_prune_without_losing_or_orphaning_a_run() {
    let home = Home::new();
    let file = mock_pipeline(&home);
    // Each save past the cap rewrites the index while others append to it.
    for _ in 0..3 {
        ten_at_once(&home, &file, Some("3"));
        history_is_whole(&home, 3);
    }
}

// ---------------------------------------------------------------------
// Run ids that point elsewhere
// ---------------------------------------------------------------------

const DECOY: &str = "DECOY-5e1f-never-print-me";

/// A history with two runs, and decoys outside it: a text file, and a
/// file that would parse as a trace.
fn history_and_decoys(home: &Home) -> (PathBuf, PathBuf) {
    let file = mock_pipeline(home);
    for _ in 0..2 {
        let out = home.pw().arg("run").arg(&file).output().expect("run");
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let decoy = home.path().join("decoy.txt");
    std::fs::write(&decoy, format!("{DECOY}\n")).expect("decoy");
    let trace = home.path().join("decoy.json");
    std::fs::write(
        &trace,
        serde_json::json!({
            "run_id": "20200101-000000-dead",
            "file": decoy.display().to_string(),
            "composition": {"name": DECOY, "status": "completed"},
            "nodes": {}, "output": DECOY,
        })
        .to_string(),
    )
    .expect("decoy trace");
    (decoy, trace)
}

/// Ids that name no run: paths out of the history directory, names of
/// files in it, control characters, and lengths no id has.
fn hostile_ids(decoy: &Path, trace: &Path) -> Vec<String> {
    let mut ids: Vec<String> = [
        "../../etc/passwd",
        "/etc/passwd",
        "../decoy.txt",
        "../../decoy.json",
        "a/b",
        "..",
        ".",
        "",
        "/",
        "20261125/../../decoy.txt",
        "index.jsonl",
        ".lock",
        "held",
        "*",
        "%2e%2e%2fdecoy.txt",
        "\u{1b}]0;pwned\u{7}",
        "\u{1}\u{7f}",
        "latest~99999999999999999999999",
        "latest~-1",
        "latest/../..",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    ids.push(decoy.display().to_string());
    ids.push(trace.display().to_string());
    ids.push("x".repeat(5000));
    ids.push("../".repeat(400) + "etc/passwd");
    ids
}

/// A refused id: exit 2, one `error:` line on stderr that quotes at most
/// a short id, nothing on stdout, nothing of the decoys or of /etc/passwd.
fn refused(out: &Output, what: &str) {
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
    assert!(stdout.is_empty(), "{what}: {stdout}");
    assert!(stderr.starts_with("error: "), "{what}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
    assert!(stderr.len() < 400, "{what}: the whole id is echoed");
    assert!(!stderr.contains(DECOY), "{what}: {stderr}");
    assert!(!stderr.contains("root:"), "{what}: {stderr}");
    let controls: Vec<char> = stderr
        .chars()
        .filter(|c| c.is_control() && *c != '\n')
        .collect();
    assert!(controls.is_empty(), "{what}: {controls:?}");
}

#[test]
fn ids_that_point_outside_the_history_name_no_run_in_show_diff_and_export() {
    let home = Home::new();
    let (decoy, trace) = history_and_decoys(&home);
    let ids = hostile_ids(&decoy, &trace);
    let mut tried = 0;
    for id in &ids {
        let shown: String = id.chars().take(40).collect();
        let cases: [Vec<&str>; 4] = [
            vec!["runs", "show", id, "--format", "json"],
            vec!["runs", "diff", id, "latest"],
            vec!["runs", "diff", "latest", id],
            vec!["runs", "export", id, "--otlp", "-"],
        ];
        for args in cases {
            refused(&home.output(&args), &format!("{} {shown:?}", args[1]));
            tried += 1;
        }
    }
    assert_eq!(tried, ids.len() * 4);
    // The history is as it was.
    history_is_whole(&home, 2);
    assert_eq!(
        std::fs::read_to_string(&decoy).unwrap_or_default(),
        format!("{DECOY}\n")
    );
}

#[test]
fn an_index_line_pointing_outside_the_history_is_ignored_and_never_pruned() {
    let home = Home::new();
    let (decoy, trace) = history_and_decoys(&home);
    let index = home.runs_dir().join("index.jsonl");
    let mut lines = std::fs::read_to_string(&index).unwrap_or_default();
    for (n, path) in [
        "../../decoy.json".to_owned(),
        trace.display().to_string(),
        "../../decoy.txt".to_owned(),
        decoy.display().to_string(),
    ]
    .iter()
    .enumerate()
    {
        lines.push_str(
            &serde_json::json!({
                "id": format!("20200101-00000{n}-dead"),
                "started_ns": 1,
                "composition": "tampered",
                "status": "completed",
                "path": path,
            })
            .to_string(),
        );
        lines.push('\n');
    }
    std::fs::write(&index, lines).expect("tamper with the index");
    assert_eq!(home.listed().len(), 2, "tampered lines are listed");
    for n in 0..4 {
        refused(
            &home.output(&["runs", "show", &format!("20200101-00000{n}-dead")]),
            "a tampered index line",
        );
    }
    let out = home.output(&["runs", "prune", "--keep", "0"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(decoy.exists() && trace.exists(), "prune removed a decoy");
    assert!(home.listed().is_empty());
}

#[test]
fn a_saved_run_whose_file_is_elsewhere_shows_nothing_of_that_file() {
    let home = Home::new();
    let (decoy, _) = history_and_decoys(&home);
    // The trace names the file it ran; `runs show` reads it for the DAG.
    let runs = home.runs_dir();
    let name = home.files_ending(".json").pop().expect("a trace");
    let path = runs.join(name);
    let mut trace: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default()).expect("a trace");
    trace["file"] = Value::from(decoy.display().to_string());
    std::fs::write(&path, trace.to_string()).expect("rewrite the trace");
    let id = trace["run_id"].as_str().unwrap_or_default().to_owned();
    for format in ["text", "json", "junit"] {
        let out = home.output(&["runs", "show", &id, "--format", format]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(!has(&out.stdout, DECOY), "{format}");
        assert!(!has(&out.stderr, DECOY), "{format}");
    }
}

#[test]
fn an_empty_id_names_no_run_even_when_there_is_only_one() {
    let home = Home::new();
    let file = mock_pipeline(&home);
    let out = home.pw().arg("run").arg(&file).output().expect("run");
    assert!(out.status.success(), "{}", text(&out.stderr));
    // As a prefix, "" would match the one run there is.
    refused(&home.output(&["runs", "show", ""]), "runs show \"\"");
    refused(
        &home.output(&["runs", "diff", "", "latest"]),
        "runs diff \"\"",
    );
    refused(
        &home.output(&["runs", "export", "", "--otlp", "-"]),
        "runs export \"\"",
    );
}

/// With `--shutdown-grace 20s` and a server that ignores the end of its
/// stdin and SIGTERM, shutting the servers down takes 40 s (pipewright
/// gave up after 10). A first SIGINT cancels the run, which is saved and
/// reported; a second one while the servers are shut down quits at once
/// (it used to wait those 10 s), with 130, and the server's process group
/// goes with it.
#[test]
fn a_second_sigint_while_the_servers_shut_down_quits_at_once_and_kills_them() {
    let home = Home::new();
    let file = home.path().join("stubborn.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  stubborn:\n    command: sh\n    args: [\"-c\", \"trap '' TERM; \\\"$0\\\" demo-server; exec sleep 600\", \"{pw}\"]\npipe:\n  - id: first\n    tool: echo\n    args: {{message: hello}}\n  - id: wait\n    tool: slow\n    args: {{ms: 60000}}\n",
            pw = bin().display()
        ),
    )
    .expect("write the pipeline");
    let stdout = home.path().join("stdout.txt");
    let stderr = home.path().join("stderr.txt");
    let child = home
        .pw()
        .args(["run", "--shutdown-grace", "20s"])
        .arg(&file)
        .stdout(std::fs::File::create(&stdout).expect("stdout file"))
        .stderr(std::fs::File::create(&stderr).expect("stderr file"))
        .spawn()
        .expect("pipewright run starts");
    let mut run = Running {
        servers: Vec::new(),
        child,
        stderr: stderr.clone(),
    };
    let wait_for = |run: &mut Running, path: &Path, what: &str| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !std::fs::read_to_string(path).is_ok_and(|s| s.contains(what)) {
            let ended = run.child.try_wait().expect("wait");
            assert!(
                ended.is_none() && Instant::now() < deadline,
                "no `{what}` in {} ({ended:?}): {}",
                path.display(),
                run.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for(&mut run, &stderr, "✓ first");
    run.servers = children_of(run.child.id());
    assert!(!run.servers.is_empty(), "the server is not a child");
    run.signal(Signal::SIGINT);
    // The report is printed once the run is saved, before the shutdown.
    wait_for(&mut run, &stdout, "ran 1 composition(s)");
    assert!(
        run.servers.iter().all(|&p| alive(p)),
        "the server is still being shut down"
    );
    run.signal(Signal::SIGINT);
    // Well under the 10 s the shutdown was cut to, let alone its 40 s.
    assert_eq!(run.exit_code(Duration::from_secs(5)), Some(130));
    let left = still_alive_after(&run.servers, Duration::from_secs(5));
    assert!(left.is_empty(), "server processes left behind: {left:?}");
    let rows = home.listed();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["status"], "cancelled", "{rows:#?}");
}
