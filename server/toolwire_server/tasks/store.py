"""Where tasks live, so that any replica answers `tasks/get` for a task another one runs and a restart keeps a
finished result: SQLite (one file) by default, PostgreSQL when `TOOLWIRE_TASK_STORE` is a postgresql:// URL.

A task belongs to the agent whose call created it: every read and write names the agent, and another agent's task
id is not found (never "forbidden": that would confirm it exists). A running task has an owner (the process that
runs it) and a heartbeat; a task whose owner is gone is reported failed, not working forever (`is_orphan`)."""

import json
import os
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolwire_shared.persistence import Database, Migration, Schema
from toolwire_shared.processes import process_alive

STORE_ENV = "TOOLWIRE_TASK_STORE"
"""A postgresql:// URL, or a SQLite file path; set by whoever runs the server (the operator), never by a caller."""
HEARTBEAT_S = 2.0
"""How often a replica stamps the tasks it runs."""
STALE_S = 15.0
"""A running task whose owner has not stamped it for this long is reported failed (its replica is gone)."""
TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})

MIGRATIONS: list[Migration] = [
    (
        1,
        [
            """CREATE TABLE IF NOT EXISTS toolwire_tasks (
                task_id TEXT PRIMARY KEY,
                agent TEXT NOT NULL,
                tool TEXT NOT NULL,
                status TEXT NOT NULL,
                status_message TEXT,
                created_at DOUBLE PRECISION NOT NULL,
                updated_at DOUBLE PRECISION NOT NULL,
                ttl_ms BIGINT,
                poll_ms BIGINT NOT NULL,
                result TEXT,
                error TEXT,
                input_requests TEXT,
                input_responses TEXT,
                owner TEXT NOT NULL,
                heartbeat_at DOUBLE PRECISION NOT NULL,
                cancel_requested INTEGER NOT NULL DEFAULT 0
            )""",
        ],
    ),
]
"""The task table's versions (toolwire_tasks_schema_version); append new migrations at the end, never edit one that
has shipped."""
SCHEMA = Schema("task store", "toolwire_tasks_schema_version", MIGRATIONS, lock="toolwire.tasks.migrations")
_COLUMNS = (
    "task_id, agent, tool, status, status_message, created_at, updated_at, ttl_ms, poll_ms, result, error, "
    "input_requests, input_responses, owner, heartbeat_at, cancel_requested"
)


@dataclass(frozen=True)
class TaskRecord:
    """One task as stored. `result` and `error` are JSON objects (the CallToolResult, the JSON-RPC error)."""

    task_id: str
    agent: str
    tool: str
    status: TaskStatus
    status_message: str | None
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_ms: int
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    input_requests: dict[str, Any] | None
    input_responses: dict[str, Any] | None
    owner: str
    heartbeat_at: float
    cancel_requested: bool

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


def process_owner() -> str:
    """This process as a task owner: host, pid and a start stamp (a reused pid is not mistaken for it)."""
    return f"{socket.gethostname()}:{os.getpid()}:{time.time_ns()}"


def is_orphan(record: TaskRecord, now: float) -> bool:
    """A task no process runs any more: its owner on this host has exited, or its owner stopped stamping it."""
    if record.terminal:
        return False
    host, _, rest = record.owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host == socket.gethostname() and pid_text.isdigit() and not process_alive(int(pid_text)):
        return True
    return now - record.heartbeat_at > STALE_S


def default_location(registry: str) -> str:
    """`TOOLWIRE_TASK_STORE`, else a SQLite file per registry under the user's state folder."""
    chosen = os.environ.get(STORE_ENV)
    if chosen:
        return chosen
    import platformdirs

    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in registry) or "toolwire"
    return str(Path(platformdirs.user_state_dir("toolwire")) / f"tasks-{safe}.sqlite")


class TaskStore:
    """The task table; every method runs its statement in a thread (the database may block)."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._db = Database(location)
        self._migrated = False

    @property
    def opened(self) -> bool:
        return self._migrated

    async def _run(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """One statement on its own, on the database migrated when first used."""
        if not self._migrated:
            await self._db.run(lambda: self._db.migrate(SCHEMA))
            self._migrated = True
        return await self._db.run(lambda: self._db.execute(sql, params))

    def close(self) -> None:
        self._db.close()
        self._migrated = False

    async def create(self, record: TaskRecord) -> None:
        """Durable before it returns: a `tasks/get` for the id resolves once the handle is sent."""
        await self._run(
            f"INSERT INTO toolwire_tasks ({_COLUMNS}) VALUES ({', '.join('?' * 16)})",
            record.task_id,
            record.agent,
            record.tool,
            record.status,
            record.status_message,
            record.created_at,
            record.updated_at,
            record.ttl_ms,
            record.poll_ms,
            None,
            None,
            None,
            None,
            record.owner,
            record.heartbeat_at,
            0,
        )

    async def get(self, task_id: str, agent: str) -> TaskRecord | None:
        """The agent's task, or None (unknown, another agent's, or past its TTL: then it is deleted)."""
        rows = await self._run(f"SELECT {_COLUMNS} FROM toolwire_tasks WHERE task_id = ? AND agent = ?", task_id, agent)
        if not rows:
            return None
        record = _record(rows[0])
        if record.ttl_ms is not None and time.time() > record.created_at + record.ttl_ms / 1000:
            await self._run("DELETE FROM toolwire_tasks WHERE task_id = ?", task_id)
            return None
        return record

    async def finish(
        self,
        task_id: str,
        status: TaskStatus,
        *,
        message: str | None = None,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """The terminal state; a task already terminal keeps the one it reached first."""
        await self._run(
            "UPDATE toolwire_tasks SET status = ?, status_message = ?, result = ?, error = ?, input_requests = NULL, "
            "updated_at = ? WHERE task_id = ? AND status NOT IN ('completed', 'failed', 'cancelled')",
            status,
            message,
            _dumps(result),
            _dumps(error),
            time.time(),
            task_id,
        )

    async def note(self, task_id: str, message: str) -> None:
        """A progress line for a running task (its `statusMessage`)."""
        await self._run(
            "UPDATE toolwire_tasks SET status_message = ?, updated_at = ? WHERE task_id = ? AND status = 'working'",
            message,
            time.time(),
            task_id,
        )

    async def ask(self, task_id: str, requests: dict[str, Any], message: str | None = None) -> None:
        """Park the task in `input_required` with these server-to-client requests (keys unique for its life)."""
        await self._run(
            "UPDATE toolwire_tasks SET status = 'input_required', input_requests = ?, input_responses = NULL, "
            "status_message = ?, updated_at = ? WHERE task_id = ? AND status IN ('working', 'input_required')",
            _dumps(requests),
            message,
            time.time(),
            task_id,
        )

    async def answer(self, task_id: str, agent: str, responses: dict[str, Any]) -> bool:
        """Record answers to outstanding requests (others are ignored, as the spec says); False: no such task.
        The task is `working` again once every outstanding request has its answer."""
        record = await self.get(task_id, agent)
        if record is None:
            return False
        pending = dict(record.input_requests or {})
        answered = dict(record.input_responses or {})
        answered.update({key: value for key, value in responses.items() if key in pending})
        for key in answered:
            pending.pop(key, None)
        status = "input_required" if pending else "working"
        await self._run(
            "UPDATE toolwire_tasks SET input_requests = ?, input_responses = ?, status = ?, updated_at = ? "
            "WHERE task_id = ? AND status = 'input_required'",
            _dumps(pending or None),
            _dumps(answered),
            status,
            time.time(),
            task_id,
        )
        return True

    async def take_answers(self, task_id: str) -> dict[str, Any] | None:
        """The answers once none is outstanding (the task is working again), consumed; else None."""
        rows = await self._run(
            "SELECT status, input_responses FROM toolwire_tasks WHERE task_id = ?",
            task_id,
        )
        if not rows or rows[0][0] != "working" or rows[0][1] is None:
            return None
        await self._run("UPDATE toolwire_tasks SET input_responses = NULL WHERE task_id = ?", task_id)
        answers: dict[str, Any] = json.loads(rows[0][1])
        return answers

    async def request_cancel(self, task_id: str, agent: str) -> bool:
        """Mark the agent's task for cancelling (its owner stops it at its next heartbeat); False: no such task."""
        if await self.get(task_id, agent) is None:
            return False
        await self._run("UPDATE toolwire_tasks SET cancel_requested = 1 WHERE task_id = ?", task_id)
        return True

    async def heartbeat(self, owner: str, task_ids: Sequence[str]) -> set[str]:
        """Stamp the tasks this owner runs; the ids among them someone asked to cancel."""
        if not task_ids:
            return set()
        marks = ", ".join("?" * len(task_ids))
        now = time.time()
        await self._run(
            f"UPDATE toolwire_tasks SET heartbeat_at = ? WHERE owner = ? AND task_id IN ({marks})",
            now,
            owner,
            *task_ids,
        )
        rows = await self._run(
            f"SELECT task_id FROM toolwire_tasks WHERE cancel_requested = 1 AND task_id IN ({marks})", *task_ids
        )
        return {row[0] for row in rows}

    async def purge(self, now: float) -> None:
        """Forget tasks past their TTL."""
        await self._run("DELETE FROM toolwire_tasks WHERE ttl_ms IS NOT NULL AND created_at + ttl_ms / 1000.0 < ?", now)


def _dumps(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value)


def _loads(text: str | None) -> dict[str, Any] | None:
    loaded: dict[str, Any] | None = None if text is None else json.loads(text)
    return loaded


_LOADERS: tuple[Callable[[Any], Any], ...] = (
    str,
    str,
    str,
    str,
    lambda v: v,
    float,
    float,
    lambda v: v,
    int,
    _loads,
    _loads,
    _loads,
    _loads,
    str,
    float,
    bool,
)


def _record(row: tuple[Any, ...]) -> TaskRecord:
    return TaskRecord(*(load(value) for load, value in zip(_LOADERS, row, strict=True)))
