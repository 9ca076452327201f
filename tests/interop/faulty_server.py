"""A raw-stdio MCP server that misbehaves on purpose, for
tests/sweep_faults.rs: it speaks newline-delimited JSON-RPC by hand because
no SDK would send the bytes these faults need. Its `echo` tool answers
normally; its `fault` tool does what MODE says.

    python faulty_server.py MODE PIDFILE

MODE is one of:
  crash           exit (code 3) while `fault` is in flight, after a stderr line
  hang            never answer `fault`, and stop reading stdin
  garbage         write a line that is not JSON, then exit
  garbage-answer  write a line that is not JSON, then answer normally
  partial         write half of the answer (no newline), then exit
  not-jsonrpc     write JSON values that are not JSON-RPC, then exit
  bad-result      answer `fault` with a result that is not a CallToolResult
  huge            answer `fault` with one 100 MB line (a 100 MB string)
  endless         write 100 MB of a line that never ends, then wait
  flood           send 100,000 log and progress notifications, then answer
  early-exit      print to stderr and exit 1 before `initialize`
  bad-utf8        answer `fault` with bytes that are not UTF-8 in a text
  deep            answer `fault` with structuredContent nested 200 deep
  nan             answer `fault` with `{"score": NaN}` (not JSON)
  many            answer `fault` with 500,000 small content items (~13 MB),
                  then echo on (a memory bench: pipewright keeps it as text)
  endless-tools   page `tools/list` for ever, 200 tools of 2 KB a page

The server's pid is written to PIDFILE first, so a test can check that it
is gone once pipewright has exited; PIDFILE.fault is made when `fault` is
called. FAULTY_HUGE_MB sets the size of `huge` and `endless` (100).
"""

import json
import os
import sys
import time

MODE = sys.argv[1]
PIDFILE = sys.argv[2]
OUT = sys.stdout.buffer
MB = 1024 * 1024
HUGE_MB = int(os.environ.get("FAULTY_HUGE_MB", "100"))


def write(raw: bytes) -> None:
    OUT.write(raw)
    OUT.flush()


def send(message: dict) -> None:
    write(json.dumps(message).encode() + b"\n")


def answer(request_id, text: str) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"content": [{"type": "text", "text": text}]},
        }
    )


TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}} for name in ("echo", "fault")
]


def handshake(message: dict) -> bool:
    """Answers the requests every session makes; False for anything else."""
    method = message.get("method")
    request_id = message.get("id")
    if method == "initialize":
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}, "logging": {}},
                    "serverInfo": {"name": "faulty", "version": "0"},
                },
            }
        )
        return True
    if method == "server/discover":
        # A 2025-11-25 server: it does not know the 2026-07-28 probe.
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32601, "message": "Method not found"},
            }
        )
        return True
    if method == "tools/list" and MODE == "endless-tools":
        cursor = int((message.get("params") or {}).get("cursor") or "0")
        tools = [
            {"name": f"t{cursor}-{i}", "description": "x" * 2048, "inputSchema": {"type": "object"}}
            for i in range(200)
        ]
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools, "nextCursor": str(cursor + 1)}})
        return True
    if method in ("tools/list", "logging/setLevel", "ping"):
        result = {"tools": TOOLS} if method == "tools/list" else {}
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
        return True
    # Notifications (initialized, cancelled) and answers need nothing.
    return request_id is None or method is None


def huge_line(request_id, newline: bool) -> None:
    head = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"content": [{"type": "text", "text": "@"}]},
        }
    ).encode()
    before, after = head.split(b"@")
    write(before)
    chunk = (b"word " * MB)[:MB]
    for _ in range(HUGE_MB):
        write(chunk)
    if newline:
        write(after + b"\n")


def flood(request_id, token) -> None:
    for i in range(100_000):
        if token is not None and i % 2:
            note = {
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": i, "total": 100_000},
            }
        else:
            note = {
                "method": "notifications/message",
                "params": {"level": "info", "data": f"flood line {i}"},
            }
        OUT.write(json.dumps({"jsonrpc": "2.0", **note}).encode() + b"\n")
    OUT.flush()
    answer(request_id, "survived the flood")


def fault(request_id, token) -> None:
    with open(PIDFILE + ".fault", "w") as f:
        f.write(MODE)
    if MODE == "crash":
        sys.stderr.write("faulty: crashing in the middle of a call\n")
        sys.stderr.flush()
        os._exit(3)
    elif MODE == "hang":
        time.sleep(3600)
    elif MODE in ("garbage", "garbage-answer"):
        write(b"Server listening... this line is not JSON\n")
        if MODE == "garbage-answer":
            answer(request_id, "answered after garbage")
            return
        sys.exit(0)
    elif MODE == "partial":
        write(b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode() + b', "resu')
        sys.exit(0)
    elif MODE == "not-jsonrpc":
        write(b'{"hello": "world"}\n[1, 2, 3]\n42\n"text"\n')
        sys.exit(0)
    elif MODE == "bad-result":
        send({"jsonrpc": "2.0", "id": request_id, "result": "not an object"})
    elif MODE == "huge":
        huge_line(request_id, newline=True)
    elif MODE == "endless":
        huge_line(request_id, newline=False)
        time.sleep(3600)
    elif MODE == "flood":
        flood(request_id, token)
    elif MODE in UNREADABLE:
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode() + b',"result":'
        write(head + UNREADABLE[MODE] + b"}\n")
    elif MODE == "many":
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(request_id).encode()
        write(head + b',"result":{"content":[')
        item = b'{"type":"text","text":"x"}'
        write(b",".join([item] * 500_000))
        write(b"]}}\n")


# The answers to `fault` no JSON reader can read, by mode.
UNREADABLE = {
    "bad-utf8": b'{"content":[{"type":"text","text":"caf\xe9 \xff\xfe"}]}',
    "deep": b'{"content":[],"structuredContent":' + b"[" * 200 + b"1" + b"]" * 200 + b"}",
    "nan": b'{"content":[],"structuredContent":{"score":NaN}}',
}


def main() -> None:
    with open(PIDFILE, "w") as f:
        f.write(str(os.getpid()))
    if MODE == "early-exit":
        sys.stderr.write("faulty: cannot start: the setting FAULTY_TOKEN is missing\n")
        sys.exit(1)
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if handshake(message):
            continue
        params = message.get("params") or {}
        request_id = message["id"]
        if params.get("name") == "echo":
            answer(request_id, (params.get("arguments") or {}).get("message", ""))
        else:
            token = (params.get("_meta") or {}).get("progressToken")
            fault(request_id, token)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, ConnectionResetError):
        # pipewright closed the pipe (as it should after a fault).
        os._exit(0)
