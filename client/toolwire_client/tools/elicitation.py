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

- a call running as an MCP task (tools/tasks.py): the task stops in `input_required` and waits on the server, so
  nothing is sent again: `resume` follows the same task and answers it with `tasks/update` (`TaskQuestions`).

The server's question is matched to the call that asks by the tag a toolwire server echoes (`CALL_TAG_META`), else,
for another server, by being the only call in flight on the connection that may be asked; a question no call can
own is answered `cancel` and logged."""

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import mcp_types as types
from pydantic import TypeAdapter, ValidationError

from toolwire_client import texts
from toolwire_client.tools.source import RunContext
from toolwire_shared.elicitation import CALL_TAG_META, InputAnswer, InputWanted, OnElicit
from toolwire_shared.results import ToolResult, failed

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
    task_id: str | None = None,
) -> InputWanted:
    if isinstance(params, types.ElicitRequestURLParams):
        return InputWanted(
            key=key, mode="url", message=params.message, url=params.url, era=era, request_state=state,
            earlier=earlier or [], task_id=task_id,
        )  # fmt: skip
    schema = dict(params.requested_schema)
    return InputWanted(
        key=key, mode="form", message=params.message, requested_schema=schema, era=era, request_state=state,
        earlier=earlier or [], task_id=task_id,
    )  # fmt: skip


def paused(call_id: str, name: str, wanted: InputWanted) -> ToolResult:
    """The call waits for a person's answer to `wanted` (not a result the model reads: the run pauses)."""
    return ToolResult(call_id=call_id, name=name, content=texts.input_wanted(wanted.message), input_wanted=wanted)


_ELICIT = TypeAdapter(types.ElicitRequest)


@dataclass
class TaskQuestions:
    """The input handler of one followed task (tasks.follow's `on_input`): each `elicitation/create` it asks is
    answered from the answer `toolwire answer` saved for it (on resume), else by `on_elicit` at once, else the call
    pauses on it (the task waits on the server: nothing is cancelled). Anything else a task asks for (sampling,
    roots) fails the call: the caller cancels the task."""

    run: RunContext
    call_id: str
    task_id: str
    server: str
    on_elicit: OnElicit | None

    async def __call__(self, tool: str, requests: dict[str, Any]) -> dict[str, Any] | ToolResult:
        saved = saved_answer(self.run, self.call_id)
        responses: dict[str, Any] = {}
        for key, raw in requests.items():
            if saved is not None and saved[0].era == "task" and (saved[0].task_id, saved[0].key) == (self.task_id, key):
                responses[key] = saved[1].wire()
                continue
            try:
                request = _ELICIT.validate_python(raw)
            except ValidationError:
                method = raw.get("method") if isinstance(raw, dict) else None
                why = f"its task asked for a {str(method)[:60]} (toolwire answers elicitation only)"
                return failed(self.call_id, tool, "tool_failed", texts.unanswerable(self.server, why))
            wanted = _wanted(key, request.params, "task", task_id=self.task_id)
            if self.on_elicit is not None:
                responses[key] = (await self.on_elicit(wanted)).wire()
            elif responses:  # send what is answered; the task asks the rest again on the next poll
                break
            else:
                return paused(self.call_id, tool, wanted)
        return responses


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
