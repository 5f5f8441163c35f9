"""One worker process of the fleet: a DBOS executor listening on the run queue, its heartbeat, and the takeover of
dead workers' runs. Runs until SIGTERM or SIGINT; a worker killed -9 is noticed by the others' heartbeat check."""

import signal
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from toolwire_client.assembly.trusted_servers import ServerTrust, worker_trust
from toolwire_client.fleet import heartbeat, wake
from toolwire_client.fleet.app import OLD_QUEUE, QUEUE, dbos_config, leg_options
from toolwire_client.fleet.gc import tune_gc_for_many_runs
from toolwire_client.fleet.tables import ensure_tables
from toolwire_client.fleet.workflow import SETTINGS
from toolwire_client.store import open_store
from toolwire_client.tools.shared_connections import SharedConnections
from toolwire_shared.words import counted

DB_CONNECTIONS = 8
"""At most this many run-store connections per worker, shared by the runs it drives: a step holds one for a
few milliseconds per save, so 8 serve far more runs than one core drives, where a connection per run would cost
the database a backend per run (10,000 agents: 10,000 connections)."""
OLD_QUEUE_POLLING_S = 5.0
"""The legs queue of an earlier fleet is only drained after an upgrade: looked at seldom."""


@dataclass
class WorkerOptions:
    db: str | None
    concurrency: int = 4
    """Runs this worker drives at once (DBOS worker_concurrency)."""
    queue_concurrency: int | None = None
    """Runs the whole fleet drives at once (DBOS global concurrency); None: no fleet-wide limit."""
    per_minute: dict[str, int] | None = None
    polling_s: float = 0.5
    trust: ServerTrust = field(default_factory=lambda: worker_trust(None))
    """The tool servers this worker starts (`--servers FILE`)."""


async def serve(options: WorkerOptions, say: Callable[[str], None]) -> None:
    """All runs this worker drives share their tool servers' connections (one per server and identity)."""
    tune_gc_for_many_runs()
    async with SharedConnections(process_wide=True):  # process-wide: DBOS starts workflows from its queue thread
        await _serve(options, say)


async def _serve(options: WorkerOptions, say: Callable[[str], None]) -> None:
    from dbos import DBOS

    executor_id = heartbeat.new_executor_id()
    store = await open_store(options.db, connections=min(DB_CONNECTIONS, options.concurrency))
    SETTINGS.store, SETTINGS.per_minute, SETTINGS.say = store, dict(options.per_minute or {}), say
    SETTINGS.trust, SETTINGS.worker = options.trust, executor_id
    try:
        await ensure_tables(store)
        DBOS(config=dbos_config(options.db, executor_id))  # type: ignore[arg-type]
        DBOS.launch()  # in this event loop: the queue's async workflows run on it
        try:
            for queue, polling_s in ((QUEUE, options.polling_s), (OLD_QUEUE, OLD_QUEUE_POLLING_S)):
                await DBOS.register_queue_async(
                    queue,
                    worker_concurrency=options.concurrency,
                    global_concurrency=options.queue_concurrency,
                    polling_interval_sec=polling_s,
                    on_conflict="always_update",
                )
            say(
                f"worker {executor_id}: taking runs from queue {QUEUE}, driving {options.concurrency} at once here"
                + (f", {options.queue_concurrency} in the fleet" if options.queue_concurrency else "")
                + f"; a worker silent for {heartbeat.DEAD_S:g} s is taken over"
                + f"; tool servers: {', '.join(sorted(options.trust.servers)) or 'none (no --servers FILE)'}"
            )

            def recover(executor_ids: list[str]) -> int:
                return len(DBOS._recover_pending_workflows(executor_ids))

            def taken(dead: str, count: int) -> None:
                if count:  # a worker that stopped cleanly left none: nothing to say
                    say(f"worker {executor_id}: took over {counted(count, 'run')} of dead worker {dead}")

            async def is_fleet_run(run_id: str) -> bool:
                return await DBOS.get_workflow_status_async(run_id) is not None

            async def enqueue(run_id: str, workflow_id: str) -> None:
                await DBOS.enqueue_workflow_with_options_async(leg_options(workflow_id), run_id)  # type: ignore[arg-type]

            async with anyio.create_task_group() as group:
                group.start_soon(heartbeat.keep_beating, options.db, executor_id, recover, taken)
                group.start_soon(wake.keep_sweeping, store, is_fleet_run, enqueue, say)
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        say(f"worker {executor_id}: stopping; its unfinished runs go to the other workers")
                        group.cancel_scope.cancel()
                        break
        finally:
            DBOS.destroy()
    finally:
        await store.aclose()
