"""The HTTP server's connection transport (server/toolwire_server/transports/slow_clients.py): the writes of one loop
turn leave as one send, in order; a close sends what is pending first; an abort drops it. On a real socket pair."""

import asyncio
import socket

from toolwire_server.transports.slow_clients import CoalescedWrites


async def _pair() -> tuple[CoalescedWrites, asyncio.Transport, socket.socket]:
    ours, theirs = socket.socketpair()
    loop = asyncio.get_running_loop()
    raw, _ = await loop.connect_accepted_socket(asyncio.Protocol, ours)
    theirs.setblocking(False)
    return CoalescedWrites(raw, loop), raw, theirs


async def _read_all(sock: socket.socket) -> bytes:
    loop, chunks = asyncio.get_running_loop(), []
    while chunk := await loop.sock_recv(sock, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


async def test_one_turns_writes_leave_as_one_send_in_order() -> None:
    writes, raw, theirs = await _pair()
    sent: list[bytes] = []
    real_write = raw.write
    raw.write = lambda data: (sent.append(bytes(data)), real_write(data))[1]  # type: ignore[method-assign]
    writes.write(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n")
    writes.write(b"")
    writes.write(memoryview(b"hello"))
    assert sent == []  # nothing before the loop turns
    await asyncio.sleep(0)
    assert sent == [b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello"]
    writes.write(b"next")
    writes.close()  # what is pending goes first
    assert await _read_all(theirs) == b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhellonext"
    assert writes.is_closing()
    theirs.close()


async def test_an_abort_drops_what_is_pending() -> None:
    writes, _, theirs = await _pair()
    writes.write(b"never sent")
    writes.abort()
    await asyncio.sleep(0)
    assert await _read_all(theirs) == b""
    assert writes.is_closing()
    theirs.close()
