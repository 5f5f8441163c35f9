"""The RunStore contract: atomic saves of RunState after every step, shared by SQLite and PostgreSQL."""

from datetime import datetime
from typing import Protocol

from pydantic import BaseModel

from toolwire_client.state import RunState, RunStatus


class StaleRunState(Exception):
    """Another process saved this run since we loaded it (two resumers): our save is refused."""


class RunAlreadyClaimed(Exception):
    """Another process is resuming this run right now."""


class RunSummary(BaseModel):
    run_id: str
    task: str
    status: RunStatus
    steps: int
    tokens: int
    cost_usd: float | None
    started_at: datetime
    updated_at: datetime


class RunStore(Protocol):
    async def save(self, state: RunState) -> None:
        """Write the whole state atomically; state.version must equal the stored one, and is bumped on success."""
        ...

    async def load(self, run_id: str) -> RunState: ...

    async def list_runs(self, limit: int = 50) -> list[RunSummary]: ...

    async def claim(self, run_id: str, owner: str) -> None:
        """Take the run for resuming; raises RunAlreadyClaimed if another owner holds it."""
        ...

    async def release(self, run_id: str, owner: str) -> None: ...

    async def aclose(self) -> None: ...
