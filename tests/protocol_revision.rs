//! MCP 2026-07-28 as a client, against real servers: a server of the
//! official Python SDK (`tests/interop/modern_server.py`, mcp 2.3.0) over
//! stdio and Streamable HTTP, serving only 2026-07-28, both eras (the
//! SDK's default) or only its legacy handshake, and the reference server
//! (server-everything), which only knows `initialize`. One pipewright
//! binary in `auto` mode negotiates the right revision with each (2025-11-25
//! with every server that answers `initialize`); `--protocol`,
//! `PIPEWRIGHT_PROTOCOL` and a server's `protocol:` force one.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{Value, json};

mod common;

use common::{Server, output, python, root};

fn modern_server() -> String {
    root()
        .join("tests/interop/modern_server.py")
        .display()
        .to_string()
}

fn everything_js() -> PathBuf {
    root().join("tests/interop/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// `pipewright ARGS…` with every directory it reads or writes under `home`.
fn pw(home: &Path) -> Command {
    let mut cmd = Command::from_std(common::pipewright());
    cmd.env("PIPEWRIGHT_DATA_DIR", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_DATA_HOME", home.join("data"))
        .timeout(Duration::from_secs(60));
    cmd
}

/// `tools list --server NAME=…` (text) and `--json` for one server: the
/// text's first line and the server's JSON entry.
fn tools_list(home: &Path, server: &str, extra: &[&str]) -> (String, Value) {
    let (code, text, stderr) = output(
        pw(home)
            .args(["tools", "list", "--server", server])
            .args(extra),
    );
    assert_eq!(code, 0, "tools list failed: {stderr}");
    let (code, json, stderr) = output(
        pw(home)
            .args(["tools", "list", "--json", "--server", server])
            .args(extra),
    );
    assert_eq!(code, 0, "tools list --json failed: {stderr}");
    let json: Value = serde_json::from_str(&json).expect("tools list --json prints JSON");
    let name = server.split('=').next().unwrap_or_default();
    let first = text.lines().next().unwrap_or_default().to_owned();
    (first, json[name].clone())
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Waits until something listens on `port`.
fn wait_listening(port: u16, child: &mut Child) {
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the server exited before listening: {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on port {port}");
}

/// The Python SDK server on Streamable HTTP, serving only 2026-07-28,
/// writing what each POST carried to `record`.
fn modern_http(record: &Path) -> Server {
    let port = free_port();
    let mut child = StdCommand::new(python())
        .arg(modern_server())
        .args(["http", &port.to_string()])
        .arg(record)
        .arg("--modern-only")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Python SDK server");
    wait_listening(port, &mut child);
    Server {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// server-everything on Streamable HTTP.
fn everything_http() -> Server {
    let port = free_port();
    let mut child = StdCommand::new("node")
        .arg(everything_js())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start node (is it on PATH?)");
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let ready = lines.any(|l| l.is_ok_and(|l| l.contains("listening on port")));
    assert!(ready, "the reference HTTP server did not start");
    std::thread::spawn(move || for _ in lines {});
    Server {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

const TWO_CALLS: &str = "pipe:
  - id: sum
    tool: add
    args: {a: 2, b: 3}
  - id: loud
    tool: shout
    args: {text: \"total ${sum.result}\"}
  - id: seen
    tool: meta
";

/// A pipeline of two plain tools, one that asks for input (answered from
/// the answers file), and one that reports what the server saw.
fn pipeline(dir: &Path, server: &str) -> PathBuf {
    pipeline_of(
        dir,
        server,
        &format!("{TWO_CALLS}  - id: hi\n    tool: greet\n"),
    )
}

fn pipeline_of(dir: &Path, server: &str, steps: &str) -> PathBuf {
    let file = dir.join("flow.yml");
    std::fs::write(&file, format!("servers:\n  modern:\n{server}{steps}")).expect("write");
    std::fs::write(dir.join("answers.yml"), "hi:\n  - accept: {name: Ada}\n").expect("write");
    file
}

/// `run FILE --answers answers.yml --format json`: the trace.
fn run(home: &Path, file: &Path) -> Value {
    let answers = file.with_file_name("answers.yml");
    let (code, stdout, stderr) = output(
        pw(home)
            .arg("run")
            .arg(file)
            .arg("--answers")
            .arg(&answers)
            .args(["--format", "json", "--no-save"]),
    );
    let trace: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a trace ({e}):\n{stdout}\n{stderr}"));
    assert_eq!(code, 0, "{stderr}\n{trace:#}");
    trace
}

/// What a run against the 2026-07-28 server must show.
fn check_modern_run(trace: &Value) {
    let nodes = &trace["nodes"];
    assert_eq!(nodes["sum"]["output"], json!({"result": 5}));
    assert_eq!(nodes["loud"]["output"], json!({"result": "TOTAL 5"}));
    // The input-required result was answered from the answers file, and
    // the call went again with the reply and the server's state.
    assert_eq!(
        nodes["hi"]["output"],
        json!({"greeting": "Hello, Ada!", "state": "round-1"})
    );
    let asked = &nodes["hi"]["interactions"][0];
    assert_eq!(asked["kind"], "elicitation");
    assert_eq!(asked["by"], "answers");
    assert_eq!(asked["request"]["message"], "What is your name?");
    assert_eq!(
        asked["reply"],
        json!({"action": "accept", "content": {"name": "Ada"}})
    );
    // Every request carried the 2026-07-28 `_meta` envelope.
    let seen = &nodes["seen"]["output"];
    assert_eq!(seen["protocolVersion"], "2026-07-28", "{seen}");
    let keys = seen["metaKeys"].as_array().expect("metaKeys");
    for key in [
        "io.modelcontextprotocol/protocolVersion",
        "io.modelcontextprotocol/clientInfo",
        "io.modelcontextprotocol/clientCapabilities",
    ] {
        assert!(keys.contains(&json!(key)), "{key} missing in {seen}");
    }
    assert_eq!(trace["server_protocols"], json!({"modern": "2026-07-28"}));
}

/// A server that speaks only 2026-07-28 refuses `initialize`; `auto`
/// then asks `server/discover` on the same process and speaks 2026-07-28.
/// The SDK's default server (both eras) speaks it when told to, per server.
#[test]
fn the_python_sdk_server_over_stdio_speaks_2026_07_28() {
    let home = tempfile::tempdir().expect("dir");
    let py = python().display().to_string();
    let server = format!("modern={py} {} stdio --modern-only", modern_server());
    let (text, json) = tools_list(home.path(), &server, &[]);
    assert_eq!(text, "modern (5 tools, MCP 2026-07-28)");
    assert_eq!(json["protocolVersion"], "2026-07-28");
    let dual = format!("modern={py} {} stdio", modern_server());
    let (text, _) = tools_list(home.path(), &dual, &[]);
    assert_eq!(text, "modern (5 tools, MCP 2025-11-25)");
    let (text, _) = tools_list(home.path(), &dual, &["--protocol", "modern=2026-07-28"]);
    assert_eq!(text, "modern (5 tools, MCP 2026-07-28)");
    let names: Vec<&str> = json["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"add") && names.contains(&"greet"),
        "{names:?}"
    );

    let file = pipeline(
        home.path(),
        &format!(
            "    command: {py}\n    args: [{}, stdio, --modern-only]\n",
            modern_server()
        ),
    );
    check_modern_run(&run(home.path(), &file));
    // The file's `protocol:` picks 2026-07-28 for the server of both eras.
    let file = pipeline(
        home.path(),
        &format!(
            "    command: {py}\n    args: [{}, stdio]\n    protocol: 2026-07-28\n",
            modern_server()
        ),
    );
    check_modern_run(&run(home.path(), &file));
}

#[test]
fn the_python_sdk_server_over_http_gets_the_mcp_headers_and_meta() {
    let home = tempfile::tempdir().expect("dir");
    let record = home.path().join("posts.jsonl");
    let server = modern_http(&record);
    let (text, json) = tools_list(home.path(), &format!("modern={}", server.url), &[]);
    assert_eq!(text, "modern (5 tools, MCP 2026-07-28)");
    assert_eq!(json["protocolVersion"], "2026-07-28");

    let file = pipeline(home.path(), &format!("    url: {}\n", server.url));
    check_modern_run(&run(home.path(), &file));

    // What the server received: one refused `initialize` per connection
    // (`tools list` twice, `run` once), each followed by `server/discover`;
    // every other request with the `Mcp-Method` header, calls with
    // `Mcp-Name`, all with the envelope.
    let all: Vec<Value> = std::fs::read_to_string(&record)
        .expect("the server's record")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    for (i, post) in all.iter().enumerate() {
        if post["method"] == "initialize" {
            assert_eq!(all[i + 1]["method"], "server/discover", "{all:#?}");
        }
    }
    let (initialize, posts): (Vec<Value>, Vec<Value>) =
        all.into_iter().partition(|p| p["method"] == "initialize");
    assert_eq!(initialize.len(), 3, "{initialize:#?}");
    let calls: Vec<&Value> = posts
        .iter()
        .filter(|p| p["method"] == "tools/call")
        .collect();
    // add, shout, greet twice (asked, then answered), meta.
    assert_eq!(calls.len(), 5, "{posts:#?}");
    for post in &posts {
        let headers = &post["headers"];
        assert_eq!(headers["mcp-protocol-version"], "2026-07-28", "{post}");
        assert_eq!(headers["mcp-method"], post["method"], "{post}");
        let meta = post["meta"].as_array().expect("meta keys");
        assert!(
            meta.contains(&json!("io.modelcontextprotocol/protocolVersion")),
            "{post}"
        );
    }
    let mut named: Vec<&str> = calls
        .iter()
        .filter_map(|c| c["headers"]["mcp-name"].as_str())
        .collect();
    // Nodes without a dependency between them run at once: any order.
    named.sort_unstable();
    assert_eq!(named, ["add", "greet", "greet", "meta", "shout"]);
}

#[test]
fn legacy_servers_negotiate_2025_11_25_from_the_same_binary_in_auto_mode() {
    let home = tempfile::tempdir().expect("dir");
    let py = python().display().to_string();
    let legacy_py = format!("old={py} {} stdio --legacy", modern_server());
    let (text, json) = tools_list(home.path(), &legacy_py, &[]);
    assert_eq!(text, "old (5 tools, MCP 2025-11-25)");
    assert_eq!(json["protocolVersion"], "2025-11-25");

    let everything = format!("everything=node {} stdio", everything_js().display());
    let (text, _) = tools_list(home.path(), &everything, &[]);
    assert!(text.ends_with("MCP 2025-11-25)"), "{text}");

    let http = everything_http();
    let (text, json) = tools_list(home.path(), &format!("everything={}", http.url), &[]);
    assert!(text.ends_with("MCP 2025-11-25)"), "{text}");
    assert_eq!(json["protocolVersion"], "2025-11-25");

    // A pipeline of two calls runs on the legacy handshake too, with no
    // 2026-07-28 envelope on its requests.
    let file = pipeline_of(
        home.path(),
        &format!(
            "    command: {py}\n    args: [{}, stdio, --legacy]\n",
            modern_server()
        ),
        TWO_CALLS,
    );
    let trace = run(home.path(), &file);
    assert_eq!(
        trace["nodes"]["loud"]["output"],
        json!({"result": "TOTAL 5"})
    );
    let seen = &trace["nodes"]["seen"]["output"];
    assert_eq!(seen["protocolVersion"], "2025-11-25", "{seen}");
    assert!(
        !seen["metaKeys"]
            .as_array()
            .expect("metaKeys")
            .contains(&json!("io.modelcontextprotocol/protocolVersion")),
        "{seen}"
    );
    assert_eq!(trace["server_protocols"], json!({"modern": "2025-11-25"}));
}

#[test]
fn the_revision_can_be_forced_by_flag_or_environment() {
    let home = tempfile::tempdir().expect("dir");
    let py = python().display().to_string();
    let modern = format!("modern={py} {} stdio", modern_server());
    let (text, _) = tools_list(home.path(), &modern, &["--protocol", "2026-07-28"]);
    assert_eq!(text, "modern (5 tools, MCP 2026-07-28)");
    let (text, _) = tools_list(
        home.path(),
        &modern,
        &[
            "--protocol",
            "2026-07-28",
            "--protocol",
            "modern=2025-11-25",
        ],
    );
    assert_eq!(text, "modern (5 tools, MCP 2025-11-25)");

    // A server that speaks only 2026-07-28, told to speak 2025-11-25.
    let only = format!("modern={py} {} stdio --modern-only", modern_server());
    let (code, _, stderr) = output(pw(home.path()).args([
        "tools",
        "list",
        "--protocol",
        "modern=2025-11-25",
        "--server",
        &only,
    ]));
    assert_eq!(code, 4, "{stderr}");
    assert!(
        stderr.contains("does not speak MCP 2025-11-25")
            && stderr.contains("it speaks 2026-07-28")
            && stderr.contains("protocol: auto"),
        "{stderr}"
    );

    let legacy = format!("old={py} {} stdio --legacy", modern_server());
    let (code, _, stderr) = output(
        pw(home.path())
            .env("PIPEWRIGHT_PROTOCOL", "2026-07-28")
            .args(["tools", "list", "--server", &legacy]),
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("does not speak MCP 2026-07-28") && stderr.contains("--protocol NAME=auto"),
        "{stderr}"
    );
    let (code, _, stderr) = output(pw(home.path()).args([
        "tools",
        "list",
        "--protocol",
        "2024-01-01",
        "--server",
        &legacy,
    ]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("2026-07-28"), "{stderr}");
}

#[test]
fn a_server_that_keeps_asking_is_given_up_after_eight_rounds() {
    let home = tempfile::tempdir().expect("dir");
    let file = home.path().join("loop.yml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  modern:\n    command: {}\n    args: [{}, stdio, --modern-only]\npipe:\n  - id: again\n    tool: stubborn\n",
            python().display(),
            modern_server()
        ),
    )
    .expect("write");
    let (code, stdout, stderr) =
        output(
            pw(home.path())
                .arg("run")
                .arg(&file)
                .args(["--format", "json", "--no-save"]),
        );
    assert_ne!(code, 0, "{stdout}");
    let trace: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a trace ({e}):\n{stdout}\n{stderr}"));
    let again = &trace["nodes"]["again"];
    let error = again["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("still asked for more input after 8 rounds"),
        "{again:#}"
    );
}

/// `ttlMs` of `tools/list` is honoured: past it the list counts as changed
/// and is read again before the next call; before it, it is not.
#[tokio::test]
async fn the_tool_list_is_read_again_once_its_ttl_passed() {
    use pipewright::engine::mcp::{ConnectOptions, Connection, Protocol, ServerSpec};
    let spec = |ttl: &str| ServerSpec::Stdio {
        command: python().display().to_string(),
        args: vec![modern_server(), "stdio".into(), "--modern-only".into()],
        env: [("MODERN_TOOLS_TTL_MS".to_owned(), ttl.to_owned())].into(),
        cwd: None,
        protocol: Some(Protocol::Auto),
    };
    let opts = ConnectOptions::default();
    let short = Connection::connect("short", &spec("300"), &opts)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let long = Connection::connect("long", &spec("600000"), &opts)
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    assert_eq!(short.protocol_version(), "2026-07-28");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(short.tools_changed(), "a list past its ttlMs is stale");
    assert!(!long.tools_changed(), "a list within its ttlMs is fresh");
    let again = short.reread_tools().await.expect("read again");
    assert_eq!(again.len(), 5);
    assert!(
        !short.tools_changed(),
        "read again: fresh for another ttlMs"
    );
    assert!(long.reread_tools().await.is_none());
    short.close().await;
    long.close().await;
}

/// `subscriptions/listen` as a client: a long-lived connection (the
/// workbench's, `serve`'s, a worker's) to a 2026-07-28 server that says
/// its tool list can change listens for it, and reads the list again
/// before the next call once the server says it changed, well within the
/// list's `ttlMs` (ten minutes here); a short-lived one (`run`'s) opens no
/// stream and is not told. Pinned to 2026-07-28, since `auto` may prefer
/// the 2025 handshake for a server that offers both.
#[tokio::test]
async fn a_listening_connection_reads_a_changed_tool_list_again() {
    use pipewright::engine::mcp::{ConnectOptions, Connection, Protocol, ServerSpec};
    let spec = ServerSpec::Stdio {
        command: python().display().to_string(),
        args: vec![modern_server(), "stdio".into()],
        env: [
            ("MODERN_TOOLS_TTL_MS".to_owned(), "600000".to_owned()),
            ("MODERN_GROW".to_owned(), "1".to_owned()),
        ]
        .into(),
        cwd: None,
        protocol: Some(Protocol::V2026_07_28),
    };
    let opts = |listen: bool| ConnectOptions {
        listen,
        ..ConnectOptions::default()
    };
    let quiet = Connection::connect("quiet", &spec, &opts(false))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    let listening = Connection::connect("listening", &spec, &opts(true))
        .await
        .unwrap_or_else(|e| panic!("connect: {e}"));
    assert_eq!(listening.protocol_version(), "2026-07-28");
    assert!(
        listening.can_listen(),
        "the SDK's server declares tools.listChanged"
    );
    let names =
        |c: &Connection| -> Vec<String> { c.tools().iter().map(|t| t.name.clone()).collect() };
    assert!(!names(&listening).contains(&"extra".to_owned()));

    let scope = pipewright::engine::mcp::human::CallScope::default();
    let cancel = tokio_util::sync::CancellationToken::new();
    let grow = |c: Connection| {
        let (scope, cancel) = (scope.clone(), cancel.clone());
        async move {
            c.call_scoped("grow", serde_json::Map::new(), None, None, &cancel, &scope)
                .await
                .unwrap_or_else(|e| panic!("grow: {e}"))
        }
    };
    grow(quiet.clone()).await;
    // The stream is opened in the background: the server is told to grow
    // until the listening connection hears of it (each call tells again).
    let start = Instant::now();
    while !listening.tools_changed() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the change never reached the listening connection\n{}",
            listening.log().text()
        );
        grow(listening.clone()).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let again = listening
        .reread_tools()
        .await
        .expect("the list is read again");
    assert!(
        again.iter().any(|t| t.name == "extra"),
        "{:?}",
        again.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    assert!(
        listening.log().text().contains("subscriptions/listen"),
        "{}",
        listening.log().text()
    );
    // The connection that does not listen grew first, and was never told.
    assert!(!quiet.tools_changed(), "{}", quiet.log().text());
    assert!(!names(&quiet).contains(&"extra".to_owned()));
    quiet.close().await;
    listening.close().await;
}
