"""The shared run store: PostgreSQL from a URL, for several processes or machines resuming the same runs."""

from toolwire_client.store.sql import SqlRunStore


class PostgresRunStore(SqlRunStore):
    def __init__(self, url: str, connections: int = 1) -> None:
        super().__init__(url, connections)

    @property
    def url(self) -> str:
        return self.db.url

    @url.setter
    def url(self, value: str) -> None:
        """Where the next connection goes (the connections open already stay where they are)."""
        self.db.url = value
