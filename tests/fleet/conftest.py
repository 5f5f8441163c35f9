"""Fleet tests start real `toolwire worker` processes on a real PostgreSQL (or SQLite) run store."""

from helpers.postgres import postgres_url

__all__ = ["postgres_url"]
