"""What the run-store commands share: the --db option, running one piece of work on the opened store, and naming the
store in messages. Store errors become one line in `mistakes.py`."""

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

import anyio
import click

from toolwire_client.store import SqlRunStore, check_db, open_store

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = "Run store: a SQLite file path or a postgresql:// URL (default: runs.db in the user data dir; $TOOLWIRE_DB)."


def db_option(fn: F) -> F:
    return click.option(
        "--db", envvar="TOOLWIRE_DB", default=None, metavar="PATH|URL", help=DB_HELP, callback=_checked_db
    )(fn)


def _checked_db(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    try:
        return check_db(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def with_store(db: str | None, work: Callable[[SqlRunStore], Awaitable[T]], *, create: bool = False) -> T:
    """Open the store, run `work`, close it. A command about saved runs opens a store that exists and makes none
    (StoreMissing: one line); `create` for one that saves a new run (`submit`)."""

    async def main() -> T:
        store = await open_store(db, create=create)
        try:
            return await work(store)
        finally:
            await store.aclose()

    return anyio.run(main)


def store_name(db: str | None) -> str:
    """The store as a message names it: the file, or the PostgreSQL URL without its password."""
    if db and db.startswith(("postgresql://", "postgres://")):
        url = urlsplit(db)
        host = url.hostname or ""
        return f"{url.scheme}://{url.username + '@' if url.username else ''}{host}{url.path}"
    from toolwire_client.store.sqlite import default_sqlite_path

    return db.removeprefix("sqlite:///") if db else str(default_sqlite_path())
