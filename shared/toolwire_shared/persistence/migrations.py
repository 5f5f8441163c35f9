"""Versioned migrations, one ordered list per store: each store keeps the versions applied in its own table, and
applies what is missing when it opens, under its own named lock (two processes opening at once migrate once).

A store's list lives in one module as a plain list of (version, statements), appended to and never edited once
shipped. `{json}`, `{ts}`, `{float}` and `{id}` in a statement stand for the dialect's types; a statement only one
dialect needs is an `On(dialect name, statement)`."""

from dataclasses import dataclass

from toolwire_shared.persistence.tx import Tx


@dataclass(frozen=True)
class On:
    """A statement for one dialect only ("sqlite" or "postgresql")."""

    dialect: str
    sql: str


Migration = tuple[int, list[str | On]]


class SchemaTooNew(RuntimeError):
    """The database was migrated by a newer toolwire."""


@dataclass(frozen=True)
class Schema:
    """A store's migrations and where it records the versions applied."""

    name: str
    """The store as an error names it ("run store", "task store")."""
    version_table: str
    migrations: list[Migration]
    lock: str
    """The named lock migrating takes (toolwire_shared.persistence.tx.LEGACY_LOCKS keeps the keys of before)."""

    @property
    def latest(self) -> int:
        return self.migrations[-1][0]

    def version(self, tx: Tx) -> int:
        return int(tx.execute(f"SELECT MAX(version) FROM {self.version_table}").fetchone()[0] or 0)

    def migrate(self, tx: Tx) -> int:
        """Apply the migrations the database lacks, in `tx`; the version it is at after."""
        tx.lock(self.lock)
        tx.execute(f"CREATE TABLE IF NOT EXISTS {self.version_table} (version INTEGER PRIMARY KEY)")
        current = self.version(tx)
        if current > self.latest:
            raise SchemaTooNew(
                f"this {self.name} has schema version {current}, newer than this toolwire knows ({self.latest}); "
                "upgrade toolwire"
            )
        types = tx.dialect.types()
        for version, statements in self.migrations:
            if version <= current:
                continue
            for statement in statements:
                if isinstance(statement, On):
                    if statement.dialect != tx.dialect.name:
                        continue
                    statement = statement.sql
                tx.execute(statement.format(**types))
            tx.execute(f"INSERT INTO {self.version_table} (version) VALUES (?)", (version,))
        return max(current, self.latest)
