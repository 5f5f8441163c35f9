"""GenAI client metrics: operation duration, token usage, and tool-call duration by tool and outcome.

Instruments come from the global (proxy) meter; until configure_tracing installs a MeterProvider, `enabled()` is
False and the record functions return at once. The span helpers in spans.py call these, so the loop need not.
"""

from opentelemetry import metrics

from toolwire_otel import attributes as semconv
from toolwire_otel.switch import Switch
from toolwire_shared.usage import Usage

DURATION_BUCKETS_S = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]
TOKEN_TYPE = "gen_ai.token.type"
TOOL_OUTCOME = "toolwire.tool.outcome"

_meter = metrics.get_meter("toolwire")


def _duration(name: str, description: str) -> metrics.Histogram:
    """A histogram of seconds, in the buckets every duration here shares."""
    return _meter.create_histogram(
        name, unit="s", description=description, explicit_bucket_boundaries_advisory=DURATION_BUCKETS_S
    )


_operation_duration = _duration(semconv.METRIC_OPERATION_DURATION, "GenAI operation duration")
_token_usage = _meter.create_histogram(
    semconv.METRIC_TOKEN_USAGE,
    unit="{token}",
    description="Number of input and output tokens used",
    explicit_bucket_boundaries_advisory=TOKEN_BUCKETS,
)
_tool_duration = _duration(semconv.METRIC_TOOL_DURATION, "Tool call duration by tool and outcome")
_server_call_duration = _duration(
    "toolwire.server.call.duration",
    "Tool calls a toolwire server answered, by agent, tool and outcome (limited: refused by a limit)",
)
SERVER_AGENT = "toolwire.agent"
_switch = Switch()
enable = _switch.enable
enabled = _switch.enabled


def record_chat_duration(
    model: semconv.ChatModel, duration_s: float, *, response_model: str | None = None, error_type: str | None = None
) -> None:
    if not _switch.on:
        return
    attrs = {
        **semconv.chat(model),
        **semconv.present({semconv.GEN_AI_RESPONSE_MODEL: response_model, semconv.ERROR_TYPE: error_type}),
        **semconv.server(model.server_address, model.server_port),
    }
    _operation_duration.record(duration_s, attrs)


def record_token_usage(model: semconv.ChatModel, usage: Usage, *, response_model: str | None = None) -> None:
    if not _switch.on:
        return
    attrs = {**semconv.chat(model), **semconv.present({semconv.GEN_AI_RESPONSE_MODEL: response_model})}
    _token_usage.record(usage.input_tokens, {**attrs, TOKEN_TYPE: "input"})
    _token_usage.record(usage.output_tokens, {**attrs, TOKEN_TYPE: "output"})


def record_tool_duration(tool_name: str, duration_s: float, outcome: str, tool_type: str = "function") -> None:
    """`outcome` is 'ok' or the error kind ('tool_error', 'timeout', 'bad_arguments', ...)."""
    if not _switch.on:
        return
    _tool_duration.record(
        duration_s,
        {semconv.GEN_AI_TOOL_NAME: tool_name, semconv.GEN_AI_TOOL_TYPE: tool_type, TOOL_OUTCOME: outcome},
    )


def record_server_call(agent: str, tool: str, outcome: str, duration_s: float) -> None:
    """Server side, per agent: its calls (the count), refusals and errors (by outcome) and latency (the values)."""
    if not _switch.on:
        return
    _server_call_duration.record(
        duration_s, {SERVER_AGENT: agent, semconv.GEN_AI_TOOL_NAME: tool, TOOL_OUTCOME: outcome}
    )


def record_agent_duration(agent_name: str, duration_s: float, error_type: str | None = None) -> None:
    if not _switch.on:
        return
    attrs = {semconv.GEN_AI_OPERATION_NAME: semconv.OP_INVOKE_AGENT, semconv.GEN_AI_AGENT_NAME: agent_name}
    if error_type:
        attrs[semconv.ERROR_TYPE] = error_type
    _operation_duration.record(duration_s, attrs)
