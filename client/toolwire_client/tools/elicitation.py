"""A tool server's questions to a person (MCP elicitation) as McpSource hears them, in both protocol eras.

A question pauses the call unless the run has an `on_elicit` callback: the call's result then carries the question
(`ToolResult.input_wanted`), the run saves it on the pending call and waits (calls.py) for `toolwire answer`, and
`resume` sends the call again with the saved answer:

- 2026-07-28: the server ended the call with an `InputRequiredResult`, so nothing ran past the question. The call is
  sent again with `inputResponses` (the answer, under the server's key) and the server's sealed `requestState`,
  byte for byte; the server checks that state, so a changed one is refused, never believed.
- handshake era: the question is a server-to-client `elicitation/create` in the middle of the call. With no one to
  answer, it is answered `cancel` (the tool sees a cancel and ends; its result is dropped) and the question is
  saved. On the resend the tool runs again from its start and asks again; its questions are answered in order from
  the saved answers (`InputWanted.earlier` and the person's answer), the next new one pauses again. The tool runs
  once per question up to the answer, so a handshake-era tool should do its side effects after its questions (and
  an idempotent one gets the same idempotency key on every send).

The server's question is matched to the call that asks by the tag a toolwire server echoes (`CALL_TAG_META`), else,
for another server, by being the only call in flight on the connection that may be asked; a question no call can
own is answered `cancel` and logged."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types

from toolwire_client.tools.source import RunContext
from toolwire_shared.elicitation import CALL_TAG_META, InputAnswer, InputWanted, OnElicit

log = logging.getLogger("toolwire.client.mcp")

MAX_ROUNDS = 16
"""2026-07-28: questions one call may ask through `on_elicit` before it is stopped (a server that never ends)."""
CANCEL = types.ElicitResult(action="cancel")


def saved_answer(run: RunContext, call_id: str) -> tuple[InputWanted, InputAnswer] | None:
    """The question this call asked before and the answer the person gave it (saved on the run's pending call by
    `toolwire answer`), to send with the call again; None on a first send."""
    if run.state is None:
        return None
    for pending in run.state.pending:
        if pending.call.id == call_id and pending.input is not None and pending.answer is not None:
            return pending.input, pending.answer
    return None


def wanted_of(result: types.InputRequiredResult) -> InputWanted | str:
    """The one elicitation a 2026-07-28 server asks for, or why toolwire cannot take it (a sampling or roots
    request, several at once: toolwire answers one question at a time)."""
    requests = result.input_requests or {}
    if len(requests) != 1:
        return f"it asked for {len(requests)} inputs at once (toolwire answers one question at a time)"
    key, request = next(iter(requests.items()))
    if not isinstance(request, types.ElicitRequest):
        return f"it asked for a {request.method} (toolwire answers elicitation only)"
    return _wanted(key, request.params, "2026-07-28", result.request_state)


def _wanted(
    key: str,
    params: types.ElicitRequestFormParams | types.ElicitRequestURLParams,
    era: Any,
    state: str | None = None,
    earlier: list[InputAnswer] | None = None,
) -> InputWanted:
    if isinstance(params, types.ElicitRequestURLParams):
        return InputWanted(key=key, mode="url", message=params.message, url=params.url, era=era, earlier=earlier or [])
    schema = dict(params.requested_schema)
    return InputWanted(
        key=key, mode="form", message=params.message, requested_schema=schema, era=era, request_state=state,
        earlier=earlier or [],
    )  # fmt: skip


def wire_answer(answer: InputAnswer) -> types.ElicitResult:
    return types.ElicitResult.model_validate(answer.wire())


@dataclass
class Asking:
    """One handshake-era call that may be asked: the answers to replay in order, who answers a new question, and
    the question it paused on."""

    answers: list[InputAnswer]
    on_elicit: OnElicit | None
    asked: int = 0
    wanted: InputWanted | None = None

    async def answer(self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams) -> types.ElicitResult:
        n, self.asked = self.asked, self.asked + 1
        if n < len(self.answers):
            return wire_answer(self.answers[n])
        question = _wanted(str(n + 1), params, "handshake", earlier=list(self.answers[:n]))
        if self.wanted is not None:  # it asks on after the cancel: it is not listening to the answer
            return CANCEL
        if self.on_elicit is not None:
            given = await self.on_elicit(question)
            self.answers.append(given)
            return wire_answer(given)
        self.wanted = question
        return CANCEL


@dataclass
class PushedQuestions:
    """The handshake-era elicitation callback of one connection: routes each question to the call that asks."""

    calls: dict[str, Asking] = field(default_factory=dict)

    @contextmanager
    def asking(
        self, tag: str, saved: tuple[InputWanted, InputAnswer] | None, on_elicit: OnElicit | None
    ) -> Iterator[Asking]:
        answers = [*saved[0].earlier, saved[1]] if saved is not None and saved[0].era == "handshake" else []
        self.calls[tag] = asking = Asking(answers, on_elicit)
        try:
            yield asking
        finally:
            del self.calls[tag]

    async def callback(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        tag = (params.meta or {}).get(CALL_TAG_META)
        asking = self.calls.get(tag) if isinstance(tag, str) else None
        if asking is None and tag is None and len(self.calls) == 1:
            asking = next(iter(self.calls.values()))
        if asking is None:
            log.warning("a question no call in flight owns was answered cancel: %s", params.message)
            return CANCEL
        return await asking.answer(params)
