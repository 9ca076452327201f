//! Limits on what untrusted input can make pipewright do: a huge file is
//! refused unread, a fan-out over a huge reply is refused before any call,
//! and `serve --http` takes no request without its token, no body over its
//! limit, no address off loopback without a token, no session over its
//! session limit and no call over its per-session limit; a jq transform
//! that nests too deeply or asks for too much memory fails its node.

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, BufReader};

mod common;
use common::Hermetic;

fn pw() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::from_std(common::pipewright());
    c.env_remove("PIPEWRIGHT_DATA_DIR")
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

/// A million items built by a transform are refused as soon as the fan-out
/// is dispatched: the items are counted, not copied once per item before
/// the count is checked (that took 94 s at 100,000 items and never ended
/// at a million).
#[test]
fn a_fan_out_over_a_million_items_from_a_transform_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fan.yml");
    std::fs::write(
        &file,
        "pipe:\n  - id: list\n    tool: echo\n    args: {message: x}\n    transform: '[range(1000000)]'\n  - id: each\n    tool: echo\n    for_each: ${list}\n    args: {message: \"${item}\"}\n",
    )
    .unwrap();
    let out = pw()
        .args(["run", "--format", "json", "--no-save"])
        .arg(&file)
        .env("PIPEWRIGHT_DATA_DIR", dir.path().join("data"))
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let each = &json["nodes"]["each"];
    assert_eq!(each["error_code"], "ITERATION_LIMIT", "{each}");
    assert!(
        each["error"]
            .as_str()
            .is_some_and(|e| e.contains("has 1000000 items")),
        "{each}"
    );
    assert_eq!(each["attempts"], 0, "nothing was called: {each}");
    assert_eq!(out.status.code(), Some(1));
}

/// `serve --http` on 127.0.0.1:0 with `--token-env`; its URL.
async fn serve(dir: &std::path::Path, extra: &[&str]) -> (tokio::process::Child, String) {
    serve_pipe(
        dir,
        "pipe:\n  - id: e\n    tool: echo\n    args: {message: hi}\n",
        extra,
    )
    .await
}

/// `serve --http` of `pipe` (a file's text after its `servers:`, which is
/// the demo server), served as the tool `up`; its URL.
async fn serve_pipe(
    dir: &std::path::Path,
    pipe: &str,
    extra: &[&str],
) -> (tokio::process::Child, String) {
    serve_file(dir, pipe, &[&["--no-save"], extra].concat()).await
}

/// `serve --http` of `pipe` as [`serve_pipe`] does, saving its runs under
/// `dir` unless `args` say `--no-save`.
async fn serve_file(
    dir: &std::path::Path,
    pipe: &str,
    args: &[&str],
) -> (tokio::process::Child, String) {
    let file = dir.join("up.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  demo:\n    command: {}\n    args: [demo-server]\n{pipe}",
            env!("CARGO_BIN_EXE_pipewright")
        ),
    )
    .unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_pipewright"))
        .hermetic()
        .arg("serve")
        .arg(&file)
        .args(["--http", "127.0.0.1:0"])
        .args(args)
        .env("SERVE_TOKEN", "s3cret-token-for-tests")
        .env_remove("PIPEWRIGHT_DATA_DIR")
        .env("XDG_DATA_HOME", dir.join("xdg"))
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("XDG_STATE_HOME", dir.join("xdg"))
        .env("NO_COLOR", "1")
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
    // Read on, as a terminal or a log collector would: a closed stderr
    // would end the process at its next line.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
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

/// A raw MCP client of `serve --http`: plain POSTs, so a refused request
/// shows its status and body as any client would see them.
struct Mcp {
    client: reqwest::Client,
    url: String,
}

impl Mcp {
    fn new(url: String) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        Mcp {
            client: reqwest::Client::new(),
            url,
        }
    }

    fn post(&self, session: Option<&str>, body: &serde_json::Value) -> reqwest::RequestBuilder {
        let mut r = self
            .client
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string());
        if let Some(id) = session {
            r = r.header("mcp-session-id", id);
        }
        r
    }

    /// `initialize` and `notifications/initialized`: the new session's id.
    async fn open(&self) -> String {
        let r = self.post(None, &initialize()).send().await.unwrap();
        assert_eq!(r.status(), 200);
        let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        r.text().await.unwrap();
        let done = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let r = self.post(Some(&id), &done).send().await.unwrap();
        assert_eq!(r.status(), 202);
        id
    }

    async fn close(&self, session: &str) -> reqwest::StatusCode {
        self.client
            .delete(&self.url)
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .unwrap()
            .status()
    }
}

/// A refusal's JSON-RPC error message, after checking the body's shape.
async fn refusal_message(r: reqwest::Response, id: i64) -> String {
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["id"], id, "the refusal answers the request: {body}");
    assert_eq!(body["error"]["code"], -32000, "{body}");
    body["error"]["message"].as_str().unwrap().to_owned()
}

/// `/readyz`'s body: the open sessions, the limit, the idle time.
async fn readyz(url: &str) -> serde_json::Value {
    let base = url.trim_end_matches("/mcp");
    let r = reqwest::get(format!("{base}/readyz")).await.unwrap();
    assert_eq!(r.status(), 200);
    r.json().await.unwrap()
}

#[tokio::test]
async fn serve_http_gives_a_new_session_the_slot_of_the_one_idle_longest_and_refuses_only_when_all_are_busy()
 {
    let dir = tempfile::tempdir().unwrap();
    let (_child, url) = serve_pipe(
        dir.path(),
        "vars:\n  ms: 0\npipe:\n  - id: wait\n    tool: slow\n    args: {ms: \"${var.ms}\"}\n",
        &["--max-sessions", "2"],
    )
    .await;
    let mcp = Mcp::new(url.clone());
    let first = mcp.open().await;
    let second = mcp.open().await;
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    // `second` was used last: `first` is idle longest.
    let r = mcp.post(Some(&second), &list).send().await.unwrap();
    assert_eq!(r.status(), 200);
    r.text().await.unwrap();
    // At the limit, a new agent is served: it takes `first`'s slot.
    let third = mcp.open().await;
    assert_eq!(readyz(&url).await["sessions"], 2);
    let r = mcp.post(Some(&first), &list).send().await.unwrap();
    assert_eq!(r.status(), 404, "the evicted session is gone");
    let r = mcp.post(Some(&second), &list).send().await.unwrap();
    assert_eq!(r.status(), 200, "the other session is untouched");
    assert!(r.text().await.unwrap().contains("\"up\""));
    // With a call in flight in every session, nothing is taken: refused.
    let long_second = mcp
        .post(Some(&second), &nap(10, 60_000))
        .send()
        .await
        .unwrap();
    assert_eq!(long_second.status(), 200);
    let long_third = mcp
        .post(Some(&third), &nap(11, 60_000))
        .send()
        .await
        .unwrap();
    assert_eq!(long_third.status(), 200);
    let r = mcp.post(None, &initialize()).send().await.unwrap();
    assert_eq!(r.status(), 503);
    assert!(r.headers().get("mcp-session-id").is_none());
    assert!(r.headers().get("retry-after").is_some());
    let message = refusal_message(r, 1).await;
    assert!(message.contains("2 session(s) open"), "{message}");
    assert!(message.contains("request in flight"), "{message}");
    assert!(message.contains("--max-sessions 2"), "{message}");
    // Closing one frees its slot.
    drop(long_second);
    assert!(mcp.close(&second).await.is_success());
    let fourth = mcp.open().await;
    assert_ne!(fourth, second);
}

#[tokio::test]
async fn serve_http_closes_a_session_no_request_reached_for_its_idle_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (_child, url) = serve(dir.path(), &["--session-idle", "1s"]).await;
    let mcp = Mcp::new(url.clone());
    let gone = mcp.open().await;
    let status = readyz(&url).await;
    assert_eq!(status["session_idle_secs"], 1, "{status}");
    assert_eq!(status["max_sessions"], 64, "{status}");
    // The agent vanished without a DELETE: its slot comes back.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while readyz(&url).await["sessions"] != 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the idle session was never closed: {}",
            readyz(&url).await
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let r = mcp.post(Some(&gone), &list).send().await.unwrap();
    assert_eq!(r.status(), 404);
    // A zero limit is refused before anything starts.
    let file = dir.path().join("up.yml");
    let out = pw()
        .arg("serve")
        .arg(&file)
        .args(["--http", "127.0.0.1:0", "--session-idle", "0s"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--session-idle"), "{err}");
}

#[tokio::test]
async fn serve_http_answers_health_and_readiness_without_a_token_or_an_origin_check() {
    let dir = tempfile::tempdir().unwrap();
    let (_child, url) = serve(dir.path(), &["--token-env", "SERVE_TOKEN"]).await;
    let base = url.trim_end_matches("/mcp").to_owned();
    let client = reqwest::Client::new();
    for path in ["/healthz", "/readyz"] {
        let r = client
            .get(format!("{base}{path}"))
            .header("origin", "https://evil.example")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{path}");
    }
    let status = readyz(&url).await;
    assert_eq!(status["ready"], true, "{status}");
    assert_eq!(status["sessions"], 0, "{status}");
    assert_eq!(
        status["upstreams"],
        serde_json::json!({"demo": true}),
        "{status}"
    );
    // The MCP path still wants the token.
    let r = Mcp::new(url)
        .post(None, &initialize())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
}

/// A `tools/call` of `up`, which sleeps `ms` in the demo server.
fn nap(id: i64, ms: u64) -> serde_json::Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "up", "arguments": {"ms": ms}}
    })
}

#[tokio::test]
async fn serve_http_refuses_a_call_over_the_per_session_limit_and_a_hung_up_call_still_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (_child, url) = serve_pipe(
        dir.path(),
        "vars:\n  ms: 0\npipe:\n  - id: wait\n    tool: slow\n    args: {ms: \"${var.ms}\"}\n",
        &["--max-calls-per-session", "1"],
    )
    .await;
    let mcp = Mcp::new(url);
    let (busy, other) = (mcp.open().await, mcp.open().await);
    // The headers of the SSE answer are out: the call is in flight.
    let long = mcp
        .post(Some(&busy), &nap(10, 60_000))
        .send()
        .await
        .unwrap();
    assert_eq!(long.status(), 200);
    let r = mcp.post(Some(&busy), &nap(11, 0)).send().await.unwrap();
    assert_eq!(r.status(), 429);
    assert!(r.headers().get("retry-after").is_some());
    let message = refusal_message(r, 11).await;
    assert!(message.contains("1 request(s) in flight"), "{message}");
    assert!(
        message.contains("--max-calls-per-session 1"),
        "how to raise it: {message}"
    );
    // Another session is not held up.
    let r = mcp.post(Some(&other), &nap(12, 0)).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().contains("slept_ms"));
    // The client hangs up: its call still runs, so it still counts.
    drop(long);
    let r = mcp.post(Some(&busy), &nap(13, 0)).send().await.unwrap();
    assert_eq!(r.status(), 429);
    // A notification is never refused: the cancellation gets through and
    // ends the call, which gives its slot back.
    let cancel = serde_json::json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 10, "reason": "test"}
    });
    let r = mcp.post(Some(&busy), &cancel).send().await.unwrap();
    assert_eq!(r.status(), 202);
    let answered = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let r = mcp.post(Some(&busy), &nap(14, 0)).send().await.unwrap();
            if r.status() != 429 {
                return (r.status(), r.text().await.unwrap());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the cancelled call gives its slot back");
    assert_eq!(answered.0, 200);
    assert!(answered.1.contains("slept_ms"), "{}", answered.1);
    // One call at a time in a row is never refused: the slot is back
    // before the client sees the end of the answer.
    for id in 15..25 {
        let r = mcp.post(Some(&busy), &nap(id, 0)).send().await.unwrap();
        assert_eq!(r.status(), 200, "call {id}");
        r.text().await.unwrap();
    }
}

/// A web page the user has open cannot drive a local `serve --http` (DNS
/// rebinding): a request whose `Origin` is not the server's own host is
/// refused, one from the server's own origin, or with no `Origin` at all
/// (a non-browser client), is served.
#[tokio::test]
async fn serve_http_refuses_a_request_from_a_foreign_origin() {
    let dir = tempfile::tempdir().unwrap();
    let (_child, url) = serve(dir.path(), &[]).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let own = url.trim_end_matches("/mcp").to_owned();
    let post = |origin: Option<String>| {
        let mut r = client
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize().to_string());
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        r.send()
    };
    for foreign in [
        "http://evil.example",
        "http://127.0.0.1.evil.example:80",
        "null",
    ] {
        let r = post(Some(foreign.to_owned())).await.unwrap();
        assert_eq!(r.status(), 403, "Origin: {foreign}");
    }
    for fine in [None, Some(own)] {
        let r = post(fine.clone()).await.unwrap();
        assert_eq!(r.status(), 200, "Origin: {fine:?}: {:?}", r.text().await);
    }
}

/// Without a token the server answers only to loopback names (a rebound
/// DNS name reaches it with a foreign `Host`); with `--token-env` it may
/// be reached by any name, the token being what guards it.
#[tokio::test]
async fn serve_http_answers_a_foreign_host_only_behind_its_token() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::new();
    let post = |url: &str, auth: Option<&str>| {
        let mut r = client
            .post(url)
            .header("host", "pipewright.internal:8808")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(initialize().to_string());
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        r.send()
    };
    let open = tempfile::tempdir().unwrap();
    let (_open, url) = serve(open.path(), &[]).await;
    let r = post(&url, None).await.unwrap();
    assert!(r.status().is_client_error(), "{}", r.status());
    let guarded = tempfile::tempdir().unwrap();
    let (_guarded, url) = serve(guarded.path(), &["--token-env", "SERVE_TOKEN"]).await;
    let r = post(&url, Some("Bearer s3cret-token-for-tests"))
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "{:?}", r.text().await);
}

/// `pipewright` with every directory and `PIPEWRIGHT_*` variable it reads
/// set under `dir`, whatever the user exported.
fn isolated(dir: &std::path::Path) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::from_std(common::pipewright_in(dir));
    c.env("XDG_DATA_HOME", dir.join("xdg"))
        .env("XDG_CONFIG_HOME", dir.join("xdg"))
        .env("XDG_STATE_HOME", dir.join("xdg"))
        .env("NO_COLOR", "1");
    c
}

/// What a command printed on stderr, after checking it exited with `code`
/// and did not panic.
fn refused(out: &std::process::Output, code: i32) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "a panic, not a refusal: {err}");
    assert_eq!(out.status.code(), Some(code), "{err}");
    err
}

/// A duration that fits the clock's type but not the clock (`1e19` s)
/// made `Instant + Duration` panic ("overflow when adding duration to
/// instant"); from a flag, a file's budget or a node's `timeout:` it is
/// now refused with a sentence that names it and the limit, at its place.
#[test]
fn a_duration_past_a_year_is_refused_by_name_from_a_flag_a_budget_and_a_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let node = "pipe:\n  - id: a\n    tool: echo\n    args: {message: hi}\n";
    let plain = dir.path().join("plain.yml");
    std::fs::write(&plain, node).unwrap();

    let out = isolated(dir.path())
        .args(["run", "--no-save", "--max-duration", "1e19"])
        .arg(&plain)
        .output()
        .unwrap();
    let err = refused(&out, 2);
    assert!(
        err.contains("--max-duration `1e19` is longer than 8760h (365 days)"),
        "{err}"
    );

    let budget = dir.path().join("budget.yml");
    std::fs::write(
        &budget,
        format!("budget: {{max_duration: \"10000000000000000000s\"}}\n{node}"),
    )
    .unwrap();
    let timeout = dir.path().join("timeout.yml");
    std::fs::write(
        &timeout,
        format!("{node}    timeout: 9000000000000000000\n"),
    )
    .unwrap();
    for (file, at, what) in [
        (
            &budget,
            "budget.yml:1:24:",
            "`max_duration` `10000000000000000000s`",
        ),
        (
            &timeout,
            "timeout.yml:5:14:",
            "`timeout` `9000000000000000000`",
        ),
    ] {
        for cmd in [&["run", "--no-save"][..], &["check"]] {
            let out = isolated(dir.path()).args(cmd).arg(file).output().unwrap();
            let err = refused(&out, 2);
            assert!(
                err.contains(&format!(
                    "{at} error: {what} is longer than 8760h (365 days)"
                )),
                "{cmd:?}: {err}"
            );
        }
    }

    let out = isolated(dir.path())
        .args(["tools", "call", "echo", "--timeout", "1e19", "--args"])
        .arg(r#"{"message": "hi"}"#)
        .output()
        .unwrap();
    let err = refused(&out, 2);
    assert!(err.contains("--timeout `1e19` is longer than"), "{err}");
}

/// An age is not a deadline: `runs prune --older-than` any number of
/// days keeps every run instead of overflowing (`n * 86400` panicked).
#[test]
fn a_prune_age_of_any_size_keeps_every_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = isolated(dir.path())
        .args(["runs", "prune", "--older-than", "99999999999999999d"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("removed 0 run(s)"),
        "{err}"
    );
}

/// A file of `aliases` lines aliasing one string of `mb` MiB.
fn aliased_string_file(dir: &std::path::Path, mb: usize, aliases: usize) -> std::path::PathBuf {
    let mut text = format!("vars:\n  big: &big \"{}\"\n", "x".repeat(mb * 1024 * 1024));
    for i in 0..aliases {
        text.push_str(&format!("  k{i}: *big\n"));
    }
    text.push_str("pipe:\n  - id: a\n    tool: echo\n    args: {message: hi}\n");
    let path = dir.join("aliased.yml");
    std::fs::write(&path, text).unwrap();
    path
}

/// 3 MiB anchored once and aliased 2,000 times passed the node limit and
/// asked for ~120 GB; it is refused at the alias that passes the byte
/// limit, which `PIPEWRIGHT_MAX_ALIAS_MB` raises.
#[test]
fn a_big_string_aliased_thousands_of_times_is_refused_at_its_alias() {
    let dir = tempfile::tempdir().unwrap();
    let path = aliased_string_file(dir.path(), 3, 2000);
    let out = isolated(dir.path())
        .arg("check")
        .arg(&path)
        .output()
        .unwrap();
    let err = refused(&out, 2);
    assert!(
        err.contains("aliased.yml:7:7: error: anchors and aliases copy more than 16 MiB of text"),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert!(
        err.contains("PIPEWRIGHT_MAX_ALIAS_MB=N"),
        "{}",
        &err[..err.len().min(2000)]
    );

    let path = aliased_string_file(dir.path(), 1, 20);
    let out = isolated(dir.path())
        .arg("check")
        .arg(&path)
        .output()
        .unwrap();
    refused(&out, 2);
    let out = isolated(dir.path())
        .arg("check")
        .arg(&path)
        .env("PIPEWRIGHT_MAX_ALIAS_MB", "32")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `pipewright run` of a node whose `transform:` is `jq`, with its output
/// mocked (no server), every `PIPEWRIGHT_*` variable of this process
/// removed and `env` set: its exit code and stderr.
fn run_transform(dir: &std::path::Path, jq: &str, env: &[(&str, &str)]) -> (Option<i32>, String) {
    let file = dir.join("hostile.yml");
    let text = format!(
        "pipe:\n  - id: a\n    tool: echo\n    mock: {{result: 1}}\n    transform: '{}'\n",
        jq.replace('\'', "''")
    );
    std::fs::write(&file, text).unwrap();
    let mut cmd = pw();
    cmd.env("PIPEWRIGHT_DATA_DIR", dir.join("data"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.arg("run").arg(&file).output().unwrap();
    let err =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    (out.status.code(), err)
}

/// Each of these aborted `pipewright run` (a stack overflow as a million
/// levels were dropped or printed, or a failed allocation of gigabytes):
/// the node fails with the limit named and the run exits 1.
#[test]
fn a_hostile_transform_fails_its_node_and_the_run_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    for (jq, says) in [
        (
            "reduce range(1000000) as $i (null; [.]) | length",
            "nested more than 512 levels deep",
        ),
        (
            "reduce range(1000000) as $i (null; [.]) | tojson",
            "nested more than 512 levels deep",
        ),
        (
            "\"[\" * 100000 | fromjson",
            "nested more than 512 levels deep",
        ),
        (
            "reduce range(40) as $i (\"x\"; . + .)",
            "more than 256 MiB of memory",
        ),
        (
            "reduce range(40) as $i ([1]; . + .)",
            "more than 256 MiB of memory",
        ),
    ] {
        let (code, err) = run_transform(dir.path(), jq, &[]);
        assert_eq!(code, Some(1), "{jq}: {err}");
        assert!(err.contains(says), "{jq}: {err}");
    }
    // The memory limit can be lowered and raised.
    let jq = "reduce range(25) as $i (\"x\"; . + .) | length";
    let (code, err) = run_transform(dir.path(), jq, &[("PIPEWRIGHT_JQ_MEMORY_MB", "16")]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("more than 16 MiB of memory") && err.contains("PIPEWRIGHT_JQ_MEMORY_MB=N"),
        "{err}"
    );
    let (code, err) = run_transform(dir.path(), jq, &[("PIPEWRIGHT_JQ_MEMORY_MB", "128")]);
    assert_eq!(code, Some(0), "{err}");
}

/// The saved runs (one JSON file each) under `dir`'s data directory, as
/// `serve_pipe` sets it.
fn saved_runs(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let runs = dir.join("xdg/pipewright/runs");
    let Ok(entries) = std::fs::read_dir(&runs) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap())
        .collect()
}

/// `SIGTERM` to `child`.
fn terminate(child: &tokio::process::Child) {
    let pid = child.id().expect("running");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn serve_http_drains_on_sigterm_the_calls_in_flight_finish_and_nothing_new_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = serve_file(
        dir.path(),
        "vars:\n  ms: 0\npipe:\n  - id: wait\n    tool: slow\n    args: {ms: \"${var.ms}\"}\n",
        &["--max-calls-per-session", "32", "--drain", "60s"],
    )
    .await;
    let mcp = Mcp::new(url.clone());
    let session = mcp.open().await;
    // 20 calls of 1.5 s each, their answers' headers out: in flight.
    let mut calls = Vec::new();
    for i in 0..20 {
        let r = mcp
            .post(Some(&session), &nap(100 + i, 1_500))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        calls.push(tokio::spawn(async move { r.text().await.unwrap() }));
    }
    assert_eq!(readyz(&url).await["calls_in_flight"], 20);
    terminate(&child);
    // Readiness fails at once, while the 20 are still going.
    let base = url.trim_end_matches("/mcp").to_owned();
    let status = loop {
        let r = reqwest::get(format!("{base}/readyz")).await.unwrap();
        if r.status() == 503 {
            break r.json::<serde_json::Value>().await.unwrap();
        }
    };
    assert_eq!(status["draining"], true, "{status}");
    assert_eq!(status["calls_in_flight"], 20, "{status}");
    // A new agent, and a new call in an open session, are refused, retryably.
    for r in [
        mcp.post(None, &initialize()).send().await.unwrap(),
        mcp.post(Some(&session), &nap(200, 0)).send().await.unwrap(),
    ] {
        assert_eq!(r.status(), 503);
        assert!(r.headers().get("retry-after").is_some());
        let body: serde_json::Value = r.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.contains("shutting down"), "{message}");
    }
    // The 20 finish with their results, and the process exits 0.
    for call in calls {
        let body = call.await.unwrap();
        assert!(body.contains("\"result\""), "{body}");
        assert!(!body.contains("\"isError\":true"), "{body}");
    }
    let code = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("serve exits after the drain")
        .unwrap();
    assert_eq!(code.code(), Some(0));
    let runs = saved_runs(dir.path());
    assert_eq!(runs.len(), 20, "every run saved");
    assert!(
        runs.iter()
            .all(|r| r["composition"]["status"] == "completed"),
        "{runs:?}"
    );
}

#[tokio::test]
async fn serve_http_cancels_what_outlives_the_drain_with_its_compensations_and_saves_it() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url) = serve_file(
        dir.path(),
        "pipe:\n  - id: mail\n    tool: send_email\n    args: {to: a@example.com, subject: hi, body: x}\n    compensate:\n      tool: echo\n      args: {message: \"recall ${mail.message_id}\"}\n  - id: wait\n    tool: slow\n    args: {ms: 60000}\n",
        &["--drain", "300ms"],
    )
    .await;
    let mcp = Mcp::new(url.clone());
    let session = mcp.open().await;
    let call = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "up", "arguments": {}}
    });
    let r = mcp.post(Some(&session), &call).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let pending = tokio::spawn(async move { r.text().await });
    // The first node has answered: the run is in its 60 s wait.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(Instant::now() < deadline, "the run never reached its wait");
        let log = reqwest::get(format!("{}/readyz", url.trim_end_matches("/mcp")))
            .await
            .unwrap()
            .json::<serde_json::Value>()
            .await
            .unwrap();
        if log["calls_in_flight"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    terminate(&child);
    let code = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("serve exits soon after the drain, not after the 60 s call")
        .unwrap();
    assert_eq!(code.code(), Some(0));
    let _ = pending.await;
    let runs = saved_runs(dir.path());
    assert_eq!(runs.len(), 1, "the cancelled run is saved");
    let run = &runs[0];
    assert_eq!(run["composition"]["status"], "cancelled", "{run}");
    let undo = run["compensations"].as_array().expect("compensations");
    assert_eq!(undo.len(), 1, "{run}");
    assert_eq!(undo[0]["node"], "mail");
    assert_eq!(undo[0]["status"], "ok");
}
