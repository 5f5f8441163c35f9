"""The spans of a run: invoke_agent > chat / execute_tool > (mcp client span) > server span.

Uses the global tracer provider; with none installed every call here is a cheap no-op. The helpers also feed the
metrics in metrics.py (only when a MeterProvider is installed), so the loop gets both from one set of calls.
"""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

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
    provider: str
    model: str
    server_address: str | None
    server_port: int | None
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


@contextmanager
def agent_span(
    agent_name: str, run_id: str, model: str | None = None, *, resumed_from: str | None = None
) -> Iterator[Span]:
    """The root of a run. `resumed_from` (span_ref() of the earlier invoke_agent span, or its trace id) links a
    resumed run to the trace where it paused."""
    if _off():
        yield trace.INVALID_SPAN
        return
    attrs: dict[str, str] = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT,
        semconv.GEN_AI_AGENT_NAME: agent_name,
        semconv.GEN_AI_AGENT_ID: agent_name,
        semconv.GEN_AI_CONVERSATION_ID: run_id,
    }
    if model:
        attrs[semconv.GEN_AI_REQUEST_MODEL] = model
    started, failure = time.perf_counter(), list[str]()
    name = f"{semconv.OP_INVOKE_AGENT} {agent_name}"
    try:
        with _noting_errors(name, SpanKind.INTERNAL, attrs, failure, links=_link(resumed_from)) as span:
            yield span
    finally:
        genai_metrics.record_agent_duration(agent_name, time.perf_counter() - started, next(iter(failure), None))


@contextmanager
def _noting_errors(
    name: str, kind: SpanKind, attrs: dict[str, Any], failure: list[str], links: list[Link] | None = None
) -> Iterator[Span]:
    """The current span; an exception leaving it sets error.type there and in `failure` (for the metrics)."""
    with _tracer.start_as_current_span(name, kind=kind, attributes=attrs, links=links) as span:
        try:
            yield span
        except BaseException as exc:
            failure.append(_error_type(exc))
            span.set_attribute(semconv.ERROR_TYPE, failure[-1])
            raise


def record_run_end(span: Span, usage: Usage, status: str, stop_reason: str | None) -> None:
    """Totals and outcome on the invoke_agent span; a failed run (model gave up, crash) marks it ERROR."""
    record_usage(span, usage)
    span.set_attribute(semconv.TOOLWIRE_RUN_STATUS, status)
    if stop_reason:
        span.set_attribute(semconv.TOOLWIRE_STOP_REASON, stop_reason)
    if status == "failed":
        span.set_attribute(semconv.ERROR_TYPE, "run_failed")
        span.set_status(Status(StatusCode.ERROR, (stop_reason or "")[:200]))


@contextmanager
def chat_span(
    provider: str, model: str, run_id: str, server_address: str | None = None, server_port: int | None = None
) -> Iterator[Span]:
    if _off():
        yield trace.INVALID_SPAN
        return
    attrs = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_CHAT,
        semconv.GEN_AI_PROVIDER_NAME: provider,
        semconv.GEN_AI_REQUEST_MODEL: model,
        semconv.GEN_AI_CONVERSATION_ID: run_id,
        **semconv.server(server_address, server_port),
    }
    call = _ChatCall(provider, model, server_address, server_port)
    token = _current_chat.set(call)
    started, failure = time.perf_counter(), list[str]()
    try:
        with _noting_errors(f"{semconv.OP_CHAT} {model}", SpanKind.CLIENT, attrs, failure) as span:
            yield span
    finally:
        _current_chat.reset(token)
        genai_metrics.record_chat_duration(
            provider,
            model,
            time.perf_counter() - started,
            response_model=call.response_model,
            error_type=next(iter(failure), None),
            server_address=server_address,
            server_port=server_port,
        )


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
    reasons = [finish_reason] if finish_reason else None
    response = {semconv.GEN_AI_RESPONSE_MODEL: response_model, semconv.GEN_AI_RESPONSE_ID: response_id}
    attrs = {
        **_usage_attributes(usage),
        **semconv.present({**response, semconv.GEN_AI_RESPONSE_FINISH_REASONS: reasons}),
    }
    span.set_attributes(attrs)  # one call: the SDK takes its attribute lock once
    _chat_metrics(usage, response_model)


def _chat_metrics(usage: Usage, response_model: str | None) -> None:
    call = _current_chat.get()
    if call is not None:
        call.response_model = response_model
        genai_metrics.record_token_usage(call.provider, call.model, usage, response_model=response_model)


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


@contextmanager
def tool_span(tool_name: str, call_id: str, run_id: str) -> Iterator[Span]:
    if _off():
        yield trace.INVALID_SPAN
        return
    attrs = {
        semconv.GEN_AI_OPERATION_NAME: semconv.OP_EXECUTE_TOOL,
        semconv.GEN_AI_TOOL_NAME: tool_name,
        semconv.GEN_AI_TOOL_CALL_ID: call_id,
        semconv.GEN_AI_TOOL_TYPE: "function",
        semconv.GEN_AI_CONVERSATION_ID: run_id,
    }
    with _tracer.start_as_current_span(
        f"{semconv.OP_EXECUTE_TOOL} {tool_name}", kind=SpanKind.INTERNAL, attributes=attrs
    ) as span:
        yield span


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
