"""The options a model takes, listed once: what every HTTP adapter takes (HttpOptions) and, on top, what
`make_model` passes on to the one adapter that has it (ModelOptions). Both are TypedDicts taken as `**options`, so a
call reads as keyword arguments (a misspelt one is refused by name: toolwire_shared/options.py)."""

from typing import Any, TypedDict

import httpx2

from toolwire_client.models.anthropic_cache import PromptCache
from toolwire_client.models.media import MediaMode
from toolwire_client.models.retry import RetryPolicy
from toolwire_client.models.sse import OnText


class HttpOptions(TypedDict, total=False):
    """What every HTTP adapter takes, whatever its wire format."""

    api_key: str | None
    base_url: str | None
    max_tokens: int | None
    tool_choice: str | dict[str, Any] | None
    """"auto" (unset), "required", "none", a tool's name, or a wire object as the provider spells it."""
    stream: bool
    """Read the reply as SSE events, folded into the body a non-streamed call returns (off when unset)."""
    retry: RetryPolicy | None
    timeout_s: float
    """How long one request may take, in seconds (DEFAULT_TIMEOUT_S when unset)."""
    client: httpx2.AsyncClient | None
    """A client to post with, which the model leaves open; unset, the model makes its own and closes it."""
    on_text: OnText | None
    """Called with each text delta of a streamed reply (a retried stream shows its text again)."""
    media: MediaMode
    """Which of a tool result's images and audio the model is sent (models/media.py); "auto" when unset."""


class ModelOptions(HttpOptions, total=False):
    """What `make_model` takes: the HTTP options, and the Anthropic adapter's own (the other providers ignore
    them, as the test and scripted models ignore all of them)."""

    anthropic_version: str | None
    """The `anthropic-version` header (anthropic.DEFAULT_VERSION when unset)."""
    prompt_cache: PromptCache
    """The TTL of Anthropic's cache breakpoints: "off", "5m" (when unset) or "1h" (anthropic_cache.py)."""
