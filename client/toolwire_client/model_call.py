"""One model call of a run, in its chat span: the reply (its call ids made unique) appended to the messages, its
tokens and cost counted, and the step it opens recorded on the state. A failed call is the `model_failed` exit."""

from collections.abc import Callable, Sequence
from dataclasses import replace

from toolwire_client.models.base import Model, ModelCallFailed
from toolwire_client.models.token_split import TokenSplit
from toolwire_client.run import exits
from toolwire_client.run.budget import PriceFn
from toolwire_client.run.call_ids import unique_call_ids
from toolwire_client.run.state import RunState, StepKind, StepRecord
from toolwire_otel.content import record_chat_content
from toolwire_otel.spans import chat_span, record_chat_response, record_token_split, telemetry_off
from toolwire_shared.messages import Message
from toolwire_shared.tools import ToolSpec

Split = Callable[[list[Message], Sequence[ToolSpec], int], TokenSplit]
"""(the messages sent, the tools offered, the input tokens reported) -> where those tokens went."""


async def ask_model(
    model: Model,
    specs: list[ToolSpec],
    state: RunState,
    cap: int | None,
    kind: StepKind,
    price_fn: PriceFn | None,
    sent: list[Message] | None = None,
    split_for: Callable[[RunState], Split] | None = None,
) -> StepRecord:
    """Send the run's messages, or the view of them `sent` (run/context_view.py), and the tools offered (`cap`: the
    most output tokens the budgets leave, if any); `split_for` the run's counter of where a request's input tokens
    went (asked for only by a recording span). The reply joins the run's list, except a compact step's (a side
    exchange whose text is a summary)."""
    m = model
    messages = state.messages if sent is None else sent
    step_kind = kind if kind != "act" else None
    recorded = not telemetry_off()  # else no span or metric would keep what the records below make
    with chat_span(m, state.run_id, step=len(state.steps) + 1, step_kind=step_kind) as span:
        try:
            if cap is None:
                reply = await m.complete(messages, specs)
            else:
                reply = await m.complete(messages, specs, max_output_tokens=cap)
        except ModelCallFailed as exc:
            raise exits.ModelFailed(f"stopped because the model call failed: {exc.reason}") from exc
        if recorded:
            record_chat_response(span, reply.usage, reply.response_model, reply.response_id, reply.finish_reason)
            if split_for is not None and span.is_recording():  # only for a trace; `trace show` counts afresh
                tokens = split_for(state)(messages, specs, reply.usage.input_tokens)
                record_token_split(span, tokens.parts(), tokens.scaled)
            record_chat_content(span, messages, specs, reply.message, reply.finish_reason)
    message = unique_call_ids(reply.message)
    if message is not reply.message:  # the reply stays as the adapter made it unless an id had to change
        reply = replace(reply, message=message)
    if kind != "compact":
        state.messages.append(reply.message)
    state.usage = state.usage + reply.usage
    cost = price_fn(reply.usage) if price_fn else None
    if cost is not None:
        state.cost_usd = (state.cost_usd or 0.0) + cost
    step = StepRecord(
        index=len(state.steps) + 1,
        kind=kind,
        model_text=reply.message.text,
        tool_calls=list(reply.message.tool_calls),
        usage=reply.usage,
        usage_so_far=state.usage,
        cost_usd=cost,
        model_latency_s=reply.latency_s,
        model_reply=reply,
        plan_step=state.plan.position() if state.plan is not None and kind != "plan" else None,
    )
    state.steps.append(step)
    return step
