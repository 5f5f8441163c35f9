"""The run's ToolBox: its servers' tools, plus the tools the client itself offers when the config turns them on
(`delegate` for sub-agents, `load_skill` for skills). Each is a ToolSource like a server, so the loop knows
nothing of them."""

from toolwire_client.config import RunConfig
from toolwire_client.tools.delegate import DelegateSource
from toolwire_client.tools.skills import SkillSource
from toolwire_client.tools.source import ToolSource
from toolwire_client.tools.toolbox import OnProgress, ToolBox


def toolbox_for(config: RunConfig, sources: list[ToolSource], on_progress: OnProgress | None = None) -> ToolBox:
    """`on_progress` gets the progress reports of running calls (`toolwire run` shows them live)."""
    own: list[ToolSource] = []
    if config.delegate is not None:
        own.append(DelegateSource())
    if config.skills:
        own.append(SkillSource(sources))  # after the servers: it lists their prompts when it starts
    allow = config.allow
    if allow is not None:
        allow = [*allow, *(source.name for source in own)]
    return ToolBox([*sources, *own], allow=allow, on_progress=on_progress)
