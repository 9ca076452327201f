//! `pipewright doctor` against real servers, each broken in one way: the
//! failing (or warning) step is named and its fix said, in the JSON CI
//! reads; a healthy server passes every step over stdio and HTTP.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use serde_json::Value;

mod common;
use common::{Hermetic, Killed, pipewright, pipewright_in, python, root};

/// `doctor ARGS --format json` with its data under `home` (or an empty
/// directory of its own): the exit code and the one server's report.
fn doctor(args: &[&str], home: Option<&Path>) -> (i32, Value) {
    let own = tempfile::tempdir().expect("tempdir");
    let mut cmd = pipewright_in(home.unwrap_or(own.path()));
    let out = cmd
        .arg("doctor")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("pipewright runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(v["servers"].as_array().map(Vec::len), Some(1), "{v:#}");
    (out.status.code().unwrap_or(-1), v["servers"][0].clone())
}

/// The step `name` of `report`.
fn step<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["steps"]
        .as_array()
        .and_then(|steps| steps.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no step `{name}` in {report:#}"))
}

/// Asserts the step `name` has `status`, its detail holds `detail` and its
/// fix holds `fix`.
fn assert_step(report: &Value, name: &str, status: &str, detail: &str, fix: &str) {
    let s = step(report, name);
    assert_eq!(s["status"], status, "{report:#}");
    let d = s["detail"].as_str().unwrap_or_default();
    let f = s["fix"].as_str().unwrap_or_default();
    assert!(d.contains(detail), "detail of `{name}`: {d}");
    assert!(f.contains(fix), "fix of `{name}`: {f}");
}

/// The steps after `name` are all skipped.
fn skipped_after(report: &Value, name: &str) {
    let steps = report["steps"].as_array().expect("steps");
    let at = steps.iter().position(|s| s["name"] == name).expect("step");
    assert!(
        steps[at + 1..].iter().all(|s| s["status"] == "skipped"),
        "{report:#}"
    );
}

fn interop(file: &str) -> String {
    root()
        .join("tests/interop")
        .join(file)
        .display()
        .to_string()
}

/// A command line for `--server NAME=CMD`: the venv's Python and a script.
fn py(script: &str, args: &str) -> String {
    format!("{} {} {args}", python().display(), interop(script))
}

/// Starts `command`, waits for the line on `stdout` (or stderr) that
/// starts with `prefix`, and gives the rest of it.
fn started(mut command: Command, prefix: &str, on_stderr: bool) -> (Killed, String) {
    let mut child = if on_stderr {
        command.stdout(Stdio::null()).stderr(Stdio::piped())
    } else {
        command.stdout(Stdio::piped()).stderr(Stdio::null())
    }
    .stdin(Stdio::null())
    .spawn()
    .expect("the server starts");
    let out: Box<dyn std::io::Read + Send> = if on_stderr {
        Box::new(child.stderr.take().expect("stderr"))
    } else {
        Box::new(child.stdout.take().expect("stdout"))
    };
    let child = Killed(child);
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let prefix = prefix.to_owned();
    loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server says where it listens");
        if let Some(rest) = line.trim().strip_prefix(&prefix) {
            return (child, rest.to_owned());
        }
    }
}

/// The demo server over Streamable HTTP; its `/mcp` URL.
fn demo_http() -> (Killed, String) {
    let mut command = pipewright();
    command.args(["demo-server", "--http", "127.0.0.1:0"]);
    started(command, "pipewright demo-server listening on ", true)
}

/// tests/interop/oauth_server.py with `args`; its `/mcp` URL.
fn oauth_server(args: &[&str]) -> (Killed, String) {
    let mut command = Command::new(python());
    command
        .hermetic()
        .arg(interop("oauth_server.py"))
        .args(args);
    started(command, "listening ", false)
}

#[test]
fn a_missing_command_fails_the_first_step() {
    let (code, r) = doctor(&["--server", "gone=no-such-server-h46"], None);
    assert_eq!(code, 1, "{r:#}");
    assert_step(
        &r,
        "command",
        "fail",
        "`no-such-server-h46` is not on PATH",
        "install `no-such-server-h46`, or give its full path",
    );
    skipped_after(&r, "command");
}

#[test]
fn a_server_that_logs_to_stdout_is_named_with_its_first_line() {
    let (code, r) = doctor(
        &[
            "--server",
            &format!("chatty={}", py("doctor_server.py", "log-stdout")),
        ],
        None,
    );
    assert_eq!(code, 1, "{r:#}");
    assert_step(
        &r,
        "stdout",
        "fail",
        "it writes logs to stdout: 1 line that is not JSON-RPC before its answer to `initialize`, the first: `Starting chatty server v1.0 on stdio`",
        "send the server's logs to stderr",
    );
    // pipewright skips the line: the handshakes still work.
    assert_eq!(step(&r, "handshake-2025-11-25")["status"], "ok", "{r:#}");
    assert_eq!(step(&r, "tools")["detail"], "1 tool", "{r:#}");
}

#[test]
fn a_server_that_exits_during_the_handshake_shows_its_status_and_stderr() {
    let (code, r) = doctor(
        &[
            "--server",
            &format!("dies={}", py("doctor_server.py", "exit-on-init")),
        ],
        None,
    );
    assert_eq!(code, 1, "{r:#}");
    assert_step(
        &r,
        "stdout",
        "fail",
        "it exited (exit status: 3) before answering `initialize`",
        "its stderr above says why",
    );
    let detail = step(&r, "stdout")["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("fatal: CHATTY_API_KEY is not set"),
        "{detail}"
    );
    assert_eq!(step(&r, "alive")["status"], "ok", "{r:#}");
    skipped_after(&r, "stdout");
}

#[test]
fn a_server_of_one_era_warns_and_names_the_protocol_key() {
    let (code, r) = doctor(
        &[
            "--server",
            &format!("old={}", py("modern_server.py", "stdio --legacy")),
        ],
        None,
    );
    assert_eq!(code, 0, "a warning is not a failure: {r:#}");
    assert_eq!(step(&r, "handshake-2025-11-25")["status"], "ok", "{r:#}");
    assert_step(
        &r,
        "handshake-2026-07-28",
        "warn",
        "it does not speak 2026-07-28",
        "this server speaks only 2025-11-25; `protocol: auto` finds it, and `protocol: 2025-11-25` on the server",
    );
    let (code, r) = doctor(
        &[
            "--server",
            &format!("new={}", py("modern_server.py", "stdio --modern-only")),
        ],
        None,
    );
    assert_eq!(code, 0, "{r:#}");
    assert_step(
        &r,
        "handshake-2025-11-25",
        "warn",
        "it does not speak 2025-11-25",
        "`protocol: 2026-07-28` on the server (or `--protocol new=2026-07-28`)",
    );
    assert_eq!(step(&r, "handshake-2026-07-28")["status"], "ok", "{r:#}");
}

#[test]
fn a_refused_port_fails_the_tcp_step() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.local_addr().expect("addr").port()
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, r) = doctor(&["--url", &url], None);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(step(&r, "dns")["status"], "ok", "{r:#}");
    assert_step(
        &r,
        "tcp",
        "fail",
        &format!("nothing listens on 127.0.0.1:{port} (connection refused)"),
        &format!("start the server, or check the port in the URL ({port})"),
    );
    skipped_after(&r, "tcp");
}

#[test]
fn a_self_signed_certificate_fails_the_tls_step() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        common::skipped(
            "a_self_signed_certificate_fails_the_tls_step",
            "the `openssl` command is missing (apt-get install openssl)",
        );
        return;
    }
    let mut command = Command::new(python());
    command
        .hermetic()
        .arg(interop("doctor_server.py"))
        .arg("https")
        .arg(&cert)
        .arg(&key);
    let (_server, url) = started(command, "listening ", false);
    let (code, r) = doctor(&["--url", &url], None);
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(step(&r, "tcp")["status"], "ok", "{r:#}");
    assert_step(
        &r,
        "tls",
        "fail",
        "the certificate is not signed by a trusted authority (self-signed",
        "add the CA that signed it to the system's trust store",
    );
    skipped_after(&r, "tls");
}

#[test]
fn a_wrong_path_fails_the_endpoint_step() {
    let (_server, url) = demo_http();
    let wrong = url.replace("/mcp", "/api");
    let (code, r) = doctor(&["--url", &wrong], None);
    assert_eq!(code, 1, "{r:#}");
    assert_step(
        &r,
        "endpoint",
        "fail",
        "HTTP 404",
        "wrong path? MCP endpoints are usually /mcp",
    );
    skipped_after(&r, "endpoint");
}

#[test]
fn an_oauth_server_without_protected_resource_metadata_is_named() {
    let (_server, url) = oauth_server(&["--no-prm"]);
    let (code, r) = doctor(&["--url", &url], None);
    assert_eq!(code, 1, "{r:#}");
    assert_step(&r, "endpoint", "ok", "HTTP 401: it asks for a login", "");
    assert_step(
        &r,
        "protected-resource",
        "fail",
        "it asks for a login (HTTP 401) but serves no protected resource metadata",
        "publish RFC 9728 metadata at",
    );
}

#[test]
fn an_expired_saved_login_fails_the_login_step() {
    use pipewright::engine::mcp::auth::{TokenRecord, TokenStore, canonical_url};

    let (_server, url) = oauth_server(&[]);
    let home = tempfile::tempdir().expect("tempdir");
    let canonical = canonical_url(&url).expect("a URL");
    let issuer = url.trim_end_matches("/mcp");
    let record: TokenRecord = serde_json::from_value(serde_json::json!({
        "server_url": canonical,
        "resource": canonical,
        "metadata": {
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
        },
        "client_id": "c1",
        "client_secret": null,
        "redirect_uri": "http://127.0.0.1:2/callback",
        "credentials": {
            "client_id": "c1",
            "token_response": {"access_token": "at-old", "token_type": "bearer", "expires_in": 3600},
            "granted_scopes": ["mcp"],
            // Received two hours ago: expired an hour ago.
            "token_received_at": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("clock")
                .as_secs() - 7200,
        },
        "client_credentials": false,
    }))
    .expect("a token record");
    TokenStore::new(home.path().join("data/auth"))
        .save(&record)
        .expect("saved");
    let (code, r) = doctor(&["--url", &url], Some(home.path()));
    assert_eq!(code, 1, "{r:#}");
    assert_eq!(step(&r, "protected-resource")["status"], "ok", "{r:#}");
    assert_eq!(step(&r, "authorization-server")["status"], "ok", "{r:#}");
    assert_step(&r, "registration", "ok", "dynamic client registration", "");
    assert_step(
        &r,
        "login",
        "fail",
        "the saved login expired 1 h 0 min ago",
        &format!("log in again: run `pipewright auth login {url}`"),
    );
    skipped_after(&r, "login");
}

#[test]
fn the_demo_server_passes_over_stdio_and_http() {
    let line = format!("demo={} demo-server", env!("CARGO_BIN_EXE_pipewright"));
    let (code, r) = doctor(&["--server", &line], None);
    assert_eq!(code, 0, "{r:#}");
    let (_server, url) = demo_http();
    let (code, h) = doctor(&["--url", &url], None);
    assert_eq!(code, 0, "{h:#}");
    for report in [&r, &h] {
        for name in [
            "handshake-2025-11-25",
            "handshake-2026-07-28",
            "capabilities",
            "tools",
            "tool-list",
        ] {
            assert_eq!(step(report, name)["status"], "ok", "{report:#}");
        }
        assert!(
            report["steps"]
                .as_array()
                .expect("steps")
                .iter()
                .all(|s| s["status"] != "fail" && s["elapsed_ms"].is_u64()),
            "{report:#}"
        );
        assert_eq!(step(report, "lint")["status"], "warn", "{report:#}");
        let rules: Vec<&str> = report["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .filter_map(|f| f["rule"].as_str())
            .collect();
        assert!(
            rules.contains(&"missing-description") && rules.contains(&"no-required"),
            "{rules:?}"
        );
    }
    for name in ["command", "started", "alive", "stdout"] {
        assert_eq!(step(&r, name)["status"], "ok", "{r:#}");
    }
    for name in ["dns", "tcp", "endpoint", "origin", "login"] {
        assert_eq!(step(&h, name)["status"], "ok", "{h:#}");
    }
}

#[test]
fn the_text_checklist_marks_each_step_and_says_the_fix() {
    let out = pipewright()
        .args(["doctor", "--server", "gone=no-such-server-h46"])
        .output()
        .expect("pipewright runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("✗ command"), "{text}");
    assert!(text.contains("fix: install `no-such-server-h46`"), "{text}");
    assert!(text.contains("- started"), "{text}");
    assert!(
        text.contains("1 server examined, 1 with a failing step"),
        "{text}"
    );
}

#[test]
fn tools_and_run_point_at_doctor_when_a_server_fails() {
    let out = pipewright()
        .args(["tools", "list", "--server", "gone=no-such-server-h46"])
        .output()
        .expect("pipewright runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(
            "hint: `pipewright doctor --server gone=no-such-server-h46` checks each server step by step"
        ),
        "{stderr}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("p.yml");
    std::fs::write(
        &file,
        "servers:\n  s: {command: no-such-server-h46}\npipe:\n  - id: a\n    tool: echo\n    args: {message: hi}\n",
    )
    .expect("written");
    let out = pipewright_in(dir.path())
        .arg("run")
        .arg(&file)
        .output()
        .expect("pipewright runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains(&format!("hint: `pipewright doctor {}`", file.display())),
        "{stderr}"
    );
}
