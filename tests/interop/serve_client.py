"""The official Python MCP SDK client calling tools that `pipewright serve`
serves.

    python serve_client.py BIN FILE              # handshake era, stdio
    python serve_client.py BIN FILE modern URL   # 2026-07-28, Streamable HTTP at URL
    python serve_client.py BIN FILE modern stdio # 2026-07-28, stdio
    python serve_client.py BIN FILE tasks URL MEMORY_FILE
                                                 # 2026-07-28 Tasks extension at URL
    python serve_client.py BIN FILE call TOOL    # handshake era, stdio: calls TOOL
                                                 # with no arguments, prints its
                                                 # structured result as JSON

FILE serves `lookup` (search_users then get_user_details) for the first
three; for `tasks` the server at URL serves `three_steps` (echoes and
naps, output "abc") and `remember_then_nap` (create an entity in the memory
server that keeps MEMORY_FILE, undone by `compensate:`; then a long `slow`).
"""

import asyncio
import json
import sys
from typing import Any, Literal

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def structured(result: Any) -> Any:
    # The SDK names these isError/structuredContent or, newer,
    # is_error/structured_content.
    is_error = getattr(result, "is_error", None)
    if is_error is None:
        is_error = result.isError
    assert not is_error, result
    value = getattr(result, "structured_content", None)
    if value is None:
        value = result.structuredContent
    return value


async def legacy(binary: str, path: str) -> None:
    params = StdioServerParameters(command=binary, args=["serve", "--no-save", path])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            assert names == ["lookup"], names
            result = await session.call_tool("lookup", {"who": "carol"})
            user = structured(result)
            assert user == json.loads(result.content[0].text), result
            print(f"lookup -> {user['name']} <{user['email']}>")


async def call(binary: str, path: str, tool: str) -> None:
    params = StdioServerParameters(command=binary, args=["serve", "--no-save", path])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(tool, {})
            print(json.dumps(structured(result)))


async def modern(binary: str, path: str, where: str) -> None:
    from mcp.client.client import Client

    server: Any = where
    if where == "stdio":
        server = StdioServerParameters(command=binary, args=["serve", "--no-save", path])
    async with Client(server, mode="2026-07-28") as client:
        print(f"negotiated {client.protocol_version}")
        assert client.protocol_version == "2026-07-28", client.protocol_version
        tools = await client.list_tools()
        names = [t.name for t in tools.tools]
        assert "lookup" in names, names
        user = structured(await client.call_tool("lookup", {"who": "carol"}))
        print(f"modern lookup -> {user['name']} <{user['email']}>")


async def tasks(url: str, memory_file: str) -> None:
    from mcp.client.client import Client
    from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
    from mcp_types import CallToolResult, Request, RequestParams, Result
    from pydantic import ConfigDict, TypeAdapter

    class TaskParams(RequestParams):
        taskId: str

    class GetTask(Request[TaskParams, Literal["tasks/get"]]):
        method: Literal["tasks/get"] = "tasks/get"
        name_param = "taskId"

    class CancelTask(Request[TaskParams, Literal["tasks/cancel"]]):
        method: Literal["tasks/cancel"] = "tasks/cancel"
        name_param = "taskId"

    class TaskHandle(Result):
        """A `CreateTaskResult` (`resultType: "task"`)."""

        model_config = ConfigDict(extra="allow")
        result_type: Literal["task"]
        task_id: str
        status: str

    raw = TypeAdapter(dict)

    async def poll(session: Any, task_id: str) -> dict:
        state = await session.send_request(GetTask(params=TaskParams(taskId=task_id)), raw)
        for _ in range(400):
            if state["status"] not in ("working", "input_required"):
                break
            await asyncio.sleep(0.05)
            state = await session.send_request(GetTask(params=TaskParams(taskId=task_id)), raw)
        return state

    async def resolve(handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        state = await poll(ctx.session, handle.task_id)
        assert state["status"] == "completed", state
        return CallToolResult.model_validate(state["result"])

    class Tasks(ClientExtension):
        """The client side of the Tasks extension, enough to poll a handle."""

        identifier = "io.modelcontextprotocol/tasks"

        def claims(self) -> Any:
            return [ResultClaim(result_type="task", model=TaskHandle, resolve=resolve)]

    ext = Tasks()
    async with Client(url, mode="2026-07-28", extensions=[ext]) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        session = client.session

        async def get(task_id: str) -> dict:
            return await session.send_request(GetTask(params=TaskParams(taskId=task_id)), raw)

        async def call(name: str, args: dict) -> dict:
            handle = await session.call_tool(name, args, allow_claimed=True)
            data = handle.model_dump(by_alias=True, mode="json")
            assert data.get("resultType") == "task", data
            return data

        # A task call answers with a handle at once; polling shows it
        # working, then completed with the composition's result.
        handle = await call("three_steps", {})
        assert handle["status"] == "working", handle
        first = await get(handle["taskId"])
        print(f"task {handle['taskId']} first poll: {first['status']}")
        assert first["status"] == "working", first
        state = first
        for _ in range(200):
            if state["status"] != "working":
                break
            await asyncio.sleep(0.05)
            state = await get(handle["taskId"])
        assert state["status"] == "completed", state
        assert state["result"]["structuredContent"] == {"result": "abc"}, state
        print(f"task completed -> {state['result']['structuredContent']}")
        # The SDK's own call_tool resolves a handle through the claim.
        done = structured(await client.call_tool("three_steps", {}))
        assert done == {"result": "abc"}, done
        print("call_tool resolved the task")

        def stored() -> str:
            try:
                with open(memory_file, encoding="utf-8") as f:
                    return f.read()
            except FileNotFoundError:
                return ""

        # Cancelled mid-run: the run stops and its compensation deletes
        # the entity it created.
        handle = await call("remember_then_nap", {"name": "Ada"})
        for _ in range(200):
            if "Ada" in stored():
                break
            await asyncio.sleep(0.05)
        assert "Ada" in stored(), "the entity was never created"
        # Cancel once the run has the node done, not only its write (a call
        # cut off in flight has nothing to undo): the status message says so.
        state = await get(handle["taskId"])
        for _ in range(200):
            if "1 of 2 nodes done" in state.get("statusMessage", ""):
                break
            await asyncio.sleep(0.05)
            state = await get(handle["taskId"])
        assert state["statusMessage"] == "`remember_then_nap`: 1 of 2 nodes done (`create`)", state
        assert state["status"] == "working", state
        await session.send_request(CancelTask(params=TaskParams(taskId=handle["taskId"])), raw)
        state = await get(handle["taskId"])
        for _ in range(200):
            if state["status"] != "working":
                break
            await asyncio.sleep(0.05)
            state = await get(handle["taskId"])
        assert state["status"] == "cancelled", state
        assert "Ada" not in stored(), stored()
        print("task cancelled; compensation deleted Ada")


if __name__ == "__main__":
    binary, path = sys.argv[1], sys.argv[2]
    mode = sys.argv[3] if len(sys.argv) > 3 else "legacy"
    if mode == "legacy":
        asyncio.run(legacy(binary, path))
    elif mode == "modern":
        asyncio.run(modern(binary, path, sys.argv[4]))
    elif mode == "call":
        asyncio.run(call(binary, path, sys.argv[4]))
    else:
        asyncio.run(tasks(sys.argv[4], sys.argv[5]))
