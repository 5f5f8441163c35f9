"""A local run goes on after its last decision, here, as `toolwire resume RUN` would: `resume_run` under the run's
lease, with the tool servers this process trusts (this user's seal, or the console's `--servers` file). A fleet run
is not resumed here: the decision enqueued its next leg (fleet/decide.py), and a worker goes on with it."""

import logging

from anyio.abc import TaskGroup

from toolwire_client import texts
from toolwire_client.assembly.resume import rebuilt, resume_run
from toolwire_client.assembly.trusted_servers import ServerTrust
from toolwire_client.mistakes import explain
from toolwire_client.store import SqlRunStore
from toolwire_client.store import approvals as decisions

log = logging.getLogger("toolwire.ui")


class LocalResumes:
    """The runs this console resumed and how each went, by top run id (what the run page says under its status)."""

    def __init__(self, store: SqlRunStore, trust: ServerTrust, group: TaskGroup) -> None:
        self.store, self.trust, self.group = store, trust, group
        self.notes: dict[str, str] = {}
        self.running: set[str] = set()

    async def after_decision(self, root_id: str) -> str:
        """Resume the top run when nothing is left for a person; what happened, in one line."""
        if not await decisions.decided(self.store, await self.store.load(root_id)):
            return f"run {root_id} still waits for other decisions; it goes on once every one is made"
        if root_id in self.running:
            return f"run {root_id} is already being resumed here"
        self.running.add(root_id)
        self.notes[root_id] = "resumed here: going on"
        self.group.start_soon(self._resume, root_id)
        return f"run {root_id} goes on here"

    async def _resume(self, root_id: str) -> None:
        try:
            state = await resume_run(self.store, root_id, rebuilt, self.trust)
            self.notes[root_id] = f"resumed here: {texts.status_and_why(state.status, state.stop_reason)}"
        except Exception as exc:
            said = explain(exc).message
            self.notes[root_id] = f"could not go on here: {said}; {texts.resumed_elsewhere(root_id)}"
            log.warning("run %s: could not go on: %s", root_id, said)
        finally:
            self.running.discard(root_id)
