"""stdio transport: newline-delimited JSON-RPC on the process's stdin/stdout, logs on stderr only.

The SDK's `stdio_server()` hops every readline, write and flush through a worker thread; this one reads and writes
the pipes with asyncio directly and feeds the same SDK server streams. A line that is not JSON gets a -32700 answer,
JSON that is not a JSON-RPC message a -32600 one, and a line over `max_line_bytes` is skipped (never buffered
whole) and answered -32600, all with id null as over HTTP, and the server reads on. It falls back to the SDK
transport when stdin or stdout is not a pipe, socket or character device (e.g. a regular file)."""

import asyncio
import logging
import os
import stat
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from toolwire_server import texts
from toolwire_server.app import build_server
from toolwire_server.auth.access import ALL_TOOLS, Grant
from toolwire_server.limits import DEFAULT_MAX_LINE_BYTES, ServerLimits
from toolwire_server.tools.registry import Registry
from toolwire_server.transports import fast_path
from toolwire_server.transports.fast_path import Answerer, StdioFastCalls, WriteLine
from toolwire_shared.mcp_kit.sdk import create_context_streams

log = logging.getLogger("toolwire.server")


def _pipe_like(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


MakeFastCalls = Callable[[WriteLine], StdioFastCalls]


@asynccontextmanager
async def asyncio_stdio(
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, fast: MakeFastCalls | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """Claim fds 0/1 (divert them to /dev/null and stderr so stray prints miss the wire) and serve the pipes; with
    `fast`, the requests it can answer alone never reach the SDK."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=max_line_bytes)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
    )
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)

    read_send, read_recv = create_context_streams[SessionMessage | Exception](0)
    write_send, write_recv = create_context_streams[SessionMessage](0)
    refusals = write_send.clone()  # the reader's own answers to lines the server never sees

    async def write_line(data: bytes) -> None:
        writer.write(data)
        await writer.drain()

    fast_calls = fast(write_line) if fast is not None else None

    async def read_lines() -> None:
        async with read_send, refusals, anyio.create_task_group() as calls:  # calls in flight end before the streams
            async for line in _lines(reader):
                if isinstance(line, int):
                    log.warning("skipped a stdin line of %d bytes (over --max-line-bytes %d)", line, max_line_bytes)
                    refusal = _error(None, types.INVALID_REQUEST, texts.line_too_long(line, max_line_bytes))
                    await refusals.send(SessionMessage(refusal))
                    continue
                if not line.strip():
                    continue
                if fast_calls is not None and fast_calls.take(line, calls):
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except ValidationError as exc:
                    refusal = _refusal(line, exc)
                    log.warning("answered a stdin line of %d bytes with error %d", len(line), refusal.error.code)
                    await refusals.send(SessionMessage(refusal))
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


async def _lines(reader: asyncio.StreamReader) -> AsyncIterator[bytes | int]:
    """stdin's lines (the last may lack its newline); a line over the reader's limit is skipped as it arrives, never
    held whole, and yields its size instead."""
    while True:
        try:
            yield await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # end of input
            if exc.partial:
                yield exc.partial
            return
        except asyncio.LimitOverrunError as exc:
            yield await _skip_line(reader, exc.consumed)


async def _skip_line(reader: asyncio.StreamReader, buffered: int) -> int:
    """Drop the rest of an over-long line, up to and including its newline; its size in bytes."""
    skipped = 0
    while True:
        skipped += len(await reader.read(buffered))  # what is buffered has no newline: drop it, then look again
        try:
            return skipped + len(await reader.readuntil(b"\n"))
        except asyncio.LimitOverrunError as exc:
            buffered = exc.consumed
        except asyncio.IncompleteReadError as exc:
            return skipped + len(exc.partial)


def _refusal(line: bytes | str | None, exc: ValidationError) -> types.JSONRPCError:
    """-32700 for a line that is not JSON (or is nested too deep to parse), -32600 for JSON that is no JSON-RPC
    message (with its id when the line is known and has a usable one)."""
    first = exc.errors(include_url=False, include_input=False)[0]
    if first["type"] == "json_invalid":
        return _error(None, types.PARSE_ERROR, texts.parse_error(first["msg"]))
    return _error(_request_id(line), types.INVALID_REQUEST, texts.INVALID_REQUEST)


def _request_id(line: bytes | str | None) -> types.RequestId | None:
    if line is None:
        return None
    try:
        data = pydantic_core.from_json(line)
    except ValueError:
        return None
    found = data.get("id") if isinstance(data, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def _error(request_id: types.RequestId | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))


@asynccontextmanager
async def sdk_stdio() -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's transport (for stdin/stdout that are regular files), answering bad lines as `asyncio_stdio` does.
    It reads whole lines, so `max_line_bytes` does not apply here."""
    async with stdio_server() as (read_stream, write_stream):
        relay_send, relay_recv = create_context_streams[SessionMessage | Exception](0)

        async def relay() -> None:
            async with relay_send:
                async for item in read_stream:
                    if isinstance(item, ValidationError):
                        first = item.errors(include_url=False)[0]
                        if first["type"] != "json_invalid" or str(first.get("input", "")).strip():  # blank: skip
                            await write_stream.send(SessionMessage(_refusal(None, item)))
                        continue
                    await relay_send.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(relay)
            yield relay_recv, write_stream
            tg.cancel_scope.cancel()


async def serve_stdio(registry: Registry, *, limits: ServerLimits | None = None, grant: Grant = ALL_TOOLS) -> None:
    """Serve until stdin closes."""
    limits = limits or ServerLimits()
    server = build_server(registry, limits=limits, grant=grant)
    answerer = Answerer(registry, limits, server.server_info_stamp)

    def fast(write_line: WriteLine) -> StdioFastCalls:
        return StdioFastCalls(answerer, grant, write_line)

    use_fast = fast_path.enabled()
    piped = _pipe_like(0) and _pipe_like(1)
    transport = asyncio_stdio(limits.max_line_bytes, fast if use_fast else None) if piped else sdk_stdio()
    async with transport as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
