"""The RunStore contract: atomic saves of RunState after every step, shared by SQLite and PostgreSQL."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from toolwire_client.run.state import PendingCall, RunState, RunStatus
from toolwire_client.store.approval_rules import Verdict
from toolwire_shared.messages import ToolCall

Decision = Literal["approve", "reject"]


@dataclass(frozen=True)
class Ruling:
    """A person's decision on one waiting call, as `approve` / `reject` record it."""

    decision: Decision
    reason: str | None = None
    shown_hash: str | None = None
    """The arguments hash the person was shown: a call that changed since is refused."""
    by: str | None = None
    """Who decided (an audit field: what the person says)."""


class StaleRunState(Exception):
    """Another process saved this run since we loaded it (two resumers): our save is refused."""


class RunAlreadyClaimed(Exception):
    """Another process is driving this run right now (its lease is fresh)."""


class LeaseLost(StaleRunState):
    """This process no longer holds the run's lease: another driver took it over."""


class SaveRefused(Exception):
    """The database did not take a save (read-only, gone, a constraint, ...): the run ends `save_failed`."""

    @classmethod
    def of(cls, run_id: str, cause: Exception) -> "SaveRefused":
        """Its one line: the run and the database's first line (the message alone is its args: it pickles, as a
        fleet step's recorded error must)."""
        said = (str(cause).strip().splitlines() or [""])[0] or "no message"
        return cls(f"the run store refused to save run {run_id} ({type(cause).__name__}: {said})")


class DecisionRecord(BaseModel):
    """One person's decision on one call, as the append-only record holds it (the authority, not the run state)."""

    run_id: str
    call_id: str
    tool: str
    decision: Decision
    decided_by: str | None
    """Who decided (`--as NAME`, default the OS user); None for decisions recorded before it was kept."""
    reason: str | None
    at: datetime


class RunSummary(BaseModel):
    run_id: str
    task: str
    status: RunStatus
    steps: int
    tokens: int
    cost_usd: float | None
    started_at: datetime
    updated_at: datetime
    parent_run_id: str | None = None
    """A sub-agent's run: the run that started it (`toolwire runs` lists it under that run)."""
    agent_name: str = ""
    claimed_by: str | None = None
    """The process driving the run now (host-pid-random: a `toolwire worker`, `run` or `resume`), while it holds
    the run's lease; None when no one does."""


class RunStore(Protocol):
    async def save(self, state: RunState, owner: str | None = None) -> None:
        """Write the whole state atomically; state.version must equal the stored one, and is bumped on success.
        With `owner`, the save is also refused (LeaseLost) unless that owner holds the run's lease; its save of a run
        that no longer runs (ended, or waiting for a person) lets the lease go in the same write."""
        ...

    async def save_end(self, state: RunState, owner: str | None = None) -> None:
        """Only the run's end (status, stop reason, report) onto the state last saved: what is left to write when
        `save` itself fails, so a run is never left `running` by a save that could not be written."""
        ...

    async def load(self, run_id: str) -> RunState: ...

    async def list_runs(self, limit: int = 50) -> list[RunSummary]: ...

    async def authorize(self, run_id: str, call: ToolCall, idempotent: bool) -> Verdict:
        """The record's verdict on a risky call about to run; NotApproved when no approval of exactly it exists."""
        ...

    async def flag_tampered(self, run_id: str, call: ToolCall, why: str) -> None: ...

    async def decide(self, run_id: str, call_id: str, ruling: Ruling) -> PendingCall:
        """Record a person's decision on one waiting call, and who made it (ApprovalRefused, recording nothing, when
        it is unclear)."""
        ...

    async def decisions(self, run_id: str | None = None, limit: int = 200) -> list[DecisionRecord]:
        """The recorded decisions, of one run or of all, newest first."""
        ...

    async def waiting(self, limit: int = 200) -> list[RunState]:
        """Runs that wait for a person, newest first."""
        ...

    async def tampered(self, limit: int = 200) -> list[tuple[str, str, str, str | None, Any]]:
        """Calls a run was about to run with no approval on record: run id, call id, tool, why, when."""
        ...

    async def schema_version(self) -> int:
        """The migration the database is at (a store refuses a database newer than it knows)."""
        ...

    async def claim(self, run_id: str, owner: str) -> None:
        """Take the run for resuming; raises RunAlreadyClaimed if another owner holds it."""
        ...

    async def renew(self, run_id: str, owner: str) -> bool:
        """Refresh the lease; False when `owner` no longer holds it."""
        ...

    async def release(self, run_id: str, owner: str) -> None: ...

    async def aclose(self) -> None: ...
