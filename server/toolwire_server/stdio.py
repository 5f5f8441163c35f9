"""stdio transport: newline-delimited JSON-RPC on the process's stdin/stdout, logs on stderr only.

The SDK's `stdio_server()` hops every readline, write and flush through a worker thread; this one reads and writes
the pipes with asyncio directly and feeds the same SDK server streams. It falls back to the SDK transport when stdin
or stdout is not a pipe, socket or character device (e.g. a regular file)."""

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared._context_streams import create_context_streams
from mcp.shared.message import SessionMessage

from toolwire_server.access import ALL_TOOLS, Grant
from toolwire_server.app import build_server
from toolwire_server.limits import ServerLimits
from toolwire_server.registry import Registry

MAX_LINE_BYTES = 64 * 1024 * 1024


def _pipe_like(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@asynccontextmanager
async def asyncio_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """Claim fds 0/1 (divert them to /dev/null and stderr so stray prints miss the wire) and serve the pipes."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE_BYTES)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
    )
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)

    read_send, read_recv = create_context_streams[SessionMessage | Exception](0)
    write_send, write_recv = create_context_streams[SessionMessage](0)

    async def read_lines() -> None:
        async with read_send:
            while line := await reader.readline():
                if not line.strip():
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:
                    await read_send.send(exc)
                    continue
                await read_send.send(SessionMessage(message))

    writer_done = anyio.Event()

    async def write_lines() -> None:
        try:
            async with write_recv:
                async for session_message in write_recv:
                    data = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    writer.write(data.encode() + b"\n")
                    await writer.drain()
        finally:
            writer_done.set()

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_lines)
            tg.start_soon(write_lines)
            yield read_recv, write_send
            await write_send.aclose()  # let the last answers reach the wire before stopping
            with anyio.move_on_after(5):
                await writer_done.wait()
            tg.cancel_scope.cancel()
    finally:
        read_transport.close()
        write_transport.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


async def serve_stdio(registry: Registry, *, limits: ServerLimits | None = None, grant: Grant = ALL_TOOLS) -> None:
    """Serve until stdin closes."""
    server = build_server(registry, limits=limits, grant=grant)
    transport = asyncio_stdio() if _pipe_like(0) and _pipe_like(1) else stdio_server()
    async with transport as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
