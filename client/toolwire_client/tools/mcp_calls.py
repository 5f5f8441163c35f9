"""The tools/call protocol of McpSource on one live connection, in both eras: the handshake era's pushed questions
(elicitation/create, routed to the asking call) and 2025-11-25 tasks; the 2026-07-28 era's input-required rounds
(a question for a person pauses the run, sampling and roots are answered at once: server_asks.py) and its tasks
(tasks.py). A dropped connection is a ToolTransportError, after `lost(generation)` tells the source."""

import time
from collections.abc import Callable
from typing import Any, cast

import mcp_types as types
import pydantic
from mcp import Client, InputRequiredRoundsExceededError, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolwire_client import texts
from toolwire_client.tools import tasks
from toolwire_client.tools.elicitation import (
    MAX_ROUNDS,
    PushedQuestions,
    TaskQuestions,
    paused,
    saved_answer,
    wanted_of,
    wire_answer,
)
from toolwire_client.tools.server_asks import ServerAsks
from toolwire_client.tools.source import ToolRequest, ToolTransportError
from toolwire_shared import errors
from toolwire_shared.elicitation import CALL_TAG_META
from toolwire_shared.mcp_kit.errors import LOST, closed, no_answer
from toolwire_shared.results import ToolResult, failed, from_call_result

CallRound = types.CallToolResult | types.InputRequiredResult
CALL_ROUND: pydantic.TypeAdapter[CallRound] = pydantic.TypeAdapter(CallRound)
"""A tools/call's answer: its result, or (2026-07-28) the input it needs first (server_asks.py answers it)."""


class CallProtocol:
    """One server's tools/call, for whichever connection is live when a call is sent."""

    def __init__(self, name: str, asks: ServerAsks, lost: Callable[[int], None]) -> None:
        self.name, self.asks, self._lost = name, asks, lost
        self.questions = PushedQuestions()
        """Handshake-era questions (`elicitation/create`) routed to the call that asks (tools/elicitation.py)."""
        self.legacy_task_tools: set[str] = set()
        """Tools a handshake-era server runs only as 2025-11-25 tasks (it said it runs them)."""

    async def call(
        self, client: Client, generation: int, sent: ToolRequest, meta: types.RequestParamsMeta
    ) -> ToolResult:
        """One tools/call on `client`, with the answer to the question it asked before (if any); a question no one
        answers at once ends it as a result carrying the question (tools/elicitation.py)."""
        started = time.perf_counter()
        call, saved, on_elicit = sent.call, saved_answer(sent.run, sent.call.id), sent.run.on_elicit
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            tag = f"{sent.run.run_id}/{call.id}"
            tagged = cast(types.RequestParamsMeta, {**meta, CALL_TAG_META: tag})
            with self.questions.asking(tag, saved, on_elicit) as asking:
                answered = await self._send(client, generation, sent, tagged, started)
            if asking.wanted is not None:
                return paused(call.id, call.name, asking.wanted)
            if isinstance(answered, types.InputRequiredResult):  # not a handshake-era answer
                return failed(call.id, call.name, "tool_failed", texts.unanswerable(self.name, "out of its era"))
            return answered
        responses: types.InputResponses | None = None
        state: str | None = None
        if saved is not None and saved[0].era == "2026-07-28":
            responses, state = {saved[0].key: wire_answer(saved[1])}, saved[0].request_state
        for _ in range(MAX_ROUNDS):
            result = await self._send(client, generation, sent, meta, started, responses, state)
            if not isinstance(result, types.InputRequiredResult):
                return result
            wanted = wanted_of(result)
            if isinstance(wanted, str):
                return failed(call.id, call.name, "tool_failed", texts.unanswerable(self.name, wanted), since=started)
            if on_elicit is None:
                return paused(call.id, call.name, wanted)
            responses, state = {wanted.key: wire_answer(await on_elicit(wanted))}, result.request_state
        return failed(call.id, call.name, "tool_failed", texts.unanswerable(self.name, "it kept asking"), since=started)

    async def _send(
        self,
        client: Client,
        generation: int,
        sent: ToolRequest,
        meta: types.RequestParamsMeta,
        started: float,
        responses: types.InputResponses | None = None,
        state: str | None = None,
    ) -> ToolResult | types.InputRequiredResult:
        """One tools/call request; a dropped connection is ToolTransportError (and a restart)."""
        call, timeout_s, on_progress = sent.call, sent.timeout_s, sent.on_progress
        try:
            # The session's own request, not `Client.call_tool`: that one checks structuredContent itself and
            # raises, where the ToolBox's one check (output_check.py) makes a `bad_output` result the model reads.
            if call.name in self.legacy_task_tools and client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
                return await tasks.call_legacy(client.session, sent, dict(meta), started)
            if (task_id := tasks.saved_task(sent)) is not None:  # a crashed run's task: followed, never re-sent
                resumed = {"taskId": task_id, "status": "working"}
                answering = self._task_questions(sent, task_id)
                return await tasks.follow(
                    client.session, sent, resumed, started=started, resumed=True, on_input=answering
                )

            async def send(answers: types.InputResponses | None, state: str | None) -> dict[str, Any]:
                params = types.CallToolRequestParams(
                    name=call.name, arguments=call.arguments, input_responses=answers, request_state=state, _meta=meta
                )
                answer = await client.session.send_request(
                    types.CallToolRequest(params=params),
                    tasks.Raw,  # a result, an InputRequiredResult or a task handle (told apart here)
                    request_read_timeout_seconds=timeout_s,
                    progress_callback=on_progress,
                )
                return dict(answer.model_extra or {})

            async def next_round(answers: types.InputResponses | None, state: str | None) -> CallRound:
                return CALL_ROUND.validate_python(await send(answers, state))

            raw = await send(responses, state)
            if tasks.is_task(raw):
                if sent.run.note_task is not None:
                    await sent.run.note_task(call.id, raw["taskId"])
                answering = self._task_questions(sent, raw["taskId"])
                return await tasks.follow(client.session, sent, raw, started=started, on_input=answering)
            result = CALL_ROUND.validate_python(raw)
            if self.asks.takes(result):  # sampling and roots: answered at once, for this call's run
                result = await self.asks.answered(client.session, result, next_round, sent)
        except InputRequiredRoundsExceededError as exc:
            return failed(call.id, call.name, "tool_failed", errors.tool_failed(call.name, str(exc)), since=started)
        except MCPError as exc:
            if exc.error.code == types.REQUEST_TIMEOUT:
                return failed(call.id, call.name, "timeout", errors.timed_out(call.name, timeout_s), since=started)
            if closed(exc):
                self._lost(generation)
                raise ToolTransportError(f"the tool server '{self.name}' closed the connection") from exc
            if no_answer(exc):  # the connection stands (a proxy's 502/504): no restart, the outcome unknown
                raise ToolTransportError(f"the tool server '{self.name}' {texts.HTTP_ERROR_NO_RESULT}") from exc
            text = errors.tool_failed(call.name, exc.error.message)
            return failed(call.id, call.name, "tool_failed", text, since=started)
        except LOST as exc:
            self._lost(generation)
            raise ToolTransportError(f"the tool server '{self.name}' went away ({type(exc).__name__})") from exc
        if isinstance(result, types.InputRequiredResult):
            return result
        if not isinstance(result, types.CallToolResult):
            text = errors.tool_failed(call.name, f"it answered with a {type(result).__name__}, not a tool result")
            return failed(call.id, call.name, "tool_failed", text, since=started)
        return from_call_result(call.id, call.name, result, since=started)

    def _task_questions(self, sent: ToolRequest, task_id: str) -> TaskQuestions:
        """Who answers the questions of a task this call follows (tools/elicitation.py)."""
        return TaskQuestions(sent.run, sent.call.id, task_id, self.name, sent.run.on_elicit)
