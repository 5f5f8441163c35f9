"""What the run-store commands share: the --db option and turning store errors into clear CLI messages."""

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import click

from toolwire_client.store import (
    ApprovalRefused,
    RunAlreadyClaimed,
    RunNotFound,
    SqlRunStore,
    StaleRunState,
    open_store,
)

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

DB_HELP = "Run store: a SQLite file path or a postgresql:// URL (default: runs.db in the user data dir; $TOOLWIRE_DB)."


def db_option(fn: F) -> F:
    return click.option("--db", envvar="TOOLWIRE_DB", default=None, metavar="PATH|URL", help=DB_HELP)(fn)


class AlreadyClaimed(click.ClickException):
    exit_code = 3


def with_store(db: str | None, work: Callable[[SqlRunStore], Awaitable[T]]) -> T:
    """Open the store, run `work`, close it; store errors become one readable line and a non-zero exit."""

    async def main() -> T:
        store = await open_store(db)
        try:
            return await work(store)
        finally:
            await store.aclose()

    try:
        return anyio.run(main)
    except RunAlreadyClaimed as exc:
        raise AlreadyClaimed(f"{exc} (`toolwire runs` shows its status)") from exc
    except StaleRunState as exc:
        raise click.ClickException(f"{exc}; nothing of ours was saved over it") from exc
    except (RunNotFound, ApprovalRefused, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
