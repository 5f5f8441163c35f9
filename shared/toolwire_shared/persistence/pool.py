"""The one pool of database connections: up to `size` per database, shared by the threads of a process (every
statement runs in a worker thread), each operation holding one for its length; a thread that holds one already (a
transaction inside an operation) is given the same."""

import contextlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class Pool:
    def __init__(self, connect: Callable[[], Any], size: int = 1) -> None:
        if size < 1:
            raise ValueError(f"a database needs at least one connection, not {size}")
        self.size = size
        self.connect = connect
        """Opens a new connection (a test may count them)."""
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[Any] = []
        self._held = threading.local()

    @contextmanager
    def held(self) -> Iterator[Any]:
        """A connection for this thread until the block ends: an idle one, else a new one."""
        conn = getattr(self._held, "conn", None)
        if conn is not None:
            yield conn
            return
        with self._slots:
            try:
                conn = self._idle.pop()
            except IndexError:
                conn = self.connect()
            self._held.conn = conn
            try:
                yield conn
            finally:
                self._held.conn = None
                if not getattr(conn, "closed", False):  # one the server or the network closed is dropped
                    self._idle.append(conn)

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
