"""The agent loop: a message list, a model, tools over MCP, and a harness that owns every exit.

This is the public face: what the README, the docs, the examples and the benchmarks import. Names load on first
use, so `import toolwire_client` (and every CLI start) stays cheap; type checkers see them as plain imports.

    from toolwire_client import RunConfig, ServerSpec, build_agent

    agent = build_agent(RunConfig(model="scripted:recovers", servers=[ServerSpec(command=[...])]))
    state = await agent.run("What does order A123 cost with GST?")
"""

from typing import TYPE_CHECKING

from toolwire_shared.lazy import loader

PUBLIC: dict[str, tuple[str, ...]] = {
    "assembly.agents": ("build_agent", "run_task", "toolbox_for"),
    "assembly.resume": ("resume_run",),
    "assembly.sources": ("build_sources",),
    "cli.trace": ("step_lines", "trace_lines"),
    "config": ("OAuthClientSpec", "RunConfig", "ServerSpec", "config_of"),
    "fleet.gc": ("tune_gc_for_many_runs",),
    "fleet.submit": ("FleetClient", "submit"),
    "loop": ("Agent", "AgentOptions"),
    "models.choose": ("default_spec", "key_envs", "make_model", "spec_or_script"),
    "models.anthropic": ("AnthropicModel",),
    "models.anthropic_cache": ("PromptCache",),
    "models.base": ("Model", "ModelReply"),
    "models.function_model": ("FunctionModel",),
    "models.pricing": ("default_prices",),
    "models.scripted": ("ScriptedModel",),
    "models.test_model": ("TestModel",),
    "models.tokens": ("estimate_prompt", "estimate_text"),
    "run.limits": ("RunLimits",),
    "run.state": ("RunState", "StepRecord"),
    "store": ("RunStore", "SqlRunStore", "open_store"),
    "strategies.code_mode": ("CodeMode",),
    "strategies.delegation": ("Delegation",),
    "strategies.plan": ("Planning",),
    "strategies.review": ("Review",),
    "strategies.workflow": ("Step", "Workflow"),
    "tools.mcp_source": ("McpSource",),
    "tools.registry_source": ("RegistrySource",),
    "tools.shared_connections": ("SharedConnections",),
    "tools.skills": ("inlined", "list_skills", "load_skill_spec", "skill_use"),
    "tools.source": ("ToolSource",),
    "tools.toolbox": ("ToolBox",),
}
"""The public names, by the module (under toolwire_client) that defines each: the one list. `__all__` and the lazy
loader are made from it; the imports below, for type checkers, are checked against it (tests/test_public_api.py)."""

_WHERE = {name: module for module, names in PUBLIC.items() for name in names}
__all__ = sorted(_WHERE)

if TYPE_CHECKING:
    from toolwire_client.assembly.agents import build_agent as build_agent
    from toolwire_client.assembly.agents import run_task as run_task
    from toolwire_client.assembly.agents import toolbox_for as toolbox_for
    from toolwire_client.assembly.resume import resume_run as resume_run
    from toolwire_client.assembly.sources import build_sources as build_sources
    from toolwire_client.cli.trace import step_lines as step_lines
    from toolwire_client.cli.trace import trace_lines as trace_lines
    from toolwire_client.config import OAuthClientSpec as OAuthClientSpec
    from toolwire_client.config import RunConfig as RunConfig
    from toolwire_client.config import ServerSpec as ServerSpec
    from toolwire_client.config import config_of as config_of
    from toolwire_client.fleet.gc import tune_gc_for_many_runs as tune_gc_for_many_runs
    from toolwire_client.fleet.submit import FleetClient as FleetClient
    from toolwire_client.fleet.submit import submit as submit
    from toolwire_client.loop import Agent as Agent
    from toolwire_client.loop import AgentOptions as AgentOptions
    from toolwire_client.models.anthropic import AnthropicModel as AnthropicModel
    from toolwire_client.models.anthropic_cache import PromptCache as PromptCache
    from toolwire_client.models.base import Model as Model
    from toolwire_client.models.base import ModelReply as ModelReply
    from toolwire_client.models.choose import default_spec as default_spec
    from toolwire_client.models.choose import key_envs as key_envs
    from toolwire_client.models.choose import make_model as make_model
    from toolwire_client.models.choose import spec_or_script as spec_or_script
    from toolwire_client.models.function_model import FunctionModel as FunctionModel
    from toolwire_client.models.pricing import default_prices as default_prices
    from toolwire_client.models.scripted import ScriptedModel as ScriptedModel
    from toolwire_client.models.test_model import TestModel as TestModel
    from toolwire_client.models.tokens import estimate_prompt as estimate_prompt
    from toolwire_client.models.tokens import estimate_text as estimate_text
    from toolwire_client.run.limits import RunLimits as RunLimits
    from toolwire_client.run.state import RunState as RunState
    from toolwire_client.run.state import StepRecord as StepRecord
    from toolwire_client.store import RunStore as RunStore
    from toolwire_client.store import SqlRunStore as SqlRunStore
    from toolwire_client.store import open_store as open_store
    from toolwire_client.strategies.code_mode import CodeMode as CodeMode
    from toolwire_client.strategies.delegation import Delegation as Delegation
    from toolwire_client.strategies.plan import Planning as Planning
    from toolwire_client.strategies.review import Review as Review
    from toolwire_client.strategies.workflow import Step as Step
    from toolwire_client.strategies.workflow import Workflow as Workflow
    from toolwire_client.tools.mcp_source import McpSource as McpSource
    from toolwire_client.tools.registry_source import RegistrySource as RegistrySource
    from toolwire_client.tools.shared_connections import SharedConnections as SharedConnections
    from toolwire_client.tools.skills import inlined as inlined
    from toolwire_client.tools.skills import list_skills as list_skills
    from toolwire_client.tools.skills import load_skill_spec as load_skill_spec
    from toolwire_client.tools.skills import skill_use as skill_use
    from toolwire_client.tools.source import ToolSource as ToolSource
    from toolwire_client.tools.toolbox import ToolBox as ToolBox


__getattr__ = loader(__name__, _WHERE, globals())
