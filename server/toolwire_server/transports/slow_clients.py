"""A deadline for a request's headers, which uvicorn lacks: its keep-alive timer runs only between requests, so a
client that opens a connection and sends its request line and headers slowly (or never) would hold it forever.
This is uvicorn's h11 protocol with one timer: armed when a connection opens and when it starts waiting for its next
request, disarmed once a request's headers are complete; when it fires, the connection is closed.

Its transport also sends the writes of one event-loop turn as one: uvicorn writes a response's head and its body
separately, two send() system calls per answer where one does (the largest single cost of a fast-path call)."""

import asyncio
import logging
from typing import Any, cast

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("toolwire.server")


def with_header_timeout(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol class, closing connections whose request headers take longer than `seconds`."""

    class HeaderTimeoutH11(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self.transport = cast(asyncio.Transport, CoalescedWrites(transport, self.loop))
            self._arm()

        def data_received(self, data: bytes) -> None:
            before = self.cycle
            super().data_received(data)
            if self.cycle is not before:  # a request's headers are complete
                self._disarm()
            elif self.cycle is None or self.cycle.response_complete:  # still waiting for the next request's headers
                self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._disarm()  # uvicorn's keep-alive timer takes over until the next request's first bytes

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
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

    return HeaderTimeoutH11


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
