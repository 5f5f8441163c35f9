"""`toolwire worker`, `toolwire submit`, `toolwire wait`: runs on a fleet of worker processes sharing one run store
(a PostgreSQL URL shares them between machines; the default SQLite file, between processes of one machine)."""

import json
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread
import click

from toolwire_client.cli._json import json_option
from toolwire_client.cli._store import db_option, with_store
from toolwire_client.cli.answer import input_hint
from toolwire_client.cli.run import config_from, say_outcome, submitted_config_options
from toolwire_client.cli.servers import servers_file_option
from toolwire_client.mistakes import TIMED_OUT, run_exit
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore
from toolwire_client.store.approvals import decided
from toolwire_shared.terminal import inert_json, shown

if TYPE_CHECKING:
    from toolwire_client.fleet.submit import FleetClient


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


class FleetWatch:
    """While `wait` waits: every few seconds, whether the run's fleet workflow has failed or been cancelled (then
    no worker will ever end the run), and, once, whether no worker has taken it yet (`note` gets that line). Nothing
    of DBOS is loaded for a run store that never had a fleet."""

    EVERY_S = 3.0

    def __init__(self, db: str | None, note: Callable[[str], None] = lambda line: None) -> None:
        self.db = db
        self.note = note
        self.noted = False
        self.fleet: FleetClient | None = None
        self.next_check = time.monotonic() + self.EVERY_S

    async def stuck(self, run_id: str) -> str | None:
        from toolwire_client.fleet.submit import FleetClient, has_fleet, stuck, unclaimed

        if time.monotonic() < self.next_check:
            return None
        self.next_check = time.monotonic() + self.EVERY_S
        if self.fleet is None:
            if not await anyio.to_thread.run_sync(lambda: has_fleet(self.db), abandon_on_cancel=True):
                return None
            self.fleet = await anyio.to_thread.run_sync(lambda: FleetClient(self.db), abandon_on_cancel=True)
        fleet = self.fleet
        why = await anyio.to_thread.run_sync(lambda: stuck(fleet, run_id), abandon_on_cancel=True)
        if why is None and not self.noted:
            waits = await anyio.to_thread.run_sync(lambda: unclaimed(fleet, run_id), abandon_on_cancel=True)
            if waits:
                self.noted = True
                self.note(f"no worker has taken run {run_id} yet; is `toolwire worker` running on this store?")
        return why

    def close(self) -> None:
        if self.fleet is not None:
            self.fleet.close()


@click.command("wait")
@click.argument("run_id")
@db_option
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Give up after this many seconds.")
@json_option("Print the run state as JSON on stdout (the lines on stderr).")
def wait(run_id: str, db: str | None, timeout: float | None, as_json: bool) -> None:
    """Block until RUN_ID ends (exit 0 done, 1 stopped or failed), waits for a person (4) or --timeout passes (5)."""

    async def work(store: SqlRunStore) -> RunState | None:
        watch = FleetWatch(db, lambda line: click.echo(shown(line), err=True))
        try:
            with anyio.move_on_after(timeout):  # the fleet's first look (DBOS) can take seconds: it is cut off too
                while True:
                    state = await store.load(run_id)
                    waits = state.status == "waiting_for_approval"
                    if state.status != "running" and not (waits and await decided(store, state)):  # decided: goes on
                        return state
                    why = await watch.stuck(run_id)
                    if why is not None:
                        raise click.ClickException(f"run {run_id} is still `running` but will not go on: {why}")
                    await anyio.sleep(0.25)
            return None
        finally:
            watch.close()

    state = with_store(db, work)
    if state is None:
        line = f"run {run_id} is still running after {timeout:g} s; `toolwire wait {run_id}` waits again"
        click.echo(shown(line), err=as_json)
        if as_json:
            click.echo(json.dumps({"run_id": run_id, "status": "running", "timed_out": True}))
        sys.exit(TIMED_OUT)
    say_outcome(state, err=as_json)
    if state.status == "waiting_for_approval":
        hint = input_hint(state) or f"see `toolwire approvals`, then `toolwire approve {run_id}`"
        click.echo(shown(f"{hint}: the fleet goes on with it"), err=as_json)
    if as_json:
        click.echo(inert_json(state.model_dump_json(indent=2)))
    sys.exit(run_exit(state.status))
