"""The agent loop: a message list, a model, tools over MCP, and a harness that owns every exit.

This is the public face: what the README, the docs, the examples and the benchmarks import. Names load on first
use, so `import toolwire_client` (and every CLI start) stays cheap; type checkers see them as plain imports.

    from toolwire_client import RunConfig, ServerSpec, build_agent

    agent = build_agent(RunConfig(model="scripted:recovers", servers=[ServerSpec(command=[...])]))
    state = await agent.run("What does order A123 cost with GST?")
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolwire_client.assembly.agents import build_agent, run_task, toolbox_for
    from toolwire_client.assembly.resume import resume_run
    from toolwire_client.assembly.sources import build_sources
    from toolwire_client.cli.trace import step_lines, trace_lines
    from toolwire_client.config import OAuthClientSpec, RunConfig, ServerSpec, config_of
    from toolwire_client.fleet.gc import tune_gc_for_many_runs
    from toolwire_client.fleet.submit import FleetClient, submit
    from toolwire_client.loop import Agent
    from toolwire_client.models import default_spec, key_envs, make_model, spec_or_script
    from toolwire_client.models.anthropic import AnthropicModel
    from toolwire_client.models.anthropic_cache import PromptCache
    from toolwire_client.models.base import Model, ModelReply
    from toolwire_client.models.function_model import FunctionModel
    from toolwire_client.models.pricing import default_prices
    from toolwire_client.models.scripted import ScriptedModel
    from toolwire_client.models.test_model import TestModel
    from toolwire_client.models.tokens import estimate_prompt, estimate_text
    from toolwire_client.run.limits import RunLimits
    from toolwire_client.run.state import RunState, StepRecord
    from toolwire_client.store import RunStore, SqlRunStore, open_store
    from toolwire_client.strategies.delegation import Delegation
    from toolwire_client.strategies.plan import Planning
    from toolwire_client.strategies.review import Review
    from toolwire_client.strategies.workflow import Step, Workflow
    from toolwire_client.tools.mcp_source import McpSource
    from toolwire_client.tools.registry_source import RegistrySource
    from toolwire_client.tools.shared_connections import SharedConnections
    from toolwire_client.tools.skills import inlined, list_skills, skill_use
    from toolwire_client.tools.source import ToolSource
    from toolwire_client.tools.toolbox import ToolBox

_WHERE = {
    "Agent": "loop",
    "build_agent": "assembly.agents",
    "toolbox_for": "assembly.agents",
    "run_task": "assembly.agents",
    "resume_run": "assembly.resume",
    "build_sources": "assembly.sources",
    "RunConfig": "config",
    "ServerSpec": "config",
    "OAuthClientSpec": "config",
    "config_of": "config",
    "RunLimits": "run.limits",
    "RunState": "run.state",
    "StepRecord": "run.state",
    "make_model": "models",
    "default_spec": "models",
    "key_envs": "models",
    "spec_or_script": "models",
    "Model": "models.base",
    "ModelReply": "models.base",
    "ScriptedModel": "models.scripted",
    "TestModel": "models.test_model",
    "FunctionModel": "models.function_model",
    "default_prices": "models.pricing",
    "open_store": "store",
    "RunStore": "store",
    "SqlRunStore": "store",
    "Review": "strategies.review",
    "Planning": "strategies.plan",
    "Workflow": "strategies.workflow",
    "Step": "strategies.workflow",
    "Delegation": "strategies.delegation",
    "ToolBox": "tools.toolbox",
    "ToolSource": "tools.source",
    "McpSource": "tools.mcp_source",
    "RegistrySource": "tools.registry_source",
    "SharedConnections": "tools.shared_connections",
    "FleetClient": "fleet.submit",
    "submit": "fleet.submit",
    "trace_lines": "cli.trace",
    "step_lines": "cli.trace",
    "estimate_prompt": "models.tokens",
    "estimate_text": "models.tokens",
    "list_skills": "tools.skills",
    "skill_use": "tools.skills",
    "inlined": "tools.skills",
    "load_skill_spec": "tools.skills",
    "tune_gc_for_many_runs": "fleet.gc",
    "AnthropicModel": "models.anthropic",
    "PromptCache": "models.anthropic_cache",
}

__all__ = [
    "Agent",
    "AnthropicModel",
    "Delegation",
    "FleetClient",
    "FunctionModel",
    "McpSource",
    "Model",
    "ModelReply",
    "OAuthClientSpec",
    "Planning",
    "PromptCache",
    "RegistrySource",
    "Review",
    "RunConfig",
    "RunLimits",
    "RunState",
    "RunStore",
    "ScriptedModel",
    "ServerSpec",
    "SharedConnections",
    "SqlRunStore",
    "Step",
    "StepRecord",
    "TestModel",
    "ToolBox",
    "ToolSource",
    "Workflow",
    "build_agent",
    "build_sources",
    "config_of",
    "default_prices",
    "default_spec",
    "estimate_prompt",
    "estimate_text",
    "inlined",
    "key_envs",
    "list_skills",
    "load_skill_spec",
    "make_model",
    "open_store",
    "resume_run",
    "run_task",
    "skill_use",
    "spec_or_script",
    "step_lines",
    "submit",
    "toolbox_for",
    "trace_lines",
    "tune_gc_for_many_runs",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'toolwire_client' has no attribute {name!r}")
    value = getattr(import_module(f"toolwire_client.{where}"), name)
    globals()[name] = value  # once loaded, a plain attribute
    return value
