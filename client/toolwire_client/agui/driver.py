"""Who drives the runs the AG-UI endpoint starts and resumes: this process, in the app's task group, as `toolwire
run` and `toolwire resume` would (the same agent, store, lease and seal). A stream only reads the store; it asks
here whether the run it follows could not start or go on, to end with RUN_ERROR instead of waiting for ever."""

import logging
from collections.abc import Awaitable

import anyio
from anyio.abc import TaskGroup

from toolwire_client.assembly.agents import build_agent
from toolwire_client.assembly.resume import rebuilt, resume_run
from toolwire_client.assembly.trusted_servers import ServerTrust
from toolwire_client.config import RunConfig
from toolwire_client.mistakes import explain
from toolwire_client.models.pricing import default_prices
from toolwire_client.store import SqlRunStore
from toolwire_client.store import approvals as decisions

log = logging.getLogger("toolwire.agui")


class Driver:
    def __init__(self, store: SqlRunStore, config: RunConfig, trust: ServerTrust, group: TaskGroup) -> None:
        self.store, self.config, self.trust, self.group = store, config, trust, group
        self.driving: dict[str, anyio.Event] = {}
        """Run id -> set when this process's drive of it (a start, a resume) has ended, tool servers closed."""
        self.failed: dict[str, str] = {}
        """Run id -> why it could not start or go on here (one line), until it is driven again."""

    def start(self, run_id: str, task: str) -> None:
        """Run the served agent on `task` as run `run_id` (saved under that id from its first step)."""
        self._drive(run_id, self._run(run_id, task))

    def go_on(self, run_id: str) -> None:
        """Resume `run_id` (a top run whose every call waiting for a person is decided) once the drive before has
        ended (a front end resumes as soon as it sees the interrupt, while that drive still closes its servers),
        unless someone else went on with it meanwhile."""
        before = self.driving.get(run_id)

        async def resume() -> None:
            if before is not None:
                await before.wait()
            state = await self.store.load(run_id)
            if state.status == "waiting_for_approval" and await decisions.decided(self.store, state):
                await resume_run(self.store, run_id, rebuilt, self.trust)

        self._drive(run_id, resume())

    def trouble(self, run_id: str) -> str | None:
        return self.failed.get(run_id)

    def _drive(self, run_id: str, work: Awaitable[object]) -> None:
        self.driving[run_id] = ended = anyio.Event()
        self.failed.pop(run_id, None)

        async def drive() -> None:
            try:
                await work
            except Exception as exc:
                self.failed[run_id] = explain(exc).message
                log.warning("run %s: %s", run_id, self.failed[run_id])
            finally:
                ended.set()
                if self.driving.get(run_id) is ended:
                    del self.driving[run_id]

        self.group.start_soon(drive)

    async def _run(self, run_id: str, task: str) -> None:
        prices, model = default_prices(), self.config.model.partition(":")[2] or self.config.model
        agent = build_agent(self.config, store=self.store, price_fn=lambda usage: prices.cost(model, usage))
        try:
            await agent.run(task, run_id)
        finally:
            await agent.model.aclose()
