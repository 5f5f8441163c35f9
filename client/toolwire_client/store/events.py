"""Late outcomes: a tool call that completed on a worker after that worker had lost the run (cut off from the run
store, its lease run out and taken over). Its result was never saved into the run (the worker writes nothing of a
run it lost, and the model never sees it: the taker answered the call itself, "outcome unknown" or the idempotent
call's own re-sent result), but what the tool did happened, so it is recorded here, apart from the run's state, for
people: `toolwire trace show` and the console list it."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from toolwire_client.run.exits import NOT_RUN
from toolwire_client.run.state import RunState, now
from toolwire_client.store.sql import SqlRunStore, Tx
from toolwire_client.store.text_codec import escape, unescape
from toolwire_shared.results import ToolResult

LATE_OUTCOME = "late_outcome"
DETAIL_CHARS = 2000
"""A late outcome keeps this much of the result's text (enough for a person to see what the tool did)."""


@dataclass(frozen=True)
class LateOutcome:
    run_id: str
    call_id: str
    tool: str
    detail: str
    recorded_by: str
    at: Any


def late_outcomes(ours: RunState, stored: RunState) -> list[ToolResult]:
    """The results of calls this process ran (not answered for it: unknown, not run) that the stored run does not
    hold as they are: the run was lost before they were saved."""
    on_record = {r.call_id: r for step in stored.steps for r in step.results}
    ran = (r for step in ours.steps for r in step.results if r.error_kind not in NOT_RUN | {"outcome_unknown"})
    return [r for r in ran if on_record.get(r.call_id) != r]


async def record_late(store: SqlRunStore, run_id: str, results: list[ToolResult], by: str) -> None:
    """Put each on record once (a worker that says it again writes nothing more)."""
    at = now()

    def write(tx: Tx) -> None:
        stamp = tx.timestamp(at)
        for result in results:
            detail = ("error: " if result.is_error else "") + result.content[:DETAIL_CHARS]
            tx.execute(
                "INSERT INTO run_events (run_id, kind, call_id, tool, detail, recorded_by, at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (run_id, LATE_OUTCOME, escape(result.call_id), escape(result.name), escape(detail), escape(by), stamp),
            )

    await store.transaction(write)


async def late_recorded(store: SqlRunStore, run_id: str) -> list[LateOutcome]:
    """The run's late outcomes, oldest first."""

    def read(tx: Tx) -> list[LateOutcome]:
        rows = tx.execute(
            "SELECT call_id, tool, detail, recorded_by, at FROM run_events WHERE run_id = ? AND kind = ? ORDER BY at",
            (run_id, LATE_OUTCOME),
        ).fetchall()
        return [
            LateOutcome(run_id, unescape(r[0]), unescape(r[1]), unescape(r[2]), unescape(r[3]), _at(r[4])) for r in rows
        ]

    return await store.transaction(read)


def _at(value: Any) -> datetime | str:
    return value if isinstance(value, datetime) else str(value)
