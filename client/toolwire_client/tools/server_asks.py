"""What a tool server asks of the client while one of its calls runs (MCP sampling and roots), in both protocol
eras, and which call (so which run) asked.

- 2026-07-28: the server answers the `tools/call` with an `InputRequiredResult`; `answered` drives the SDK's
  multi-round-trip loop for exactly that call, so the run is the call's own. The answers go back in the next round;
  a refusal cannot (an input response is never an error), so it ends the call with that text, which the model reads.
- Handshake era: the server sends `sampling/createMessage` or `roots/list` as requests of its own, which say nothing
  of the call they belong to. They are answered for the call in flight on this connection (`running` keeps them);
  with several calls of one run in flight the run is known but not the call; with calls of several runs (a shared
  connection) the request is refused.

The capabilities are advertised only for what was turned on (`client_options`); a request for the rest is refused
with a text saying how the user turns it on (`attach`)."""

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import count
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext, ClientSession
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from opentelemetry import context as otel_context

from toolwire_client import sampling_texts
from toolwire_client.tools.roots import roots_result
from toolwire_client.tools.sampling import Answer, Asker, Sampler
from toolwire_client.tools.source import ToolRequest
from toolwire_shared.mcp_kit.sdk import run_input_required_driver, set_server_request_callbacks

Round = types.CallToolResult | types.InputRequiredResult
Resend = Callable[[types.InputResponses | None, str | None], Awaitable[Round]]


@dataclass(frozen=True)
class _InFlight:
    request: ToolRequest
    trace: otel_context.Context


class ServerAsks:
    """One server's sampling and roots: whether each is offered, and the answers."""

    def __init__(
        self, server: str, *, sampling: bool = False, roots: list[str] | None = None, note: Callable[[str], None]
    ) -> None:
        self.server, self.roots = server, list(roots or [])
        self.sampler = Sampler(server, sampling, note)
        self._in_flight: dict[int, _InFlight] = {}
        self._ids = count()

    @property
    def key(self) -> tuple[bool, tuple[str, ...]]:
        """What a shared connection must agree on: the capabilities are the connection's."""
        return self.sampler.allowed, tuple(self.roots)

    def client_options(self) -> dict[str, Any]:
        """`mcp.Client` arguments: a callback (which advertises its capability) only for what is turned on."""
        options: dict[str, Any] = {}
        if self.sampler.allowed:
            options["sampling_callback"] = self._sample
            options["sampling_capabilities"] = types.SamplingCapability(tools=types.SamplingToolsCapability())
        if self.roots:
            options["list_roots_callback"] = self._list_roots
        return options

    def attach(self, client: Client) -> None:
        """On a handshake-era session, a request for what is not offered gets our refusal, not the SDK's bare "not
        supported" (its capability was never advertised: set after `initialize`, the callbacks change no
        advertisement; in the 2026-07-28 era `answered` routes every request itself)."""
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return
        set_server_request_callbacks(client.session, sampling=self._sample, list_roots=self._list_roots)

    @contextmanager
    def running(self, request: ToolRequest) -> Iterator[None]:
        """While `request` is on the wire: a handshake-era server's request is answered for it (and traced under the
        trace context current here, its `execute_tool` span)."""
        key = next(self._ids)
        self._in_flight[key] = _InFlight(request, otel_context.get_current())
        try:
            yield
        finally:
            del self._in_flight[key]

    @staticmethod
    def takes(result: Round) -> bool:
        """True for a 2026-07-28 round that asks only for what this answers at once (sampling, roots); a question for
        a person (elicitation) goes to tools/elicitation.py, which may pause the run."""
        if not isinstance(result, types.InputRequiredResult) or not result.input_requests:
            return False
        return all(
            isinstance(r, types.CreateMessageRequest | types.ListRootsRequest) for r in result.input_requests.values()
        )

    async def answered(self, session: ClientSession, first: Round, resend: Resend, request: ToolRequest) -> Round:
        """A 2026-07-28 call's result once its input requests are answered (the SDK's round loop, at most its
        default number of rounds), for `request`'s own run; a refusal raises MCPError with its text."""
        if not isinstance(first, types.InputRequiredResult):
            return first
        asker = Asker(request.run, request.call.id)

        async def dispatch(key: str, asked: types.InputRequest) -> types.InputResponse | types.ErrorData:
            if isinstance(asked, types.CreateMessageRequest):
                return await self.sampler.answer(asked.params, asker)
            if isinstance(asked, types.ListRootsRequest):
                return self._roots()
            meta = asked.params.meta if asked.params else None  # elicitation: the SDK's callback table
            return await session.dispatch_input_request(
                ClientRequestContext(session=session, request_id=key, meta=meta), asked
            )

        return await run_input_required_driver(first, dispatch=dispatch, retry=resend)

    # ---- handshake-era requests -----------------------------------------------------------------------------
    async def _sample(self, context: ClientRequestContext, params: types.CreateMessageRequestParams) -> Answer:
        asker, unknown = self._asker()
        return await self.sampler.answer(params, asker, unknown)

    async def _list_roots(self, context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
        return self._roots()

    def _roots(self) -> types.ListRootsResult | types.ErrorData:
        if not self.roots:
            return types.ErrorData(code=types.INVALID_REQUEST, message=sampling_texts.roots_not_given(self.server))
        return roots_result(self.roots)

    def _asker(self) -> tuple[Asker | None, str]:
        """The call a handshake-era request belongs to, or why none can be told."""
        calls = list(self._in_flight.values())
        runs = {c.request.run.run_id for c in calls}
        if not calls:
            return None, "none of its tool calls was running"
        if len(runs) > 1:
            return None, f"calls of {len(runs)} runs were in flight on one shared connection"
        first = calls[0]
        call_id = first.request.call.id if len(calls) == 1 else None
        return Asker(first.request.run, call_id, first.trace), ""
