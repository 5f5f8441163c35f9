"""Runs that outlive their process: the config saved in RunState.config to rebuild a run anywhere, starting a run
with it, and resuming one under an exclusive claim (two resumers: one proceeds, the other is told so)."""

import os
from collections.abc import Awaitable, Callable

from pydantic import BaseModel, Field

from toolwire_client.exits import Limits
from toolwire_client.loop import Agent
from toolwire_client.state import RunState
from toolwire_client.store.base import RunStore
from toolwire_client.store.claims import claim_owner
from toolwire_shared.tools import ToolSpec


class ServerSpec(BaseModel):
    """One tool server of a run: a stdio command or an HTTP URL. Secrets are never saved, only the env var name."""

    name: str
    command: list[str] | None = None
    url: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    token_env: str | None = None
    """Name of the environment variable holding the bearer token, read again in the resuming process."""


class RunConfig(BaseModel):
    """What `toolwire resume` needs to rebuild the run: kept in RunState.config (as JSON)."""

    model: str
    """A model spec for make_model: 'anthropic:NAME', 'openai:NAME', 'scripted:NAME'."""
    base_url: str | None = None
    """The provider's base URL when it is not the default (an OpenAI-compatible local server, a proxy)."""
    servers: list[ServerSpec] = Field(default_factory=list)
    name: str = "agent"
    system: str | None = None
    limits: Limits = Field(default_factory=Limits)
    risky_tools: list[str] = Field(default_factory=list)
    allow: list[str] | None = None
    tools: list[ToolSpec] = Field(default_factory=list)
    """The tool definitions the model was offered (filled at start; replay offers the same ones)."""


def config_of(state: RunState) -> RunConfig:
    if not state.config:
        raise ValueError(
            f"run {state.run_id} has no saved config (model and tool servers), so it cannot be rebuilt here; "
            "start runs with `toolwire run` so their config is saved"
        )
    return RunConfig.model_validate(state.config)


async def start_run(agent: Agent, task: str, config: RunConfig, run_id: str | None = None) -> RunState:
    """Agent.run with the config (and the tool definitions offered, for replay) saved from the first checkpoint on."""
    owned = not agent.toolbox.started
    if owned:
        await agent.toolbox.start()
    try:
        recorded = config.model_copy(update={"tools": list(agent.toolbox.specs)})
        return await agent.run(task, run_id, config=recorded.model_dump(mode="json"))
    finally:
        if owned:
            await agent.toolbox.aclose()


AgentFactory = Callable[[RunConfig, RunStore], Awaitable[Agent]]


async def build_agent(config: RunConfig, store: RunStore | None) -> Agent:
    """The agent of a saved run, rebuilt from its config with the model factory and MCP tool sources."""
    from toolwire_client.models import make_model
    from toolwire_client.tools.mcp_source import McpSource
    from toolwire_client.tools.source import ToolSource
    from toolwire_client.tools.toolbox import ToolBox

    sources: list[ToolSource] = []
    for server in config.servers:
        token = os.environ.get(server.token_env) if server.token_env else None
        env = {**_passed_env(), **server.env}
        sources.append(
            McpSource(server.name, command=server.command, url=server.url, token=token, env=env, cwd=server.cwd)
        )
    model = make_model(config.model, base_url=config.base_url)
    return Agent(
        model,
        ToolBox(sources, allow=config.allow),
        name=config.name,
        system=config.system,
        limits=config.limits,
        store=store,
        risky_tools=set(config.risky_tools),
    )


def _passed_env() -> dict[str, str]:
    """What a stdio tool server inherits: PATH/HOME and toolwire's own settings, never provider keys."""
    from toolwire_otel.setup import child_process_env

    keep = ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV")
    passed = {k: v for k, v in os.environ.items() if k in keep or k.startswith(("TOOLWIRE_", "OTEL_"))}
    return passed | child_process_env()  # and the trace file of this process's `--trace FILE`, if any


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
