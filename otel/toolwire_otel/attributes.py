"""Every span and metric name toolwire emits, in one place (GenAI/MCP semantic conventions v1.41).

The conventions are still 'Development'; when the genai repo's renames land, this is the one file to edit.
"""

from collections.abc import Mapping
from typing import Protocol

from opentelemetry.util.types import AttributeValue

# Operations
OP_INVOKE_AGENT = "invoke_agent"
OP_CHAT = "chat"
OP_EXECUTE_TOOL = "execute_tool"

# gen_ai.*
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_AGENT_ID = "gen_ai.agent.id"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
GEN_AI_TOOL_DESCRIPTION = "gen_ai.tool.description"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
GEN_AI_TOOL_DEFINITIONS = "gen_ai.tool.definitions"

# mcp.*, network, server, error
MCP_METHOD_NAME = "mcp.method.name"
MCP_SESSION_ID = "mcp.session.id"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
ERROR_TYPE = "error.type"

# toolwire's own (no convention exists)
TOOLWIRE_STEP = "toolwire.step"
TOOLWIRE_STEP_KIND = "toolwire.step.kind"
TOOLWIRE_PLAN_EVENT = "toolwire.plan"
"""On invoke_agent, once per plan made: how many steps, which replan (0: the first plan), the steps when opted in."""
TOOLWIRE_PLAN_STEPS = "toolwire.plan.steps"
TOOLWIRE_PLAN_REPLAN = "toolwire.plan.replan"
TOOLWIRE_PLAN_TEXT = "toolwire.plan.text"
TOOLWIRE_RETRY_EVENT = "toolwire.retry"
TOOLWIRE_RETRY_ATTEMPT = "toolwire.retry.attempt"
TOOLWIRE_RETRY_REASON = "toolwire.retry.reason"
TOOLWIRE_RETRY_WAIT_S = "toolwire.retry.wait_s"
TOOLWIRE_STOP_REASON = "toolwire.stop_reason"
TOOLWIRE_RUN_STATUS = "toolwire.run.status"
TOOLWIRE_TOOL_ERROR_KIND = "toolwire.tool.error_kind"
TOOLWIRE_INPUT_TOKENS = "toolwire.input_tokens"
"""On chat: `toolwire.input_tokens.{system,tools,history,results}`, where the request's input tokens went (they add
up to gen_ai.usage.input_tokens when `toolwire.input_tokens.scaled` is true, else they are estimates)."""

# error.type values
ERROR_TOOL = "tool_error"
ERROR_TIMEOUT = "timeout"

# Metrics
METRIC_OPERATION_DURATION = "gen_ai.client.operation.duration"
METRIC_TOKEN_USAGE = "gen_ai.client.token.usage"
METRIC_TOOL_DURATION = "toolwire.tool.call.duration"

# Content capture opt-in (same variable and values as opentelemetry-util-genai)
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def present(pairs: Mapping[str, AttributeValue | None]) -> dict[str, AttributeValue]:
    """Only the attributes that have a value (OTel drops None, and an empty string says nothing)."""
    return {key: value for key, value in pairs.items() if value}


def server(address: str | None, port: int | None) -> dict[str, AttributeValue]:
    """server.address, and server.port beside it (a port alone names nothing)."""
    return present({SERVER_ADDRESS: address, SERVER_PORT: port if address else None})


class ChatModel(Protocol):
    """A model as a chat span and the chat metrics name it (the client's models have these attributes)."""

    provider: str
    model: str
    server_address: str | None
    server_port: int | None


def chat(model: ChatModel) -> dict[str, AttributeValue]:
    """What the chat span and every chat metric carry: the operation, the provider and the model asked for."""
    return {GEN_AI_OPERATION_NAME: OP_CHAT, GEN_AI_PROVIDER_NAME: model.provider, GEN_AI_REQUEST_MODEL: model.model}
