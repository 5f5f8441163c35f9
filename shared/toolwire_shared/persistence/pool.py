"""The one pool of database connections: up to `size` per database, each operation holding one for its length.
A store's pool is shared by the threads of its process (the drivers block: every operation runs in a worker thread),
and a thread that holds one already (a transaction inside an operation) is given the same. A pool made with
`aconnect` leases asynchronous connections to async code instead (the limit counters: a check on the call path
cannot afford a thread hop); a pool is used one way or the other, never both."""

import contextlib
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio


class Pool:
    def __init__(
        self, connect: Callable[[], Any], size: int = 1, aconnect: Callable[[], Awaitable[Any]] | None = None
    ) -> None:
        if size < 1:
            raise ValueError(f"a database needs at least one connection, not {size}")
        self.size = size
        self.connect = connect
        """Opens a new connection (a test may count them)."""
        self.aconnect = aconnect
        self._slots = threading.BoundedSemaphore(size)
        self._aslots = anyio.Semaphore(size)
        self._idle: list[Any] = []
        self._held = threading.local()

    @contextmanager
    def held(self) -> Iterator[Any]:
        """A connection for this thread until the block ends: the one it holds already, else the pool's."""
        conn = getattr(self._held, "conn", None)
        if conn is not None:
            yield conn
            return
        conn = self.acquire()
        try:
            yield conn
        finally:
            self.release(conn)

    def current(self) -> Any | None:
        """The connection this thread holds, if any."""
        return getattr(self._held, "conn", None)

    def acquire(self) -> Any:
        """A connection for this thread (an idle one, else a new one), waiting for a free slot; `release` it."""
        self._slots.acquire()
        try:
            conn = self._idle.pop() if self._idle else self.connect()
        except BaseException:
            self._slots.release()
            raise
        self._held.conn = conn
        return conn

    def release(self, conn: Any) -> None:
        self._held.conn = None
        if not getattr(conn, "closed", False):  # one the server or the network closed is dropped
            self._idle.append(conn)
        self._slots.release()

    async def aacquire(self) -> Any:
        """An asynchronous connection (a pool made with `aconnect`), waiting for a free slot; `arelease` it."""
        assert self.aconnect is not None, "a pool of asynchronous connections is made with aconnect"
        await self._aslots.acquire()
        try:
            return self._idle.pop() if self._idle else await self.aconnect()
        except BaseException:
            self._aslots.release()
            raise

    async def arelease(self, conn: Any, in_doubt: bool = False) -> None:
        """Back to the pool; closed instead when an error left it `in_doubt` or the server closed it."""
        try:
            if in_doubt:
                with contextlib.suppress(Exception):
                    await conn.close()
            elif not conn.closed:
                self._idle.append(conn)
        finally:
            self._aslots.release()

    async def adrop_idle(self) -> None:
        """Close the idle asynchronous connections."""
        while self._idle:
            with contextlib.suppress(Exception):
                await self._idle.pop().close()

    def drop_idle(self) -> None:
        """Close the idle connections (the next operation connects anew)."""
        while self._idle:
            with contextlib.suppress(Exception):  # a connection broken already
                self._idle.pop().close()

    def close(self) -> None:
        """Close every connection, once the operations under way have ended (a later operation connects again)."""
        for _ in range(self.size):
            self._slots.acquire()
        try:
            self.drop_idle()
        finally:
            for _ in range(self.size):
                self._slots.release()
