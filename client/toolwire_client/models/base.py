"""What the loop needs from a model: one call from the message list and tool specs to the next assistant turn."""

from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

from pydantic import Field

from toolwire_shared.messages import AssistantMessage, Message
from toolwire_shared.tools import ToolSpec
from toolwire_shared.usage import Usage


@dataclass(slots=True, kw_only=True)
class ModelReply:
    """What one model call answered: a plain record (one a step), kept on the step for replay."""

    message: AssistantMessage
    usage: Usage
    finish_reason: str | None = None
    response_id: str | None = None
    response_model: str | None = None
    latency_s: float = 0.0
    attempts: int = 1
    """How many HTTP attempts the call took (retries + 1); the waterfall marks model calls that were retried."""
    waited_s: float = 0.0
    """Seconds spent waiting between those attempts (a rate limit's retry-after); the waterfall marks it ⏸."""
    found_tools: Annotated[list[str], Field(exclude_if=lambda names: not names)] = field(default_factory=list)
    """The deferred tools the provider's own tool search found and loaded in this reply (Anthropic's
    `tool_reference` blocks, OpenAI's `tool_search_output` items), by name: the run records them as loaded
    (tools/tool_search.py)."""
    applied_edits: Annotated[list[dict[str, Any]], Field(exclude_if=lambda edits: not edits)] = field(
        default_factory=list
    )
    """What the provider's own context editing cleared before the model read this request, as it said
    (Anthropic's `context_management.applied_edits`: `type`, `cleared_tool_uses`, `cleared_input_tokens`)."""


class ModelCallFailed(Exception):
    """The model could not be reached or refused the request, after every retry that made sense.

    `reason` is readable and free of keys; `retryable` is False for billing stops and 4xx mistakes.
    """

    def __init__(self, reason: str, *, status: int | None = None, retryable: bool = False, attempts: int = 1):
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retryable = retryable
        self.attempts = attempts


class Model(Protocol):
    provider: str
    """gen_ai.provider.name: 'anthropic', 'openai', 'scripted'."""
    model: str
    server_address: str | None
    server_port: int | None

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        """One model call, retried inside as the retry policy says; raises ModelCallFailed when it gives up.
        `max_output_tokens` (what the run's budget leaves) caps the reply below the adapter's own limit."""
        ...

    async def aclose(self) -> None: ...


class WrappedModel:
    """Implements Model around `inner`, changing only what a subclass overrides (its `complete`): the same identity
    (provider, model, server), the inner model's other attributes (spec_prefix and the like) and its close."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.provider, self.model = inner.provider, inner.model
        self.server_address, self.server_port = inner.server_address, inner.server_port

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        return await self.inner.complete(messages, tools, max_output_tokens)

    async def aclose(self) -> None:
        await self.inner.aclose()
