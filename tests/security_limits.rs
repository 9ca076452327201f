//! Limits on what untrusted input can make pipewright do: a huge file is
//! refused unread, a fan-out over a huge reply is refused before any call,
//! and `serve --http` takes no request without its token, no body over its
//! limit, and no address off loopback without a token.

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};

fn pw() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("pipewright").expect("binary");
    c.env_remove("PIPEWRIGHT_MAX_FILE_MB")
        .env_remove("PIPEWRIGHT_DATA_DIR")
        .env("XDG_DATA_HOME", std::env::temp_dir().join("pw-sec-xdg"))
        .env("XDG_CONFIG_HOME", std::env::temp_dir().join("pw-sec-xdg"));
    c
}

/// A valid pipeline followed by comment lines up to `mb` MiB.
fn big_file(dir: &std::path::Path, mb: usize) -> std::path::PathBuf {
    let path = dir.join("big.yml");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(
        f,
        "pipe:\n  - id: a\n    tool: echo\n    args: {{message: hi}}"
    )
    .unwrap();
    let line = format!("# {}\n", "x".repeat(1021));
    for _ in 0..mb * 1024 {
        f.write_all(line.as_bytes()).unwrap();
    }
    f.flush().unwrap();
    path
}

#[test]
fn a_file_over_the_size_limit_is_refused_unread_and_the_limit_can_be_raised() {
    let dir = tempfile::tempdir().unwrap();
    let path = big_file(dir.path(), 50);
    let started = Instant::now();
    let out = pw().arg("check").arg(&path).output().unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("big.yml:1:1: error:"),
        "the error has a position: {err}"
    );
    assert!(err.contains("is 50.0 MiB"), "{err}");
    assert!(
        err.contains("PIPEWRIGHT_MAX_FILE_MB"),
        "how to raise it: {err}"
    );
    eprintln!("check of a 50 MiB file refused in {took:?}");
    // Raised, a file over the default loads.
    let path = big_file(dir.path(), 9);
    let refused = pw().arg("check").arg(&path).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let out = pw()
        .arg("check")
        .arg(&path)
        .env("PIPEWRIGHT_MAX_FILE_MB", "16")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_fan_out_over_more_items_than_the_cap_is_refused_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let items: Vec<String> = (0..10_001).map(|i| i.to_string()).collect();
    let text = format!(
        "compositions:\n  - name: c\n    nodes:\n      - id: list\n        tool: echo\n        mock: {{result: [{}]}}\n      - id: each\n        needs: [list]\n        for_each: ${{list[*]}}\n        tool: echo\n        args: {{message: \"${{item}}\"}}\n",
        items.join(", ")
    );
    let file = dir.path().join("fan.yml");
    std::fs::write(&file, text).unwrap();
    let out = pw()
        .args(["run", "--format", "json"])
        .arg(&file)
        .env("PIPEWRIGHT_DATA_DIR", dir.path().join("data"))
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let text = json.to_string();
    assert!(text.contains("ITERATION_LIMIT"), "{text}");
    assert!(text.contains("has 10001 items"), "{text}");
    assert!(text.contains("max_iterations"), "how to raise it: {text}");
    assert!(!out.status.success());
}

/// `serve --http` on 127.0.0.1:0 with `--token-env`; its URL.
async fn serve(dir: &std::path::Path, extra: &[&str]) -> (tokio::process::Child, String) {
    let file = dir.join("up.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  demo:\n    command: {}\n    args: [demo-server]\npipe:\n  - id: e\n    tool: echo\n    args: {{message: hi}}\n",
            env!("CARGO_BIN_EXE_pipewright")
        ),
    )
    .unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_pipewright"))
        .arg("serve")
        .arg(&file)
        .args(["--http", "127.0.0.1:0", "--no-save"])
        .args(extra)
        .env("SERVE_TOKEN", "s3cret-token-for-tests")
        .env_remove("PIPEWRIGHT_DATA_DIR")
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(at) = line.find("http://") {
                return line[at..].trim().to_owned();
            }
        }
        panic!("serve ended before listening")
    })
    .await
    .expect("serve listens");
    (child, url)
}

fn initialize() -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}
    })
}

#[tokio::test]
async fn serve_http_takes_no_request_without_its_token_and_no_body_over_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (_child, url) = serve(
        dir.path(),
        &["--token-env", "SERVE_TOKEN", "--max-body", "65536"],
    )
    .await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let post = |auth: Option<&str>, body: String| {
        let mut r = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        r.send()
    };
    let init = initialize().to_string();
    for auth in [None, Some("Bearer wrong"), Some("s3cret-token-for-tests")] {
        let r = post(auth, init.clone()).await.unwrap();
        assert_eq!(r.status(), 401, "{auth:?}");
        assert_eq!(r.headers()["www-authenticate"], "Bearer");
    }
    let r = post(Some("Bearer s3cret-token-for-tests"), init.clone())
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
    // 100 KiB of padding in a request: refused unread.
    let mut big = initialize();
    big["params"]["pad"] = serde_json::Value::String("x".repeat(100 * 1024));
    let r = post(Some("Bearer s3cret-token-for-tests"), big.to_string())
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
}

#[test]
fn serve_http_off_loopback_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("up.yml");
    std::fs::write(&file, "pipe:\n  - id: e\n    tool: echo\n").unwrap();
    // Refused before anything is started or bound.
    let out = pw()
        .arg("serve")
        .arg(&file)
        .args(["--http", "0.0.0.0:0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("not a loopback address"), "{err}");
    assert!(err.contains("--token-env"), "{err}");
    // A token variable that is not set is named.
    let out = pw()
        .arg("serve")
        .arg(&file)
        .args(["--http", "127.0.0.1:0", "--token-env", "NO_SUCH_VAR_PW"])
        .env_remove("NO_SUCH_VAR_PW")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("`NO_SUCH_VAR_PW` is not set"), "{err}");
}
