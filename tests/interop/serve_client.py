"""The official Python MCP SDK client calling a tool that `pipewright serve`
serves over stdio.

    python serve_client.py BIN FILE
"""

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(binary: str, path: str) -> None:
    params = StdioServerParameters(command=binary, args=["serve", "--no-save", path])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            assert names == ["lookup"], names
            result = await session.call_tool("lookup", {"who": "carol"})
            # The SDK names these isError/structuredContent or, newer,
            # is_error/structured_content.
            is_error = getattr(result, "is_error", None)
            if is_error is None:
                is_error = result.isError
            user = getattr(result, "structured_content", None)
            if user is None:
                user = result.structuredContent
            assert not is_error, result
            assert user == json.loads(result.content[0].text), result
            print(f"lookup -> {user['name']} <{user['email']}>")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
