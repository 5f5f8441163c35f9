"""The child runs a source started (the delegate tool's sub-agents, code mode's scripts), found again when its call is
sent again on resume: from the parent's store, or, for a run with no store, from this memory."""

from toolwire_client.run.state import RunState
from toolwire_client.tools.source import ChildRuns


class ChildRecords:
    def __init__(self) -> None:
        self._unsaved: dict[str, RunState] = {}

    async def find(self, children: ChildRuns, run_id: str) -> RunState | None:
        """The child `run_id` as it was last saved (or kept), None if no call started it yet."""
        from toolwire_client.store.sql import RunNotFound

        if children.store is None:
            return self._unsaved.get(run_id)
        try:
            return await children.store.load(run_id)
        except RunNotFound:
            return None

    def keep(self, children: ChildRuns, child: RunState) -> None:
        """Keep `child` here when the parent has no store (a store has it saved already)."""
        if children.store is None:
            self._unsaved[child.run_id] = child
