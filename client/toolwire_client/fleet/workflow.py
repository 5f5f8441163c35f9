"""The one fleet workflow: drive a submitted run in this worker until it ends or waits for a person.

Step granularity, honestly: one DBOS step per drive (a leg: submit to end, or approval to end). The loop already
checkpoints every model turn and tool call in the run store and settles a call cut off by a crash (an idempotent
one resent with its key, any other answered "outcome unknown"), so a recovered workflow re-runs the drive step and
the drive resumes from the run store's last checkpoint. DBOS records the leg's outcome; it does not (yet) hold each
model call and tool call as its own step, and an approval is not (yet) a DBOS `recv`."""

from dataclasses import dataclass, field

from dbos import DBOS

from toolwire_client.config import RunConfig, config_of
from toolwire_client.fleet.app import WORKFLOW
from toolwire_client.fleet.ratelimit import RateLimited
from toolwire_client.loop import Agent
from toolwire_client.pricing import default_prices
from toolwire_client.state import RunState, RunStatus
from toolwire_client.store import RunAlreadyClaimed, SqlRunStore, StaleRunState, open_store

DRIVABLE: tuple[RunStatus, ...] = ("running", "waiting_for_approval")


@dataclass
class WorkerSettings:
    """What a worker process drives runs with: the run store and the fleet-wide model request limits."""

    db: str | None = None
    per_minute: dict[str, int] = field(default_factory=dict)
    """Provider ('anthropic', 'openai', 'scripted', ...) -> model requests per minute across the fleet."""


SETTINGS = WorkerSettings()
"""Set once by the worker before DBOS launches; never a workflow input (the URL may hold a password)."""


@DBOS.workflow(name=WORKFLOW)
async def run_workflow(run_id: str) -> str:
    return await drive_step(run_id)


def _claimed(exc: BaseException) -> bool:
    """Retry a drive only while another process still holds the run's lease (a dead worker's lease on another host
    runs out after its TTL; a live driver finishes); every other failure is the run's and is on its record."""
    return isinstance(exc, RunAlreadyClaimed)


@DBOS.step(name="toolwire-drive", retries_allowed=True, should_retry=_claimed, interval_seconds=1.0, max_attempts=12)
async def drive_step(run_id: str) -> str:
    return await drive(SETTINGS, run_id)


async def drive(settings: WorkerSettings, run_id: str) -> RunStatus:
    """Resume the run from its last checkpoint under its lease; the status the run store holds afterwards."""
    store = await open_store(settings.db)
    try:
        state = await store.load(run_id)
        if state.status not in DRIVABLE:
            return state.status  # ended already: a duplicate delivery, or a leg whose outcome was not recorded
        try:
            agent = _agent(settings, state, store)
        except Exception as exc:
            return await _failed(store, state, exc)
        try:
            await agent.resume(state)
        except RunAlreadyClaimed:
            raise
        except Exception as exc:
            return await _failed(store, await store.load(run_id), exc)
        finally:
            await agent.model.aclose()
        return (await store.load(run_id)).status
    finally:
        await store.aclose()


def _agent(settings: WorkerSettings, state: RunState, store: SqlRunStore) -> Agent:
    config: RunConfig = config_of(state)
    prices, model = default_prices(), config.model.partition(":")[2] or config.model
    agent = Agent.from_config(config, store=store, price_fn=lambda usage: prices.cost(model, usage))
    limit = settings.per_minute.get(agent.model.provider)
    if limit is not None:
        agent.model = RateLimited(agent.model, store, limit)
    if not state.steps and not config.tools:
        state.config = {}  # as submitted: the loop records the config with the tools offered once it lists them
    return agent


async def _failed(store: SqlRunStore, state: RunState, exc: Exception) -> RunStatus:
    """A run that could not be driven (its tool server would not start, no API key, ...) ends `failed` with the
    one line the CLI would print, unless someone else has saved it since (then it is theirs)."""
    from toolwire_client.cli.mistakes import explain

    if state.status not in DRIVABLE:
        return state.status
    state.status, state.stop_reason = "failed", "worker_error"
    state.report = f"the worker could not drive the run: {explain(exc).format_message()}"
    try:
        await store.save(state)
    except StaleRunState:
        return (await store.load(state.run_id)).status
    return state.status
