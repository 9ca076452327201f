//! What several integration tests share: the repository root, the Python
//! venv with the official MCP SDK that `.ci/run` makes, and the binary
//! started with none of the variables the user exported that it reads.
// Each test uses part of this.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The venv `.ci/run` makes (`target/pyvenv`, with `pip install mcp`), or
/// `PIPEWRIGHT_PYTHON`; a missing one fails the test with the command that
/// makes it.
pub fn python() -> PathBuf {
    let p = std::env::var_os("PIPEWRIGHT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/pyvenv/bin/python"));
    assert!(
        p.exists(),
        "{} is missing: python3 -m venv target/pyvenv && target/pyvenv/bin/pip install mcp==2.3.0",
        p.display()
    );
    p
}

/// The variables of this process that pipewright would read: every
/// `PIPEWRIGHT_*` but `PIPEWRIGHT_PYTHON` (the tests' own venv), and Fibe's
/// caps (`FIBE_MCP_PIPELINE_*`).
pub fn users_vars() -> Vec<OsString> {
    std::env::vars_os()
        .map(|(name, _)| name)
        .filter(|name| {
            let n = name.to_string_lossy();
            (n.starts_with("PIPEWRIGHT_") && n != "PIPEWRIGHT_PYTHON")
                || n.starts_with("FIBE_MCP_PIPELINE_")
        })
        .collect()
}

/// Where a command that should keep nothing has its data and config
/// directories: under a file, so nothing can be made there, even by root.
pub fn nowhere() -> PathBuf {
    let file = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pipewright-nowhere");
    if !file.exists() {
        std::fs::write(
            &file,
            "a file: pipewright's directories in tests that keep nothing are under it\n",
        )
        .expect("target/tmp is writable");
    }
    file.join("home")
}

/// A command that can be kept from the user's environment.
pub trait Hermetic {
    /// Removes every variable of [`users_vars`] and points pipewright's
    /// data and config directories at [`nowhere`]; call it first, then set
    /// what the test needs.
    fn hermetic(&mut self) -> &mut Self;

    /// [`Hermetic::hermetic`], with pipewright's data directory
    /// (`home/data`) and config directory (`home/config`) under `home`.
    fn isolated(&mut self, home: &Path) -> &mut Self;
}

macro_rules! hermetic {
    ($command:ty) => {
        impl Hermetic for $command {
            fn hermetic(&mut self) -> &mut Self {
                for name in users_vars() {
                    self.env_remove(name);
                }
                let home = nowhere();
                self.env("PIPEWRIGHT_DATA_DIR", home.join("data"))
                    .env("PIPEWRIGHT_CONFIG_DIR", home.join("config"))
            }

            fn isolated(&mut self, home: &Path) -> &mut Self {
                self.hermetic()
                    .env("PIPEWRIGHT_DATA_DIR", home.join("data"))
                    .env("PIPEWRIGHT_CONFIG_DIR", home.join("config"))
            }
        }
    };
}

hermetic!(std::process::Command);
hermetic!(tokio::process::Command);
hermetic!(assert_cmd::Command);

/// The binary under test, with none of the user's variables and its
/// directories [`nowhere`].
pub fn pipewright() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_pipewright"));
    c.hermetic();
    c
}

/// [`pipewright`] with its data and config directories under `home`.
pub fn pipewright_in(home: &Path) -> std::process::Command {
    let mut c = pipewright();
    c.isolated(home);
    c
}

/// `tests/hermetic.sh`, which runs its arguments without the user's
/// variables: a command in a tmux pane starts with whatever environment the
/// tmux server kept, so it cleans its own (`sh hermetic.sh env VAR=… cmd`).
pub fn hermetic_sh() -> PathBuf {
    root().join("tests/hermetic.sh")
}

/// Runs `cmd`; its exit code, stdout and stderr.
pub fn output(cmd: &mut assert_cmd::Command) -> (i32, String, String) {
    let out = cmd.output().expect("pipewright ran");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `pipewright serve … --http 127.0.0.1:0` started from `command` (its
/// serve arguments given), once it says where it listens; killed and
/// reaped on drop, so a failed start reaps it too.
pub struct ServeHttp {
    child: std::process::Child,
    /// The endpoint it printed.
    pub url: String,
}

impl ServeHttp {
    pub fn start(mut command: std::process::Command) -> ServeHttp {
        use std::io::BufRead as _;
        use std::process::Stdio;
        let child = command
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("serve starts");
        let mut http = ServeHttp {
            child,
            url: String::new(),
        };
        let mut err = std::io::BufReader::new(http.child.stderr.take().expect("stderr"));
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            let n = err.read_line(&mut line).expect("stderr readable");
            assert!(n > 0, "serve exited before listening: {seen}");
            seen.push_str(&line);
            if let Some(url) = line.trim().strip_prefix("pipewright serve listening on ") {
                http.url = url.to_owned();
                // Keep draining stderr so serve never blocks on it.
                std::thread::spawn(move || for _ in err.lines() {});
                return http;
            }
        }
    }
}

impl Drop for ServeHttp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a client; its stdout and stderr, once it exited 0 (else the test
/// fails with them).
pub fn succeeds(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().expect("the client starts");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

/// A child process killed (and reaped) when the test ends, however it ends.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// tests/interop/oauth_server.py (an MCP server and its authorization
/// server, on the official Python SDK's auth) with `args`: the process
/// and its MCP URL, once it says where it listens. Its later output is
/// drained, so it never blocks on a full pipe.
pub fn oauth_server(args: &[&str]) -> (Killed, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(python())
        .hermetic()
        .arg(root().join("tests/interop/oauth_server.py"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("the Python server starts");
    let stdout = child.stdout.take().expect("stdout");
    let child = Killed(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the Python server says where it listens");
    let url = line
        .trim()
        .strip_prefix("listening ")
        .expect("a `listening URL` line")
        .to_owned();
    (child, url)
}

/// A server process at `url`, killed and reaped on drop.
pub struct Server {
    pub child: std::process::Child,
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where [`skipped`] lists the tests that could not run (README's test
/// command empties it with `tests/skipped.sh --clear` and prints it with
/// `tests/skipped.sh`).
pub fn skipped_list() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests")
}

/// A test that cannot run on this machine (`why`: what is missing and how
/// to get it) says so: refused under CI (`.ci/run` installs everything);
/// otherwise the line goes to the run's output (written to the stderr
/// handle, which libtest does not capture for a passing test) and to
/// [`skipped_list`], so the end of the test command counts it.
pub fn skipped(test: &str, why: &str) {
    use std::io::Write as _;
    assert!(
        std::env::var_os("CI").is_none(),
        "{test}: {why}: required under CI (.ci/run installs it)"
    );
    // libtest names each test's thread after the test.
    let name = std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .map_or_else(|| test.to_owned(), |n| format!("{test}::{n}"));
    let line = format!("{name}: skipped: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(skipped_list())
    {
        let _ = f.write_all(line.as_bytes());
    }
}

/// `pipewright serve …` over stdio, started from `command` (its serve
/// arguments given), spoken to as a raw JSON-RPC client would; on drop its
/// stdin is closed and it is waited for.
pub struct ServeStdio {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl ServeStdio {
    pub fn start(mut command: std::process::Command) -> ServeStdio {
        use std::io::BufRead as _;
        use std::process::Stdio;
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve starts");
        let stdin = child.stdin.take();
        let lines = std::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
        ServeStdio {
            child,
            stdin,
            lines,
        }
    }

    /// Sends `message`. A notification returns `Null`; a request returns
    /// its response, each request `serve` makes meanwhile (a question it
    /// passes on) answered with the result `answer` gives for it.
    pub fn send(
        &mut self,
        message: serde_json::Value,
        mut answer: impl FnMut(&serde_json::Value) -> serde_json::Value,
    ) -> serde_json::Value {
        use std::io::Write as _;
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("writes");
        stdin.flush().expect("flush");
        if message.get("id").is_none() {
            return serde_json::Value::Null;
        }
        loop {
            let line = self.lines.next().expect("a line").expect("readable");
            let m: serde_json::Value = serde_json::from_str(&line).expect("json");
            if m.get("method").is_some() {
                if m.get("id").is_some() {
                    let reply =
                        serde_json::json!({"jsonrpc": "2.0", "id": m["id"], "result": answer(&m)});
                    let stdin = self.stdin.as_mut().expect("stdin open");
                    writeln!(stdin, "{reply}").expect("writes");
                    stdin.flush().expect("flush");
                }
                continue;
            }
            if m["id"] == message["id"] {
                return m;
            }
        }
    }
}

impl Drop for ServeStdio {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// Every reference the engine infers in the pipeline `new --from` writes
/// from `session` (a line up to `limit` bytes): `(node.arg, rule, text)`.
pub fn inferred_references(session: &Path, limit: usize) -> Vec<(String, String, String)> {
    use pipewright::engine::record::{calls, write};
    let rec = calls::open(session, limit).expect("the session reads");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let w = rt
        .block_on(write::write(
            vec![rec],
            "flow",
            "flow.yml.cassette.json",
            None,
        ))
        .expect("written");
    w.draft
        .references()
        .into_iter()
        .map(|(s, a, r, t)| (format!("{s}.{a}"), r.name().to_owned(), t))
        .collect()
}
