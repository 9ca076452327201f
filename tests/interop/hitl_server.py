"""An MCP server built with the official Python SDK whose tools turn to a
person mid-call: they ask for a form (elicitation), ask for a URL to be
opened, ask the client's model for a completion (sampling), report progress,
log, and change their own tool list. tests/hitl.rs runs pipelines against it.

    python hitl_server.py              (stdio, the 2025-11-25 handshake only)
    python hitl_server.py dual         (stdio, the SDK's default: both eras)
    python hitl_server.py http PORT    (Streamable HTTP on 127.0.0.1:PORT/mcp,
                                        the SDK's default app: both eras)

`dual` and `http` are the way the SDK builds a server by default
(`MCPServer.run()`, `streamable_http_app()`): they answer `server/discover`
as well as `initialize`, and their tools still ask mid-call, which only the
2025-11-25 era allows.
"""

import sys

import warnings

import anyio

from pydantic import BaseModel, Field

from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import SamplingMessage, TextContent

warnings.simplefilter("ignore")

server = MCPServer("hitl")

# `logging/setLevel`: the SDK leaves filtering to the application.
LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
state = {"level": "debug"}


async def set_level(_ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
    state["level"] = params.level
    return types.EmptyResult()


server._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)


async def log(ctx: Context, level: str, message: str) -> None:
    if LEVELS.index(level) >= LEVELS.index(state["level"]):
        await ctx.log(level, message)


class Signup(BaseModel):
    name: str = Field(title="Your name")
    age: int = Field(description="In years", ge=0)
    plan: str = Field(default="free", json_schema_extra={"enum": ["free", "pro"]})


@server.tool()
async def signup(reason: str, ctx: Context) -> dict:
    """Asks for a name, an age and a plan, and returns what it got."""
    await log(ctx, "info", f"signup asked: {reason}")
    result = await ctx.elicit(f"Sign up ({reason})", Signup)
    if result.action == "accept":
        await log(ctx, "info", f"signed up {result.data.name}")
        return {"action": "accept", "name": result.data.name, "age": result.data.age, "plan": result.data.plan}
    await log(ctx, "warning", f"signup: {result.action}")
    return {"action": result.action}


class Name(BaseModel):
    name: str = Field(title="Name")


@server.tool()
async def ask_name(who: str, ctx: Context, before: float = 0, after: float = 0, done: str = "") -> dict:
    """Waits `before` seconds, asks for a name for `who`, waits `after`
    seconds (the call stays in flight) and returns what it got; writes
    `who` to the file `done`, if named, as it returns."""
    await anyio.sleep(before)
    result = await ctx.elicit(f"Name for {who}", Name)
    await anyio.sleep(after)
    if done:
        with open(done, "w", encoding="utf-8") as f:
            f.write(who)
    if result.action == "accept":
        return {"who": who, "name": result.data.name}
    return {"who": who, "action": result.action}


@server.tool()
async def open_link(ctx: Context) -> dict:
    """Asks the person to open a URL (URL-mode elicitation)."""
    result = await ctx.elicit_url("Confirm in your browser", "http://127.0.0.1:9/confirm", "el-1")
    return {"action": result.action}


@server.tool()
async def summarize(text: str, ctx: Context) -> dict:
    """Asks the client's model for a one-line summary of `text`."""
    reply = await ctx.session.create_message(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize: {text}"))],
        max_tokens=50,
        system_prompt="You write one-line summaries.",
    )
    content = reply.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return {"summary": said, "model": reply.model}


@server.tool()
async def count(n: int, ctx: Context) -> dict:
    """Counts to n, reporting progress and logging each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i} of {n}")
        await log(ctx, "debug", f"tick {i}")
    await log(ctx, "info", f"counted to {n}")
    return {"count": n}


def extra(x: int) -> dict:
    """A tool that appears once `unlock` ran."""
    return {"twice": x * 2}


@server.tool()
async def unlock(ctx: Context) -> dict:
    """Adds the tool `extra`, removes `summarize`, and says so."""
    server.add_tool(extra, name="extra")
    server.remove_tool("summarize")
    await ctx.session.send_tool_list_changed()
    return {"unlocked": True}


async def serve_legacy_stdio() -> None:
    """Serve only the 2025-11-25 `initialize` handshake (the SDK's
    handshake-only loop): these tools ask mid-call and notify on their own,
    which MCP 2026-07-28 forbids (it answers with input-required results
    instead), so a client's `server/discover` probe is refused and it falls
    back to `initialize`. `server.run()` would serve both eras."""
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
    mode = sys.argv[1] if len(sys.argv) > 1 else "legacy"
    if mode == "dual":
        server.run()
    elif mode == "http":
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
    else:
        anyio.run(serve_legacy_stdio)
