"""The official Python MCP SDK client, in 2026-07-28 mode, as a stateless
agent of a fleet of `pipewright serve --http` instances that share a
`requestState` key (`--state-key-file`): it gets a question from one
instance and answers it at another, the way a load balancer without
stickiness would send it.

    python serve_fleet_client.py local KEY A B OTHER ROTATED
    python serve_fleet_client.py durable KEY A B OTHER
    python serve_fleet_client.py balanced URL

KEY is the fleet's key (hex), to seal a state that has expired. A and B
hold KEY; OTHER holds another key; ROTATED holds a new key first and KEY
second. Every instance serves `twice`, whose two nodes ask in turn for a
name (hitl_server.py's `ask_name`, the second for the name the first got).

- local: serve without `--on`: the answer at B is refused with the error
  naming the fix (sticky routing, or `--on`), the answer at A is taken.
- durable: serve with `--on restate://…`: the first answer goes to B, the
  second question comes back from B and its answer goes to A; the run ends
  once, with both answers.

In both, a forged, an expired, another key's and a used state are refused
at every instance.

- balanced: URL is a balancer (HAProxy, round robin) in front of the
  `--on` instances, which names the instance of each response in
  `X-Served-By`; the SDK drives the rounds itself (its elicitation
  callback answers), and each `tools/call` is printed with the instance
  that answered it.

Prints one line per check; exits non-zero on a failed one.
"""

import asyncio
import contextlib
import hashlib
import hmac
import json
import sys
from typing import Any

import httpx2
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult, InputRequiredResult

DOMAIN = b"pipewright/serve/requestState/v1"


def sealed(key: bytes, body: str, tool: str) -> str:
    tag = hmac.new(key, DOMAIN + b"\0" + body.encode() + b"\0" + tool.encode(), hashlib.sha256)
    return f"{body}.{tag.hexdigest()}"


async def declared(_context: Any, params: Any) -> ElicitResult:
    """Declares elicitation; the rounds are driven by hand, so the SDK
    never calls it."""
    raise AssertionError(f"the SDK answered by itself: {params!r}")


async def ask(client: Client, who: str) -> InputRequiredResult:
    first = await client.session.call_tool("twice", {"who": who}, allow_input_required=True)
    assert isinstance(first, InputRequiredResult), first
    return first


def question(result: InputRequiredResult) -> tuple[str, str]:
    (key, request), = result.input_requests.items()
    dumped = request.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert dumped["method"] == "elicitation/create", dumped
    return key, dumped["params"]["message"]


async def answer(client: Client, who: str, result: InputRequiredResult, name: str,
                 state: str | None = None) -> Any:
    key, _ = question(result)
    return await client.session.call_tool(
        "twice", {"who": who},
        input_responses={key: {"action": "accept", "content": {"name": name}}},
        request_state=state if state is not None else result.request_state,
        allow_input_required=True,
    )


async def refused(what: str, call: Any) -> str:
    try:
        got = await call
    except MCPError as e:
        print(f"{what} refused: {e}")
        return str(e)
    raise AssertionError(f"{what} was taken: {got!r}")


def run_id(result: Any) -> str:
    meta = result.meta or {}
    if not isinstance(meta, dict):
        meta = meta.model_dump(by_alias=True)
    return meta["pipewright/run_id"]


async def balanced(url: str) -> None:
    served: list[str] = []

    async def seen(response: Any) -> None:
        try:
            body = json.loads(response.request.content or b"null")
        except ValueError:
            return
        if isinstance(body, dict) and body.get("method") == "tools/call":
            kind = "answer" if "requestState" in (body.get("params") or {}) else "question"
            served.append(f"{kind} at {response.headers.get('x-served-by', '?')}")

    names = {"Name for fleet": "Bo", "Name for Bo": "Al"}

    async def named(_context: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"name": names[params.message]})

    http = httpx2.AsyncClient(
        event_hooks={"response": [seen]}, timeout=httpx2.Timeout(60, read=300)
    )
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="2026-07-28", elicitation_callback=named) as client:
            done = await client.call_tool("twice", {"who": "fleet"})
    assert not done.is_error, done
    print(f"twice -> {json.dumps(done.structured_content)} run {run_id(done)}")
    print("calls: " + ", ".join(served))
    print("all checks passed")


async def main(mode: str, key_hex: str, *urls: str) -> None:
    if mode == "balanced":
        await balanced(key_hex)
        return
    async with contextlib.AsyncExitStack() as stack:
        names = ["A", "B", "OTHER", "ROTATED"][: len(urls)]
        clients = {}
        for name, url in zip(names, urls):
            client = Client(url, mode="2026-07-28", elicitation_callback=declared)
            clients[name] = await stack.enter_async_context(client)
        await checks(mode, bytes.fromhex(key_hex), clients)
    print("all checks passed")


async def checks(mode: str, key: bytes, clients: dict[str, Client]) -> None:
    a, b = clients["A"], clients["B"]
    first = await ask(a, "fleet")
    print(f"asked at A: {question(first)[1]}")
    state = first.request_state
    expired_body = ".".join(state.split(".")[:3]) + ".1000"
    expired = sealed(key, expired_body, "twice")
    forged = state[:-2] + ("00" if not state.endswith("00") else "11")
    for name, client in clients.items():
        await refused(f"forged state at {name}", answer(client, "fleet", first, "X", forged))
        if name != "OTHER":
            await refused(f"expired state at {name}", answer(client, "fleet", first, "X", expired))
    await refused("state of another key at OTHER", answer(clients["OTHER"], "fleet", first, "X"))

    if mode == "local":
        await refused("answer at B", answer(b, "fleet", first, "Bo"))
        # The rotated instance opens a state of the old key: its refusal is
        # that the run waits elsewhere, not that the state is forged.
        await refused("old key's state at ROTATED", answer(clients["ROTATED"], "fleet", first, "Bo"))
        second = await answer(a, "fleet", first, "Bo")
        assert isinstance(second, InputRequiredResult), second
        print(f"asked at A again: {question(second)[1]}")
        done = await answer(a, "fleet", second, "Al")
    else:
        second = await answer(b, "fleet", first, "Bo")
        assert isinstance(second, InputRequiredResult), second
        print(f"asked at B: {question(second)[1]}")
        done = await answer(a, "fleet", second, "Al")
    assert not done.is_error, done
    got = done.structured_content
    print(f"twice -> {json.dumps(got)} run {run_id(done)}")
    assert got == {"who": "Bo", "name": "Al"}, got
    for name in ("A", "B"):
        await refused(f"used state at {name}", answer(clients[name], "fleet", first, "Bo"))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
