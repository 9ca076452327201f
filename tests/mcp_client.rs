//! The MCP client against real peers: the official reference server
//! (`@modelcontextprotocol/server-everything`) over stdio and Streamable HTTP,
//! a small rmcp server for the cases the reference server cannot produce,
//! and a raw TCP listener that records what the client sends.

use std::{
    collections::BTreeMap,
    path::PathBuf,
    process::Stdio,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures::future::join_all;
use pipewright::engine::mcp::human::{CallScope, Notice};
use pipewright::engine::mcp::roots::Root;
use pipewright::engine::mcp::{
    CallOutcome, ConnectOptions, Connection, McpError, ServerSpec, output_of,
};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

// ---------------------------------------------------------------------------
// The reference server

/// Where `npm ci --prefix tests/interop` put the reference server.
fn interop_dir() -> PathBuf {
    std::env::var_os("PIPEWRIGHT_INTEROP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop"))
}

/// The reference server's entry point; fails the test when it is missing.
fn everything_js() -> PathBuf {
    let path = interop_dir().join("node_modules/.bin/mcp-server-everything");
    assert!(
        path.exists(),
        "the reference MCP server is not installed ({} is missing): run `npm ci --prefix tests/interop`",
        path.display()
    );
    path
}

fn everything_stdio() -> ServerSpec {
    ServerSpec::Stdio {
        command: "node".into(),
        args: vec![everything_js().display().to_string(), "stdio".into()],
        env: BTreeMap::new(),
        cwd: None,
        protocol: None,
    }
}

fn options() -> ConnectOptions {
    ConnectOptions {
        connect_timeout: Duration::from_secs(30),
        roots: vec![Root {
            uri: "file:///tmp/pipewright-roots-probe".into(),
            name: Some("probe".into()),
        }],
        ..ConnectOptions::default()
    }
}

async fn connect_everything() -> Connection {
    match Connection::connect("everything", &everything_stdio(), &options()).await {
        Ok(conn) => conn,
        Err(e) => panic!("could not connect to the reference server: {e}"),
    }
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, not {other}"),
    }
}

/// A call's scope whose token fires at the call's first progress
/// notification: the server is running it (the reference server's long
/// operation reports every step), so a cancel or a kill after that lands
/// mid-call, however slow the machine.
fn running() -> (CallScope, CancellationToken) {
    let started = CancellationToken::new();
    let fire = started.clone();
    let scope = CallScope {
        notify: Some(Arc::new(move |n| {
            if matches!(n, Notice::Progress(_)) {
                fire.cancel();
            }
        })),
        ..CallScope::default()
    };
    (scope, started)
}

/// The reference server's ten-second operation of ten steps, started with
/// `scope`.
async fn long_operation(
    conn: &Connection,
    cancel: &CancellationToken,
    scope: &CallScope,
) -> Result<CallOutcome, McpError> {
    conn.call_scoped(
        "trigger-long-running-operation",
        args(json!({"duration": 10, "steps": 10})),
        None,
        None,
        cancel,
        scope,
    )
    .await
}

async fn call(conn: &Connection, tool: &str, arguments: Value) -> CallOutcome {
    let never = CancellationToken::new();
    match conn
        .call(
            tool,
            args(arguments),
            None,
            Some(Duration::from_secs(20)),
            &never,
        )
        .await
    {
        Ok(outcome) => outcome,
        Err(e) => panic!("`{tool}` failed: {e}"),
    }
}

#[tokio::test]
async fn stdio_connect_lists_the_tools_with_their_annotations() {
    let conn = connect_everything().await;
    assert_eq!(conn.name(), "everything");
    assert!(conn.pid().is_some());
    let info = conn.server_info();
    assert_eq!(
        info["serverInfo"]["name"], "mcp-servers/everything",
        "{info}"
    );
    assert!(info["protocolVersion"].is_string(), "{info}");
    assert!(info["capabilities"]["tools"].is_object(), "{info}");

    let tools = conn.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "trigger-long-running-operation",
    ] {
        assert!(
            names.contains(&expected),
            "`{expected}` missing from {names:?}"
        );
    }
    // Registered only for clients that declare the roots capability.
    assert!(names.contains(&"get-roots-list"), "{names:?}");

    let echo = conn.tool("echo").expect("echo is listed");
    assert_eq!(echo.annotations.read_only, Some(true));
    assert_eq!(echo.annotations.destructive, Some(false));
    assert_eq!(echo.annotations.idempotent, Some(true));
    assert_eq!(echo.annotations.open_world, Some(false));
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");
    assert_eq!(echo.raw["name"], "echo");
    assert!(conn.tool("no-such-tool").is_none());
    conn.close().await;
}

#[tokio::test]
async fn echo_gives_its_text_and_the_request_as_sent() {
    let conn = connect_everything().await;
    let never = CancellationToken::new();
    let meta = args(json!({"idempotencyKey": "run-1/echo"}));
    let outcome = conn
        .call(
            "echo",
            args(json!({"message": "hello"})),
            Some(meta),
            None,
            &never,
        )
        .await
        .expect("echo answers");
    assert!(!outcome.is_error);
    assert_eq!(output_of(&outcome.result), json!("Echo: hello"));
    assert_eq!(outcome.output(), json!("Echo: hello"));
    let request = &outcome.request;
    assert_eq!(request["jsonrpc"], "2.0");
    assert_eq!(request["method"], "tools/call");
    assert!(
        request["id"].is_number() || request["id"].is_string(),
        "{request}"
    );
    assert_eq!(request["params"]["name"], "echo");
    assert_eq!(request["params"]["arguments"], json!({"message": "hello"}));
    assert_eq!(request["params"]["_meta"]["idempotencyKey"], "run-1/echo");
    assert_eq!(outcome.result["content"][0]["type"], "text");
    conn.close().await;
}

#[tokio::test]
async fn get_sum_and_image_outputs_follow_the_spec_rules() {
    let conn = connect_everything().await;
    let sum = call(&conn, "get-sum", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.output(), json!("The sum of 2 and 3 is 5."));

    // More than one content item: the output is the content array.
    let image = call(&conn, "get-tiny-image", json!({})).await;
    let output = image.output();
    let items = output.tree().as_array().expect("content array");
    assert!(items.iter().any(|item| item["type"] == "image"), "{output}");
    conn.close().await;
}

#[tokio::test]
async fn a_tool_error_result_is_not_a_transport_error() {
    let conn = connect_everything().await;
    let never = CancellationToken::new();
    // Arguments that fail the tool's schema: MCP servers answer with an
    // `isError` result or a JSON-RPC error; either way it is not unreachable.
    match conn
        .call("get-sum", args(json!({"a": "two"})), None, None, &never)
        .await
    {
        Ok(outcome) => {
            assert!(outcome.is_error, "{}", outcome.result);
            assert!(!pipewright::engine::mcp::error_text(&outcome.result).is_empty());
        }
        Err(e @ McpError::Protocol { .. }) => assert!(!e.is_unreachable()),
        Err(other) => panic!("unexpected error: {other}"),
    }
    conn.close().await;
}

#[tokio::test]
async fn fifty_concurrent_calls_on_one_connection_all_succeed() {
    let conn = connect_everything().await;
    let never = CancellationToken::new();
    let calls = (0..50).map(|i| {
        let conn = conn.clone();
        let never = never.clone();
        async move {
            let outcome = conn
                .call(
                    "echo",
                    args(json!({"message": format!("m{i}")})),
                    None,
                    None,
                    &never,
                )
                .await;
            (i, outcome)
        }
    });
    for (i, outcome) in join_all(calls).await {
        let outcome = outcome.unwrap_or_else(|e| panic!("call {i} failed: {e}"));
        assert_eq!(outcome.output(), json!(format!("Echo: m{i}")));
    }
    conn.close().await;
}

#[tokio::test]
async fn slow_calls_run_at_the_same_time() {
    let conn = connect_everything().await;
    let never = CancellationToken::new();
    let started = Instant::now();
    let calls = (0..8).map(|_| {
        conn.call(
            "trigger-long-running-operation",
            args(json!({"duration": 2, "steps": 2})),
            None,
            None,
            &never,
        )
    });
    for outcome in join_all(calls).await {
        let outcome = outcome.unwrap_or_else(|e| panic!("long call failed: {e}"));
        assert!(!outcome.is_error, "{}", outcome.result);
    }
    // One after another would take 16 s.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "8 calls of 2 s took {:?}: they did not overlap",
        started.elapsed()
    );
    conn.close().await;
}

#[tokio::test]
async fn cancelling_a_long_call_returns_at_once_and_the_connection_lives_on() {
    let conn = connect_everything().await;
    let cancel = CancellationToken::new();
    let (scope, started) = running();
    let task = {
        let conn = conn.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move { long_operation(&conn, &cancel, &scope).await })
    };
    started.cancelled().await;
    let fired = Instant::now();
    cancel.cancel();
    let result = task.await.expect("the call task ends");
    let waited = fired.elapsed();
    assert!(
        matches!(result, Err(McpError::Cancelled { .. })),
        "{result:?}"
    );
    assert!(waited < Duration::from_secs(1), "cancel took {waited:?}");
    // The connection is still usable.
    assert_eq!(
        call(&conn, "echo", json!({"message": "after"}))
            .await
            .output(),
        json!("Echo: after")
    );
    conn.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_cancelled_stdio_call_sends_notifications_cancelled_with_its_id() {
    // `tee` copies what the client writes to the server into a file.
    let dir = tempfile::tempdir().expect("a temp dir");
    let wire = dir.path().join("to-server.jsonl");
    let script = format!(
        "tee '{}' | exec node '{}' stdio",
        wire.display(),
        everything_js().display()
    );
    let spec = ServerSpec::Stdio {
        command: "sh".into(),
        args: vec!["-c".into(), script],
        env: BTreeMap::new(),
        cwd: None,
        protocol: None,
    };
    let conn = Connection::connect("teed", &spec, &options())
        .await
        .unwrap_or_else(|e| panic!("could not connect through tee: {e}"));
    let cancel = CancellationToken::new();
    let (scope, started) = running();
    let call = long_operation(&conn, &cancel, &scope);
    let fire = async {
        started.cancelled().await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, fire);
    assert!(
        matches!(result, Err(McpError::Cancelled { .. })),
        "{result:?}"
    );

    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let sent = std::fs::read_to_string(&wire).unwrap_or_default();
        let messages: Vec<Value> = sent
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect();
        let call_id = messages
            .iter()
            .find(|m| m["method"] == "tools/call")
            .map(|m| m["id"].clone());
        let cancelled = messages
            .iter()
            .find(|m| m["method"] == "notifications/cancelled");
        if let (Some(id), Some(cancelled)) = (call_id, cancelled) {
            assert_eq!(cancelled["params"]["requestId"], id, "{cancelled}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no cancellation on the wire:\n{sent}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    conn.close().await;
}

#[tokio::test]
async fn a_call_past_its_timeout_fails_with_timeout() {
    let conn = connect_everything().await;
    let never = CancellationToken::new();
    let started = Instant::now();
    let result = conn
        .call(
            "trigger-long-running-operation",
            args(json!({"duration": 5, "steps": 5})),
            None,
            Some(Duration::from_millis(300)),
            &never,
        )
        .await;
    match result {
        Err(McpError::Timeout { tool, after, .. }) => {
            assert_eq!(tool, "trigger-long-running-operation");
            assert_eq!(after, Duration::from_millis(300));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(
        call(&conn, "echo", json!({"message": "x"})).await.output(),
        json!("Echo: x")
    );
    conn.close().await;
}

#[tokio::test]
async fn the_server_asks_for_roots_and_gets_ours() {
    let conn = connect_everything().await;
    // The server asks `roots/list` some time after the handshake; until it
    // has its answer, the tool says it has no roots.
    let deadline = Instant::now() + Duration::from_secs(10);
    let text = loop {
        let roots = call(&conn, "get-roots-list", json!({})).await;
        let text = roots.output();
        let text: String = text.as_str().expect("a text answer").to_string();
        if text.contains("file:///") || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        text.contains("file:///tmp/pipewright-roots-probe"),
        "{text}"
    );
    assert!(text.contains("probe"), "{text}");
    conn.close().await;
}

#[tokio::test]
async fn stderr_and_log_notifications_land_in_the_server_log() {
    let conn = connect_everything().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let text = conn.log().text();
        if text.contains("Starting default (STDIO) server") && text.contains("Roots updated") {
            break;
        }
        assert!(Instant::now() < deadline, "server log so far:\n{text}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    conn.close().await;
}

#[tokio::test]
async fn a_missing_command_is_a_spawn_error() {
    let spec = ServerSpec::Stdio {
        command: "pipewright-no-such-server-binary".into(),
        args: vec![],
        env: BTreeMap::new(),
        cwd: None,
        protocol: None,
    };
    let err = Connection::connect("ghost", &spec, &options())
        .await
        .expect_err("nothing to start");
    assert!(matches!(err, McpError::Spawn { .. }), "{err:?}");
    assert!(err.is_unreachable());
    assert_eq!(
        err.to_string(),
        "could not start server `ghost`: `pipewright-no-such-server-binary` not found on PATH"
    );
}

#[tokio::test]
async fn a_server_that_dies_at_start_shows_its_stderr() {
    let spec = ServerSpec::Stdio {
        command: "sh".into(),
        args: vec!["-c".into(), "echo boom >&2; exit 3".into()],
        env: BTreeMap::new(),
        cwd: None,
        protocol: None,
    };
    let err = Connection::connect("crashy", &spec, &options())
        .await
        .expect_err("the server exits at once");
    assert!(err.is_unreachable(), "{err:?}");
    assert!(matches!(err, McpError::Handshake { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("`crashy`"), "{message}");
    assert!(message.contains("boom"), "{message}");
}

#[tokio::test]
async fn env_and_cwd_reach_the_child() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let spec = ServerSpec::Stdio {
        command: "sh".into(),
        args: vec![
            "-c".into(),
            "echo \"secret=$PW_TEST_VAR dir=$(pwd)\" >&2; exit 1".into(),
        ],
        env: BTreeMap::from([("PW_TEST_VAR".into(), "v42".into())]),
        cwd: Some(dir.path().to_path_buf()),
        protocol: None,
    };
    let err = Connection::connect("envy", &spec, &options())
        .await
        .expect_err("the script exits");
    let message = err.to_string();
    assert!(message.contains("secret=v42"), "{message}");
    let canonical = dir.path().canonicalize().expect("canonical temp dir");
    assert!(
        message.contains(&canonical.display().to_string()),
        "{message}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_server_killed_mid_call_gives_closed() {
    let conn = connect_everything().await;
    let pid = conn.pid().expect("a stdio server has a pid");
    let never = CancellationToken::new();
    let (scope, started) = running();
    let task = {
        let conn = conn.clone();
        tokio::spawn(async move { long_operation(&conn, &never, &scope).await })
    };
    started.cancelled().await;
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("run kill");
    assert!(killed.success());
    let result = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the call ends soon after the server dies")
        .expect("the call task ends");
    assert!(matches!(result, Err(McpError::Closed { .. })), "{result:?}");
    assert!(!result.as_ref().is_err_and(McpError::is_unreachable));

    // Later calls fail the same way, without hanging.
    let never = CancellationToken::new();
    let later = tokio::time::timeout(
        Duration::from_secs(10),
        conn.call("echo", args(json!({"message": "x"})), None, None, &never),
    )
    .await
    .expect("no hang");
    assert!(matches!(later, Err(McpError::Closed { .. })), "{later:?}");
    assert!(conn.is_closed());
}

#[cfg(unix)]
#[tokio::test]
async fn close_ends_the_server_process() {
    let conn = connect_everything().await;
    let pid = conn.pid().expect("a pid");
    let other = conn.clone();
    conn.close().await;
    assert!(other.is_closed());
    let never = CancellationToken::new();
    let after = other
        .call("echo", args(json!({"message": "x"})), None, None, &never)
        .await;
    assert!(matches!(after, Err(McpError::Closed { .. })), "{after:?}");
    let alive = std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(Stdio::null())
        .status()
        .expect("run kill -0");
    assert!(
        !alive.success(),
        "server process {pid} still runs after close"
    );
}

// ---------------------------------------------------------------------------
// Streamable HTTP

/// The reference server in `streamableHttp` mode on a free port; killed on drop.
struct HttpEverything {
    _child: tokio::process::Child,
    url: String,
}

async fn start_everything_http() -> HttpEverything {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut child = tokio::process::Command::new("node")
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start node (is it on PATH?)");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let ready = tokio::time::timeout(Duration::from_secs(20), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("listening on port") {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(ready, Ok(true), "the reference HTTP server did not start");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    HttpEverything {
        _child: child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

#[tokio::test]
async fn http_connect_and_call_echo() {
    let server = start_everything_http().await;
    let spec = ServerSpec::Http {
        url: server.url.clone(),
        headers: BTreeMap::from([("X-Pipewright-Test".into(), "1".into())]),
        auth: None,
        protocol: None,
    };
    let conn = Connection::connect("everything-http", &spec, &options())
        .await
        .unwrap_or_else(|e| panic!("could not connect over HTTP: {e}"));
    assert!(conn.pid().is_none());
    assert!(conn.tool("echo").is_some());
    assert_eq!(
        call(&conn, "echo", json!({"message": "over http"}))
            .await
            .output(),
        json!("Echo: over http")
    );

    let never = CancellationToken::new();
    let calls = (0..20).map(|i| {
        conn.call(
            "echo",
            args(json!({"message": format!("h{i}")})),
            None,
            None,
            &never,
        )
    });
    for (i, outcome) in join_all(calls).await.into_iter().enumerate() {
        let outcome = outcome.unwrap_or_else(|e| panic!("HTTP call {i} failed: {e}"));
        assert_eq!(outcome.output(), json!(format!("Echo: h{i}")));
    }
    conn.close().await;
}

#[tokio::test]
async fn http_cancel_returns_at_once() {
    let server = start_everything_http().await;
    let spec = ServerSpec::Http {
        url: server.url.clone(),
        headers: BTreeMap::new(),
        auth: None,
        protocol: None,
    };
    let conn = Connection::connect("everything-http", &spec, &options())
        .await
        .unwrap_or_else(|e| panic!("could not connect over HTTP: {e}"));
    let cancel = CancellationToken::new();
    let (scope, started) = running();
    let task = {
        let conn = conn.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move { long_operation(&conn, &cancel, &scope).await })
    };
    started.cancelled().await;
    let fired = Instant::now();
    cancel.cancel();
    let result = task.await.expect("the call task ends");
    assert!(
        matches!(result, Err(McpError::Cancelled { .. })),
        "{result:?}"
    );
    assert!(
        fired.elapsed() < Duration::from_secs(1),
        "{:?}",
        fired.elapsed()
    );
    conn.close().await;
}

/// A listener that records the head of every HTTP request and answers 500.
async fn recording_listener() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let heads = Arc::new(Mutex::new(Vec::new()));
    let seen = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && head.len() < 64 * 1024 {
                match socket.read(&mut byte).await {
                    Ok(1) => head.push(byte[0]),
                    _ => break,
                }
            }
            if let Ok(mut heads) = seen.lock() {
                heads.push(String::from_utf8_lossy(&head).into_owned());
            }
            let _ = socket
                .write_all(
                    b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
            let _ = socket.shutdown().await;
        }
    });
    (format!("http://{addr}/mcp"), heads)
}

#[tokio::test]
async fn http_headers_reach_the_server_and_stay_out_of_errors() {
    let (url, heads) = recording_listener().await;
    let spec = ServerSpec::Http {
        url,
        headers: BTreeMap::from([
            ("Authorization".into(), "Bearer s3cret-token".into()),
            ("X-Pipewright-Probe".into(), "yes".into()),
        ]),
        auth: None,
        protocol: None,
    };
    let err = Connection::connect("users", &spec, &options())
        .await
        .expect_err("the server answers 500");
    let first = heads
        .lock()
        .map(|h| h.first().cloned().unwrap_or_default())
        .unwrap_or_default()
        .to_ascii_lowercase();
    assert!(first.starts_with("post /mcp "), "{first}");
    assert!(
        first.contains("authorization: bearer s3cret-token"),
        "{first}"
    );
    assert!(first.contains("x-pipewright-probe: yes"), "{first}");

    assert!(err.is_unreachable(), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("`users`"), "{message}");
    assert!(message.contains("500"), "{message}");
    assert!(!message.contains("s3cret"), "{message}");
    assert!(!format!("{err:?}").contains("s3cret"));
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let spec = ServerSpec::Http {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: BTreeMap::new(),
        auth: None,
        protocol: None,
    };
    let err = Connection::connect("down", &spec, &options())
        .await
        .expect_err("nothing listens");
    assert!(matches!(err, McpError::Connect { .. }), "{err:?}");
    assert!(err.is_unreachable());
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "could not connect to server `down` at http://127.0.0.1:{port}/mcp"
        )),
        "{message}"
    );
}

// ---------------------------------------------------------------------------
// A small rmcp server, for what the reference server cannot show: paged
// `tools/list`, a JSON-RPC error, `_meta` and cancellation as the server sees
// them, and plain JSON (not SSE) replies.

mod probe {
    use std::sync::{Arc, Mutex};

    use rmcp::{
        ErrorData, RoleServer, ServerHandler,
        model::{
            CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
            PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
        },
        service::RequestContext,
        transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        },
    };
    use serde_json::{Value, json};
    use tokio_util::sync::CancellationToken;

    /// What the server observed.
    #[derive(Default)]
    pub struct Seen {
        pub list_cursors: Vec<Option<String>>,
        pub metas: Vec<Value>,
        /// Fires when a `wait` call begins.
        pub waiting: CancellationToken,
        pub cancelled: CancellationToken,
    }

    #[derive(Clone)]
    pub struct Probe {
        pub seen: Arc<Mutex<Seen>>,
    }

    fn tool(name: &'static str) -> Tool {
        let schema = json!({"type": "object"});
        let Value::Object(schema) = schema else {
            unreachable!("an object literal")
        };
        Tool::new(name, format!("the {name} tool"), Arc::new(schema))
    }

    impl ServerHandler for Probe {
        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
        }

        async fn list_tools(
            &self,
            request: Option<PaginatedRequestParams>,
            _context: RequestContext<RoleServer>,
        ) -> Result<ListToolsResult, ErrorData> {
            let cursor = request.and_then(|r| r.cursor);
            if let Ok(mut seen) = self.seen.lock() {
                seen.list_cursors.push(cursor.clone());
            }
            let mut page = match cursor.as_deref() {
                None => ListToolsResult::with_all_items(vec![tool("structured"), tool("fail")]),
                Some("page-2") => {
                    let mut wipe = tool("wipe");
                    wipe.annotations = Some(ToolAnnotations::new().destructive(true));
                    ListToolsResult::with_all_items(vec![tool("wait"), wipe])
                }
                Some(other) => {
                    return Err(ErrorData::invalid_params(
                        format!("bad cursor {other}"),
                        None,
                    ));
                }
            };
            if cursor.is_none() {
                page.next_cursor = Some("page-2".into());
            }
            Ok(page)
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, ErrorData> {
            let meta = serde_json::to_value(&context.meta).unwrap_or(Value::Null);
            let (waiting, cancelled) = match self.seen.lock() {
                Ok(mut seen) => {
                    seen.metas.push(meta.clone());
                    (seen.waiting.clone(), seen.cancelled.clone())
                }
                Err(_) => (CancellationToken::new(), CancellationToken::new()),
            };
            match request.name.as_ref() {
                "structured" => {
                    Ok(CallToolResult::structured(json!({"n": 1, "meta": meta})).into())
                }
                "fail" => Err(ErrorData::invalid_params(
                    "fail always fails",
                    Some(json!({"why": "test"})),
                )),
                "ask" => Ok(CallToolResult::structured(ask_the_client(&context).await).into()),
                "wait" => {
                    waiting.cancel();
                    context.ct.cancelled().await;
                    cancelled.cancel();
                    Ok(CallToolResult::structured(json!("cancelled")).into())
                }
                other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
            }
        }
    }

    /// Sends the client the requests a server may send: `ping`, `roots/list`
    /// and `sampling/createMessage`; reports each answer.
    #[expect(deprecated, reason = "roots and sampling are deprecated by SEP-2577")]
    async fn ask_the_client(context: &RequestContext<RoleServer>) -> Value {
        use rmcp::model::{CreateMessageRequestParams, SamplingMessage};
        let peer = &context.peer;
        let ping = match peer
            .send_request(rmcp::model::ServerRequest::PingRequest(Default::default()))
            .await
        {
            Ok(_) => json!("ok"),
            Err(e) => json!(e.to_string()),
        };
        let roots = match peer.list_roots().await {
            Ok(result) => serde_json::to_value(result.roots).unwrap_or(Value::Null),
            Err(e) => json!(e.to_string()),
        };
        let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hi")], 10);
        let sampling = match peer.create_message(params).await {
            Ok(_) => json!("answered"),
            Err(rmcp::ServiceError::McpError(e)) => json!({"code": e.code.0, "message": e.message}),
            Err(e) => json!(e.to_string()),
        };
        json!({"ping": ping, "roots": roots, "sampling": sampling})
    }

    /// Serves a fresh probe on 127.0.0.1; stateful SSE or stateless JSON.
    pub async fn serve(json_replies: bool) -> (String, Arc<Mutex<Seen>>) {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let probe = Probe { seen: seen.clone() };
        let config = StreamableHttpServerConfig::default()
            .with_sse_keep_alive(None)
            .with_legacy_session_mode(!json_replies)
            .with_json_response(json_replies);
        let service = StreamableHttpService::new(
            move || Ok(probe.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let router = axum::Router::new().nest_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        (format!("http://{addr}/mcp"), seen)
    }
}

async fn connect_probe(json_replies: bool) -> (Connection, Arc<Mutex<probe::Seen>>) {
    let (url, seen) = probe::serve(json_replies).await;
    let spec = ServerSpec::Http {
        url,
        headers: BTreeMap::new(),
        auth: None,
        protocol: None,
    };
    let conn = Connection::connect("probe", &spec, &options())
        .await
        .unwrap_or_else(|e| panic!("could not connect to the probe server: {e}"));
    (conn, seen)
}

#[tokio::test]
async fn tools_list_follows_cursors_once() {
    let (conn, seen) = connect_probe(false).await;
    let tools = conn.tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["structured", "fail", "wait", "wipe"]);
    assert_eq!(
        conn.tool("wipe").map(|t| t.annotations.destructive),
        Some(Some(true))
    );
    let cursors = seen
        .lock()
        .map(|s| s.list_cursors.clone())
        .unwrap_or_default();
    assert_eq!(cursors, [None, Some("page-2".to_owned())]);
    // Calls do not list again.
    call(&conn, "structured", json!({})).await;
    let cursors = seen
        .lock()
        .map(|s| s.list_cursors.len())
        .unwrap_or_default();
    assert_eq!(cursors, 2);
    conn.close().await;
}

#[tokio::test]
async fn structured_content_is_the_output_and_meta_reaches_the_server() {
    let (conn, _seen) = connect_probe(false).await;
    let never = CancellationToken::new();
    let outcome = conn
        .call(
            "structured",
            Map::new(),
            Some(args(json!({"idempotencyKey": "k-7"}))),
            None,
            &never,
        )
        .await
        .expect("structured answers");
    let output = outcome.output();
    assert_eq!(output["n"], 1, "{output}");
    assert_eq!(output["meta"]["idempotencyKey"], "k-7", "{output}");
    assert!(
        output["meta"]["progressToken"].is_number() || output["meta"]["progressToken"].is_string()
    );
    conn.close().await;
}

#[tokio::test]
async fn a_json_rpc_error_is_a_protocol_error() {
    let (conn, _seen) = connect_probe(false).await;
    let never = CancellationToken::new();
    let err = conn
        .call("fail", Map::new(), None, None, &never)
        .await
        .expect_err("fail fails");
    match &err {
        McpError::Protocol {
            method,
            code,
            message,
            data,
            ..
        } => {
            assert_eq!(method, "tools/call");
            assert_eq!(*code, -32602);
            assert_eq!(message, "fail always fails");
            assert_eq!(data.as_deref(), Some(&json!({"why": "test"})));
        }
        other => panic!("expected a protocol error, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "server `probe` answered `tools/call` with error -32602: fail always fails"
    );
    assert!(!err.is_unreachable());
    conn.close().await;
}

#[tokio::test]
async fn cancel_and_timeout_reach_the_server_as_notifications() {
    let (conn, seen) = connect_probe(false).await;
    let (waiting, server_saw) = seen
        .lock()
        .map(|s| (s.waiting.clone(), s.cancelled.clone()))
        .expect("probe state");

    let cancel = CancellationToken::new();
    let call = conn.call("wait", Map::new(), None, None, &cancel);
    let fire = async {
        waiting.cancelled().await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, fire);
    assert!(
        matches!(result, Err(McpError::Cancelled { .. })),
        "{result:?}"
    );
    tokio::time::timeout(Duration::from_secs(3), server_saw.cancelled())
        .await
        .expect("the server saw notifications/cancelled");
    conn.close().await;

    let (conn, seen) = connect_probe(false).await;
    let server_saw = seen
        .lock()
        .map(|s| s.cancelled.clone())
        .expect("probe state");
    let never = CancellationToken::new();
    let result = conn
        .call(
            "wait",
            Map::new(),
            None,
            Some(Duration::from_millis(200)),
            &never,
        )
        .await;
    assert!(
        matches!(result, Err(McpError::Timeout { .. })),
        "{result:?}"
    );
    tokio::time::timeout(Duration::from_secs(3), server_saw.cancelled())
        .await
        .expect("the server saw notifications/cancelled after the timeout");
    conn.close().await;
}

#[tokio::test]
async fn a_dropped_call_still_cancels_on_the_server() {
    let (conn, seen) = connect_probe(false).await;
    let server_saw = seen
        .lock()
        .map(|s| s.cancelled.clone())
        .expect("probe state");
    let never = CancellationToken::new();
    let abandoned = tokio::time::timeout(
        Duration::from_millis(200),
        conn.call("wait", Map::new(), None, None, &never),
    )
    .await;
    assert!(abandoned.is_err(), "the outer timeout drops the call");
    tokio::time::timeout(Duration::from_secs(3), server_saw.cancelled())
        .await
        .expect("the server saw notifications/cancelled for the dropped call");
    conn.close().await;
}

#[tokio::test]
async fn plain_json_replies_work_too() {
    let (conn, _seen) = connect_probe(true).await;
    assert_eq!(conn.tools().len(), 4);
    let outcome = call(&conn, "structured", json!({})).await;
    assert_eq!(outcome.output()["n"], 1);
    conn.close().await;
}

#[tokio::test]
async fn server_requests_get_roots_and_ping_answered_and_sampling_declined_without_a_responder() {
    // Requests mid-call are the 2025-11-25 way: 2026-07-28 forbids them.
    let (url, _seen) = probe::serve(false).await;
    let spec = ServerSpec::Http {
        url,
        headers: BTreeMap::new(),
        auth: None,
        protocol: Some(pipewright::engine::mcp::Protocol::V2025_11_25),
    };
    let conn = Connection::connect("probe", &spec, &options())
        .await
        .unwrap_or_else(|e| panic!("could not connect to the probe server: {e}"));
    let asked = call(&conn, "ask", json!({})).await.output();
    assert_eq!(asked["ping"], "ok", "{asked}");
    assert_eq!(
        asked["roots"],
        json!([{"uri": "file:///tmp/pipewright-roots-probe", "name": "probe"}]),
        "{asked}"
    );
    // No one to answer: the spec's "user rejected" error.
    assert_eq!(asked["sampling"]["code"], -1, "{asked}");
    assert_eq!(
        asked["sampling"]["message"], "the user declined the sampling request",
        "{asked}"
    );
    assert!(
        conn.log().text().contains("sampling for no node: decline"),
        "{}",
        conn.log().text()
    );
    conn.close().await;
}

#[test]
fn a_connection_can_be_shared_across_tasks() {
    fn shareable<T: Send + Sync + Clone + 'static>() {}
    shareable::<Connection>();
    fn sendable_error<T: Send + Sync + std::error::Error + 'static>() {}
    sendable_error::<McpError>();
}
