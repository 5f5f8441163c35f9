"""What the HTTP adapters share: the key (kept out of reprs and errors), the client, and one retried POST, streamed
or not, whose text deltas go to `on_text`."""

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Unpack
from urllib.parse import urlsplit

import httpx2

from toolwire_client.models.base import ModelCallFailed, ModelReply
from toolwire_client.models.media import NO_MEDIA, media_kinds
from toolwire_client.models.options import HttpOptions
from toolwire_client.models.retry import RetryPolicy, redact, send_with_retries
from toolwire_client.models.sse import StreamAssembler, read_stream
from toolwire_shared.media import MediaKind
from toolwire_shared.messages import AssistantMessage, Message
from toolwire_shared.options import refuse_unknown
from toolwire_shared.tls import ssl_context
from toolwire_shared.tools import ToolSpec
from toolwire_shared.usage import Usage

DEFAULT_TIMEOUT_S = 600.0
"""How long one request to a provider may take, in seconds, when HttpOptions.timeout_s is unset."""

NewAssembler = Callable[[], StreamAssembler]
"""A fresh assembler per attempt, so a retried stream starts from nothing."""


class MissingApiKey(ValueError):
    """No key was passed and the provider's environment variable is not set."""

    def __init__(self, message: str, env_var: str | None = None):
        super().__init__(message)
        self.env_var = env_var
        """The variable that would hold the key (None when no model was named at all)."""


def resolve_key(api_key: str | None, env_var: str, base_url: str, default_base_url: str) -> str | None:
    """The key passed in, else the env var. Only a custom base URL (a local server) may go without one."""
    key = api_key if api_key is not None else os.environ.get(env_var)
    if not key and base_url.rstrip("/") == default_base_url.rstrip("/"):
        raise MissingApiKey(f"no API key: set {env_var} or pass api_key= (a local server needs --base-url)", env_var)
    return key or None


@dataclass(frozen=True)
class Posted:
    """A provider's parsed JSON reply, the latency of the successful attempt and how many attempts were made."""

    data: dict[str, Any]
    latency_s: float
    attempts: int
    waited_s: float = 0.0

    def reply(self, message: AssistantMessage, usage: Usage, finish_reason: str | None) -> ModelReply:
        return ModelReply(
            message=message,
            usage=usage,
            finish_reason=finish_reason,
            response_id=self.data.get("id"),
            response_model=self.data.get("model"),
            latency_s=self.latency_s,
            attempts=self.attempts,
            waited_s=self.waited_s,
        )


class HttpModel:
    """Base of the HTTP adapters: owns an AsyncClient, posts JSON with the shared retry policy. A subclass names its
    provider, its default base URL and the environment variables of its key and of a base URL override."""

    provider: str = "http"
    path: str
    """Where requests go, under the base URL."""
    stream_assembler: type[StreamAssembler]
    """Folds this wire format's SSE events into the body a non-streamed call returns."""
    default_base_url: str
    key_env: str
    base_url_env: str
    takes_media: frozenset[MediaKind] = NO_MEDIA
    """The kinds of tool-result media this wire format has a form for."""
    model: str
    server_address: str | None
    server_port: int | None

    def __init__(self, model: str, **options: Unpack[HttpOptions]) -> None:
        refuse_unknown(options, HttpOptions.__optional_keys__, f"{type(self).__name__}()")
        self.model = model
        self.max_tokens, self.tool_choice = options.get("max_tokens"), options.get("tool_choice")
        self.stream, self.on_text = options.get("stream", False), options.get("on_text")
        self.base_url = (options.get("base_url") or self.default_base_url).rstrip("/")
        self._api_key = resolve_key(options.get("api_key"), self.key_env, self.base_url, self.default_base_url)
        official = self.base_url == self.default_base_url.rstrip("/")
        media = options.get("media", "auto")
        self.media_kinds = media_kinds(media, official=official, takes=self.takes_media, model=model)
        """The kinds of tool-result media this model is sent; the rest it reads as their text descriptions."""
        self.retry = options.get("retry") or RetryPolicy()
        parts = urlsplit(self.base_url)
        self.server_address = parts.hostname
        self.server_port = parts.port or (443 if parts.scheme == "https" else 80 if parts.scheme == "http" else None)
        client = options.get("client")
        self._owns_client = client is None
        self._client = client or httpx2.AsyncClient(
            timeout=httpx2.Timeout(options.get("timeout_s", DEFAULT_TIMEOUT_S), connect=10.0), verify=ssl_context()
        )

    def __repr__(self) -> str:
        key = "set" if self._api_key else "none"
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, api_key={key})"

    def _headers(self) -> dict[str, str]:
        """A bearer token, as OpenAI and most compatible servers take it; a provider with its own header overrides."""
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        return headers

    def wire_body(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None
    ) -> dict[str, Any]:
        raise NotImplementedError

    def request_body(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> dict[str, Any]:
        """The request as sent: the adapter's wire body, asking for a stream when this model streams."""
        body = self.wire_body(messages, tools, max_output_tokens)
        if self.stream:
            body["stream"] = True
        return body

    async def _send(self, body: dict[str, Any]) -> Posted:
        return await self._post(self.path, body, self.stream_assembler if self.stream else None)

    def body_headers(self, body: dict[str, Any]) -> dict[str, str]:
        """Headers a request needs for what its body asks (Anthropic's beta of a feature it uses); none here."""
        return {}

    async def _post(self, path: str, body: dict[str, Any], assembler: NewAssembler | None = None) -> Posted:
        """POST with retries.

        With an assembler the reply is read as an SSE stream and folded into one body before anything is returned,
        so a stream that breaks half-way (a dropped connection, a missing final event, an error event) is retried
        whole by the same policy: no tool call from the broken stream has run."""
        url = self.base_url + path
        started = time.perf_counter()
        attempts = 0
        headers = {**self._headers(), **self.body_headers(body)}

        async def send() -> httpx2.Response:
            nonlocal started, attempts
            started = time.perf_counter()
            attempts += 1
            if assembler is None:
                return await self._client.post(url, json=body, headers=headers)
            async with self._client.stream("POST", url, json=body, headers=headers) as response:
                if not response.is_success:
                    await response.aread()
                    return response
                return httpx2.Response(200, json=await read_stream(response, assembler(), self.on_text))

        waits: list[float] = []
        response = await send_with_retries(self.provider, send, self.retry, [self._api_key], waits.append)
        latency = time.perf_counter() - started
        try:
            data = response.json()
        except ValueError as exc:
            raise self._unreadable(f"not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise self._unreadable(f"a JSON {type(data).__name__}, not an object")
        return Posted(data, latency, attempts, sum(waits))

    def _unreadable(self, problem: str) -> ModelCallFailed:
        reason = redact(f"{self.provider} sent a reply toolwire could not read: {problem}", [self._api_key])
        return ModelCallFailed(reason, status=200, retryable=False)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()
