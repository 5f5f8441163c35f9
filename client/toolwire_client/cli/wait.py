"""`toolwire wait RUN`: block until a run ends or waits for a person, watching whether the fleet can still end it
(its own module: it loads no agent assembly, so it starts as fast as `runs`)."""

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
from toolwire_client.cli.outcome import say_outcome
from toolwire_client.mistakes import TIMED_OUT, run_exit
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore
from toolwire_client.store.approvals import decided
from toolwire_shared.terminal import inert_json, shown

if TYPE_CHECKING:
    from toolwire_client.fleet.submit import FleetClient


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
