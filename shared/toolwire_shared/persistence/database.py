"""A database as every store opens it: a SQLite file or a PostgreSQL URL, its dialect, its one pool, and its
transactions, run in a worker thread from async code (the drivers block)."""

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio.to_thread

from toolwire_shared.persistence.dialect import POSTGRES, SQLITE, Dialect, is_postgres
from toolwire_shared.persistence.migrations import Schema
from toolwire_shared.persistence.pool import Pool
from toolwire_shared.persistence.tx import Tx

T = TypeVar("T")
Mode = Literal["create", "rw", "ro"]
"""create: make the file (and its folder) if missing; rw: open one that exists, never make one; ro: read only."""


class DatabaseMissing(Exception):
    """A SQLite file opened with mode `rw` does not exist."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


class Database:
    def __init__(
        self,
        where: str | Path,
        *,
        connections: int = 1,
        mode: Mode = "create",
        missing: Callable[[str], Exception] = DatabaseMissing,
        asynchronous: bool = False,
    ) -> None:
        text = str(where)
        self.dialect: Dialect = POSTGRES if is_postgres(text) else SQLITE
        self.url = text
        """The PostgreSQL URL, or the SQLite file's path (sqlite:/// taken off)."""
        if self.dialect is SQLITE:
            self.url = text.removeprefix("sqlite:///")
        self.mode: Mode = mode
        self.missing = missing
        if asynchronous and self.dialect is not POSTGRES:
            raise ValueError("asynchronous connections are PostgreSQL's only")
        self.pool = Pool(self._connect, connections, self._aconnect if asynchronous else None)

    @property
    def where(self) -> str:
        """The database as a message names it (no password)."""
        return self.url.split("@")[-1] if self.dialect is POSTGRES else self.url

    def _connect(self) -> Any:
        if self.dialect is POSTGRES:
            import psycopg

            from toolwire_shared.db_timeouts import bounded

            return psycopg.connect(bounded(self.url), autocommit=True)
        return _sqlite(Path(self.url), self.mode, self.missing)

    async def _aconnect(self) -> Any:
        import psycopg

        from toolwire_shared.db_timeouts import bounded

        return await psycopg.AsyncConnection.connect(bounded(self.url), autocommit=True)

    # -- in the calling thread -----------------------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """One write transaction on this thread's connection: committed on success, rolled back on error."""
        pool = self.pool
        conn = pool.current()
        owned = conn is None
        if owned:
            conn = pool.acquire()
        try:
            with self.dialect.write_transaction(conn) as cur:
                yield Tx(cur, self.dialect)
        finally:
            if owned:
                pool.release(conn)

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """One statement on its own (its own transaction); the rows it returns, if any."""
        with self.pool.held() as conn:
            cur = conn.cursor()
            try:
                cur.execute(self.dialect.sql(sql), params)
                return cur.fetchall() if cur.description else []
            finally:
                cur.close()

    def migrate(self, schema: Schema) -> int:
        with self.transaction() as tx:
            return schema.migrate(tx)

    def close(self) -> None:
        self.pool.close()

    # -- from async code -----------------------------------------------------------------------------------------
    async def run(self, fn: Callable[[], T], abandon_on_cancel: bool = False) -> T:
        """`fn()` in a worker thread holding one of the pool's connections (its transactions use it)."""

        pool = self.pool

        def held() -> T:
            conn = pool.acquire()
            try:
                return fn()
            finally:
                pool.release(conn)

        return await anyio.to_thread.run_sync(held, abandon_on_cancel=abandon_on_cancel)

    async def atransaction(self, work: Callable[[Tx], T]) -> T:
        """`work(tx)` in one transaction, in a worker thread."""

        def run() -> T:
            with self.transaction() as tx:
                return work(tx)

        return await self.run(run)

    async def aexecute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[tuple[Any, ...]]:
        """One statement on its own, on an asynchronous connection (a Database made `asynchronous`)."""
        pool = self.pool
        conn = await pool.aacquire()
        try:
            cur = await conn.execute(self.dialect.sql(sql), params)
            found: list[tuple[Any, ...]] = await cur.fetchall() if cur.description else []
        except BaseException:
            await pool.arelease(conn, in_doubt=True)
            raise
        await pool.arelease(conn)
        return found

    async def aclose(self) -> None:
        if self.pool.aconnect is not None:
            await self.pool.adrop_idle()
        else:
            await anyio.to_thread.run_sync(self.pool.close)

    def is_unreachable(self, exc: BaseException) -> bool:
        """Whether `exc` (or what caused it, or one of its group) is the database being cut off or too slow, not
        a refusal of what was asked."""
        errors = self.dialect.unreachable_errors()
        seen: set[int] = set()
        todo: list[BaseException | None] = [exc]
        while todo:
            e = todo.pop()
            if e is None or id(e) in seen:
                continue
            seen.add(id(e))
            if isinstance(e, errors):
                return True
            todo += [e.__cause__, e.__context__, *(e.exceptions if isinstance(e, BaseExceptionGroup) else ())]
        return False


def _sqlite(path: Path, mode: Mode, missing: Callable[[str], Exception]) -> sqlite3.Connection:
    """WAL (readers never wait for the writer), synchronous=FULL (a committed write survives a power cut)."""
    if mode == "create":
        path.parent.mkdir(parents=True, exist_ok=True)
        where, uri = str(path), False
    elif mode == "ro":
        where, uri = f"file:{path}?mode=ro", True
    elif path.is_file():
        where, uri = path.resolve().as_uri() + "?mode=rw", True  # never makes the file
    else:
        raise missing(str(path))
    conn = sqlite3.connect(where, isolation_level=None, check_same_thread=False, timeout=30.0, uri=uri)
    if mode != "ro":
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn
