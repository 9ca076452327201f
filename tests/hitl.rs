//! Servers that turn to a person mid-chain, for real: an MCP server built
//! with the official Python SDK (`tests/interop/hitl_server.py`, in the venv
//! `.ci/run` makes) asks for forms, URLs and model completions, reports
//! progress, logs, and changes its tool list, while `pipewright run` answers
//! from `--answers`, a provider, or nobody — and the trace and cassette keep
//! every question and reply.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use assert_cmd::Command;
use serde_json::{Value, json};

mod common;
use common::{python, root};

/// A pipeline file on the SDK server with `steps` as its `pipe:`.
fn pipeline(dir: &Path, extra: &str, steps: &str) -> PathBuf {
    let file = dir.join("flow.yml");
    let server = root().join("tests/interop/hitl_server.py");
    std::fs::write(
        &file,
        format!(
            "servers:\n  hitl:\n    command: {}\n    args: [{}]\n{extra}pipe:\n{steps}",
            python().display(),
            server.display()
        ),
    )
    .expect("write the pipeline");
    file
}

const SIGNUP: &str = "  - id: who\n    tool: signup\n    args: {reason: \"beta\"}\n";

/// Runs `pipewright run FILE ARGS… --format json` off a terminal; the
/// trace and the exit code.
fn run(file: &Path, args: &[&str]) -> (Value, i32, String) {
    let mut all = vec!["--no-save"];
    all.extend_from_slice(args);
    let (trace, code, _, stderr) = invoke(file, &all, &[]);
    (trace, code, stderr)
}

/// `pipewright run FILE ARGS… --format json` with `envs` set and the data
/// directory beside FILE: the trace, the exit code, stdout and stderr.
fn invoke(file: &Path, args: &[&str], envs: &[(&str, &str)]) -> (Value, i32, String, String) {
    let out = Command::from_std(common::pipewright())
        .arg("run")
        .arg(file)
        .args(["--format", "json"])
        .args(args)
        .envs(envs.iter().copied())
        .env("PIPEWRIGHT_DATA_DIR", file.parent().expect("dir"))
        .env(
            "PIPEWRIGHT_CONFIG_DIR",
            file.parent().expect("dir").join("config"),
        )
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let trace: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a trace ({e}):\n{stdout}\n{stderr}"));
    (trace, out.status.code().unwrap_or(-1), stdout, stderr)
}

fn answers(dir: &Path, text: &str) -> String {
    let p = dir.join("answers.yml");
    std::fs::write(&p, text).expect("write answers");
    p.display().to_string()
}

#[test]
fn a_form_is_accepted_from_the_answers_file_and_the_chain_uses_the_value() {
    let dir = tempfile::tempdir().expect("dir");
    let steps = format!(
        "{SIGNUP}  - id: hello\n    tool: summarize\n    args: {{text: \"${{who.name}} is ${{who.age}}\"}}\n"
    );
    let file = pipeline(dir.path(), "", &steps);
    let a = answers(
        dir.path(),
        "who:\n  - accept: {name: Ada, age: 36, plan: pro}\nhello:\n  - sample: \"Ada, 36, signed up.\"\n",
    );
    let (trace, code, stderr) = run(&file, &["--answers", &a]);
    assert_eq!(code, 0, "{stderr}\n{trace:#}");
    let who = &trace["nodes"]["who"];
    assert_eq!(
        who["output"],
        json!({"action": "accept", "name": "Ada", "age": 36, "plan": "pro"})
    );
    let asked = &who["interactions"][0];
    assert_eq!(asked["kind"], "elicitation");
    assert_eq!(asked["server"], "hitl");
    assert_eq!(asked["by"], "answers");
    assert_eq!(asked["request"]["message"], "Sign up (beta)");
    assert_eq!(
        asked["request"]["requestedSchema"]["required"],
        json!(["name", "age"])
    );
    assert_eq!(
        asked["reply"],
        json!({"action": "accept", "content": {"name": "Ada", "age": 36, "plan": "pro"}})
    );
    // The sampling request saw the typed value, and the reply went back.
    let hello = &trace["nodes"]["hello"];
    assert_eq!(
        hello["output"],
        json!({"summary": "Ada, 36, signed up.", "model": "human"})
    );
    let sampled = &hello["interactions"][0];
    assert_eq!(sampled["kind"], "sampling");
    assert_eq!(
        sampled["request"]["messages"][0]["content"]["text"],
        "Summarize: Ada is 36"
    );
    assert_eq!(
        sampled["request"]["systemPrompt"],
        "You write one-line summaries."
    );
}

#[rstest::rstest]
#[case::decline("decline")]
#[case::cancel("cancel")]
fn a_form_declined_or_cancelled_reaches_the_server_as_such(#[case] action: &str) {
    let dir = tempfile::tempdir().expect("dir");
    let file = pipeline(dir.path(), "", SIGNUP);
    let a = answers(dir.path(), &format!("who:\n  - {action}\n"));
    let (trace, code, stderr) = run(&file, &["--answers", &a]);
    assert_eq!(code, 0, "{stderr}");
    let who = &trace["nodes"]["who"];
    assert_eq!(who["output"], json!({"action": action}));
    assert_eq!(who["interactions"][0]["reply"], json!({"action": action}));
    assert_eq!(who["interactions"][0]["by"], "answers");
    // The server logged what it got; the log is kept with the node.
    let logs: Vec<String> = who["logs"]
        .as_array()
        .expect("logs")
        .iter()
        .map(|l| l["data"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        logs,
        ["signup asked: beta".to_owned(), format!("signup: {action}")]
    );
}

#[test]
fn an_answer_that_does_not_fit_the_form_is_not_sent() {
    let dir = tempfile::tempdir().expect("dir");
    let file = pipeline(dir.path(), "", SIGNUP);
    let a = answers(dir.path(), "'*':\n  - accept: {name: Ada, age: old}\n");
    let (trace, _, stderr) = run(&file, &["--answers", &a]);
    let asked = &trace["nodes"]["who"]["interactions"][0];
    assert_eq!(asked["reply"], json!({"action": "cancel"}), "{stderr}");
    let why = asked["error"].as_str().unwrap_or_default();
    assert!(why.contains("age") && why.contains("does not fit"), "{why}");
    assert_eq!(trace["nodes"]["who"]["output"], json!({"action": "cancel"}));
}

#[test]
fn off_a_terminal_with_no_answers_questions_are_declined() {
    let dir = tempfile::tempdir().expect("dir");
    let steps = format!(
        "{SIGNUP}  - id: s\n    tool: summarize\n    args: {{text: x}}\n    on_error: continue\n"
    );
    let file = pipeline(dir.path(), "", &steps);
    let (trace, _, stderr) = run(&file, &[]);
    let who = &trace["nodes"]["who"];
    assert_eq!(
        who["output"],
        json!({"action": "decline"}),
        "{stderr}\n{trace:#}"
    );
    assert_eq!(who["interactions"][0]["by"], "nobody");
    // A declined sampling request is the spec's "user rejected" error.
    let s = &trace["nodes"]["s"];
    assert_eq!(s["status"], "failed", "{s:#}");
    assert!(
        s["error"]
            .as_str()
            .unwrap_or_default()
            .contains("declined the sampling request"),
        "{s:#}"
    );
    assert_eq!(s["interactions"][0]["reply"], json!({"action": "decline"}));
}

#[test]
fn a_url_question_is_accepted_without_content() {
    let dir = tempfile::tempdir().expect("dir");
    let file = pipeline(
        dir.path(),
        "",
        "  - id: link\n    tool: open_link\n    args: {}\n",
    );
    let a = answers(dir.path(), "link:\n  - accept\n");
    let (trace, _, stderr) = run(&file, &["--answers", &a]);
    let link = &trace["nodes"]["link"];
    assert_eq!(link["output"], json!({"action": "accept"}), "{stderr}");
    assert_eq!(link["interactions"][0]["request"]["mode"], "url");
    assert_eq!(
        link["interactions"][0]["request"]["url"],
        "http://127.0.0.1:9/confirm"
    );
}

#[test]
fn progress_and_logs_are_kept_in_the_trace_and_log_level_reaches_the_server() {
    let dir = tempfile::tempdir().expect("dir");
    let file = pipeline(
        dir.path(),
        "",
        "  - id: c\n    tool: count\n    args: {n: 3}\n",
    );
    let (trace, code, stderr) = run(&file, &[]);
    assert_eq!(code, 0, "{stderr}");
    let c = &trace["nodes"]["c"];
    assert_eq!(
        c["progress"],
        json!([
            {"progress": 1.0, "total": 3.0, "message": "step 1 of 3"},
            {"progress": 2.0, "total": 3.0, "message": "step 2 of 3"},
            {"progress": 3.0, "total": 3.0, "message": "step 3 of 3"}
        ])
    );
    let levels = |c: &Value| -> Vec<(String, String)> {
        c["logs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|l| {
                (
                    l["level"].as_str().unwrap_or_default().to_owned(),
                    l["data"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(
        levels(c),
        [
            ("debug".into(), "tick 1".into()),
            ("debug".into(), "tick 2".into()),
            ("debug".into(), "tick 3".into()),
            ("info".into(), "counted to 3".into())
        ]
    );
    // `--log-level info`: the server is told, and its debug lines stop.
    let (trace, _, _) = run(&file, &["--log-level", "info"]);
    assert_eq!(
        levels(&trace["nodes"]["c"]),
        [("info".to_owned(), "counted to 3".to_owned())]
    );
}

#[test]
fn a_changed_tool_list_is_read_again_before_the_next_node() {
    let dir = tempfile::tempdir().expect("dir");
    let file = pipeline(
        dir.path(),
        "",
        "  - id: u\n    tool: unlock\n    args: {}\n  - id: s\n    tool: summarize\n    args: {text: x}\n",
    );
    let out = Command::from_std(common::pipewright_in(dir.path()))
        .args(["run", "--no-save"])
        .arg(&file)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the tool list changed: added hitl/extra; removed hitl/summarize"),
        "{stderr}"
    );
    assert!(
        stderr.contains("no longer offers `summarize`"),
        "{stderr}\n{stdout}"
    );
}

#[test]
fn a_replay_answers_the_same_way_with_no_server_and_no_person() {
    let dir = tempfile::tempdir().expect("dir");
    let steps = format!(
        "{SIGNUP}  - id: hello\n    tool: summarize\n    args: {{text: \"${{who.name}}\"}}\n  - id: c\n    tool: count\n    args: {{n: 2}}\n"
    );
    let file = pipeline(dir.path(), "", &steps);
    let a = answers(
        dir.path(),
        "who:\n  - accept: {name: Grace, age: 85}\nhello:\n  - sample: {text: \"Grace.\", model: typed}\n",
    );
    let cassette = dir.path().join("cassette.json");
    let c = cassette.display().to_string();
    let (live, code, stderr) = run(&file, &["--answers", &a, "--record", &c]);
    assert_eq!(code, 0, "{stderr}");
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&cassette).expect("cassette")).expect("json");
    let calls = recorded["calls"].as_array().expect("calls");
    let signup = calls
        .iter()
        .find(|e| e["tool"] == "signup")
        .expect("signup recorded");
    assert_eq!(
        signup["interactions"][0]["reply"]["content"],
        json!({"name": "Grace", "age": 85, "plan": "free"})
    );
    assert_eq!(signup["logs"][0]["data"], "signup asked: beta");
    let count = calls.iter().find(|e| e["tool"] == "count").expect("count");
    assert_eq!(count["progress"].as_array().map(Vec::len), Some(2));

    // No answers file, and a server that cannot start: the cassette answers.
    let broken = pipeline(dir.path(), "", &steps);
    let text = std::fs::read_to_string(&broken)
        .expect("read")
        .replace(&python().display().to_string(), "/nonexistent/python");
    std::fs::write(&broken, text).expect("write");
    let (replayed, code, stderr) = run(&broken, &["--replay", &c]);
    assert_eq!(code, 0, "{stderr}");
    for id in ["who", "hello", "c"] {
        let (l, r) = (&live["nodes"][id], &replayed["nodes"][id]);
        assert_eq!(r["replayed"], true, "{id}");
        for key in ["output", "interactions", "logs", "progress"] {
            assert_eq!(l[key], r[key], "{id}.{key}");
        }
    }
    assert_eq!(replayed["nodes"]["hello"]["output"]["model"], "typed");
}

/// An OpenAI-compatible chat-completions endpoint: no real one runs
/// offline, so this stands in for it (the one mock of these tests). It
/// records each request's Authorization header and body.
/// Each request the stand-in provider got: its Authorization header and body.
type Seen = Arc<Mutex<Vec<(String, Value)>>>;

fn provider() -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let (mut auth, mut len) = (String::new(), 0usize);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
                if lower.starts_with("authorization:") {
                    auth = line["authorization:".len()..].trim().to_owned();
                }
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let asked = body["messages"][1]["content"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            if let Ok(mut l) = log.lock() {
                l.push((auth, body));
            }
            let reply = json!({
                "model": "stub-1",
                "choices": [{"message": {"role": "assistant", "content": format!("stub: {asked}")}}]
            })
            .to_string();
            let mut s = stream;
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, seen)
}

#[test]
fn with_a_provider_configured_sampling_is_answered_by_it_and_its_key_stays_secret() {
    let dir = tempfile::tempdir().expect("dir");
    let (url, seen) = provider();
    let file = pipeline(
        dir.path(),
        &format!("sampling:\n  url: {url}\n  model: stub\n  api_key: ${{env.HITL_TEST_KEY}}\n"),
        "  - id: s\n    tool: summarize\n    args: {text: \"the news\"}\n",
    );
    let cassette = dir.path().join("c.json");
    let c = cassette.display().to_string();
    let (trace, code, stdout, stderr) = invoke(
        &file,
        &["--record", &c],
        &[("HITL_TEST_KEY", "sk-very-secret-key")],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(
        trace["nodes"]["s"]["output"],
        json!({"summary": "stub: Summarize: the news", "model": "stub-1"})
    );
    assert_eq!(trace["nodes"]["s"]["interactions"][0]["by"], "provider");
    let seen = seen.lock().expect("seen").clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, "Bearer sk-very-secret-key");
    assert_eq!(seen[0].1["model"], "stub");
    assert_eq!(
        seen[0].1["messages"][0],
        json!({"role": "system", "content": "You write one-line summaries."})
    );
    // The key is in no output, cassette or saved run.
    let mut written = vec![
        stdout,
        stderr,
        std::fs::read_to_string(&cassette).expect("c"),
    ];
    for entry in walk(dir.path()) {
        written.push(std::fs::read_to_string(entry).unwrap_or_default());
    }
    for text in written {
        assert!(!text.contains("sk-very-secret-key"), "{text}");
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A tmux session running one command; killed when dropped.
struct Tmux(String);

impl Tmux {
    fn start(tag: &str, cmd: &str, cwd: &Path) -> Option<Tmux> {
        let ok = std::process::Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            common::skipped(tag, "tmux is not installed (apt-get install tmux)");
            return None;
        }
        let name = format!("pw-hitl-{tag}-{}", std::process::id());
        let started = std::process::Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-x",
                "120",
                "-y",
                "40",
                "-s",
                &name,
                "-c",
            ])
            .arg(cwd)
            .arg(cmd)
            .status()
            .expect("tmux runs");
        assert!(started.success());
        Some(Tmux(name))
    }

    fn screen(&self) -> String {
        let out = std::process::Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.0])
            .output()
            .expect("capture");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn wait_for(&self, text: &str) -> String {
        for _ in 0..600 {
            let s = self.screen();
            if s.contains(text) {
                return s;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("`{text}` never showed:\n{}", self.screen());
    }

    fn keys(&self, keys: &[&str]) {
        let ok = std::process::Command::new("tmux")
            .args(["send-keys", "-t", &self.0])
            .args(keys)
            .status()
            .expect("send-keys");
        assert!(ok.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["kill-session", "-t", &self.0])
            .status();
    }
}

#[test]
fn run_on_a_terminal_asks_the_form_there_and_the_chain_uses_the_typed_value() {
    let dir = tempfile::tempdir().expect("dir");
    let steps = format!(
        "{SIGNUP}  - id: hello\n    tool: summarize\n    args: {{text: \"${{who.name}}\"}}\noutput: hello\n"
    );
    let file = pipeline(dir.path(), "", &steps);
    let out = dir.path().join("out.json");
    let cmd = format!(
        "sh {clean} env PIPEWRIGHT_DATA_DIR={d} PIPEWRIGHT_CONFIG_DIR={d}/config {bin} run {f} --format json > {o}; echo EXIT=$?; sleep 30",
        clean = common::hermetic_sh().display(),
        d = dir.path().display(),
        bin = env!("CARGO_BIN_EXE_pipewright"),
        f = file.display(),
        o = out.display()
    );
    let Some(t) = Tmux::start("form", &cmd, dir.path()) else {
        return;
    };
    let s = t.wait_for("Your name*");
    assert!(
        s.contains("node `who`") && s.contains("Sign up (beta)"),
        "{s}"
    );
    t.keys(&["Grace", "Enter"]);
    t.wait_for("Age* (whole number)");
    t.keys(&["many", "Enter"]);
    t.wait_for("must be a whole number");
    t.keys(&["85", "Enter"]);
    t.wait_for("Plan (1 free, 2 pro) [free]");
    t.keys(&["2", "Enter"]);
    // Then the sampling request: the person writes the model's reply.
    // The heading comes before the messages: wait for the message itself.
    let s = t.wait_for("Summarize: Grace");
    assert!(s.contains("asks the model for a reply"), "{s}");
    t.keys(&["Grace", "Space", "joined.", "Enter", "Enter"]);
    t.wait_for("EXIT=0");
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("out")).expect("trace");
    assert_eq!(
        trace["nodes"]["who"]["output"],
        json!({"action": "accept", "name": "Grace", "age": 85, "plan": "pro"})
    );
    assert_eq!(trace["nodes"]["who"]["interactions"][0]["by"], "terminal");
    assert_eq!(
        trace["output"],
        json!({"summary": "Grace joined.", "model": "human"})
    );
}

#[test]
fn a_question_whose_call_timed_out_leaves_the_terminal_to_the_next_one() {
    let dir = tempfile::tempdir().expect("dir");
    let steps = "  - id: slow\n    tool: signup\n    args: {reason: first}\n    timeout: 2s\n    on_error: continue\n  - id: next\n    tool: signup\n    args: {reason: second}\n";
    let file = pipeline(dir.path(), "", steps);
    let out = dir.path().join("out.json");
    let cmd = format!(
        "sh {clean} env PIPEWRIGHT_DATA_DIR={d} PIPEWRIGHT_CONFIG_DIR={d}/config {bin} run {f} --format json > {o}; echo EXIT=$?; sleep 30",
        clean = common::hermetic_sh().display(),
        d = dir.path().display(),
        bin = env!("CARGO_BIN_EXE_pipewright"),
        f = file.display(),
        o = out.display()
    );
    let Some(t) = Tmux::start("timeout", &cmd, dir.path()) else {
        return;
    };
    t.wait_for("Sign up (first)");
    // Nobody answers; the call times out and takes its question along.
    t.wait_for("Sign up (second)");
    t.keys(&["Linus", "Enter", "56", "Enter", "Enter"]);
    t.wait_for("EXIT=0");
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("out")).expect("trace");
    assert_eq!(trace["nodes"]["slow"]["status"], "failed");
    assert_eq!(trace["nodes"]["slow"]["error_code"], "TIMEOUT");
    assert_eq!(
        trace["nodes"]["next"]["output"],
        json!({"action": "accept", "name": "Linus", "age": 56, "plan": "free"})
    );
}

/// Two nodes of one wave on one stdio server both ask: both questions are
/// answered, neither is cancelled when the other's call ends, and each
/// node keeps its own exchange.
#[test]
fn parallel_questions_on_one_stdio_server_are_each_answered() {
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("both.yml");
    let server = root().join("tests/interop/hitl_server.py");
    std::fs::write(
        &file,
        format!(
            "servers:\n  hitl:\n    command: {}\n    args: [{}]\ncompositions:\n  - name: both\n    nodes:\n      - id: a\n        tool: signup\n        args: {{reason: one}}\n      - id: b\n        tool: signup\n        args: {{reason: two}}\n",
            python().display(),
            server.display()
        ),
    )
    .expect("write");
    let a = answers(
        dir.path(),
        "'*':\n  - accept: {name: Ada, age: 36}\n  - accept: {name: Bob, age: 40}\n",
    );
    let (trace, code, stderr) = run(&file, &["--answers", &a]);
    assert_eq!(code, 0, "{stderr}\n{trace:#}");
    // On stdio a question names no call: which node keeps which exchange
    // is a guess (the call that asked least, first sent), but both are
    // kept, and none is withdrawn when the other call ends.
    let mut names = Vec::new();
    let mut kept = 0;
    for id in ["a", "b"] {
        let node = &trace["nodes"][id];
        assert_eq!(node["output"]["action"], "accept", "{id}: {node:#}");
        names.push(node["output"]["name"].as_str().unwrap_or("").to_owned());
        let exchanges = node["interactions"].as_array().cloned().unwrap_or_default();
        for x in &exchanges {
            assert_eq!(x["reply"]["action"], "accept", "{id}: {node:#}");
        }
        kept += exchanges.len();
    }
    assert_eq!(kept, 2, "{trace:#}");
    names.sort();
    assert_eq!(names, ["Ada", "Bob"]);
}
