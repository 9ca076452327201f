"""The official Python MCP SDK client, in 2026-07-28 mode, answering the
questions a composition served by `pipewright serve` is asked.

    python serve_asking_client.py BIN FILE stdio|URL

FILE serves `ask` (hitl_server.py's `ask_name`, which asks mid-call the
2025 way) and `greet` (modern_server.py's `greet`, which answers with an
input-required result). The client's elicitation callback answers every
form with a name; the SDK drives serve's input-required results itself.
Then, driving the rounds by hand: a changed `requestState` is refused, an
answer to the right state finishes the run. Prints one line per call with
the run id; exits non-zero on any failed check.
"""

import asyncio
import json
import os
import sys
from typing import Any

from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult, InputRequiredResult

ASKED: list[str] = []


async def answer(_context: Any, params: Any) -> ElicitResult:
    message = getattr(params, "message", "")
    ASKED.append(message)
    return ElicitResult(action="accept", content={"name": f"Ada ({message})"})


def structured(result: Any) -> Any:
    assert not result.is_error, result
    return result.structured_content


def run_id(result: Any) -> str:
    meta = result.meta or {}
    if not isinstance(meta, dict):
        meta = meta.model_dump(by_alias=True)
    return meta["pipewright/run_id"]


async def main(binary: str, path: str, where: str) -> None:
    server: Any = where
    if where == "stdio":
        # The test's own environment (data directory) reaches serve.
        server = StdioServerParameters(command=binary, args=["serve", path], env=dict(os.environ))
    async with Client(server, mode="2026-07-28", elicitation_callback=answer) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        result = await client.call_tool("ask", {"who": "agent"})
        got = structured(result)
        assert got == {"who": "agent", "name": "Ada (Name for agent)"}, got
        print(f"ask -> {json.dumps(got)} run {run_id(result)}")
        result = await client.call_tool("greet", {})
        got = structured(result)
        assert got["greeting"] == "Hello, Ada (What is your name?)!", got
        print(f"greet -> {json.dumps(got)} run {run_id(result)}")
        assert ASKED == ["Name for agent", "What is your name?"], ASKED

        # The rounds by hand: serve's own input-required result.
        session = client.session
        first = await session.call_tool("ask", {"who": "hand"}, allow_input_required=True)
        assert isinstance(first, InputRequiredResult), first
        (key, request), = first.input_requests.items()
        dumped = request.model_dump(by_alias=True, mode="json", exclude_none=True)
        assert dumped["method"] == "elicitation/create", dumped
        print(f"asked {key}: {dumped['params']['message']}")
        state = first.request_state
        reply = {key: {"action": "accept", "content": {"name": "Hand"}}}
        for forged in (state[:-2] + ("00" if not state.endswith("00") else "11"), "pw1.x.1.9.00", ""):
            try:
                await session.call_tool(
                    "ask", {"who": "hand"}, input_responses=reply, request_state=forged,
                    allow_input_required=True,
                )
            except MCPError as e:
                print(f"forged state refused: {e}")
            else:
                raise AssertionError(f"a forged state was taken: {forged!r}")
        # The right state for another tool is refused too.
        try:
            await session.call_tool(
                "greet", {}, input_responses=reply, request_state=state, allow_input_required=True
            )
        except MCPError as e:
            print(f"state of another tool refused: {e}")
        else:
            raise AssertionError("a state was taken by another tool")
        # An answer over serve's size bound is refused; the run still waits.
        huge = {key: {"action": "accept", "content": {"name": "x" * 300_000}}}
        try:
            await session.call_tool(
                "ask", {"who": "hand"}, input_responses=huge,
                request_state=state, allow_input_required=True,
            )
        except MCPError as e:
            print(f"oversized answer refused: {e}")
        else:
            raise AssertionError("an oversized answer was taken")
        done = await session.call_tool(
            "ask", {"who": "hand"}, input_responses=reply, request_state=state,
            allow_input_required=True,
        )
        got = structured(done)
        assert got == {"who": "hand", "name": "Hand"}, got
        print(f"by hand -> {json.dumps(got)} run {run_id(done)}")
        # The state is used up.
        try:
            await session.call_tool(
                "ask", {"who": "hand"}, input_responses=reply, request_state=state,
                allow_input_required=True,
            )
        except MCPError as e:
            print(f"replayed state refused: {e}")
        else:
            raise AssertionError("a used state was taken again")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
