"""One span for an MCP task's whole life (`await_task TOOL`), its polls as events on it: a span per `tasks/get`
would bury the trace under polls of a task that takes minutes."""

from collections.abc import Iterator
from contextlib import contextmanager

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import AttributeValue

TASK_ID = "mcp.task.id"
TASK_STATUS = "mcp.task.status"
TASK_POLLS = "mcp.task.polls"
TASK_RESUMED = "mcp.task.resumed"
"""True when a resumed run followed a task an earlier process created (the tool was not called again)."""

_tracer = trace.get_tracer("toolwire")


@contextmanager
def task_span(tool_name: str, task_id: str, *, resumed: bool) -> Iterator[Span]:
    attributes: dict[str, AttributeValue] = {"gen_ai.tool.name": tool_name, TASK_ID: task_id, TASK_RESUMED: resumed}
    with _tracer.start_as_current_span(f"await_task {tool_name}", kind=SpanKind.CLIENT, attributes=attributes) as span:
        yield span


@contextmanager
def quiet_poll(span: Span) -> Iterator[None]:
    """Around one `tasks/get`: the MCP SDK makes a span per request, and a poll's would be one of hundreds. Under a
    not-sampled parent (in this task's trace) the default, parent-based, sampler drops it, here and on the server
    (the traceparent says not sampled); the poll is an event on the task's span instead (`record_poll`)."""
    context = span.get_span_context()
    if not context.is_valid:
        yield
        return
    quiet = SpanContext(context.trace_id, context.span_id, is_remote=False, trace_flags=TraceFlags(TraceFlags.DEFAULT))
    with trace.use_span(NonRecordingSpan(quiet)):
        yield


def record_poll(span: Span, polls: int, status: str, message: str | None) -> None:
    if span.is_recording():
        attributes: dict[str, AttributeValue] = {TASK_STATUS: status, TASK_POLLS: polls}
        if message:
            attributes["mcp.task.message"] = message
        span.add_event("tasks/get", attributes)


def record_end(span: Span, status: str, polls: int) -> None:
    if span.is_recording():
        span.set_attribute(TASK_STATUS, status)
        span.set_attribute(TASK_POLLS, polls)
        if status in ("failed", "cancelled"):
            span.set_status(Status(StatusCode.ERROR, status))
