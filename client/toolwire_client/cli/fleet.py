"""`toolwire worker`, `toolwire submit` (`toolwire wait`: cli/wait.py): runs on a fleet of worker processes sharing
one run store (a PostgreSQL URL shares them between machines; the default SQLite file, between processes of one
machine)."""

import json
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
import click

from toolwire_client.cli._json import json_option
from toolwire_client.cli._store import db_option, with_store
from toolwire_client.cli.run_config import config_from, submitted_config_options
from toolwire_client.cli.servers import servers_file_option
from toolwire_client.store import SqlRunStore
from toolwire_shared.terminal import shown

if TYPE_CHECKING:
    pass


def _per_minute(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> dict[str, int]:
    limits = {}
    for value in values:
        provider, _, count = value.partition("=")
        if not provider or not count.isdigit() or int(count) < 1:
            raise click.BadParameter(f"{value!r}: give PROVIDER=N, e.g. anthropic=50", ctx, param)
        limits[provider] = int(count)
    return limits


@click.command("worker")
@db_option
@click.option(
    "--concurrency", default=4, show_default=True, type=click.IntRange(min=1), help="Runs this worker drives at once."
)
@click.option(
    "--queue-concurrency", type=click.IntRange(min=1), help="Runs the whole fleet drives at once (default: no limit)."
)
@click.option(
    "--rate-limit",
    "per_minute",
    multiple=True,
    metavar="PROVIDER=N",
    callback=_per_minute,
    help="At most N model requests per minute to PROVIDER across the fleet (e.g. anthropic=50); give every worker "
    "the same.",
)
@servers_file_option("The tool servers this worker starts, by name ([servers.NAME] tables); a run names them.")
def worker(
    db: str | None,
    concurrency: int,
    queue_concurrency: int | None,
    per_minute: dict[str, int],
    servers_file: str | None,
) -> None:
    """Take submitted runs from the fleet's queue and drive them, until stopped (SIGTERM or Ctrl-C)."""
    from toolwire_client.assembly.trusted_servers import worker_trust
    from toolwire_client.fleet.worker import WorkerOptions, serve

    trust = worker_trust(servers_file)  # a mistake in the file: one line, before anything starts
    options = WorkerOptions(db, concurrency, queue_concurrency, per_minute, trust=trust)
    anyio.run(serve, options, lambda line: click.echo(shown(line), err=True))


@click.command("submit")
@click.argument("task")
@submitted_config_options
@db_option
@json_option('Print the run id as JSON ({"run_id": ...}).')
def submit(task: str, db: str | None, as_json: bool, **options: object) -> None:
    """Save a run of TASK and put it on the fleet's queue; prints its run id (`toolwire wait RUN_ID` follows it)."""
    from toolwire_client.fleet.submit import FleetClient
    from toolwire_client.fleet.submit import submit as enqueue

    config = config_from(**options)  # type: ignore[arg-type]

    async def work(store: SqlRunStore) -> str:
        fleet = await anyio.to_thread.run_sync(lambda: FleetClient(db))
        try:
            return await enqueue(store, fleet, task, config)
        finally:
            fleet.close()

    run_id = with_store(db, work, create=True)
    click.echo(json.dumps({"run_id": run_id}) if as_json else run_id)
