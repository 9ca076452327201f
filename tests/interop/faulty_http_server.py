"""A Streamable HTTP MCP server that misbehaves on purpose, for
tests/sweep_faults.rs. It speaks the protocol by hand (JSON answers, no
sessions) because no SDK sends a 500 or cuts a stream on request. Its
`echo` tool answers normally; its `fault` tool does what MODE says.

    python faulty_http_server.py MODE PORTFILE

MODE is one of:
  500-call   answer every POST for `fault` with HTTP 500 and a text body
  500-all    answer every POST with HTTP 500 (the handshake fails)
  cut-stream start an event stream for `fault`, send half an event, and
             close the connection
  huge-json  answer `fault` with a 100 MB JSON body
  huge-event answer `fault` with an event stream whose one event is 20 MB
  nan-event  answer `fault` with an event whose data is `{"score": NaN}`
  bad-utf8-event  answer `fault` with an event whose text is not UTF-8
  many-json  answer `fault` with a JSON body of 500,000 small content items
  many-event the same answer in an event stream

It listens on 127.0.0.1 on a port of the system's choosing, written to
PORTFILE once it listens.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODE = sys.argv[1]
PORTFILE = sys.argv[2]
TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}} for name in ("echo", "fault")
]


def result_for(message: dict):
    method = message.get("method")
    if method == "initialize":
        return {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "faulty-http", "version": "0"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text = (message["params"].get("arguments") or {}).get("message", "")
        return {"content": [{"type": "text", "text": text}]}
    return {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def reply(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.reply(405, "text/plain", b"no standalone stream")

    def do_DELETE(self) -> None:
        self.reply(405, "text/plain", b"no sessions")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        message = json.loads(self.rfile.read(length))
        if MODE == "500-all":
            self.reply(500, "text/plain", b"internal error: the database is down")
            return
        if "id" not in message:
            self.reply(202, "text/plain", b"")
            return
        if message.get("method") == "server/discover":
            # A 2025-11-25 server: it does not know the 2026-07-28 probe.
            error = {"code": -32601, "message": "Method not found"}
            answer = {"jsonrpc": "2.0", "id": message["id"], "error": error}
            self.reply(200, "application/json", json.dumps(answer).encode())
            return
        params = message.get("params") or {}
        if message.get("method") == "tools/call" and params.get("name") == "fault":
            self.fault(message["id"])
            return
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": result_for(message)}
        self.reply(200, "application/json", json.dumps(answer).encode())

    def event(self, data: bytes) -> None:
        """Answers with an event stream of one event carrying `data`."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            self.wfile.write(b"data: " + data + b"\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def fault(self, request_id) -> None:
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":'
        if MODE in ("many-json", "many-event"):
            body = head + b'{"content":[' + b",".join([b'{"type":"text","text":"x"}'] * 500_000) + b"]}}"
            if MODE == "many-event":
                self.event(body)
            else:
                self.reply(200, "application/json", body)
        elif MODE == "huge-event":
            self.event(head + b'{"content":[{"type":"text","text":"' + b"x" * (20 * 1024 * 1024) + b'"}]}}')
        elif MODE == "nan-event":
            self.event(head + b'{"content":[],"structuredContent":{"score":NaN}}}')
        elif MODE == "bad-utf8-event":
            self.event(head + b'{"content":[{"type":"text","text":"caf\xe9"}]}}')
        elif MODE == "500-call":
            self.reply(500, "text/plain", b"internal error: the database is down")
        elif MODE == "cut-stream":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b'data: {"jsonrpc": "2.0", "id": ')
            self.wfile.write(json.dumps(request_id).encode() + b', "resu')
            self.wfile.flush()
            self.close_connection = True
        elif MODE == "huge-json":
            head = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {"content": [{"type": "text", "text": "@"}]},
                }
            ).encode()
            before, after = head.split(b"@")
            size = 100 * 1024 * 1024
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(before) + size + len(after)))
            self.end_headers()
            try:
                self.wfile.write(before)
                chunk = b"x" * (1024 * 1024)
                for _ in range(100):
                    self.wfile.write(chunk)
                self.wfile.write(after)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(PORTFILE + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(PORTFILE + ".tmp", PORTFILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
