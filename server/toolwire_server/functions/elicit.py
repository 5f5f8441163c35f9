"""A tool asks the person behind the client a question while it runs (MCP elicitation: a form, or a URL to visit).

`await ctx.elicit(message, schema)` / `await ctx.elicit_url(message, url)` return an `Elicited`: accepted (with the
form's content, checked against the schema), declined, cancelled, or malformed (content that does not fit: the
tool decides what to do). How the question travels depends on the connection's era, and is hidden here:

- 2026-07-28 (no session): the call ends with an `InputRequiredResult`; the client calls again with
  `inputResponses`, and the tool runs again from its start: each question already answered is answered from the
  request (this round) or from the `requestState` (earlier rounds), which the SDK's `RequestStateBoundary` seals
  (AES-GCM, bound to the tool, its arguments and an expiry), so a client cannot forge or alter an earlier answer.
- handshake era: the SDK's server-to-client `elicitation/create`, awaited mid-call (the call's tag echoed in its
  `_meta`, so a client with several calls in flight knows which one asks).
- a call running as a task (tasks/engine.py): the task parks in `input_required` with the question, and the tool
  waits, running on, for the `tasks/update` that answers it (on any replica: the task store carries it).

A client that declared no elicitation capability (or no URL mode, for a URL), and a tool that runs where no client
can be asked (a worker process, `isolation="process"`), get `ElicitationUnavailable` at once: a readable error
result unless the tool catches it, never a hang."""

import json
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import jsonschema
import mcp_types as types
from mcp.server.request_state import RequestStateSecurity
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolwire_shared.elicitation import CALL_TAG_META

log = logging.getLogger("toolwire.server")

STATE_KEY_ENV = "TOOLWIRE_STATE_KEY"
"""The secret (32 bytes or more) that seals the 2026-07-28 `requestState`: set by whoever runs the server, the same
on every replica, so a state minted before a restart or by another replica is still accepted. Unset: a key made at
start-up, so a call that asks two questions or more cannot be answered across a server restart."""
STATE_TTL_S = 7 * 24 * 3600.0
"""How long an answered question stays valid: a person may answer a paused run days later."""


def state_security() -> RequestStateSecurity:
    """The request-state policy of a server: the operator's key (TOOLWIRE_STATE_KEY), else one of this process."""
    key = os.environ.get(STATE_KEY_ENV)
    if not key:
        return RequestStateSecurity.ephemeral(ttl=STATE_TTL_S)
    try:
        return RequestStateSecurity(keys=[key], ttl=STATE_TTL_S)
    except ValueError as exc:
        raise ValueError(f"{STATE_KEY_ENV}: {exc}") from None


Outcome = Literal["accept", "decline", "cancel", "malformed"]


@dataclass(frozen=True)
class Elicited:
    """The answer a tool gets. `content` only when accepted in form mode; `problem` says what was wrong with a
    malformed answer (the content, as sent, is kept in `content`)."""

    action: Outcome
    content: dict[str, Any] | None = None
    problem: str | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


class ElicitationUnavailable(Exception):
    """Nobody can be asked on this call: the message says why (and what to do instead)."""


class Asker(Protocol):
    @property
    def capabilities(self) -> types.ClientCapabilities | None:
        """What this call's client declared it can do (None: nothing, or no client)."""

    async def ask(self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams) -> Elicited: ...


@dataclass(frozen=True)
class NoOneToAsk:
    """Where no client can answer: every question raises ElicitationUnavailable with `why`."""

    why: str
    capabilities: types.ClientCapabilities | None = None

    async def ask(self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams) -> Elicited:
        raise ElicitationUnavailable(self.why)


class InputNeeded(Exception):
    """Raised through the tool in the 2026-07-28 era: the call ends as `result` (an InputRequiredResult)."""

    def __init__(self, result: types.InputRequiredResult):
        super().__init__("input required")
        self.result = result


def _unsupported(params: types.ElicitRequestFormParams | types.ElicitRequestURLParams) -> str:
    mode = "a URL" if isinstance(params, types.ElicitRequestURLParams) else "a form"
    return (
        f"the client cannot answer questions ({mode}: it declared no such elicitation capability); "
        "call the tool with what it needs in its arguments instead"
    )


def can_answer(
    capabilities: types.ClientCapabilities | None,
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams,
) -> bool:
    """Did the client declare it can answer this mode? (A bare `elicitation: {}` is form mode, as MCP says.)"""
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    if isinstance(params, types.ElicitRequestURLParams):
        return elicitation.url is not None
    return elicitation.form is not None or elicitation.url is None


def answer_of(raw: object, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams) -> Elicited:
    """The client's ElicitResult (a mapping, as it came) as the tool gets it; anything that is not one, or form
    content that does not fit the requested schema, is `malformed` with the reason."""
    if not isinstance(raw, Mapping):
        return Elicited("malformed", problem="the answer is not an object")
    action, content = raw.get("action"), raw.get("content")
    if action in ("decline", "cancel"):
        return Elicited(action)
    if action != "accept":
        return Elicited("malformed", problem=f"unknown action {json.dumps(action)[:40]}")
    if isinstance(params, types.ElicitRequestURLParams):
        return Elicited("accept")
    if not isinstance(content, Mapping):
        return Elicited("malformed", problem="an accepted form answer carries no content object")
    content = dict(content)
    errors = sorted(jsonschema.Draft202012Validator(params.requested_schema).iter_errors(content), key=str)
    if errors:
        where = ".".join(str(p) for p in errors[0].absolute_path)
        return Elicited("malformed", content, f"{where + ': ' if where else ''}{errors[0].message}")
    return Elicited("accept", content)


@dataclass
class RoundTrips:
    """2026-07-28: the answers of this call so far (from the sealed state and this round's `inputResponses`), and
    the question that ends the round when one is not answered yet. Keys are the question's place in the call
    (`q1`, `q2`, ...): the tool asks them in the same order each time it runs again."""

    capabilities: types.ClientCapabilities | None
    responses: Mapping[str, Any]
    answered: dict[str, Any] = field(default_factory=dict)
    asked: int = 0

    @classmethod
    def of(cls, capabilities: types.ClientCapabilities | None, params: Mapping[str, Any] | None) -> "RoundTrips":
        """From the raw params: the state is plaintext here (the boundary unsealed and checked it, or refused)."""
        params = params or {}
        state, responses = params.get("requestState"), params.get("inputResponses")
        earlier = json.loads(state) if isinstance(state, str) else {}
        return cls(
            capabilities,
            responses if isinstance(responses, Mapping) else {},
            earlier if isinstance(earlier, dict) else {},
        )

    async def ask(self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams) -> Elicited:
        self.asked += 1
        key = f"q{self.asked}"
        if key in self.answered:
            return answer_of(self.answered[key], params)
        if key in self.responses:
            self.answered[key] = self.responses[key]
            return answer_of(self.responses[key], params)
        if not can_answer(self.capabilities, params):
            raise ElicitationUnavailable(_unsupported(params))
        state = json.dumps(self.answered, separators=(",", ":")) if self.answered else None
        raise InputNeeded(
            types.InputRequiredResult(input_requests={key: types.ElicitRequest(params=params)}, request_state=state)
        )


@dataclass(frozen=True)
class PushAsker:
    """Handshake era: the SDK's server-to-client request on the call's session, related to the call (so it rides
    the call's own stream on HTTP), the client's tag for the call echoed in its `_meta`."""

    session: Any
    request_id: Any
    tag: str | None

    @property
    def capabilities(self) -> types.ClientCapabilities | None:
        declared: types.ClientCapabilities | None = self.session.client_capabilities
        return declared

    async def ask(self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams) -> Elicited:
        if not can_answer(self.capabilities, params):
            raise ElicitationUnavailable(_unsupported(params))
        if self.tag is not None:
            params = params.model_copy(update={"meta": {CALL_TAG_META: self.tag}})
        if isinstance(params, types.ElicitRequestURLParams) and params.elicitation_id is None:
            params = params.model_copy(update={"elicitation_id": uuid.uuid4().hex})
        result = await self.session.send_request(
            types.ElicitRequest(params=params),
            types.ElicitResult,
            metadata=ServerMessageMetadata(related_request_id=self.request_id),
        )
        return answer_of(result.model_dump(mode="json", exclude_none=True), params)


AskFn = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
"""In a task: park it in `input_required` with these requests (key -> {"method": ..., "params": ...}), return the
answers by key (tasks/engine.py); where elicitation reaches a task's client."""


@dataclass
class TaskAsker:
    """In a task: each question is one `input_required` round of the task (keys `q1`, `q2`, ... unique for its
    life, as the task store wants), answered by the client's `tasks/update`; the tool is not run again."""

    ask_fn: AskFn
    capabilities: types.ClientCapabilities | None
    asked: int = 0

    async def ask(self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams) -> Elicited:
        if not can_answer(self.capabilities, params):
            raise ElicitationUnavailable(_unsupported(params))
        if isinstance(params, types.ElicitRequestURLParams) and params.elicitation_id is None:
            params = params.model_copy(update={"elicitation_id": uuid.uuid4().hex})
        self.asked += 1
        key = f"q{self.asked}"
        request = types.ElicitRequest(params=params).model_dump(by_alias=True, exclude_none=True, mode="json")
        answers = await self.ask_fn({key: request})
        return answer_of(answers.get(key), params)


def asker_of(ctx: Any, tag: str | None = None) -> Asker:
    """How the handler of request `ctx` (a tools/call, a prompts/get) asks the client a question: in rounds
    (2026-07-28) or by a request on the session, tagged with the client's `tag` for the call."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return RoundTrips.of(ctx.session.client_capabilities, ctx.params)
    return PushAsker(ctx.session, ctx.request_id, tag)


def form(message: str, schema: dict[str, Any]) -> types.ElicitRequestFormParams:
    """A form question; MCP allows a flat object of primitive properties only (the SDK checks the shape)."""
    return types.ElicitRequestFormParams(message=message, requested_schema=schema)


def url(message: str, address: str) -> types.ElicitRequestURLParams:
    return types.ElicitRequestURLParams(message=message, url=address)
