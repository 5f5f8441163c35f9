"""The three servers the benchmark compares, each with one trivial async `echo(text)` tool:
toolwire's registry, a plain `mcp` MCPServer, and a hand-written NDJSON JSON-RPC pipe (the floor).

    python bench/echo_servers.py mcpserver-stdio | mcpserver-http PORT | raw-stdio
    python -m toolwire_server bench/echo_servers.py:registry --stdio | --http --port PORT
"""

import asyncio
import json
import sys

from toolwire_server import Registry

registry = Registry("bench-echo")


@registry.tool(description="Echo the text back.")
async def echo(text: str) -> str:
    return text


def mcpserver() -> "object":
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench-echo", log_level="WARNING")

    @server.tool()
    async def echo(text: str) -> str:
        return text

    return server


async def raw_stdio() -> None:
    """The floor: read a request line, answer a tools/call result line. No validation, no framework."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    while line := await reader.readline():
        request = json.loads(line)
        text = request["params"]["arguments"]["text"]
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        writer.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}).encode() + b"\n")
        await writer.drain()


if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "mcpserver-stdio":
        mcpserver().run()  # type: ignore[attr-defined]
    elif kind == "mcpserver-http":
        mcpserver().run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))  # type: ignore[attr-defined]
    elif kind == "raw-stdio":
        asyncio.run(raw_stdio())
    else:
        raise SystemExit(f"unknown server kind {kind!r}")
