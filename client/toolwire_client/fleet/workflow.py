"""The fleet's two workflows. A run (`toolwire-run`, workflow id = run id) is legs with durable waits between them:
a leg (`toolwire-leg`, id RUN@N, on the legs queue that the workers' concurrency limits apply to) drives the run
until it ends or waits for a person, each model call, tool call and save one DBOS step (fleet/steps.py); then the
run waits in DBOS `recv` for the message `toolwire approve` / `reject` send, and starts the next leg once every
waiting call is decided. A run that waits for a person holds no worker slot, only a row."""

from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from dbos import DBOS
from dbos import error as dbos_error

from toolwire_client.assembly.agents import build_agent
from toolwire_client.assembly.trusted_servers import ServerTrust, worker_trust
from toolwire_client.config import RunConfig, config_of
from toolwire_client.fleet.app import APP_VERSION, DECIDED, LEG_ENDED, LEG_WORKFLOW, LEGS, WORKFLOW
from toolwire_client.fleet.ratelimit import RateLimited
from toolwire_client.fleet.steps import Leg, StepModel, StepStore, StepToolBox
from toolwire_client.loop import Agent
from toolwire_client.models.pricing import default_prices
from toolwire_client.run.state import RunState, RunStatus
from toolwire_client.store import RunAlreadyClaimed, SqlRunStore, StaleRunState
from toolwire_client.store.approvals import decided

DRIVABLE: tuple[RunStatus, ...] = ("running", "waiting_for_approval")
LEG_CHECK_S, DECISION_CHECK_S = 60.0, 3600.0
"""How long a run waits for a message before it looks for itself: a leg that died failing, a decision recorded by
someone whose message did not arrive. Each look is a few recorded operations, so a wait of days stays small."""
ENDED_BADLY = ("ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")
CLAIM_RETRY_S = 1.0


@dataclass
class WorkerSettings:
    """What a worker process drives runs with: the run store and the fleet-wide model request limits."""

    store: SqlRunStore | None = None
    """The worker's one store, its few connections shared by every run it drives (not one connection per run)."""
    per_minute: dict[str, int] = field(default_factory=dict)
    """Provider ('anthropic', 'openai', 'scripted', ...) -> model requests per minute across the fleet."""
    say: Callable[[str], None] = lambda line: None
    """The worker's log line: how many recorded steps a taken-over leg replayed."""
    trust: ServerTrust = field(default_factory=lambda: worker_trust(None))
    """The tool servers this worker starts (its servers file); a run's saved config never adds one."""


SETTINGS = WorkerSettings()
"""Set once by the worker before DBOS launches; never a workflow input (the URL may hold a password)."""


@DBOS.workflow(name=WORKFLOW)
async def run_workflow(run_id: str) -> str:
    leg = 0
    while True:
        leg += 1
        status = await _leg(run_id, f"{run_id}@{leg}")
        if status != "waiting_for_approval":
            return status
        while not await DBOS.run_step_async({"name": "decided"}, _decided, run_id):
            await DBOS.recv_async(DECIDED, timeout_seconds=DECISION_CHECK_S)


async def _leg(run_id: str, leg_id: str) -> str:
    """Queue the next leg and wait for the status it ends with."""
    options: dict[str, str] = {
        "workflow_name": LEG_WORKFLOW,
        "queue_name": LEGS,
        "workflow_id": leg_id,
        "app_version": APP_VERSION,
    }
    await DBOS.enqueue_workflow_with_options_async(options, run_id)  # type: ignore[arg-type]
    while True:
        ended = await DBOS.recv_async(LEG_ENDED, timeout_seconds=LEG_CHECK_S)
        if ended is not None:
            return str(ended)
        leg = await DBOS.get_workflow_status_async(leg_id)
        if leg is not None and leg.status in ENDED_BADLY:
            why = f"its fleet workflow {leg_id} is {leg.status}" + (f" ({leg.error})" if leg.error else "")
            return str(await DBOS.run_step_async({"name": "fail"}, _fail, run_id, why))


def _store() -> SqlRunStore:
    assert SETTINGS.store is not None, "fleet workflows run in a worker, which opens its store before DBOS launches"
    return SETTINGS.store


async def _decided(run_id: str) -> bool:
    store = _store()
    return await decided(store, await store.load(run_id))


@DBOS.workflow(name=LEG_WORKFLOW)
async def leg_workflow(run_id: str) -> str:
    status = await drive(run_id)
    await DBOS.send_async(run_id, status, LEG_ENDED)
    return status


async def drive(run_id: str) -> RunStatus:
    """Drive the run from the state this leg started from (a step: a replay starts from the same one) under its
    lease; the status it ends the leg in."""
    store, leg = _store(), Leg()
    state: RunState = await DBOS.run_step_async({"name": "load"}, store.load, run_id)
    if state.status not in DRIVABLE:
        return state.status  # ended already: a duplicate delivery
    said_held = False
    try:
        while True:
            agent = _agent(state, store, leg)  # one per try: a try opens and closes its tool sources once
            try:
                await agent.resume(state)
            except RunAlreadyClaimed as held:  # a dead driver's lease on another host runs out; a live one finishes
                if not said_held:
                    SETTINGS.say(f"run {run_id}: {held}; trying every {CLAIM_RETRY_S:g} s")
                    said_held = True
                await anyio.sleep(CLAIM_RETRY_S)
                continue
            finally:
                await agent.model.aclose()
            if leg.replayed_steps:
                SETTINGS.say(f"run {run_id}: replayed {leg.replayed_steps} recorded step(s) of its leg")
            return state.status
    except dbos_error.DBOSException:
        raise  # DBOS's own (a replay that went another way): the workflow's error, not the run's
    except Exception as exc:
        why = _explained(exc)
        SETTINGS.say(f"run {run_id}: could not be driven: {why}")
        return await DBOS.run_step_async({"name": "fail"}, _fail, run_id, why)


def _agent(state: RunState, store: SqlRunStore, leg: Leg) -> Agent:
    config: RunConfig = config_of(state)
    servers = SETTINGS.trust.specs_for(state.run_id, state.config, config)  # Untrusted: the run fails, readably
    prices, model = default_prices(), config.model.partition(":")[2] or config.model
    price_fn = lambda usage: prices.cost(model, usage)  # noqa: E731
    agent = build_agent(config, store=StepStore(store, leg), price_fn=price_fn, servers=servers)
    limit = SETTINGS.per_minute.get(agent.model.provider)
    if limit is not None:
        agent.model = RateLimited(agent.model, store, limit)
    agent.model = StepModel(agent.model, leg)
    agent.toolbox = StepToolBox(agent.toolbox, leg, store)
    if not state.steps and not config.tools:
        state.config = {}  # as submitted: the loop records the config with the tools offered once it lists them
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
