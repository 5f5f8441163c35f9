"""Resuming a saved run in this process: rebuild its agent from the saved config and go on. The agent takes the
run's lease, so a run that another live process drives is refused (RunAlreadyClaimed) before anything runs; the
tool servers started are only those this process trusts (trusted_servers.py)."""

from collections.abc import Awaitable
from typing import Protocol

from toolwire_client.assembly.agents import build_agent
from toolwire_client.assembly.trusted_servers import ServerTrust, resume_trust
from toolwire_client.config import RunConfig, ServerSpec, config_of
from toolwire_client.loop import Agent, check_resumable
from toolwire_client.run.state import RunState
from toolwire_client.store.base import RunStore


class AgentFactory(Protocol):
    """Builds the agent of a config; `servers`, for a saved run, the specs to start instead of the config's."""

    def __call__(
        self, config: RunConfig, store: RunStore, servers: list[ServerSpec] | None = None
    ) -> Awaitable[Agent]: ...


async def rebuilt(config: RunConfig, store: RunStore, servers: list[ServerSpec] | None = None) -> Agent:
    """The agent of a saved run, rebuilt from its config."""
    return build_agent(config, store=store, servers=servers)


async def resume_run(
    store: RunStore, run_id: str, build: AgentFactory = rebuilt, trust: ServerTrust | None = None
) -> RunState:
    """Go on with `run_id`; `trust`: this user's seal and no servers file, unless given."""
    state = await store.load(run_id)
    check_resumable(state)  # before the model is built: a finished run's line, not a missing key's
    config = config_of(state)
    servers = (trust or resume_trust(None)).specs_for(run_id, state.config, config)
    agent = await build(config, store, servers)
    try:
        return await agent.resume(state)
    finally:
        await agent.model.aclose()
