"""From a RunConfig to an Agent: its model from the provider table, its servers as tool sources, and its ToolBox
with the tools the client itself offers when the config turns them on (`delegate` for sub-agents, `load_skill`
for skills). Each of those is a ToolSource like a server, so the loop knows nothing of them."""

from typing import Unpack

from toolwire_client.assembly.sources import build_sources, risky_marks
from toolwire_client.config import RunConfig, ServerSpec
from toolwire_client.loop import Agent, AgentOptions, OnStep
from toolwire_client.models import make_model
from toolwire_client.models.sse import OnText
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store
from toolwire_client.tools.a2a_source import a2a_sources
from toolwire_client.tools.code_mode.layer import CodeModeLayer
from toolwire_client.tools.delegate import DelegateSource
from toolwire_client.tools.resource_reader import ResourceReader
from toolwire_client.tools.server_stderr import LineSink
from toolwire_client.tools.skills import SkillSource
from toolwire_client.tools.source import ToolSource
from toolwire_client.tools.tool_layers import ToolLayer
from toolwire_client.tools.tool_search import ToolSearch
from toolwire_client.tools.toolbox import CHOICE_WORDS, OnProgress, ToolBox


def build_agent(
    config: RunConfig,
    *,
    stderr_sink: LineSink | None = None,
    on_text: OnText | None = None,
    on_progress: OnProgress | None = None,
    servers: list[ServerSpec] | None = None,
    **options: Unpack[AgentOptions],
) -> Agent:
    """The agent `config` describes; its tool servers' stderr goes to `stderr_sink` (default this process's stderr),
    `on_text` gets a streamed model's text deltas, `on_progress` the progress reports of running tool calls.
    `servers`: the specs to start instead of the config's own, for a saved run (what trusted_servers.py resolved
    them to; the config keeps its own). `options` as for the Agent (store, hooks, on_step, price_fn, on_elicit)."""
    model = make_model(
        config.model,
        base_url=config.base_url,
        tool_choice=config.tool_choice,
        prompt_cache=config.prompt_cache,
        media=config.media,
        stream=config.stream,
        on_text=on_text,
    )
    specs = config.servers if servers is None else servers
    native = getattr(model, "native_tool_search", False)
    sources = [*build_sources(specs, stderr_sink), *a2a_sources(config.a2a_agents)]
    toolbox = toolbox_for(config, sources, on_progress, risky_marks(specs), native)
    return Agent(model, toolbox, config=config, **options)


def toolbox_for(
    config: RunConfig,
    sources: list[ToolSource],
    on_progress: OnProgress | None = None,
    marked: dict[str, frozenset[str]] | None = None,
    native_search: bool = False,
) -> ToolBox:
    """The run's ToolBox: `sources` and the client's own tools; `on_progress` gets the progress reports of running
    calls (`toolwire run` shows them live); `marked`, the tools each server's spec says wait for approval;
    `native_search`: the model's provider searches deferred tools itself (Anthropic's tool search tool, OpenAI's
    hosted tool_search)."""
    own: list[ToolSource] = []
    if config.delegate is not None:
        own.append(DelegateSource())
    if config.skills:
        own.append(SkillSource(sources))  # after the servers: it lists their prompts when it starts
    allow = config.allow
    if allow is not None:  # a tool turned on by name is allowed beside the allow-list
        allow = [*allow, *(source.name for source in own)]
    if config.read_resources and sources:  # on by default, so an allow-list must name it (`--allow read_resource`)
        own.append(ResourceReader(sources))  # after the servers, as load_skill: it lists their resources
    cap = config.limits.max_result_chars
    forced = [config.tool_choice] if config.tool_choice not in (None, *CHOICE_WORDS) else []  # always offered
    later = {source.name for source in own}  # the client's own tools may be offered only later (read_resource)
    layers: list[ToolLayer] = []
    if config.tool_search != "off":
        layers.append(ToolSearch(config.tool_search, config.keep_tools, native_search, [*sorted(later), *forced]))
    if config.code_mode is not None:
        layers.append(CodeModeLayer(config.code_mode))
    return ToolBox(
        [*sources, *own],
        allow=allow,
        on_progress=on_progress,
        max_result_chars=cap,
        choice=config.tool_choice,
        risky=[name for name in config.risky_tools if name not in later],
        marked=marked,
        layers=layers,
    )


async def run_task(config: RunConfig, task: str, *, db: str | None = None, on_step: OnStep | None = None) -> RunState:
    """One run of `task` on the agent `config` describes, saved in the run store at `db` (default: the user's
    SQLite file): what a script around toolwire otherwise writes out (open the store, build, run, close both)."""
    store = await open_store(db)
    try:
        agent = build_agent(config, store=store, on_step=on_step)
        try:
            return await agent.run(task)
        finally:
            await agent.model.aclose()
    finally:
        await store.aclose()
