"""MCP sampling: a tool server borrows the run's model while one of its calls runs (`sampling/createMessage`), only
when the user allowed that server (`--allow-sampling NAME`, `ServerSpec.sampling`).

A request is answered by the run's own model adapter, checked against the run's token and cost budgets first (as
the loop checks before each of its model calls; `maxTokens` is cut to what the budgets leave), counted in the run's
usage and cost and recorded in `RunState.sampling` by the loop (`RunContext.sampled`; saved with the run's next
checkpoint) and traced as a `chat` span
under the tool call's `execute_tool` span. It is refused, with an MCP error whose text says why, when the server was
not allowed, past `RunLimits.max_sampling_requests`, past a budget, with tools the run's model cannot be offered
(sampling_messages.py), or when no run can be charged (server_asks.py finds the calling run). The server's tools are
only offered to the model: a call of one goes back to the server, which runs it."""

from collections.abc import Callable
from dataclasses import dataclass

import mcp_types as types
from opentelemetry import context as otel_context

from toolwire_client import sampling_texts
from toolwire_client.models.base import ModelCallFailed
from toolwire_client.models.tokens import estimate_prompt
from toolwire_client.run import budget, exits
from toolwire_client.run.state import SamplingRecord
from toolwire_client.tools.sampling_messages import answer_text, reply_with_tools, sampling_messages, sampling_tools
from toolwire_client.tools.source import RunContext
from toolwire_otel.spans import chat_span, record_chat_response
from toolwire_shared.messages import Message
from toolwire_shared.tools import ToolSpec

Answer = types.CreateMessageResult | types.CreateMessageResultWithTools | types.ErrorData
STOP_REASONS = {"end_turn": "endTurn", "stop": "endTurn", "max_tokens": "maxTokens", "length": "maxTokens"}
"""The adapters' finish reasons as MCP's stopReason (others are passed on as they are)."""
REFUSALS_KEPT = 20
"""Refused requests recorded per run; later ones are refused all the same, and only noted in the server log."""


@dataclass(frozen=True)
class Asker:
    """The tool call a server's request came during: its run, its id (None: one of several of the run's calls) and
    the trace context of its `execute_tool` span (None: the current one)."""

    run: RunContext
    call_id: str | None
    trace: otel_context.Context | None = None


class Sampler:
    """Answers one server's sampling requests, for whichever run's call they come during."""

    def __init__(self, server: str, allowed: bool, note: Callable[[str], None]) -> None:
        self.server, self.allowed, self.note = server, allowed, note

    async def answer(self, params: types.CreateMessageRequestParams, asker: Asker | None, unknown: str = "") -> Answer:
        """The run's model's answer to `params`, or an MCP error saying why not. `unknown`: why no call could be
        found for the request, when `asker` is None."""
        if not self.allowed:
            return self._refused(asker, params, sampling_texts.sampling_not_allowed(self.server))
        if asker is None or asker.run.state is None or asker.run.model is None or asker.run.sampled is None:
            return _error(sampling_texts.sampling_no_run(self.server, unknown or "no run lends its model here"))
        state, lent, ledger = asker.run.state, asker.run.model, asker.run.sampled
        tools = self._tools(params, getattr(lent.model, "tool_choice", None))
        if isinstance(tools, str):
            return self._refused(asker, params, tools)
        cap = lent.limits.max_sampling_requests
        if sum(1 for r in state.sampling if r.refused is None) >= cap:
            return self._refused(asker, params, sampling_texts.sampling_cap(self.server, cap))
        if params.include_context not in (None, "none"):
            self.note(sampling_texts.sampling_context_ignored(self.server, params.include_context))
        messages = sampling_messages(params)
        try:
            before = f"a sampling request of the tool server '{self.server}'"
            prompt = estimate_prompt(messages, tools)
            left = budget.output_cap(lent.limits, state, prompt, lent.price_fn, before=before)
        except exits.RunExit as exc:
            return self._refused(asker, params, sampling_texts.sampling_over_budget(exc.why))
        max_tokens = params.max_tokens if left is None else max(1, min(params.max_tokens, left))
        record = self._record(asker, messages, max_tokens)  # before the call: concurrent requests see it in the cap
        token = otel_context.attach(asker.trace) if asker.trace is not None else None
        try:
            m = lent.model
            with chat_span(m, state.run_id, step_kind="sampling") as span:
                reply = await m.complete(messages, tools, max_output_tokens=max_tokens)
                record_chat_response(span, reply.usage, reply.response_model, reply.response_id, reply.finish_reason)
        except ModelCallFailed as exc:
            record.refused = sampling_texts.sampling_model_failed(exc.reason)
            return _error(record.refused, types.INTERNAL_ERROR)
        except BaseException:  # the call ended (its timeout, the run's) while the model was asked: not answered
            record.refused = sampling_texts.SAMPLING_CUT_OFF
            raise
        finally:
            if token is not None:
                otel_context.detach(token)
        cost = lent.price_fn(reply.usage) if lent.price_fn else None
        record.answer, record.usage, record.cost_usd = answer_text(reply), reply.usage, cost
        ledger.charge(record)
        answered = sum(1 for r in state.sampling if r.refused is None)
        self.note(sampling_texts.sampled(self.server, reply.usage.total_tokens, answered, cap))
        reason = STOP_REASONS.get(reply.finish_reason or "", reply.finish_reason)
        if params.tools:
            return reply_with_tools(reply, reply.response_model or m.model, reason)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=reply.message.text),
            model=reply.response_model or m.model,
            stop_reason=reason,
        )

    def _tools(self, params: types.CreateMessageRequestParams, run_choice: object) -> list[ToolSpec] | str:
        """The server's tools for the model (none with `toolChoice: none`), or why a request with tools is refused:
        a tool must be called (the run's model cannot be made to, per request), the run forces its own tool choice
        (`--tool-choice`), or a tool's name is one a provider refuses."""
        mode = params.tool_choice.mode if params.tool_choice else None
        if not params.tools or mode == "none":
            return []
        if mode == "required":
            return sampling_texts.sampling_tool_choice(self.server)
        if run_choice not in (None, "auto"):
            return sampling_texts.sampling_run_tool_choice(self.server, str(run_choice))
        return sampling_tools(self.server, params.tools)

    def _record(self, asker: Asker, messages: list[Message], max_tokens: int) -> SamplingRecord:
        state, ledger = asker.run.state, asker.run.sampled
        assert state is not None and ledger is not None
        record = SamplingRecord(
            server=self.server, call_id=asker.call_id, step=len(state.steps), asked=messages, max_tokens=max_tokens
        )
        ledger.record(record)
        return record

    def _refused(self, asker: Asker | None, params: types.CreateMessageRequestParams, why: str) -> types.ErrorData:
        """The refusal the server gets, kept in the run's record when the run is known: without the messages, and
        only the first REFUSALS_KEPT (a server that asks in a loop must not grow the saved run without end)."""
        state = asker.run.state if asker is not None and asker.run.sampled is not None else None
        if asker is not None and state is not None and sum(1 for r in state.sampling if r.refused) < REFUSALS_KEPT:
            self._record(asker, [], params.max_tokens).refused = why
        self.note(why)
        return _error(why)


def _error(text: str, code: int = types.INVALID_REQUEST) -> types.ErrorData:
    return types.ErrorData(code=code, message=text)
