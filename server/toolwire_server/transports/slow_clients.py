"""uvicorn's httptools protocol (its C parser: about a third less CPU per request than its pure-Python h11 one) with
what uvicorn lacks for clients that send slowly or too much:

- a deadline for a request's headers: uvicorn's keep-alive timer runs only between requests, so a client that opens
  a connection and sends its request line and headers slowly (or never) would hold it forever. One timer, armed
  when a connection opens and while a request's head is incomplete, disarmed once its headers are complete; when
  it fires, the connection is closed;
- a bound on a request's head (MAX_HEAD_BYTES, h11's bound: uvicorn's httptools protocol has none, and the parser
  buffers a header line that never ends): over it, a 431 and the connection closed;
- a transport sending the writes of one loop turn as one (uvicorn writes a response's head and body separately);
- a Connection in each request's scope (connection.py): whether the client is gone, whether the body is in."""

import asyncio
import logging
from typing import Any, cast

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from toolwire_server.transports.connection import CONNECTION_SCOPE_KEY, Connection

log = logging.getLogger("toolwire.server")

MAX_HEAD_BYTES = 16 * 1024
"""Request line and headers of one request, at most (h11's default, which uvicorn's h11 protocol enforced)."""


def with_header_timeout(seconds: float, max_head_bytes: int = MAX_HEAD_BYTES) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol class, closing connections whose request head takes longer than `seconds` and
    refusing (431) a head of more than `max_head_bytes`."""

    class GuardedHttpTools(HttpToolsProtocol):
        _header_timer: asyncio.TimerHandle | None = None
        _in_message = False  # from a request's first byte to its last
        _in_head = False  # from a request's first byte until its headers are complete
        _head_bytes = 0
        _begun = 0  # requests begun in the chunk being parsed
        _connection: Connection | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.transport = cast(asyncio.Transport, CoalescedWrites(transport, self.loop))
            self._connection = Connection()
            self._arm()

        def data_received(self, data: bytes) -> None:
            was_in_head, was_between = self._in_head, not self._in_message
            self._begun = 0
            super().data_received(data)
            if self._in_head:
                # counted only when the chunk holds nothing else (a pipelining client's chunk may also hold the end
                # of the request before: counted from its next chunk, so at most one chunk more is ever buffered)
                if (was_in_head and self._begun == 0) or (was_between and self._begun == 1):
                    self._head_bytes += len(data)
                if self._head_bytes > max_head_bytes:
                    self._head_too_large()
                    return
                self._arm()
            elif self.cycle is None or self.cycle.response_complete:
                self._arm()  # waiting for the next request's head (bytes between requests count towards it)
            else:
                self._disarm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._in_message = self._in_head = True
            self._head_bytes = 0
            self._begun += 1
            self.scope[CONNECTION_SCOPE_KEY] = self._connection  # type: ignore[literal-required]
            if self._connection is not None:
                self._connection.body_in = False

        def on_headers_complete(self) -> None:
            self._in_head = False
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._in_message = False
            if self._connection is not None:
                self._connection.body_in = True
            super().on_message_complete()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self._in_head:
                self._disarm()  # uvicorn's keep-alive timer takes over until the next request's first bytes

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._connection is not None:
                self._connection.lost()
            super().connection_lost(exc)

        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(seconds, self._headers_too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                client: Any = self.client
                log.warning("closed a connection from %s: its request headers took over %g s", client, seconds)
                self.transport.close()

        def _head_too_large(self) -> None:
            self._disarm()
            self._in_head = False
            if self.transport.is_closing():
                return
            client: Any = self.client
            log.warning("431 for a connection from %s: its request head is over %d bytes", client, max_head_bytes)
            if self.cycle is None or self.cycle.response_complete:  # else a response is under way: just close
                text = (
                    f"the request line and headers are over {max_head_bytes} bytes; this server accepts at most "
                    f"{max_head_bytes}. Send shorter headers.\n"
                ).encode()
                head = b"content-type: text/plain; charset=utf-8\r\nconnection: close\r\ncontent-length: "
                self.transport.write(STATUS_LINE[431] + head + str(len(text)).encode() + b"\r\n\r\n" + text)
            self.transport.close()

    return GuardedHttpTools


class CoalescedWrites:
    """A connection's transport whose writes within one loop turn leave as one send(); everything else is the
    transport's own. Order is kept, and nothing written is held past the turn or lost on close."""

    __slots__ = ("_loop", "_pending", "_raw")

    def __init__(self, raw: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._raw, self._loop = raw, loop
        self._pending: list[bytes] | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        if self._pending is None:
            self._pending = [bytes(data)]
            self._loop.call_soon(self.flush)
        else:
            self._pending.append(bytes(data))

    def flush(self) -> None:
        pending, self._pending = self._pending, None
        if pending and not self._raw.is_closing():
            self._raw.write(b"".join(pending))

    def write_eof(self) -> None:
        self.flush()
        self._raw.write_eof()

    def close(self) -> None:
        self.flush()
        self._raw.close()

    def abort(self) -> None:
        self._pending = None
        self._raw.abort()

    def is_closing(self) -> bool:
        return self._raw.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)
