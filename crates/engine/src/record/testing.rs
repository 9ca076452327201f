//! Sessions written from scripted exchanges, for the record room's tests:
//! an agent's requests and a server's answers go through the real
//! [`Writer`](super::session::Writer), and are read back as a session file
//! is.

use serde_json::{Value, json};

use super::calls::{self, Recording};
use super::session::{Header, Reader, Server, Side, VERSION, Writer};
use crate::redact::Redactor;

/// A session being written, one exchange at a time.
pub struct Script {
    w: Writer<Vec<u8>>,
    next_id: i64,
}

impl Script {
    /// A stdio session with the demo server, `initialize`d under
    /// `protocol` and its tools listed.
    pub fn new(protocol: &str, tools: Vec<Value>) -> Script {
        let header = Header {
            version: VERSION,
            started: "2026-11-29T02:00:00Z".into(),
            recorder: "pipewright test".into(),
            server: Server::Stdio {
                name: "demo".into(),
                command: "pipewright".into(),
                args: vec!["demo-server".into()],
            },
            session_id: None,
        };
        let w = Writer::new(Vec::new(), &header, Redactor::default(), 1 << 20)
            .unwrap_or_else(|e| panic!("{e}"));
        let mut s = Script { w, next_id: 0 };
        s.request(
            "initialize",
            json!({"protocolVersion": protocol, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
            json!({"protocolVersion": protocol, "capabilities": {"tools": {}}, "serverInfo": {"name": "demo", "version": "1"}}),
        );
        s.send(
            Side::Client,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        s.request("tools/list", json!({}), json!({"tools": tools}));
        s.request("ping", json!({}), json!({}));
        s
    }

    /// Writes one message.
    pub fn send(&mut self, from: Side, message: Value) {
        self.w
            .message(from, message.to_string().as_bytes(), None)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    fn id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// A client request and the server's result.
    pub fn request(&mut self, method: &str, params: Value, result: Value) {
        let id = self.id();
        self.send(
            Side::Client,
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        self.send(
            Side::Server,
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
    }

    /// A `tools/call` answered with `structured` as its structured content
    /// (and the same as text, as servers send it).
    pub fn call(&mut self, tool: &str, args: Value, structured: Value) {
        self.call_raw(tool, args, result_of(structured));
    }

    /// A `tools/call` answered with a whole `CallToolResult`.
    pub fn call_raw(&mut self, tool: &str, args: Value, result: Value) {
        self.request(
            "tools/call",
            json!({"name": tool, "arguments": args}),
            result,
        );
    }

    /// A 2025-11-25 call during which the server asks `(method, params)`
    /// and the client replies `reply`, before the result.
    pub fn call_asking(
        &mut self,
        tool: &str,
        args: Value,
        asks: &[(&str, Value, Value)],
        result: Value,
    ) {
        let id = self.id();
        self.send(
            Side::Client,
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                   "params": {"name": tool, "arguments": args, "_meta": {"progressToken": id}}}),
        );
        self.send(
            Side::Server,
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": id, "progress": 1, "total": 2}}),
        );
        for (n, (method, params, reply)) in asks.iter().enumerate() {
            let ask = 1000 + n as i64;
            self.send(
                Side::Server,
                json!({"jsonrpc": "2.0", "id": ask, "method": method, "params": params}),
            );
            self.send(
                Side::Client,
                json!({"jsonrpc": "2.0", "id": ask, "result": reply}),
            );
        }
        self.send(
            Side::Server,
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
    }

    /// A 2026-07-28 call answered with `asked` (`{key: {method, params}}`),
    /// then called again with `replies` (`{key: reply}`) and answered with
    /// `result`.
    pub fn call_input_required(
        &mut self,
        tool: &str,
        args: Value,
        asked: Value,
        replies: Value,
        result: Value,
    ) {
        self.request(
            "tools/call",
            json!({"name": tool, "arguments": args}),
            json!({"resultType": "input_required", "inputRequests": asked, "requestState": "sealed-state"}),
        );
        self.request(
            "tools/call",
            json!({"name": tool, "arguments": args, "inputResponses": replies, "requestState": "sealed-state"}),
            result,
        );
    }

    /// A 2025-11-25 call made as a task: created, polled `polls` times,
    /// then its result fetched.
    pub fn call_task(&mut self, tool: &str, args: Value, polls: usize, result: Value) {
        let task = "task-7f3a";
        self.request(
            "tools/call",
            json!({"name": tool, "arguments": args, "task": {}}),
            json!({"task": {"taskId": task, "status": "working", "pollInterval": 100}}),
        );
        for _ in 0..polls {
            self.request(
                "tasks/get",
                json!({"taskId": task}),
                json!({"taskId": task, "status": "working", "statusMessage": "thinking"}),
            );
        }
        self.request(
            "tasks/get",
            json!({"taskId": task}),
            json!({"taskId": task, "status": "completed"}),
        );
        self.request("tasks/result", json!({"taskId": task}), result);
    }

    /// The session file's bytes.
    pub fn bytes(self) -> Vec<u8> {
        self.w.into_inner().unwrap_or_else(|e| panic!("{e}"))
    }

    /// The session read back and paired.
    pub fn recording(self) -> Recording {
        let bytes = self.bytes();
        let reader = Reader::new(&bytes[..], 1 << 20).unwrap_or_else(|e| panic!("{e}"));
        calls::read(reader, "s.jsonl").unwrap_or_else(|e| panic!("{e}"))
    }
}

/// A result whose structured content is `v`, repeated as text.
pub fn result_of(v: Value) -> Value {
    json!({"content": [{"type": "text", "text": v.to_string()}], "structuredContent": v})
}

/// A result with one text block.
pub fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// A tool definition with `props` as its string (or typed) properties.
pub fn tool(name: &str, props: Value) -> Value {
    json!({"name": name, "inputSchema": {"type": "object", "properties": props}})
}
