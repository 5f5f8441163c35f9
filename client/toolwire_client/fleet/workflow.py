"""The fleet's one workflow, a leg of a run: `toolwire-run`, on the run queue that the workers' concurrency limits
apply to. A leg loads the run from the run store and drives it under its lease until it ends or waits for a person,
exactly as `toolwire resume` would: the run store is the run's only record. The first leg's workflow id is the run
id (`submit`); a run that waited goes on in a leg `RUN@VERSION` that a decision enqueues (fleet/wake.py). A leg
recovered on another worker starts again from the saved state: a call left `sent` is sent again only if idempotent
(same key), else answered "outcome unknown"; an MCP task whose id was saved is followed, never sent again. A run
that waits for a person holds no worker slot and no workflow, only its row."""

from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from dbos import DBOS

from toolwire_client.assembly.agents import build_agent
from toolwire_client.assembly.trusted_servers import ServerTrust, worker_trust
from toolwire_client.config import RunConfig, config_of
from toolwire_client.fleet.app import OLD_LEG_WORKFLOW, WORKFLOW
from toolwire_client.fleet.ratelimit import RateLimited
from toolwire_client.loop import Agent
from toolwire_client.models.pricing import default_prices
from toolwire_client.run.state import RunState, RunStatus
from toolwire_client.store import RunAlreadyClaimed, SqlRunStore, StaleRunState
from toolwire_client.store.approvals import decided

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
    """Drive the run from its saved state under its lease; go on past a wait whose calls were all decided before it
    began (a decision made while the leg was ending finds the run still `running` and enqueues nothing); the status
    it ends the leg in."""
    store = _store()
    state = await store.load(run_id)
    if state.status not in DRIVABLE:
        return state.status  # ended already: a duplicate leg
    if state.status == "running" and (state.steps or state.pending):
        SETTINGS.say(f"run {run_id}: resumed from its saved state after {len(state.steps)} step(s)")
    said_held = False
    try:
        while True:
            agent = _agent(state, store)  # one per try: a try opens and closes its tool sources once
            try:
                await agent.resume(state)
            except RunAlreadyClaimed as held:  # a dead driver's lease on another host runs out; a live one finishes
                if not said_held:
                    SETTINGS.say(f"run {run_id}: {held}; trying every {CLAIM_RETRY_S:g} s")
                    said_held = True
                await anyio.sleep(CLAIM_RETRY_S)
                state = await store.load(run_id)
                if state.status not in DRIVABLE:
                    return state.status  # the holder ended it
                continue
            finally:
                await agent.model.aclose()
            if state.status != "waiting_for_approval":
                return state.status
            state = await store.load(run_id)  # decided while this leg was ending? then it goes on here
            if not await decided(store, state):
                return state.status
    except Exception as exc:
        why = _explained(exc)
        SETTINGS.say(f"run {run_id}: could not be driven: {why}")
        return await _fail(run_id, why)


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
    one line the CLI would print, unless it has ended since (then that end stands)."""
    store = _store()
    state = await store.load(run_id)
    if state.status not in DRIVABLE:
        return state.status
    state.status, state.stop_reason = "failed", "worker_error"
    state.report = f"the worker could not drive the run: {why}"
    try:
        await store.save(state)
    except StaleRunState:
        return (await store.load(run_id)).status
    return state.status
