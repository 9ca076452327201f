//! The built-in demo server driven by a real rmcp client: over stdio by
//! spawning the built binary, and over Streamable HTTP in-process.

use std::{
    process::Stdio,
    time::{Duration, Instant},
};

use pipewright::demo_server::{self, HttpServerHandle};
use rmcp::{
    ServiceExt as _,
    model::{CallToolRequestParams, CallToolResult, ClientRequest, PingRequest, ServerResult},
    service::{RoleClient, RunningService},
    transport::{StreamableHttpClientTransport, TokioChildProcess},
};
use rstest::rstest;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

mod common;
use common::Hermetic;

type Client = RunningService<RoleClient, ()>;

/// Generous bound for anything that should be quick.
const QUICK: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy)]
enum Kind {
    Stdio,
    Http,
}

/// A connected client, and the in-process server it talks to over HTTP.
struct Session {
    client: Client,
    server: Option<HttpServerHandle>,
}

fn demo_server_command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_pipewright"));
    command.hermetic().arg("demo-server");
    command
}

fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

async fn http_client(url: String) -> Client {
    install_crypto_provider();
    ().serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .expect("connect over HTTP")
}

async fn connect(kind: Kind) -> Session {
    connect_with(kind, false).await
}

/// A session with a demo server serving the conformance suite's fixtures
/// too (`--conformance-fixtures`), or not.
async fn connect_with(kind: Kind, fixtures: bool) -> Session {
    match kind {
        Kind::Stdio => {
            let mut command = demo_server_command();
            if fixtures {
                command.arg("--conformance-fixtures");
            }
            let transport = TokioChildProcess::new(command).expect("spawn");
            let client = ().serve(transport).await.expect("connect over stdio");
            Session {
                client,
                server: None,
            }
        }
        Kind::Http => {
            let options = demo_server::DemoServerOptions {
                fixtures,
                ..Default::default()
            };
            let (addr, server) = demo_server::spawn_http_with("127.0.0.1:0", options)
                .await
                .expect("spawn HTTP server");
            let client = http_client(format!("http://{addr}/mcp")).await;
            assert_eq!(server.url(), format!("http://{addr}/mcp"));
            Session {
                client,
                server: Some(server),
            }
        }
    }
}

impl Session {
    async fn close(self) {
        let _ = self.client.cancel().await;
        if let Some(server) = self.server {
            server.shutdown().await.expect("HTTP server shuts down");
        }
    }
}

fn params(name: &str, arguments: Value) -> CallToolRequestParams {
    let params = CallToolRequestParams::new(name.to_owned());
    match arguments {
        Value::Object(map) => params.with_arguments(map),
        _ => params,
    }
}

async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    tokio::time::timeout(QUICK, client.call_tool(params(name, arguments)))
        .await
        .unwrap_or_else(|_| panic!("{name} timed out"))
        .unwrap_or_else(|error| panic!("{name} failed: {error}"))
}

/// The structured content of a successful call, checked against its text.
async fn call_ok(client: &Client, name: &str, arguments: Value) -> Value {
    let result = call(client, name, arguments).await;
    assert_eq!(result.is_error, Some(false), "{name}: {result:?}");
    let structured = result
        .structured_content
        .clone()
        .expect("structured content");
    assert_eq!(result.content.len(), 1);
    let text = &result.content[0].as_text().expect("text content").text;
    let parsed: Value = serde_json::from_str(text).expect("text is JSON");
    assert_eq!(
        parsed, structured,
        "{name}: text and structured content differ"
    );
    structured
}

fn only_text(result: &CallToolResult) -> &str {
    assert_eq!(result.content.len(), 1, "{result:?}");
    &result.content[0].as_text().expect("text content").text
}

async fn error_text(client: &Client, name: &str, arguments: Value) -> String {
    let result = call(client, name, arguments).await;
    assert_eq!(result.is_error, Some(true), "{name}: {result:?}");
    only_text(&result).to_owned()
}

async fn counts(client: &Client) -> Value {
    call_ok(client, "call_counts", json!({})).await
}

#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn introduces_itself_and_answers_ping(#[case] kind: Kind) {
    let session = connect(kind).await;
    let info = session.client.peer_info().expect("server info");
    let server = info.server_info.as_ref().expect("implementation");
    assert_eq!(server.name, "pipewright-demo");
    assert_eq!(server.version, env!("CARGO_PKG_VERSION"));
    assert!(info.capabilities.tools.is_some());
    // Declared (the conformance fixtures fill them); empty by default.
    assert!(info.capabilities.resources.is_some());
    assert!(info.capabilities.prompts.is_some());
    assert!(
        info.instructions
            .as_deref()
            .is_some_and(|i| i.contains("search_users"))
    );
    let pong = session
        .client
        .send_request(ClientRequest::PingRequest(PingRequest::default()))
        .await
        .expect("ping");
    assert!(matches!(pong, ServerResult::EmptyResult(_)), "{pong:?}");
    session.close().await;
}

#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn lists_tools_with_schemas_and_annotations(#[case] kind: Kind) {
    let session = connect(kind).await;
    let tools = session.client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(
        names,
        [
            "search_users",
            "get_user_details",
            "send_email",
            "delete_user",
            "search_packages",
            "get_readme",
            "fetch_metadata",
            "list_items",
            "echo",
            "add",
            "flaky",
            "slow",
            "big_output",
            "fail",
            "crash",
            "summarize",
            "confirm_send",
            "connect_account",
            "draft_reply",
            "call_counts",
        ]
    );
    let tool = |name: &str| {
        tools
            .iter()
            .find(|tool| tool.name == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let hints = |name: &str| tool(name).annotations.clone().expect("annotations");
    let required = |name: &str| tool(name).input_schema.get("required").cloned();

    assert_eq!(hints("delete_user").destructive_hint, Some(true));
    assert_eq!(hints("delete_user").read_only_hint, Some(false));
    assert_eq!(hints("crash").destructive_hint, Some(true));
    assert_eq!(hints("send_email").destructive_hint, Some(false));
    assert_eq!(hints("send_email").open_world_hint, Some(true));
    assert_eq!(hints("send_email").idempotent_hint, Some(false));
    assert_eq!(hints("search_users").read_only_hint, Some(true));
    assert_eq!(hints("search_users").open_world_hint, Some(false));
    assert_eq!(hints("flaky").read_only_hint, Some(false));

    assert_eq!(required("search_users"), Some(json!(["query"])));
    assert_eq!(required("get_user_details"), Some(json!(["user_id"])));
    assert_eq!(
        required("send_email"),
        Some(json!(["to", "subject", "body"]))
    );
    assert_eq!(required("add"), Some(json!(["a", "b"])));
    assert_eq!(required("slow"), Some(json!(["ms"])));
    assert_eq!(required("list_items"), None);
    assert_eq!(
        tool("echo").input_schema["properties"]["message"]["type"],
        "string"
    );

    let add_output = tool("add")
        .output_schema
        .clone()
        .expect("add has an output schema");
    assert_eq!(add_output["properties"]["sum"]["type"], "number");
    assert!(tool("echo").output_schema.is_none());
    assert!(tools.iter().all(|tool| tool.description.is_some()));
    session.close().await;
}

#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn user_tools_chain_like_the_pipe_example(#[case] kind: Kind) {
    let session = connect(kind).await;
    let client = &session.client;

    let found = call_ok(client, "search_users", json!({ "query": "alice" })).await;
    assert_eq!(
        found,
        json!({
            "users": [{ "id": "u1", "name": "Alice Anders", "email": "alice@example.com" }],
            "count": 1
        })
    );
    let several = call_ok(
        client,
        "search_users",
        json!({ "query": "ALI", "limit": 5 }),
    )
    .await;
    assert_eq!(several["count"], 2);
    let limited = call_ok(client, "search_users", json!({ "query": "", "limit": 3 })).await;
    assert_eq!(limited["count"], 3);

    let details = call_ok(client, "get_user_details", json!({ "user_id": "u1" })).await;
    assert_eq!(details["email"], "alice@example.com");
    assert_eq!(details["plan"], "pro");
    assert_eq!(details["teams"], json!(["platform", "security"]));
    for key in ["id", "name", "created", "last_login"] {
        assert!(details[key].is_string(), "{key}");
    }
    let unknown = error_text(client, "get_user_details", json!({ "user_id": "u99" })).await;
    assert!(unknown.contains("no user with id \"u99\""), "{unknown}");

    let email = json!({ "to": "alice@example.com", "subject": "Account review", "body": "Hi" });
    let sent = call_ok(client, "send_email", email.clone()).await;
    assert_eq!(sent["status"], "queued");
    assert_eq!(sent["to"], "alice@example.com");
    assert!(
        sent["message_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("msg-"))
    );
    assert_eq!(
        call_ok(client, "send_email", email).await,
        sent,
        "deterministic"
    );

    let deleted = call_ok(client, "delete_user", json!({ "user_id": "u2" })).await;
    assert_eq!(deleted, json!({ "deleted": "u2" }));
    let still_there = call_ok(client, "get_user_details", json!({ "user_id": "u2" })).await;
    assert_eq!(still_there["id"], "u2");
    session.close().await;
}

#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn package_tools_chain_like_the_composition_examples(#[case] kind: Kind) {
    let session = connect(kind).await;
    let client = &session.client;

    let search = call_ok(
        client,
        "search_packages",
        json!({ "query": "mcp", "limit": 3 }),
    )
    .await;
    assert_eq!(search["count"], 3);
    assert_eq!(search["result"]["hits"].as_array().map(Vec::len), Some(3));
    let top = search["top_hit"]["name"]
        .as_str()
        .expect("top hit")
        .to_owned();
    assert_eq!(search["result"]["hits"][0]["name"], top.as_str());
    assert!(search["top_hit"]["score"].is_number());

    let readme = call_ok(client, "get_readme", json!({ "package": top })).await;
    assert!(
        readme["body"]
            .as_str()
            .is_some_and(|b| b.starts_with(&format!("# {top}")))
    );

    for hit in search["result"]["hits"].as_array().expect("hits") {
        let meta = call_ok(client, "fetch_metadata", json!({ "name": hit["name"] })).await;
        assert_eq!(meta["name"], hit["name"]);
        assert_eq!(meta["meta"]["version"], hit["version"]);
        assert!(meta["meta"]["stars"].is_u64());
    }

    let none = call_ok(
        client,
        "search_packages",
        json!({ "q": "rubric", "limit": 5 }),
    )
    .await;
    assert_eq!(none["count"], 0);
    assert_eq!(none["hits"], json!([]));
    assert_eq!(none["top_hit"], Value::Null);
    let unknown = error_text(client, "get_readme", json!({ "package": "nope" })).await;
    assert!(unknown.contains("no package named"), "{unknown}");
    session.close().await;
}

#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn shapes_for_the_output_rules(#[case] kind: Kind) {
    let session = connect(kind).await;
    let client = &session.client;

    // Plain text that is not JSON, and no structured content.
    let echoed = call(client, "echo", json!({ "message": "hello, world" })).await;
    assert_eq!(echoed.is_error, Some(false));
    assert_eq!(echoed.structured_content, None);
    assert_eq!(only_text(&echoed), "hello, world");

    // A single text content holding a JSON array.
    let items = call(
        client,
        "list_items",
        json!({ "count": 3, "prefix": "row-" }),
    )
    .await;
    assert_eq!(items.structured_content, None);
    let parsed: Value = serde_json::from_str(only_text(&items)).expect("JSON array");
    assert_eq!(
        parsed,
        json!([
            { "id": "row-0", "index": 0 },
            { "id": "row-1", "index": 1 },
            { "id": "row-2", "index": 2 }
        ])
    );
    let default_items = call(client, "list_items", json!({})).await;
    assert!(only_text(&default_items).starts_with(r#"[{"id":"item-0","index":0}"#));

    assert_eq!(
        call_ok(client, "add", json!({ "a": 2, "b": 3 })).await,
        json!({ "sum": 5 })
    );
    assert_eq!(
        call_ok(client, "add", json!({ "a": 1.5, "b": -4 })).await,
        json!({ "sum": -2.5 })
    );

    let big = call_ok(client, "big_output", json!({ "kb": 32 })).await;
    let size = big["records"].to_string().len();
    assert!((32 * 1024..=33 * 1024).contains(&size), "{size} bytes");
    assert_eq!(
        call_ok(client, "big_output", json!({ "kb": 32 })).await,
        big
    );

    let slept = call_ok(client, "slow", json!({ "ms": 10 })).await;
    assert_eq!(slept, json!({ "slept_ms": 10 }));
    session.close().await;
}

#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn failures_are_tool_errors(#[case] kind: Kind) {
    let session = connect(kind).await;
    let client = &session.client;

    assert_eq!(
        error_text(client, "fail", json!({ "message": "boom" })).await,
        "boom"
    );
    assert!(!error_text(client, "fail", json!({})).await.is_empty());
    let missing = error_text(client, "search_users", json!({ "limit": 1 })).await;
    assert!(missing.contains("missing field `query`"), "{missing}");
    let wrong_type = error_text(client, "add", json!({ "a": "2", "b": 3 })).await;
    assert!(
        wrong_type.starts_with("add: invalid arguments"),
        "{wrong_type}"
    );

    let unknown = client.call_tool(params("get_sum", json!({}))).await;
    assert!(
        unknown.is_err(),
        "an unknown tool is a protocol error: {unknown:?}"
    );
    // The server is still there.
    assert_eq!(
        only_text(&call(client, "echo", json!({ "message": "ok" })).await),
        "ok"
    );
    session.close().await;
}

#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn summarize_reports_cost_in_meta(#[case] kind: Kind) {
    let session = connect(kind).await;
    let text = "The quick brown fox jumps over the lazy dog while the cat watches from the fence";
    let result = call(&session.client, "summarize", json!({ "text": text })).await;
    assert_eq!(result.is_error, Some(false));
    let meta = result.meta.clone().expect("_meta").0;
    assert_eq!(meta["pipewright/cost_usd"], json!(0.002));
    assert_eq!(
        meta["pipewright/tokens"],
        json!({ "input": 16, "output": 12 })
    );
    assert_eq!(meta["pipewright/model"], "demo-small");
    let summary = result.structured_content.expect("structured")["summary"].clone();
    assert_eq!(
        summary,
        "The quick brown fox jumps over the lazy dog while the cat …"
    );
    session.close().await;
}

#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn flaky_fails_then_succeeds_and_calls_are_counted(#[case] kind: Kind) {
    let session = connect(kind).await;
    let client = &session.client;

    let before = counts(client).await;
    assert_eq!(before["counts"]["flaky"], 0);
    assert_eq!(before["in_flight"], 0);

    let args = json!({ "key": "k1", "failures": 2 });
    let first = error_text(client, "flaky", args.clone()).await;
    assert!(
        first.contains("transient failure 1/2 for key \"k1\""),
        "{first}"
    );
    let second = error_text(client, "flaky", args.clone()).await;
    assert!(second.contains("transient failure 2/2"), "{second}");
    assert_eq!(
        call_ok(client, "flaky", args.clone()).await,
        json!({ "key": "k1", "attempts": 3 })
    );
    assert_eq!(call_ok(client, "flaky", args).await["attempts"], 4);
    // Another key has its own counter; the default is two failures.
    assert!(
        error_text(client, "flaky", json!({ "key": "k2" }))
            .await
            .contains("1/2")
    );
    call_ok(client, "add", json!({ "a": 1, "b": 1 })).await;

    let after = counts(client).await;
    assert_eq!(after["counts"]["flaky"], 5);
    assert_eq!(after["counts"]["add"], 1);
    assert_eq!(after["counts"]["search_users"], 0);
    assert!(after["counts"].get("call_counts").is_none());
    // Asking does not count.
    assert_eq!(counts(client).await, after);
    session.close().await;
}

#[tokio::test]
async fn http_sessions_share_one_servers_counters() {
    let (addr, server) = demo_server::spawn_http("127.0.0.1:0").await.expect("spawn");
    let url = format!("http://{addr}/mcp");
    let first = http_client(url.clone()).await;
    let second = http_client(url).await;
    error_text(&first, "flaky", json!({ "key": "shared", "failures": 1 })).await;
    let attempt = call_ok(&second, "flaky", json!({ "key": "shared", "failures": 1 })).await;
    assert_eq!(attempt["attempts"], 2);
    assert_eq!(counts(&first).await["counts"]["flaky"], 2);

    // A second server starts from zero.
    let (other_addr, other) = demo_server::spawn_http("127.0.0.1:0").await.expect("spawn");
    let third = http_client(format!("http://{other_addr}/mcp")).await;
    assert_eq!(counts(&third).await["counts"]["flaky"], 0);

    for client in [first, second, third] {
        let _ = client.cancel().await;
    }
    server.shutdown().await.expect("shutdown");
    other.shutdown().await.expect("shutdown");
}

#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn cancelling_slow_stops_it_on_the_server(#[case] kind: Kind) {
    let session = connect(kind).await;
    let client = &session.client;

    let slow = client.call_tool(params("slow", json!({ "ms": 10_000 })));
    let running = async {
        loop {
            if counts(client).await["in_flight"] == 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    // Dropping the unfinished call sends notifications/cancelled.
    tokio::select! {
        result = slow => panic!("slow returned before it was cancelled: {result:?}"),
        () = running => {}
    }
    let cancelled_at = Instant::now();
    loop {
        if counts(client).await["in_flight"] == 0 {
            break;
        }
        assert!(
            cancelled_at.elapsed() < QUICK,
            "slow kept running after cancellation"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(cancelled_at.elapsed() < QUICK);
    assert_eq!(
        only_text(&call(client, "echo", json!({ "message": "still here" })).await),
        "still here"
    );
    assert_eq!(counts(client).await["counts"]["slow"], 1);
    session.close().await;
}

#[tokio::test]
async fn crash_closes_the_stdio_transport() {
    let session = connect(Kind::Stdio).await;
    let client = &session.client;
    assert_eq!(
        only_text(&call(client, "echo", json!({ "message": "up" })).await),
        "up"
    );
    let crashed = tokio::time::timeout(QUICK, client.call_tool(params("crash", json!({}))))
        .await
        .expect("the call ends when the server dies");
    assert!(crashed.is_err(), "crash replied: {crashed:?}");
    let after = tokio::time::timeout(
        QUICK,
        client.call_tool(params("echo", json!({ "message": "x" }))),
    )
    .await
    .expect("a call on a closed transport ends");
    assert!(after.is_err(), "the transport is closed: {after:?}");
    session.close().await;
}

#[tokio::test]
async fn crash_exits_with_the_requested_status() {
    let mut child = demo_server_command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let messages = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "test", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "crash", "arguments": { "exit_code": 7 } } }),
    ];
    for message in messages {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .expect("write");
    }
    stdin.flush().await.expect("flush");
    let status = tokio::time::timeout(QUICK, child.wait())
        .await
        .expect("the server exits")
        .expect("wait");
    assert_eq!(status.code(), Some(7));
    drop(stdin);
}

#[tokio::test]
async fn the_binary_announces_its_http_address() {
    let mut child = demo_server_command()
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let mut line = String::new();
    tokio::time::timeout(QUICK, BufReader::new(stderr).read_line(&mut line))
        .await
        .expect("a line on stderr")
        .expect("read");
    let url = line
        .trim_end()
        .strip_prefix("pipewright demo-server listening on ")
        .unwrap_or_else(|| panic!("unexpected line {line:?}"))
        .to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    let client = http_client(url).await;
    assert_eq!(
        call_ok(&client, "add", json!({ "a": 40, "b": 2 })).await["sum"],
        42
    );
    let _ = client.cancel().await;
    child.kill().await.expect("kill");
}

/// The conformance suite's fixture resources and prompts, over stdio and
/// HTTP: listed, read and got as the suite's scenarios expect, and an
/// unknown resource is invalid-params naming its URI.
#[rstest]
#[case::stdio(Kind::Stdio)]
#[case::http(Kind::Http)]
#[tokio::test]
async fn serves_the_conformance_fixture_resources_and_prompts(#[case] kind: Kind) {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
    // By default a pipeline's author sees none of them.
    let plain = connect(kind).await;
    let tools = plain.client.list_all_tools().await.expect("tools/list");
    assert!(tools.iter().all(|t| !t.name.starts_with("test_")));
    assert!(
        plain
            .client
            .list_all_resources()
            .await
            .expect("resources/list")
            .is_empty()
    );
    assert!(
        plain
            .client
            .list_all_prompts()
            .await
            .expect("prompts/list")
            .is_empty()
    );
    let info = plain.client.peer_info().expect("server info");
    assert!(!info.capabilities.supports_tasks(), "{info:?}");
    let refused = plain
        .client
        .call_tool(params("test_simple_text", json!({})))
        .await;
    assert!(
        refused.as_ref().map_or(true, |r| r.is_error == Some(true)),
        "{refused:?}"
    );
    plain.close().await;

    let session = connect_with(kind, true).await;
    let client = &session.client;
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names.len(), 49, "{names:?}");
    assert_eq!(names[20], "test_simple_text", "after the demo's own tools");
    assert!(names.contains(&"test_input_required_result_capabilities"));
    // The two whose input schemas are under test (the `pending` scenarios).
    assert_eq!(
        names[38..40],
        ["json_schema_2020_12_tool", "test_custom_header"]
    );
    // The Tasks extension's fixtures, and the extension declared with them.
    assert_eq!(names[40], "greet", "{names:?}");
    assert!(names.contains(&"test_tool_with_task"));
    // pipewright's own task fixtures, which no scenario calls.
    assert_eq!(names[47..], ["confirm_twice", "refused_answer"]);
    let info = session.client.peer_info().expect("server info");
    assert!(info.capabilities.supports_tasks(), "{info:?}");
    let resources = client.list_all_resources().await.expect("resources/list");
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["test://static-text", "test://static-binary"]);

    let read = |uri: &str| client.read_resource(ReadResourceRequestParams::new(uri));
    let text = serde_json::to_value(read("test://static-text").await.expect("read text")).unwrap();
    assert_eq!(
        text["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let data = serde_json::to_value(
        read("test://template/123/data")
            .await
            .expect("read template"),
    )
    .unwrap();
    let body: Value =
        serde_json::from_str(data["contents"][0]["text"].as_str().expect("text")).unwrap();
    assert_eq!(body["id"], "123");
    let missing = read("test://nope").await.expect_err("an unknown resource");
    let missing = format!("{missing:?}");
    assert!(
        missing.contains("-32602")
            || missing.contains("InvalidParams")
            || missing.contains("INVALID_PARAMS"),
        "{missing}"
    );
    assert!(missing.contains("test://nope"), "{missing}");

    let prompts = client.list_all_prompts().await.expect("prompts/list");
    assert!(
        prompts
            .iter()
            .any(|p| p.name == "test_prompt_with_arguments")
    );
    let args = json!({"arg1": "testValue1", "arg2": "testValue2"});
    let got = client
        .get_prompt(
            GetPromptRequestParams::new("test_prompt_with_arguments")
                .with_arguments(args.as_object().cloned().unwrap()),
        )
        .await
        .expect("prompts/get");
    let got = serde_json::to_value(got).unwrap();
    assert_eq!(
        got["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
    );
    session.close().await;
}
