use serde_json::{Value, json};

use super::*;

fn entry(
    method: &str,
    url: &str,
    body: Option<Value>,
    res: Value,
    session: Option<&str>,
    second: u32,
) -> Value {
    let mut headers = vec![json!({"name": "Authorization", "value": "Bearer sk-live-123456"})];
    if let Some(s) = session {
        headers.push(json!({"name": "Mcp-Session-Id", "value": s}));
    }
    let mut req = json!({"method": method, "url": url, "headers": headers});
    if let Some(b) = body {
        req["postData"] = json!({"mimeType": "application/json", "text": b.to_string()});
    }
    json!({"startedDateTime": format!("2026-11-29T02:00:{second:02}.000Z"), "time": 12.5, "request": req, "response": res})
}

fn json_answer(v: Value, session: Option<&str>) -> Value {
    let headers: Vec<Value> = session
        .map(|s| vec![json!({"name": "mcp-session-id", "value": s})])
        .unwrap_or_default();
    json!({"status": 200, "headers": headers, "content": {"mimeType": "application/json", "text": v.to_string()}})
}

fn sse_answer(events: &[Value]) -> Value {
    let text: String = events
        .iter()
        .map(|e| format!("event: message\ndata: {e}\n\n"))
        .collect();
    json!({"status": 200, "headers": [], "content": {"mimeType": "text/event-stream", "text": text}})
}

fn har() -> String {
    let url = "https://mcp.example.com/mcp";
    let entries = vec![
        entry(
            "GET",
            "https://example.com/login",
            None,
            json!({"status": 200}),
            None,
            0,
        ),
        entry(
            "POST",
            url,
            Some(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
            ),
            json_answer(
                json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}),
                Some("s-1"),
            ),
            None,
            1,
        ),
        entry(
            "POST",
            url,
            Some(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            json!({"status": 202, "content": {}}),
            Some("s-1"),
            2,
        ),
        entry(
            "POST",
            url,
            Some(
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"q": "sk-live-123456 ada"}, "_meta": {"progressToken": 7}}}),
            ),
            sse_answer(&[
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 7, "progress": 1}}),
                json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [], "structuredContent": {"id": "usr_88123"}}}),
            ]),
            Some("s-1"),
            3,
        ),
        entry(
            "POST",
            url,
            Some(
                json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get", "arguments": {"id": "usr_88123"}}}),
            ),
            json!({"status": 200, "content": {"mimeType": "application/json", "encoding": "base64",
                     "text": "eyJqc29ucnBjIjoiMi4wIiwiaWQiOjMsInJlc3VsdCI6eyJjb250ZW50IjpbXX19"}}),
            Some("s-1"),
            4,
        ),
        entry("DELETE", url, None, json!({"status": 200}), Some("s-1"), 5),
    ];
    json!({"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "140"}, "entries": entries}}).to_string()
}

#[test]
fn streamable_http_traffic_becomes_a_session_with_no_credential_in_it() {
    let recs = read(&har(), "t.har", None).unwrap();
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!(r.server(), "example");
    let h = r.header.as_ref().unwrap();
    assert_eq!(h.session_id.as_deref(), Some("s-1"));
    assert_eq!(h.recorder, "Firefox (HAR)");
    assert_eq!(r.protocol.as_deref(), Some("2025-11-25"));
    let tools: Vec<&str> = r.calls.iter().map(|c| c.tool.as_str()).collect();
    assert_eq!(tools, ["search", "get"]);
    assert_eq!(r.calls[0].args["q"], "*** ada");
    assert_eq!(r.calls[0].extras.progress.len(), 1);
    assert_eq!(r.calls[0].output.tree(), &json!({"id": "usr_88123"}));
    assert_eq!(r.calls[0].at_ms, 2000.0);
    assert_eq!(
        r.headers["example"],
        [(
            "Authorization".to_owned(),
            "Bearer ${env.EXAMPLE_TOKEN}".to_owned()
        )]
    );
    let all = format!("{:?}", recs);
    assert!(!all.contains("sk-live-123456"), "{all}");
}

#[test]
fn a_file_that_is_not_mcp_traffic_says_so() {
    let e = read("{}", "x.har", None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.har: not a HAR file: it has no `log.entries`"
    );
    let e = read("nope", "x.har", None).unwrap_err();
    assert!(e.to_string().starts_with("x.har: not JSON"), "{e}");
    let only_pages =
        json!({"log": {"entries": [entry("GET", "https://a.test/", None, json!({}), None, 0)]}});
    let e = read(&only_pages.to_string(), "x.har", None).unwrap_err();
    assert!(e.to_string().contains("not MCP traffic"), "{e}");
    let bad_call = json!({"log": {"entries": [
        entry("POST", "http://127.0.0.1:9/mcp", Some(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}})), json!({}), None, 0)
    ]}});
    let e = read(&bad_call.to_string(), "x.har", Some("local")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.har:1: a `tools/call` without a tool `name`"
    );
}

#[test]
fn base64_and_names() {
    assert_eq!(base64_decode("aGk=").as_deref(), Some("hi"));
    assert_eq!(base64_decode("!!").as_deref(), None);
    assert_eq!(server_name("http://127.0.0.1:8000/mcp"), "server");
    assert_eq!(server_name("https://api.github.com/mcp"), "github");
    assert_eq!(
        env_for("github", "X-Api-Key", "k"),
        "${env.GITHUB_X_API_KEY}"
    );
}
