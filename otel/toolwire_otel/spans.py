"""The spans of a run: invoke_agent > chat / execute_tool > (mcp client span) > server span.

Uses the global tracer provider; with none installed every call here is a cheap no-op. A run's tracing is decided
when it starts (its invoke_agent span): a provider installed while it runs traces the runs started after. The
helpers also feed the metrics in metrics.py (only when a MeterProvider is installed), so the loop gets both from one
set of calls.
"""

import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode

from toolwire_otel import attributes as semconv
from toolwire_otel import metrics as genai_metrics
from toolwire_otel.content import record_agent_content, record_chat_content, record_tool_content
from toolwire_shared.results import ToolResult
from toolwire_shared.usage import Usage

__all__ = [
    "agent_span",
    "chat_span",
    "record_agent_content",
    "record_chat_content",
    "record_chat_response",
    "record_mcp",
    "record_retry",
    "record_run_end",
    "record_tool_content",
    "record_tool_result",
    "record_usage",
    "span_ref",
    "tool_span",
    "trace_id_hex",
]

_tracer = trace.get_tracer("toolwire")


@dataclass
class _ChatCall:
    model: semconv.ChatModel
    response_model: str | None = None


_current_chat: ContextVar[_ChatCall | None] = ContextVar("toolwire_chat", default=None)


def _off() -> bool:
    """No SDK provider installed and no metrics: the helpers skip the API's no-op machinery entirely (which
    alone costs tens of µs per span through its nested context managers)."""
    global _provider_seen
    if _provider_seen:
        return False
    _provider_seen = not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
    return not _provider_seen and not genai_metrics.enabled()


_provider_seen = False
"""Once an SDK provider is installed it stays (the API allows one per process), so the check stops then."""

_untraced_run: ContextVar[bool] = ContextVar("toolwire_untraced_run", default=False)
"""True inside a run whose invoke_agent span found tracing and metrics off: its chat and tool spans are off too,
without asking again (a provider looked up costs ~1 us a span, most of it os.environ's KeyError). A run's tracing
is decided when it starts, as its span tree is: a provider installed mid-run traces the runs started after it."""


def telemetry_off() -> bool:
    """No span or metric made here would keep anything (tracing and metrics off): a caller on the hot path may skip
    its span and its records altogether, as the helpers themselves would."""
    return _untraced_run.get() or _off()


def _error_type(exc: BaseException) -> str:
    return type(exc).__name__


def trace_id_hex(span: Span) -> str | None:
    """The 32-hex trace id of a recording span (for RunState.trace_id), None when tracing is off."""
    ctx = span.get_span_context()
    return f"{ctx.trace_id:032x}" if ctx.is_valid else None


def span_ref(span: Span) -> str | None:
    """'<trace id>-<span id>' of a recording span: store it with a run so a later resume can link back to it."""
    ctx = span.get_span_context()
    return f"{ctx.trace_id:032x}-{ctx.span_id:016x}" if ctx.is_valid else None


def _link(ref: str | None) -> list[trace.Link]:
    """A link to an earlier invoke_agent span from span_ref(); a bare 32-hex trace id links to that trace."""
    if not ref:
        return []
    trace_hex, _, span_hex = ref.partition("-")
    try:
        trace_id, span_id = int(trace_hex, 16), int(span_hex or "1", 16)
    except ValueError:
        return []
    ctx = trace.SpanContext(trace_id, span_id, is_remote=True, trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED))
    return [trace.Link(ctx, {"toolwire.link": "resumed_from"})] if ctx.is_valid else []


class _Current:
    """One span, current for a `with` block: what the SDK's start_as_current_span does, without its two generator
    layers (a step makes two spans). An exception leaving the block is recorded as the SDK records it, with its type
    as error.type; `on_end(error type or None)` runs last (the metrics)."""

    __slots__ = ("_on_end", "_span", "_token")

    def __init__(
        self,
        name: str,
        kind: SpanKind,
        attrs: dict[str, Any],
        on_end: Callable[[str | None], None] | None = None,
        links: list[Link] | None = None,
    ) -> None:
        self._span = _tracer.start_span(name, kind=kind, attributes=attrs, links=links)
        self._token = otel_context.attach(trace.set_span_in_context(self._span))
        self._on_end = on_end

    def __enter__(self) -> Span:
        return self._span

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        error = None
        try:
            if exc is not None:
                error = _error_type(exc)
                if self._span.is_recording():
                    self._span.set_attribute(semconv.ERROR_TYPE, error)
                    self._span.record_exception(exc)
                    self._span.set_status(Status(StatusCode.ERROR, f"{error}: {exc}"))
        finally:
            otel_context.detach(self._token)
            self._span.end()
            if self._on_end is not None:
                self._on_end(error)


class _NoSpan:
    """What the span helpers give with tracing off: the API's invalid span, for nothing."""

    def __enter__(self) -> Span:
        return trace.INVALID_SPAN

    def __exit__(self, *exc: object) -> None:
        return None


class _UntracedRun:
    """agent_span with tracing off: the invalid span, and the run's chat and tool spans off without asking."""

    __slots__ = ("_token",)

    def __enter__(self) -> Span:
        self._token = _untraced_run.set(True)
        return trace.INVALID_SPAN

    def __exit__(self, *exc: object) -> None:
        _untraced_run.reset(self._token)


_NO_SPAN = _NoSpan()
SpanScope = _Current | _NoSpan | _UntracedRun


def agent_span(agent_name: str, run_id: str, model: str | None = None, *, resumed_from: str | None = None) -> SpanScope:
    """The root of a run. `resumed_from` (span_ref() of the earlier invoke_agent span, or its trace id) links a
    resumed run to the trace where it paused."""
    if _off():
        return _UntracedRun()
    attrs: dict[str, str] = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT,
        semconv.GEN_AI_AGENT_NAME: agent_name,
        semconv.GEN_AI_AGENT_ID: agent_name,
        semconv.GEN_AI_CONVERSATION_ID: run_id,
    }
    if model:
        attrs[semconv.GEN_AI_REQUEST_MODEL] = model
    started = time.perf_counter()

    def ended(error: str | None) -> None:
        genai_metrics.record_agent_duration(agent_name, time.perf_counter() - started, error)

    name = f"{semconv.OP_INVOKE_AGENT} {agent_name}"
    return _Current(name, SpanKind.INTERNAL, attrs, ended, links=_link(resumed_from))


def record_run_end(span: Span, usage: Usage, status: str, stop_reason: str | None) -> None:
    """Totals and outcome on the invoke_agent span; a failed run (model gave up, crash) marks it ERROR."""
    record_usage(span, usage)
    span.set_attribute(semconv.TOOLWIRE_RUN_STATUS, status)
    if stop_reason:
        span.set_attribute(semconv.TOOLWIRE_STOP_REASON, stop_reason)
    if status == "failed":
        span.set_attribute(semconv.ERROR_TYPE, "run_failed")
        span.set_status(Status(StatusCode.ERROR, (stop_reason or "")[:200]))


def chat_span(
    model: semconv.ChatModel, run_id: str, *, step: int | None = None, step_kind: str | None = None
) -> SpanScope:
    """One model call; `step` and `step_kind` (a review or plan call) go in with the rest at the start."""
    if telemetry_off():
        return _NO_SPAN
    attrs: dict[str, Any] = {
        **semconv.chat(model),
        semconv.GEN_AI_CONVERSATION_ID: run_id,
        **semconv.server(model.server_address, model.server_port),
    }
    if step is not None:
        attrs[semconv.TOOLWIRE_STEP] = step
    if step_kind is not None:
        attrs[semconv.TOOLWIRE_STEP_KIND] = step_kind
    call = _ChatCall(model)
    token = _current_chat.set(call)
    started = time.perf_counter()

    def ended(error: str | None) -> None:
        _current_chat.reset(token)
        duration_s = time.perf_counter() - started
        genai_metrics.record_chat_duration(model, duration_s, response_model=call.response_model, error_type=error)

    return _Current(f"{semconv.OP_CHAT} {model.model}", SpanKind.CLIENT, attrs, ended)


def _usage_attributes(usage: Usage) -> dict[str, int]:
    return {
        semconv.GEN_AI_USAGE_INPUT_TOKENS: usage.input_tokens,
        semconv.GEN_AI_USAGE_OUTPUT_TOKENS: usage.output_tokens,
        semconv.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: usage.cache_read_tokens,
        semconv.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS: usage.cache_write_tokens,
    }


def record_usage(span: Span, usage: Usage) -> None:
    span.set_attributes(_usage_attributes(usage))


def record_chat_response(
    span: Span, usage: Usage, response_model: str | None, response_id: str | None, finish_reason: str | None
) -> None:
    if not span.is_recording():
        _chat_metrics(usage, response_model)
        return
    attrs: dict[str, Any] = _usage_attributes(usage)
    if response_model:
        attrs[semconv.GEN_AI_RESPONSE_MODEL] = response_model
    if response_id:
        attrs[semconv.GEN_AI_RESPONSE_ID] = response_id
    if finish_reason:
        attrs[semconv.GEN_AI_RESPONSE_FINISH_REASONS] = (finish_reason,)
    span.set_attributes(attrs)  # one call: the SDK takes its attribute lock once
    _chat_metrics(usage, response_model)


def record_token_split(span: Span, parts: dict[str, int], scaled: bool) -> None:
    """Where a request's input tokens went, by part (system, tools, history, results), on its chat span."""
    if not span.is_recording():
        return
    attrs: dict[str, Any] = {f"{semconv.TOOLWIRE_INPUT_TOKENS}.{part}": tokens for part, tokens in parts.items()}
    attrs[f"{semconv.TOOLWIRE_INPUT_TOKENS}.scaled"] = scaled
    span.set_attributes(attrs)


def _chat_metrics(usage: Usage, response_model: str | None) -> None:
    call = _current_chat.get()
    if call is not None:
        call.response_model = response_model
        genai_metrics.record_token_usage(call.model, usage, response_model=response_model)


def record_retry(attempt: int, reason: str, wait_s: float) -> None:
    """An event on the current (chat) span: why the model call is tried again and how long we wait."""
    trace.get_current_span().add_event(
        semconv.TOOLWIRE_RETRY_EVENT,
        {
            semconv.TOOLWIRE_RETRY_ATTEMPT: attempt,
            semconv.TOOLWIRE_RETRY_REASON: reason,
            semconv.TOOLWIRE_RETRY_WAIT_S: wait_s,
        },
    )


def tool_span(tool_name: str, call_id: str, run_id: str) -> SpanScope:
    if telemetry_off():
        return _NO_SPAN
    attrs = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL,
        semconv.GEN_AI_TOOL_NAME: tool_name,
        semconv.GEN_AI_TOOL_CALL_ID: call_id,
        semconv.GEN_AI_TOOL_TYPE: "function",
        semconv.GEN_AI_CONVERSATION_ID: run_id,
    }
    return _Current(f"{semconv.OP_EXECUTE_TOOL} {tool_name}", SpanKind.INTERNAL, attrs)


def record_tool_result(span: Span, result: ToolResult) -> None:
    """error.type=timeout for a timeout, tool_error for any other error result (isError); also the tool metric."""
    outcome = "ok"
    if result.is_error and span.is_recording():
        outcome = semconv.ERROR_TIMEOUT if result.error_kind == "timeout" else semconv.ERROR_TOOL
        span.set_attribute(semconv.ERROR_TYPE, outcome)
        if result.error_kind:
            span.set_attribute(semconv.TOOLWIRE_TOOL_ERROR_KIND, result.error_kind)
        span.set_status(Status(StatusCode.ERROR, result.content[:200]))
    genai_metrics.record_tool_duration(result.name, result.duration_s, result.error_kind or outcome)


def record_mcp(
    span: Span,
    *,
    transport: str,
    protocol_version: str | None = None,
    session_id: str | None = None,
    server_address: str | None = None,
    server_port: int | None = None,
) -> None:
    """MCP attributes on the execute_tool span (the SDK's own client span does not carry them).

    An in-process source (transport 'inproc') is not MCP and not a network transport: nothing is set.
    """
    if transport == "inproc" or not span.is_recording():
        return
    session = {semconv.MCP_PROTOCOL_VERSION: protocol_version, semconv.MCP_SESSION_ID: session_id}
    span.set_attributes(
        {
            semconv.MCP_METHOD_NAME: "tools/call",
            semconv.NETWORK_TRANSPORT: transport,
            **semconv.present(session),
            **semconv.server(server_address, server_port),
        }
    )
