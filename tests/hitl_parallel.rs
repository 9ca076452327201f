//! Two nodes of one wave on one stdio server both ask a question: over
//! stdio nothing names the call a question belongs to, yet each question
//! reaches its answerer, none is cancelled because the other call ended,
//! and each answer is kept in the trace of the node it was filed under.
//! The server is the Python SDK's (`tests/interop/hitl_server.py`, tool
//! `ask_name`): `b` asks a little after `a`, and `a` stays in flight a
//! while after its answer, so both questions are open while both calls
//! are.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{Value, json};

mod common;
use common::{python, root};

fn pipeline(dir: &Path, a_after: f64) -> PathBuf {
    let file = dir.join("flow.yml");
    let server = root().join("tests/interop/hitl_server.py");
    std::fs::write(
        &file,
        format!(
            "servers:\n  hitl:\n    command: {}\n    args: [{}]\n\
             compositions:\n  - name: two\n    nodes:\n\
             \x20     - id: a\n        tool: ask_name\n        args: {{who: a, after: {a_after}, done: '{done}'}}\n\
             \x20     - id: b\n        tool: ask_name\n        args: {{who: b, before: 0.3}}\n",
            python().display(),
            server.display(),
            done = a_done(dir).display(),
        ),
    )
    .expect("write the pipeline");
    file
}

/// The file `a`'s call writes as it returns.
fn a_done(dir: &Path) -> PathBuf {
    dir.join("a.done")
}

/// `pipewright ARGS…` with every directory it reads inside `dir`; exit
/// code, stdout, stderr.
fn pipewright(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::from_std(common::pipewright_in(dir))
        .args(args)
        .env("XDG_DATA_HOME", dir.join("xdg-data"))
        .env("XDG_CONFIG_HOME", dir.join("xdg-config"))
        .env("HOME", dir)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .expect("run");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn accepted(trace: &Value, node: &str) -> (Value, Vec<Value>) {
    let n = &trace["nodes"][node];
    let interactions = n["interactions"].as_array().cloned().unwrap_or_default();
    (n["output"].clone(), interactions)
}

#[test]
fn two_parallel_questions_on_one_stdio_server_are_both_answered_from_the_file() {
    let dir = tempfile::tempdir().expect("dir");
    let file = pipeline(dir.path(), 1.5);
    let answers = dir.path().join("answers.yml");
    std::fs::write(
        &answers,
        "a:\n  - accept: {name: Ada}\nb:\n  - accept: {name: Bob}\n",
    )
    .expect("write answers");
    let file_arg = file.display().to_string();
    let answers_arg = answers.display().to_string();
    let (code, stdout, stderr) = pipewright(
        dir.path(),
        &[
            "run",
            &file_arg,
            "--format",
            "json",
            "--answers",
            &answers_arg,
        ],
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let printed: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a trace ({e}):\n{stdout}\n{stderr}"));
    // The saved run says the same as the printed one.
    let (code, saved, stderr) =
        pipewright(dir.path(), &["runs", "show", "latest", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let saved: Value = serde_json::from_str(&saved)
        .unwrap_or_else(|e| panic!("not a saved trace ({e}):\n{saved}\n{stderr}"));
    for trace in [&printed, &saved] {
        for (node, name) in [("a", "Ada"), ("b", "Bob")] {
            let (output, interactions) = accepted(trace, node);
            assert_eq!(output, json!({"who": node, "name": name}), "{trace:#}");
            assert_eq!(interactions.len(), 1, "{node}: {trace:#}");
            let i = &interactions[0];
            assert_eq!(i["kind"], "elicitation");
            assert_eq!(i["by"], "answers");
            assert_eq!(i["request"]["message"], format!("Name for {node}"));
            assert_eq!(
                i["reply"],
                json!({"action": "accept", "content": {"name": name}})
            );
        }
    }
}

/// A tmux session on its own socket running one command; killed when
/// dropped.
struct Tmux(String);

impl Tmux {
    fn start(cmd: &str) -> Option<Tmux> {
        let has = std::process::Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        if !has {
            common::skipped(
                "hitl_parallel (terminal)",
                "tmux is not installed (apt-get install tmux)",
            );
            return None;
        }
        let t = Tmux(format!("pw-hitl-par-{}", std::process::id()));
        let ok = t
            .tmux(&["new-session", "-d", "-x", "120", "-y", "40", "-s", "t", cmd])
            .status
            .success();
        assert!(ok, "tmux starts");
        Some(t)
    }

    fn tmux(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
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
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success(), "send-keys");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

#[test]
fn run_on_a_terminal_asks_both_parallel_questions_one_after_the_other() {
    let dir = tempfile::tempdir().expect("dir");
    let file = pipeline(dir.path(), 2.0);
    let out = dir.path().join("out.json");
    let d = dir.path().display();
    let cmd = format!(
        "cd {d} && sh {clean} env HOME={d} XDG_DATA_HOME={d}/xd XDG_CONFIG_HOME={d}/xc PIPEWRIGHT_DATA_DIR={d}/data \
         PIPEWRIGHT_CONFIG_DIR={d}/config {bin} run {f} --no-save --format json > {o}; echo EXIT=$?; sleep 30",
        clean = common::hermetic_sh().display(),
        bin = env!("CARGO_BIN_EXE_pipewright"),
        f = file.display(),
        o = out.display()
    );
    let Some(t) = Tmux::start(&cmd) else {
        return;
    };
    let s = t.wait_for("Name for a");
    // Stdio named no call: the terminal says which nodes may be asking.
    assert!(s.contains("(one of: `a`, `b`)"), "{s}");
    t.keys(&["Ada", "Enter"]);
    t.wait_for("Name for b");
    // `a` stays in flight 2 s after its answer; let its call end before
    // answering `b`: the question must still be open.
    let ended = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !a_done(dir.path()).exists() && std::time::Instant::now() < ended {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(a_done(dir.path()).exists(), "`a`'s call never ended");
    t.keys(&["Bob", "Enter"]);
    t.wait_for("EXIT=0");
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("out")).expect("trace");
    for (node, name) in [("a", "Ada"), ("b", "Bob")] {
        let (output, interactions) = accepted(&trace, node);
        assert_eq!(output, json!({"who": node, "name": name}), "{trace:#}");
        assert_eq!(interactions.len(), 1, "{node}: {trace:#}");
        assert_eq!(interactions[0]["by"], "terminal");
    }
}
