"""The official Python MCP SDK client reading the provenance `pipewright
serve` puts in a served result's `_meta`.

    python serve_provenance.py BIN FILE EXPECT stdio   # handshake era, stdio
    python serve_provenance.py BIN FILE EXPECT URL     # 2026-07-28, Streamable HTTP at URL

FILE serves `lookup` (search_users then get_user_details). EXPECT is JSON:
{"fileDigest", "lockDigest", "nodes": [{"id", "server", "serverInfo":
{"name", "version"}, "tool", "toolDigest"}]}; every field given must match
the provenance, node by node, in order. The provenance is printed as
`PROVENANCE <json>` for the test to look further.
"""

import asyncio
import json
import sys
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

KEY = "io.pipewright/provenance"


def check(result: Any, expect: dict) -> None:
    assert not result.is_error, result
    meta = result.meta or {}
    assert KEY in meta, f"no {KEY} in _meta: {meta}"
    prov = meta[KEY]
    assert prov["served"] == "lookup", prov
    assert prov["composition"] == "pipe", prov
    assert prov["runId"] == meta["pipewright/run_id"], prov
    for key in ("fileDigest", "lockDigest"):
        assert prov[key] == expect[key], f"{key}: {prov[key]} != {expect[key]}"
    got = prov["nodes"]
    assert len(got) == len(expect["nodes"]), got
    for node, want in zip(got, expect["nodes"]):
        for key, value in want.items():
            assert node[key] == value, f"node {node['id']}: {key}: {node[key]} != {value}"
        assert node["calls"] == 1, node
        assert node["argsDigest"].startswith("sha256:"), node
    # Values never appear: the caller's `carol` went in as an argument.
    assert "carol" not in json.dumps(prov).lower(), prov
    print("PROVENANCE " + json.dumps(prov))


async def legacy(binary: str, path: str, expect: dict) -> None:
    params = StdioServerParameters(command=binary, args=["serve", "--no-save", path])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            check(await session.call_tool("lookup", {"who": "carol"}), expect)
            print("legacy provenance ok")


async def modern(url: str, expect: dict) -> None:
    from mcp.client.client import Client

    async with Client(url, mode="2026-07-28") as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        check(await client.call_tool("lookup", {"who": "carol"}), expect)
        print("modern provenance ok")


if __name__ == "__main__":
    binary, path, expect, where = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
    if where == "stdio":
        asyncio.run(legacy(binary, path, expect))
    else:
        asyncio.run(modern(where, expect))
