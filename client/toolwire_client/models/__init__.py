"""Model adapters: each turns the neutral message list into one provider's wire format and back."""

import os
from typing import Any

from toolwire_client.models.base import Model, ModelCallFailed, ModelReply
from toolwire_client.models.http import MissingApiKey
from toolwire_client.models.retry import RetryPolicy

DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-4.1-mini"}
SPEC_HELP = "use anthropic:MODEL, openai:MODEL or scripted:NAME (e.g. anthropic:claude-sonnet-4-5, scripted:recovers)"


def default_spec() -> str:
    """The model to use when none is named: whichever provider has a key set, Anthropic first."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        return f"anthropic:{DEFAULT_MODELS['anthropic']}"
    if os.environ.get("OPENAI_API_KEY"):
        return f"openai:{DEFAULT_MODELS['openai']}"
    raise MissingApiKey(f"no model named and neither ANTHROPIC_API_KEY nor OPENAI_API_KEY is set; {SPEC_HELP}")


def make_model(
    spec: str | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    anthropic_version: str | None = None,
    max_tokens: int | None = None,
    stream: bool = False,
    tool_choice: str | dict[str, Any] | None = None,
    retry: RetryPolicy | None = None,
) -> Model:
    """Build a model from 'provider:name'. Base URLs also come from ANTHROPIC_BASE_URL / OPENAI_BASE_URL."""
    spec = spec or default_spec()
    provider, sep, name = spec.partition(":")
    provider = provider.strip().lower()
    name = name.strip() or DEFAULT_MODELS.get(provider, "")
    if not sep and provider in DEFAULT_MODELS:
        name = DEFAULT_MODELS[provider]
    if provider == "anthropic":
        from toolwire_client.models.anthropic import DEFAULT_VERSION, AnthropicModel

        return AnthropicModel(
            name,
            api_key=api_key,
            base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL"),
            version=anthropic_version or DEFAULT_VERSION,
            max_tokens=max_tokens or 4096,
            stream=stream,
            retry=retry,
        )
    if provider == "openai":
        from toolwire_client.models.openai_chat import OpenAIChatModel

        return OpenAIChatModel(
            name,
            api_key=api_key,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
            max_tokens=max_tokens,
            tool_choice=tool_choice,
            retry=retry,
        )
    if provider == "scripted" and name:
        from toolwire_client.models.scripted import make_scripted  # type: ignore[import-not-found,unused-ignore]

        scripted: Model = make_scripted(name)
        return scripted
    raise ValueError(f"unknown model {spec!r}: {SPEC_HELP}")


__all__ = [
    "DEFAULT_MODELS",
    "MissingApiKey",
    "Model",
    "ModelCallFailed",
    "ModelReply",
    "RetryPolicy",
    "default_spec",
    "make_model",
]
