"""An agent, scripted: the official Python SDK client (2.3) doing what a
model does with a server's tools -- list them, call one, copy values out of
its result into the next call's arguments, go over the items of a list,
answer the question the server asks -- and printing what it saw, one line
per step, so a run through `pipewright record` can be compared with a run
straight to the server (tests/record.rs). tests/record/agent.mjs is the
TypeScript twin.

    python tests/record/agent.py demo|everything|python stdio COMMAND ARGS...
    python tests/record/agent.py demo|everything|python http URL

The client speaks 2026-07-28 to the demo server (a question is an
input-required result, answered by calling again) and 2025-11-25 to the
others (a question is a request on the open call). Exits 1 if a step did
not get what it expected.
"""

import asyncio
import json
import os
import sys
from typing import Any

from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp_types import CreateMessageResult, ElicitResult, TextContent

FAILED: list[str] = []

ANSWERS = {
    "demo": {"signature": "Ada", "tone": "friendly", "send": True},
    "everything": {"name": "Ada Lovelace", "check": True, "email": "ada@example.org"},
    "python": {"name": "Ada Lovelace"},
}


def check(name: str, ok: bool, detail: Any) -> None:
    if not ok:
        print(f"FAIL - {name}: {json.dumps(detail, default=str)}")
        FAILED.append(name)


def read(result: Any) -> Any:
    """A result as the agent reads it: its structured content, else its
    text (parsed, when it is JSON)."""
    if result.structured_content:
        return result.structured_content
    text = "\n".join(getattr(c, "text", f"[{c.type}]") for c in result.content)
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, (dict, list)) else text


async def main(server: str, how: str, target: list[str]) -> None:
    async def elicit(_context: Any, params: Any) -> ElicitResult:
        print(f"asked: {params.message}")
        return ElicitResult(action="accept", content=ANSWERS[server])

    async def sample(_context: Any, params: Any) -> CreateMessageResult:
        print(f"asked the model: {params.system_prompt or ''}")
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="A short line."), model="py-model"
        )

    where: Any = target[0]
    if how == "stdio":
        where = StdioServerParameters(command=target[0], args=target[1:], env=dict(os.environ))
    mode = "2026-07-28" if server == "demo" else "legacy"
    async with Client(where, mode=mode, elicitation_callback=elicit, sampling_callback=sample) as client:

        async def call(name: str, args: dict) -> Any:
            result = await client.call_tool(name, args)
            got = read(result)
            error = "error " if result.is_error else ""
            print(f"{name} {json.dumps(args, separators=(',', ':'))} -> {error}{json.dumps(got, separators=(',', ':'), ensure_ascii=False)}")
            return got

        tools = await client.list_tools()
        print("tools: " + " ".join(sorted(t.name for t in tools.tools)))
        if server == "demo":
            found = await call("search_users", {"query": "ali", "limit": 5})
            check("found users", len(found["users"]) == 2, found)
            user = await call("get_user_details", {"user_id": found["users"][0]["id"]})
            check("details", user["email"] == "alice@example.com", user)
            listed = await call("list_items", {"count": 3, "prefix": "item-"})
            for item in listed:
                await call("echo", {"message": item["id"]})
            subject = f"Welcome, {user['name']}"
            confirmed = await call("confirm_send", {"to": user["email"], "subject": subject})
            check("confirmed", confirmed.get("send") is True, confirmed)
            body = f"Hello {user['name'].split(' ')[0]},\n-- {confirmed['signature']}"
            sent = await call("send_email", {"to": user["email"], "subject": subject, "body": body})
            check("sent", sent["message_id"].startswith("msg-"), sent)
            await call("echo", {"message": "4f1c9a2e-77b0-4c1e-9a53-0d2e8b6f1a90"})
        elif server == "everything":
            weather = await call("get-structured-content", {"location": "Chicago"})
            check("weather", weather["temperature"] == 36, weather)
            total = await call("get-sum", {"a": weather["temperature"], "b": weather["humidity"]})
            check("sum", "118" in str(total), total)
            await call("echo", {"message": f"Chicago: {weather['conditions']}"})
            form = await call("trigger-elicitation-request", {})
            check("form answered", "Ada Lovelace" in str(form), form)
        else:
            counted = await call("count", {"n": 3})
            check("counted", counted["count"] == 3, counted)
            named = await call("ask_name", {"who": f"agent-{counted['count']}"})
            check("named", named.get("name") == "Ada Lovelace", named)
            summary = await call("summarize", {"text": named["name"]})
            check("summarized", summary.get("summary") == "A short line.", summary)


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
    except Exception as e:  # noqa: BLE001 -- the transcript says what broke
        print(f"FAIL - {type(e).__name__}: {e}")
        FAILED.append("run")
    print(f"{len(FAILED)} check(s) failed" if FAILED else "all checks passed")
    sys.exit(1 if FAILED else 0)
