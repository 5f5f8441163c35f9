"""The fleet's one workflow, a leg of a run: `toolwire-run`, on the run queue that the workers' concurrency limits
apply to. A leg loads the run from the run store and drives it under its lease until it ends or waits for a person,
exactly as `toolwire resume` would: the run store is the run's only record. The first leg's workflow id is the run
id (`submit`); a run that waited goes on in a leg `RUN@VERSION` that a decision enqueues (fleet/wake.py). A leg
recovered on another worker starts again from the saved state: a call left `sent` is sent again only if idempotent
(same key), else answered "outcome unknown"; an MCP task whose id was saved is followed, never sent again. A run
that waits for a person holds no worker slot and no workflow, only its row."""

import contextlib
import contextvars
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import anyio
import anyio.to_thread
from dbos import DBOS

from toolwire_client.assembly.agents import build_agent
from toolwire_client.assembly.trusted_servers import ServerTrust, worker_trust
from toolwire_client.config import RunConfig, config_of
from toolwire_client.fleet.app import OLD_LEG_WORKFLOW, WORKFLOW
from toolwire_client.fleet.cancel import CANCEL_POLL_S, Canceled, end_under_lease
from toolwire_client.fleet.ratelimit import RateLimited
from toolwire_client.loop import Agent
from toolwire_client.models.pricing import default_prices
from toolwire_client.run.state import RunState, RunStatus
from toolwire_client.store import RunAlreadyClaimed, SqlRunStore, StaleRunState, claim_owner
from toolwire_client.store.approvals import decided
from toolwire_client.store.events import late_outcomes, record_late

T = TypeVar("T")

DRIVABLE: tuple[RunStatus, ...] = ("running", "waiting_for_approval")
CLAIM_RETRY_S = 1.0


@dataclass
class WorkerSettings:
    """What a worker process drives runs with: the run store and the fleet-wide model request limits."""

    store: SqlRunStore | None = None
    """The worker's one store, its few connections shared by every run it drives (not one connection per run)."""
    per_minute: dict[str, int] = field(default_factory=dict)
    """Provider ('anthropic', 'openai', 'scripted', ...) -> model requests per minute across the fleet."""
    say: Callable[[str], None] = lambda line: None
    """The worker's log line: a run taken over from its saved state, a run that could not be driven."""
    trust: ServerTrust = field(default_factory=lambda: worker_trust(None))
    """The tool servers this worker starts (its servers file); a run's saved config never adds one."""
    worker: str = "a worker"
    """This worker's executor id: who a late outcome was recorded by."""


SETTINGS = WorkerSettings()
"""Set once by the worker before DBOS launches; never a workflow input (the URL may hold a password)."""


@DBOS.workflow(name=WORKFLOW)
async def leg_workflow(run_id: str) -> str:
    return await drive(run_id)


@DBOS.workflow(name=OLD_LEG_WORKFLOW)
async def old_leg_workflow(run_id: str) -> str:
    """A leg enqueued by a worker of the two-workflow fleet (toolwire-fleet-2) before an upgrade: driven the same
    way (its recorded steps are not read: the run store holds what they did)."""
    return await drive(run_id)


def _store() -> SqlRunStore:
    assert SETTINGS.store is not None, "fleet workflows run in a worker, which opens its store before DBOS launches"
    return SETTINGS.store


async def drive(run_id: str) -> RunStatus:
    """Drive the run to the end of this leg; while the run store cannot be reached, try again every CLAIM_RETRY_S
    (the run is not at fault: it goes on from its saved state). Any other error ends the run `failed`, written only
    under a lease this worker holds."""
    store, said = _store(), set[str]()
    while True:
        try:
            return await _drive(run_id, store, said)
        except Exception as exc:
            if not store.is_unreachable(exc):
                why = _explained(exc)
                SETTINGS.say(f"run {run_id}: could not be driven: {why}")
                return await _fail(run_id, why)
            _say_once(said, f"run {run_id}: the run store does not answer ({exc}); trying every {CLAIM_RETRY_S:g} s")
            await anyio.sleep(CLAIM_RETRY_S)


async def _drive(run_id: str, store: SqlRunStore, said: set[str]) -> RunStatus:
    """Drive the run from its saved state under its lease; go on past a wait whose calls were all decided before it
    began (a decision made while the leg was ending finds the run still `running` and enqueues nothing); the status
    it ends the leg in. A run held by another process, or lost to one, is tried again until its holder ends it or
    its lease runs out."""
    state = await store.load(run_id)
    if state.status not in DRIVABLE:
        return state.status  # ended already: a duplicate leg
    if state.status == "running" and (state.steps or state.pending):
        SETTINGS.say(f"run {run_id}: resumed from its saved state after {len(state.steps)} step(s)")
    refused = 0  # tries in a row whose saves the store refused, the run's record unchanged
    while True:
        agent = _agent(state, store)  # one per try: a try opens and closes its tool sources once
        try:
            if await _unless_cancelled(agent.resume(state)):
                return await _end_cancelled(run_id, store)
        except RunAlreadyClaimed as held:  # a dead driver's lease runs out; a live one finishes
            _say_once(said, f"run {run_id}: {held}; trying every {CLAIM_RETRY_S:g} s")
            state = await _again(run_id, store)
            if state.status not in DRIVABLE:
                return state.status  # the holder ended it
            continue
        finally:
            await agent.model.aclose()
        if state.stop_reason in UNRECORDED:  # this worker's end of the run was not written: the store's stands
            ours, state = state, await _answered(store, lambda: _again(run_id, store), said)
            SETTINGS.say(_lost_line(ours, state))
            await _put_late_on_record(store, ours, state, said)
            refused = refused + 1 if ours.stop_reason == "save_failed" and state.version == ours.version else 0
            if state.status not in DRIVABLE or refused >= SAVES_REFUSED:
                return state.status  # ended by its holder; or a run whose saves this store refuses each time
            continue
        if state.status != "waiting_for_approval":
            return state.status
        state = await store.load(run_id)  # decided while this leg was ending? then it goes on here
        if not await decided(store, state):
            return state.status


async def _unless_cancelled(driven: Awaitable[object]) -> bool:
    """Drive, asking DBOS every CANCEL_POLL_S whether this leg's workflow was cancelled (fleet/cancel.py); True
    when it was: the drive stopped, the run as last saved (as after Ctrl-C)."""
    workflow_id, cancelled = DBOS.workflow_id, False
    failed: Exception | None = None
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            nonlocal cancelled
            while not cancelled:
                await anyio.sleep(CANCEL_POLL_S)
                try:
                    status = await anyio.to_thread.run_sync(_status_of, workflow_id)
                except Exception:  # the system database does not answer: asked again next time
                    continue
                if status == "CANCELLED":
                    cancelled = True
                    group.cancel_scope.cancel()

        group.start_soon(watch)
        try:
            await driven
        except Exception as exc:  # raised as itself, not in the task group's ExceptionGroup (RunAlreadyClaimed ...)
            failed = exc
        group.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return cancelled


def _status_of(workflow_id: str | None) -> str | None:
    """The workflow's status as the system database has it now: read outside any workflow's context (inside one,
    DBOS records the read as the workflow's step, and a later read gives the recorded answer)."""
    if workflow_id is None:
        return None
    status = contextvars.Context().run(DBOS.get_workflow_status, workflow_id)
    return status.status if status is not None else None


async def _end_cancelled(run_id: str, store: SqlRunStore) -> RunStatus:
    """The run of a cancelled leg ended `stopped`/`canceled` here (unless whoever cancelled it already has)."""
    SETTINGS.say(f"run {run_id}: its workflow was cancelled; the run is stopped")
    with contextlib.suppress(RunAlreadyClaimed):  # whoever cancelled it holds it, and ends it
        await end_under_lease(store, run_id, Canceled("stopped: it was cancelled"))
    return (await store.load(run_id)).status


SAVES_REFUSED = 3
"""A leg gives up a run after this many tries in a row whose saves were refused while the store answered (a record the
store will not take: trying again would only run its calls again)."""
UNRECORDED = frozenset({"lease_lost", "save_failed"})
"""Ends of a try whose state may not be the store's: its lease was lost, or its saves did not reach the store."""


def _lost_line(ours: RunState, stored: RunState) -> str:
    """Lost when its lease was, or when another worker has saved the run since this one last did."""
    if ours.stop_reason == "lease_lost" or stored.version != ours.version:
        return f"lost run {ours.run_id} to another worker; nothing more of it is written here ({ours.report})"
    return f"run {ours.run_id}: its last steps could not be saved ({ours.report}); it goes on from its saved state"


async def _put_late_on_record(store: SqlRunStore, ours: RunState, stored: RunState, said: set[str]) -> None:
    """Calls that completed here after the run was lost: on record for people (never in the model's history)."""
    late = late_outcomes(ours, stored)
    if not late:
        return
    await _answered(store, lambda: record_late(store, ours.run_id, late, SETTINGS.worker), said)
    calls = ", ".join(f"{r.name} ({r.call_id})" for r in late)
    SETTINGS.say(f"run {ours.run_id}: late outcome of {calls}: completed here after the run was lost; on record")


async def _answered(store: SqlRunStore, work: Callable[[], Awaitable[T]], said: set[str]) -> T:
    """`work` once the run store answers (tried every CLAIM_RETRY_S while it is cut off)."""
    while True:
        try:
            return await work()
        except Exception as exc:
            if not store.is_unreachable(exc):
                raise
            _say_once(said, f"the run store does not answer ({exc}); trying every {CLAIM_RETRY_S:g} s")
            await anyio.sleep(CLAIM_RETRY_S)


async def _again(run_id: str, store: SqlRunStore) -> RunState:
    await anyio.sleep(CLAIM_RETRY_S)
    return await store.load(run_id)


def _say_once(said: set[str], line: str) -> None:
    if line not in said:
        said.add(line)
        SETTINGS.say(line)


def _agent(state: RunState, store: SqlRunStore) -> Agent:
    config: RunConfig = config_of(state)
    servers = SETTINGS.trust.specs_for(state.run_id, state.config, config)  # Untrusted: the run fails, readably
    prices, model = default_prices(), config.model.partition(":")[2] or config.model
    price_fn = lambda usage: prices.cost(model, usage)  # noqa: E731
    agent = build_agent(config, store=store, price_fn=price_fn, servers=servers)
    limit = SETTINGS.per_minute.get(agent.model.provider)
    if limit is not None:
        agent.model = RateLimited(agent.model, store, limit)
    if not state.steps and not config.tools:
        agent.record_config = True  # as submitted: the loop records the config with the tools offered once listed
    return agent


def _explained(exc: Exception) -> str:
    from toolwire_client.mistakes import explain

    return explain(exc).format_message()


async def _fail(run_id: str, why: str) -> RunStatus:
    """A run that could not be driven (its tool server would not start, no API key, ...) ends `failed` with the
    one line the CLI would print, unless it has ended since (then that end stands). Written under a lease of its own,
    checked by the save itself: a run another worker holds is left to it, and this worker only says it lost it."""
    store, owner = _store(), claim_owner()
    try:
        await store.claim(run_id, owner)
    except RunAlreadyClaimed:
        SETTINGS.say(f"lost run {run_id} to another worker; it is not marked failed here")
        return (await store.load(run_id)).status
    state = await store.load(run_id)
    if state.status not in DRIVABLE:
        await store.release(run_id, owner)
        return state.status
    state.status, state.stop_reason = "failed", "worker_error"
    state.report = f"the worker could not drive the run: {why}"
    try:
        await store.save(state, owner=owner)  # an end: the lease goes in the same write
    except StaleRunState:  # LeaseLost too
        SETTINGS.say(f"lost run {run_id} to another worker; it is not marked failed here")
        return (await store.load(run_id)).status
    return state.status
