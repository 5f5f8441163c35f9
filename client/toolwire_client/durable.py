"""Resuming a saved run under an exclusive claim (two resumers: one proceeds, the other is told so)."""

from collections.abc import Awaitable, Callable

from toolwire_client.config import RunConfig, config_of
from toolwire_client.loop import Agent
from toolwire_client.state import RunState
from toolwire_client.store.base import RunStore
from toolwire_client.store.claims import claim_owner

AgentFactory = Callable[[RunConfig, RunStore], Awaitable[Agent]]


async def build_agent(config: RunConfig, store: RunStore | None) -> Agent:
    """The agent of a saved run, rebuilt from its config."""
    return Agent.from_config(config, store=store)


async def resume_claimed(store: RunStore, run_id: str, build: AgentFactory, owner: str | None = None) -> RunState:
    """Claim the run (RunAlreadyClaimed if another process holds it), rebuild its agent, resume, release."""
    owner = owner or claim_owner()
    await store.claim(run_id, owner)
    try:
        state = await store.load(run_id)
        agent = await build(config_of(state), store)
        try:
            return await agent.resume(state)
        finally:
            await agent.model.aclose()
    finally:
        await store.release(run_id, owner)
