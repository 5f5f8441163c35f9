"""Resuming a saved run in this process: rebuild its agent from the saved config and go on. The agent takes the
run's lease, so a run that another live process drives is refused (RunAlreadyClaimed) before anything runs."""

from collections.abc import Awaitable, Callable

from toolwire_client.config import RunConfig, config_of
from toolwire_client.loop import Agent
from toolwire_client.state import RunState
from toolwire_client.store.base import RunStore

AgentFactory = Callable[[RunConfig, RunStore], Awaitable[Agent]]


async def build_agent(config: RunConfig, store: RunStore | None) -> Agent:
    """The agent of a saved run, rebuilt from its config."""
    return Agent.from_config(config, store=store)


async def resume_run(store: RunStore, run_id: str, build: AgentFactory = build_agent) -> RunState:
    state = await store.load(run_id)
    agent = await build(config_of(state), store)
    try:
        return await agent.resume(state)
    finally:
        await agent.model.aclose()
