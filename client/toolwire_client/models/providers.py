"""The provider table: one row per model spec prefix (`anthropic:`, `openai:`, `openai-responses:`, `test`,
`script:`, `scripted:`) with its factory, default model, API-key variable and help text. Adding a provider is adding
a row."""

import os
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from toolwire_client.models.base import Model
from toolwire_client.models.options import HttpOptions, ModelOptions
from toolwire_client.models.scripted import ScriptedModel, UsageFn

if TYPE_CHECKING:
    from toolwire_client.models.http import HttpModel


class UnknownModel(ValueError):
    """A model spec names no provider in the table, or no ready script."""


@dataclass(frozen=True)
class Provider:
    prefix: str
    build: Callable[[str, ModelOptions], Model]
    default_model: str | None
    key_env: str | None
    """The environment variable holding the API key; None for providers that need none."""
    about: str
    shown: str | None = None
    """How --help writes the spec, when not `prefix:default_model` (`test`, `script:FILE`)."""

    @property
    def example(self) -> str:
        return self.shown or f"{self.prefix}:{self.default_model or 'NAME'}"


def _http_options(adapter: "type[HttpModel]", options: ModelOptions) -> HttpOptions:
    """The options every HTTP adapter takes; the base URL falls back to the adapter's own variable."""
    taken = cast(HttpOptions, {key: value for key, value in options.items() if key in HttpOptions.__optional_keys__})
    taken["base_url"] = options.get("base_url") or os.environ.get(adapter.base_url_env)
    return taken


def _anthropic(name: str, options: ModelOptions) -> Model:
    from toolwire_client.models.anthropic import DEFAULT_VERSION, AnthropicModel

    version = options.get("anthropic_version") or DEFAULT_VERSION
    cache = options.get("prompt_cache", "5m")
    return AnthropicModel(name, version=version, prompt_cache=cache, **_http_options(AnthropicModel, options))


def _openai(name: str, options: ModelOptions) -> Model:
    from toolwire_client.models.openai_chat import OpenAIChatModel

    return OpenAIChatModel(name, **_http_options(OpenAIChatModel, options))


def _openai_responses(name: str, options: ModelOptions) -> Model:
    from toolwire_client.models.openai_responses import OpenAIResponsesModel

    return OpenAIResponsesModel(name, **_http_options(OpenAIResponsesModel, options))


def _scripted(name: str, options: ModelOptions) -> Model:
    return make_scripted(name)


def _test(name: str, options: ModelOptions) -> Model:
    from toolwire_client.models.test_model import TestModel

    named = [tool.strip() for tool in name.split(",") if tool.strip()]
    return TestModel(call_tools="all" if name == "all" else named)


def _script(name: str, options: ModelOptions) -> Model:
    from toolwire_client.models.script_file import script_model

    return script_model(name)


def make_scripted(name: str, *, usage_fn: UsageFn | None = None) -> ScriptedModel:
    """`scripted:NAME` on the CLI: one of the ready scripts in seed_scripts."""
    from toolwire_client.models.seed_scripts import SCRIPTS

    if name not in SCRIPTS:
        raise UnknownModel(f"unknown model 'scripted:{name}': use {spec_help()}")
    return ScriptedModel(SCRIPTS[name], name=name, usage_fn=usage_fn)


def scripted_names() -> list[str]:
    from toolwire_client.models.seed_scripts import SCRIPTS

    return sorted(SCRIPTS)


PROVIDERS: dict[str, Provider] = {
    p.prefix: p
    for p in (
        Provider("anthropic", _anthropic, "claude-sonnet-4-5", "ANTHROPIC_API_KEY", "the Anthropic Messages API"),
        Provider(
            "openai",
            _openai,
            "gpt-4.1-mini",
            "OPENAI_API_KEY",
            "OpenAI Chat Completions, or any compatible server with --base-url / OPENAI_BASE_URL",
        ),
        Provider(
            "openai-responses",
            _openai_responses,
            "gpt-4.1-mini",
            "OPENAI_API_KEY",
            "the OpenAI Responses API, stateless, with --base-url / OPENAI_BASE_URL as for openai",
        ),
        Provider(
            "test",
            _test,
            "all",
            None,
            "your tools, no key: calls each tool once with arguments made from its schema, then answers with what "
            "came back; test:TOOL,TOOL calls only those",
            shown="test",
        ),
        Provider(
            "script",
            _script,
            None,
            None,
            'your turns, no key: a JSON or TOML list of turns, each {"calls": [{"name": TOOL, "args": {...}}]} or '
            '{"text": ANSWER}; or script:FILE.py:FUNCTION, a function of the messages and tools',
            shown="script:FILE",
        ),
        Provider("scripted", _scripted, None, None, "a bundled example's ready script", shown="scripted:NAME"),
    )
}


EXAMPLES_PREFIX = "scripted"
"""The bundled examples' scripted models: listed apart from the models for your own tools."""


def spec_help() -> str:
    """Every provider, then the examples' scripted models by name, for --help and for errors."""
    rows = [f"{p.example} ({p.about})" for p in PROVIDERS.values() if p.prefix != EXAMPLES_PREFIX]
    examples = ", ".join(scripted_names())
    return f"one of {'; '.join(rows)}. The bundled examples' scripted models: scripted:NAME, NAME one of {examples}"


def spec_help_wrapped(width: int = 46) -> str:
    """spec_help for click's --help, wrapped here without breaking at hyphens (click would split `openai-` from
    `responses:`); the \\b paragraph marker keeps click from wrapping it again."""
    text = textwrap.fill(f"Model: {spec_help()}.", width, break_on_hyphens=False, break_long_words=False)
    return "\b\n" + text
