"""One transaction, as every store and every caller of a store sees it: statements with `?` placeholders, named
advisory locks, and parameters as this database takes them."""

import hashlib
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from toolwire_shared.persistence.dialect import Dialect

LEGACY_LOCKS = {
    "toolwire.runs.migrations": 0x746F6F6C,
    "toolwire.fleet.migrations": 0x746F6F6C,
    "toolwire.limits.migrations": 7305141,
    "toolwire.audit.migrations": 7305142,
}
"""The keys toolwire used before locks had names: a process of the version before, starting beside one of this
version, still waits for the same lock."""


def lock_key(name: str) -> int:
    """The advisory lock's 64-bit key for `name` (stable across processes and versions)."""
    legacy = LEGACY_LOCKS.get(name)
    if legacy is not None:
        return legacy
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class Tx:
    __slots__ = ("cur", "dialect")

    def __init__(self, cur: Any, dialect: Dialect) -> None:
        self.cur, self.dialect = cur, dialect

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        """Run one statement; the cursor, to fetch from or read `rowcount` of."""
        self.cur.execute(self.dialect.sql(sql), params)
        return self.cur

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.cur.executemany(self.dialect.sql(sql), rows)

    def lock(self, name: str) -> None:
        """Hold the lock `name` until this transaction ends: work two processes must not do at once (PostgreSQL:
        pg_advisory_xact_lock; SQLite: the transaction holds the database's write lock already)."""
        self.dialect.lock(self.cur, lock_key(name))

    def timestamp(self, at: datetime | None) -> Any:
        """`at` as this database takes a timestamp parameter."""
        return self.dialect.timestamp(at)

    def json(self, text: str) -> Any:
        """A serialised JSON document as this database takes a JSON parameter."""
        return self.dialect.json(text)

    def has_table(self, table: str) -> bool:
        return self.dialect.has_table(self.cur, table)
