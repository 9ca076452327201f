"""An MCP server built with the official Python SDK that hands back every
secret it was given, through every channel a server has: its results, its
tool errors, its log messages, its progress messages, its sampling
requests and, when it dies, its stderr; and `encode` hands a value back
in every form a server trivially makes of it. tests/sweep_secrets.rs runs a
pipeline against it and checks that none of those values is written
anywhere by pipewright.

    python secret_server.py [--token T]           (stdio)
    python secret_server.py --http [--token T]    (Streamable HTTP on
                                                   127.0.0.1, a free port;
                                                   the URL is printed on
                                                   stdout)
"""

import os
import socket
import sys
import warnings

import anyio

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import SamplingMessage, TextContent

warnings.simplefilter("ignore")

server = MCPServer("secrets")

# The variable a pipeline passes through the server's `env:`.
ENV_NAME = "PW_SWEEP_SERVER_ENV"


def argv_token() -> str:
    """The value after `--token` on the command line, or empty."""
    args = sys.argv[1:]
    if "--token" in args and args.index("--token") + 1 < len(args):
        return args[args.index("--token") + 1]
    return ""


@server.tool()
async def reveal(ctx: Context) -> dict:
    """Everything secret this server can see: its environment variable,
    its command-line token and the request's headers (over HTTP)."""
    headers = dict(ctx.headers or {})
    return {
        "env": os.environ.get(ENV_NAME, ""),
        "argv": argv_token(),
        "authorization": headers.get("authorization", ""),
        "literal": headers.get("x-literal", ""),
    }


@server.tool()
async def shout(text: str, ctx: Context) -> dict:
    """Logs `text`, reports progress with it, writes it to stderr and
    returns it."""
    await ctx.log("info", f"shouting {text}")
    await ctx.report_progress(1, 2, f"half of {text}")
    print(f"stderr says {text}", file=sys.stderr, flush=True)
    return {"said": text}


@server.tool()
async def boom(text: str) -> str:
    """Fails with `text` in the tool error."""
    raise ToolError(f"cannot go on with {text}")


@server.tool()
async def die(text: str) -> str:
    """Writes `text` to stderr and exits mid-call."""
    print(f"dying with {text}", file=sys.stderr, flush=True)
    os._exit(3)


@server.tool()
async def encode(text: str = "") -> dict:
    """Hands `text` (else its environment variable) back in every form a
    server trivially makes of a value: base64, base64url, hex,
    URL-encoded, reversed, and the base64 of `user:text` (a Basic
    credential)."""
    import base64
    import urllib.parse

    text = text or os.environ.get(ENV_NAME, "")
    raw = text.encode()
    return {
        "base64": base64.b64encode(raw).decode(),
        "base64url": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "hex": raw.hex(),
        "url": urllib.parse.quote(text),
        "url_plus": urllib.parse.quote_plus(text),
        "reversed": text[::-1],
        "basic": "Basic " + base64.b64encode(b"user:" + raw).decode(),
    }


@server.tool()
async def ask(text: str, ctx: Context) -> dict:
    """Asks the client's model about `text` (sampling)."""
    reply = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=f"About {text}"))],
        max_tokens=50,
    )
    content = reply.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return {"reply": said}


async def serve_http() -> None:
    """Streamable HTTP on a port the OS picks, announced on stdout."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    port = sock.getsockname()[1]
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    print(f"http://127.0.0.1:{port}/mcp", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])


async def serve_legacy_stdio() -> None:
    """Serve only the 2025-11-25 `initialize` handshake: `ask` samples
    mid-call, which MCP 2026-07-28 forbids, so a client's `server/discover`
    probe is refused and it falls back to `initialize`."""
    from mcp.server.runner import serve_loop
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    async with stdio_server() as (read, write):
        async with low.lifespan(low) as lifespan_state:
            await serve_loop(
                low,
                read,
                write,
                lifespan_state=lifespan_state,
                init_options=low.create_initialization_options(),
            )


if __name__ == "__main__":
    if "--http" in sys.argv[1:]:
        anyio.run(serve_http)
    else:
        anyio.run(serve_legacy_stdio)
