"""A server of the official Python SDK (mcp 2.3.0) that speaks MCP 2026-07-28.

Usage:
    modern_server.py stdio [--legacy | --modern-only]
    modern_server.py http PORT [RECORD_FILE] [--modern-only]

`stdio` serves both eras (the client's first request decides: `server/discover`
opens 2026-07-28, `initialize` opens 2025-11-25), as `MCPServer.run()` does;
`--legacy` serves only the `initialize` handshake (the SDK's handshake-only
loop), like a server written before 2026-07-28; `--modern-only` serves only
2026-07-28 (the SDK's modern loop: `initialize` is refused with
UNSUPPORTED_PROTOCOL_VERSION), like a server written for 2026-07-28 alone.
`http` serves Streamable HTTP
on 127.0.0.1:PORT/mcp and, with RECORD_FILE, writes one JSON line per POST:
its `Mcp-*` headers and the request's method and `_meta` keys, as received;
with `--modern-only` every POST goes to the SDK's 2026-07-28 handler, which
refuses `initialize` (it carries no per-request `_meta` envelope).

Tools:
- `add(a, b)` and `shout(text)`: plain tools, for a pipeline of two calls.
- `greet()`: returns an input-required result (SEP-2322) asking for a name
  by form, then greets with the answer, echoing the request state.
- `stubborn()`: asks again on every round, forever.
- `meta()`: the protocol version and `_meta` keys the server saw.

With MODERN_GROW=1, also:
- `grow()`: adds the tool `extra` and tells `subscriptions/listen` streams
  that the tool list changed (2026-07-28 only: a 2025-11-25 client is not
  told).
"""

import json
import os
import sys

import anyio
from mcp.server.caching import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    InputRequiredResult,
    TextContent,
)

app = MCPServer(
    name="modern",
    version="1.0.0",
    # MODERN_TOOLS_TTL_MS: the `ttlMs` of `tools/list` (default one minute).
    cache_hints={
        "tools/list": CacheHint(
            ttl_ms=int(os.environ.get("MODERN_TOOLS_TTL_MS", "60000")), scope="public"
        )
    },
)


@app.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


@app.tool()
def shout(text: str) -> str:
    """Upper-cases a text."""
    return text.upper()


def ask_name(state: str) -> InputRequiredResult:
    form = ElicitRequestFormParams(
        message="What is your name?",
        requested_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "title": "Name"}},
            "required": ["name"],
        },
    )
    return InputRequiredResult(
        input_requests={"who": ElicitRequest(params=form)},
        request_state=state,
    )


@app.tool()
def greet(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Greets whoever answers the question."""
    answers = ctx.input_responses or {}
    reply = answers.get("who")
    if reply is None:
        return ask_name("round-1")
    reply = reply if isinstance(reply, dict) else reply.model_dump(by_alias=True)
    if reply.get("action") != "accept":
        return CallToolResult(
            content=[TextContent(type="text", text=f"no name: {reply.get('action')}")],
            is_error=True,
        )
    name = (reply.get("content") or {}).get("name", "?")
    state = ctx.request_state
    return CallToolResult(
        content=[TextContent(type="text", text=f"Hello, {name}! (state {state})")],
        structured_content={"greeting": f"Hello, {name}!", "state": state},
    )


@app.tool()
def stubborn(ctx: Context) -> CallToolResult | InputRequiredResult:
    """Never satisfied: asks for a name again on every round."""
    return ask_name(f"again-{len(ctx.input_responses or {})}")


@app.tool()
def meta(ctx: Context) -> dict:
    """The protocol version and request `_meta` keys the server saw."""
    request = ctx.request_context
    seen = request.meta or {}
    if not isinstance(seen, dict):
        seen = seen.model_dump(by_alias=True)
    return {"protocolVersion": request.protocol_version, "metaKeys": sorted(seen)}


def extra() -> str:
    """Added by `grow`."""
    return "extra"


async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and says the tool list changed."""
    if "extra" not in {t.name for t in app._tool_manager.list_tools()}:
        app.add_tool(extra, name="extra")
    await ctx.notify_tools_changed()
    return "grown"


if os.environ.get("MODERN_GROW") == "1":
    app.add_tool(grow, name="grow")


async def legacy_stdio() -> None:
    low = app._lowlevel_server
    async with stdio_server() as (read, write):
        async with low.lifespan(low) as state:
            await serve_loop(
                low,
                read,
                write,
                lifespan_state=state,
                init_options=low.create_initialization_options(),
            )


async def modern_only_stdio() -> None:
    from mcp.server.runner import _serve_modern_stream

    low = app._lowlevel_server
    async with stdio_server() as (read, write):
        async with low.lifespan(low) as state:
            await _serve_modern_stream(low, read, write, lifespan_state=state, raise_exceptions=False)


def modern_only(inner):
    """ASGI middleware: every request is served as a 2026-07-28 one (the
    routing header is set to 2026-07-28 where a request has none), so the
    SDK's modern handler answers `initialize` with its own refusal."""

    async def middleware(scope, receive, send):
        if scope["type"] == "http":
            headers = [(k, v) for k, v in scope["headers"] if k != b"mcp-protocol-version"]
            sent = dict(scope["headers"]).get(b"mcp-protocol-version", b"2026-07-28")
            if sent != b"2026-07-28":
                sent = b"2026-07-28"
            scope = dict(scope, headers=headers + [(b"mcp-protocol-version", sent)])
        return await inner(scope, receive, send)

    return middleware


def recording(inner, path):
    """ASGI middleware: writes what each POST carried to `path`."""

    async def middleware(scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await inner(scope, receive, send)
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = {}
        params = parsed.get("params") or {} if isinstance(parsed, dict) else {}
        line = {
            "method": parsed.get("method") if isinstance(parsed, dict) else None,
            "meta": sorted((params.get("_meta") or {}).keys()),
            "headers": {k: v for k, v in headers.items() if k.startswith("mcp-")},
        }
        with open(path, "a") as f:
            f.write(json.dumps(line) + "\n")
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await inner(scope, replay, send)

    return middleware


def main() -> None:
    only = "--modern-only" in sys.argv
    argv = [a for a in sys.argv if a != "--modern-only"]
    mode = argv[1] if len(argv) > 1 else "stdio"
    if mode == "stdio" and "--legacy" in argv:
        anyio.run(legacy_stdio)
    elif mode == "stdio" and only:
        anyio.run(modern_only_stdio)
    elif mode == "stdio":
        app.run()
    else:
        import uvicorn

        port = int(argv[2])
        asgi = app.streamable_http_app()
        if only:
            asgi = modern_only(asgi)
        if len(argv) > 3:
            asgi = recording(asgi, argv[3])
        uvicorn.run(asgi, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
