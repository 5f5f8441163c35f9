"""The runs this A2A server drives: a new task's run started on the served agent's config, a run resumed once every
call it waits on is decided (as `toolwire resume` would: under the run's lease, with the servers this process
trusts), and a run stopped by tasks/cancel. Whatever happens, the run store holds the run; this only drives it."""

import logging
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

from toolwire_client.assembly.agents import build_agent
from toolwire_client.assembly.resume import rebuilt, resume_run
from toolwire_client.assembly.trusted_servers import ServerTrust
from toolwire_client.config import RunConfig
from toolwire_client.fleet.cancel import Canceled, end_under_lease
from toolwire_client.mistakes import explain
from toolwire_client.run import exits
from toolwire_client.run.state import RunState
from toolwire_client.store import RunAlreadyClaimed, SqlRunStore

log = logging.getLogger("toolwire.a2a")


class NotCancelable(Exception):
    """The run cannot be cancelled here; the message says why."""


class Drivers:
    def __init__(self, store: SqlRunStore, config: RunConfig, trust: ServerTrust, group: TaskGroup) -> None:
        self.store, self.config, self.trust, self.group = store, config, trust, group
        self.scopes: dict[str, anyio.CancelScope] = {}
        self.ended: dict[str, anyio.Event] = {}

    def driving(self, run_id: str) -> bool:
        return run_id in self.scopes

    def start(self, state: RunState) -> None:
        """Drive a new run (saved before, as `toolwire submit` saves one) on the served agent."""

        async def first() -> None:
            agent = build_agent(self.config, store=self.store)
            agent.record_config = True  # the tools offered and this user's seal: a later resume rebuilds it as is
            try:
                await agent.resume(state)
            finally:
                await agent.model.aclose()

        self._spawn(state.run_id, first)

    def resume(self, run_id: str) -> None:
        """Go on with a run whose waiting calls are all decided (nothing when this process drives it already)."""
        self._spawn(run_id, lambda: resume_run(self.store, run_id, rebuilt, self.trust))

    def _spawn(self, run_id: str, drive: Callable[[], Awaitable[object]]) -> None:
        if run_id in self.scopes:
            return
        scope, ended = anyio.CancelScope(), anyio.Event()
        self.scopes[run_id], self.ended[run_id] = scope, ended

        async def driven() -> None:
            try:
                with scope:
                    await drive()
            except RunAlreadyClaimed:
                log.info("run %s: another process drives it", run_id)
            except Exception as exc:
                said = explain(exc).message
                log.warning("run %s: could not go on: %s", run_id, said)
                try:
                    await self._stop(run_id, exits.HarnessFailed(f"stopped: it could not go on here: {said}"), exc)
                except Exception as again:  # the server serves on: the run stays as saved
                    log.warning("run %s: its end was not saved: %s", run_id, explain(again).message)
            finally:
                self.scopes.pop(run_id, None)
                self.ended.pop(run_id, None)
                ended.set()

        self.group.start_soon(driven)

    async def cancel(self, run_id: str) -> None:
        """Stop the run: its driver here cancelled (the run is left as its last save had it, as after Ctrl-C), then,
        under its lease, every call of its last turn answered (a sent one: outcome unknown) and the run ended
        `stopped`/`canceled`. NotCancelable when another process drives it."""
        scope, ended = self.scopes.get(run_id), self.ended.get(run_id)
        if scope is not None and ended is not None:
            scope.cancel()
            await ended.wait()
        try:
            await self._stop(run_id, Canceled("stopped: its A2A task was cancelled"))
        except RunAlreadyClaimed as exc:
            raise NotCancelable(f"run {run_id} is driven by another process; it cannot be cancelled here") from exc

    async def _stop(self, run_id: str, exit_: exits.RunExit, cause: Exception | None = None) -> None:
        """End the run with `exit_` under its lease (fleet/cancel.py). A run that could not go on (`cause`) is ended
        only if it is still `running`: one left waiting for a person still waits (a decision made again resumes it),
        and a client waiting on it is told either way."""
        await end_under_lease(self.store, run_id, exit_, only_running=cause is not None)
