"""A raw-stdio MCP server whose `fuzz` tool answers with mutated JSON-RPC,
for tests/fuzz_replies.rs: random bytes, cut-off answers, deep nesting,
big strings, wrong types, wrong ids, NaN, bytes that are not UTF-8, flipped
bytes. Which mutation a call gets depends only on SEED and the call's
`case` argument, so a failing case can be replayed alone.

    python fuzz_server.py SEED

`echo` answers normally, so a test can check the connection still works
after the fuzz.
"""

import json
import random
import sys

SEED = int(sys.argv[1])
OUT = sys.stdout.buffer


def write(raw: bytes) -> None:
    OUT.write(raw)
    OUT.flush()


def send(message) -> None:
    write(json.dumps(message).encode() + b"\n")


def good(request_id, case: int) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {
            "content": [{"type": "text", "text": f"case {case}"}],
            "structuredContent": {"case": case, "tags": ["a", "b"], "nested": {"x": [1, 2.5, None, True]}},
        },
    }


def deep(depth: int) -> bytes:
    return b"[" * depth + b"0" + b"]" * depth


def mutate(rng: random.Random, request_id, case: int) -> bytes:
    """The bytes (newline included, or not) answering `case`."""
    rid = json.dumps(request_id).encode()
    base = json.dumps(good(request_id, case)).encode()
    kind = rng.randrange(24)
    head = b'{"jsonrpc":"2.0","id":' + rid + b',"result":'
    if kind == 0:
        return base + b"\n"
    if kind == 1:  # random bytes, no id to be found
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))).replace(b"\n", b" ") + b"\n"
    if kind == 2:  # cut off, then a line end
        return base[: rng.randrange(1, len(base))] + b"\n"
    if kind == 3:  # cut off with no line end: it runs into the next message
        return base[: rng.randrange(1, len(base))]
    if kind == 4:  # deep nesting
        return head + b'{"content":[],"structuredContent":' + deep(rng.choice([100, 127, 128, 500, 5000, 100000])) + b"}}\n"
    if kind == 5:  # a big string
        size = rng.choice([1, 64, 1024, 1 << 20, 3 << 20])
        return head + b'{"content":[{"type":"text","text":"' + b"x" * size + b'"}]}}\n'
    if kind == 6:  # results of the wrong type
        return head + rng.choice([b"42", b'"text"', b"[1,2]", b"null", b"true", b"{}"]) + b"}\n"
    if kind == 7:  # content of the wrong type
        return head + rng.choice([b'{"content":{"type":"text"}}', b'{"content":"x"}', b'{"content":[1,null,"a"]}',
                                  b'{"content":[{"type":"text","text":5}]}', b'{"isError":"yes"}',
                                  b'{"content":[],"structuredContent":null,"_meta":7}']) + b"}\n"
    if kind == 8:  # ids that are not this call's
        other = rng.choice([b'"' + rid + b'"', b"-1", b"null", b"1.5", b'{"a":1}', b"99999999999999999999"])
        return base.replace(b'"id": ' + rid, b'"id": ' + other, 1) + b"\n"
    if kind == 9:  # numbers JSON has no word for
        return head + b'{"content":[],"structuredContent":{"v":' + rng.choice([b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-0", b"01", b"1.", b".5"]) + b"}}}\n"
    if kind == 10:  # bytes that are not UTF-8 inside a string
        return head + b'{"content":[{"type":"text","text":"a\xff\xc3\x28\xed\xa0\x80b"}]}}\n'
    if kind == 11:  # flipped bytes
        raw = bytearray(base)
        for _ in range(rng.randrange(1, 6)):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        return bytes(raw).replace(b"\n", b" ") + b"\n"
    if kind == 12:  # duplicate keys
        return head + b'{"content":[],"structuredContent":{"k":1,"k":2},"structuredContent":{"k":3}}}\n'
    if kind == 13:  # escapes that are not characters
        return head + b'{"content":[{"type":"text","text":"\\ud800 \\udfff \\u00"}]}}\n'
    if kind == 14:  # raw control characters in a string
        return head + b'{"content":[{"type":"text","text":"a\x01\x1b[2J\x7f\tb"}]}}\n'
    if kind == 15:  # a byte order mark, CRLF
        return b"\xef\xbb\xbf" + base + b"\r\n"
    if kind == 16:  # what a later protocol might send
        return head + rng.choice([b'{"resultType":"input_required"}', b'{"resultType":"weird","content":[]}',
                                  b'{"task":{"taskId":7}}', b'{"task":"no"}', b'{"resultType":"complete"}']) + b"}\n"
    if kind == 17:  # an error with odd data
        return b'{"jsonrpc":"2.0","id":' + rid + b',"error":' + rng.choice([b'{"code":"x","message":5}', b'{"code":-32000,"message":"boom","data":' + deep(300) + b"}", b"null", b"[]"]) + b"}\n"
    if kind == 18:  # a long number
        return head + b'{"content":[],"structuredContent":{"n":' + b"9" * rng.choice([20, 400, 100000]) + b"}}}\n"
    if kind == 19:  # notifications, broken ones too, before the answer
        return (b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":NaN}}\n'
                + b'{"jsonrpc":"2.0","method":"notifications/progress","params":' + deep(1000) + b"}\n"
                + base + b"\n")
    if kind == 20:  # a request of the server's that cannot be read
        return b'{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"x":NaN}}\n' + base + b"\n"
    if kind == 21:  # an empty line and whitespace
        return b"\n   \n" + base + b"\n"
    if kind == 22:  # two answers for one call
        return base + b"\n" + base + b"\n"
    # An object cut at a random depth with the closing brackets missing.
    return head + b'{"content":[],"structuredContent":' + b'{"a":' * rng.randrange(1, 200) + b"1\n"


def handshake(message) -> bool:
    method = message.get("method")
    request_id = message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": request_id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "fuzz", "version": "0"}}})
        return True
    if method == "server/discover":
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})
        return True
    if method == "tools/list":
        tools = [{"name": n, "inputSchema": {"type": "object"}} for n in ("fuzz", "echo")]
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}})
        return True
    if method in ("logging/setLevel", "ping"):
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
        return True
    return request_id is None or method is None


def main() -> None:
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or handshake(message):
            continue
        params = message.get("params") or {}
        args = params.get("arguments") or {}
        if params.get("name") == "echo":
            send({"jsonrpc": "2.0", "id": message["id"], "result": {
                "content": [{"type": "text", "text": str(args.get("message", ""))}]}})
            continue
        case = int(args.get("case", 0))
        rng = random.Random(SEED * 1_000_003 + case)
        write(mutate(rng, message["id"], case))


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, ConnectionResetError):
        sys.exit(0)
