"""A sampling request's MCP messages as the run's model's messages, and the model's reply as MCP content: text,
the server's tools (their names as the providers accept them) and the tool-use loop's `tool_use` / `tool_result`
blocks. An image or audio block becomes a line saying what it was (the messages carry text only)."""

import json
import re

import mcp_types as types

from toolwire_client import sampling_texts
from toolwire_client.models.base import ModelReply
from toolwire_shared.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolResultMessage, UserMessage
from toolwire_shared.tools import ToolSpec

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""A tool name every provider accepts (OpenAI's rule; Anthropic's is the same)."""


def sampling_messages(params: types.CreateMessageRequestParams) -> list[Message]:
    """Its system prompt first, then each message; a user message's tool results become tool messages (after the
    assistant turn that asked for them), its other blocks one user message."""
    found: list[Message] = [SystemMessage(content=params.system_prompt)] if params.system_prompt else []
    names: dict[str, str] = {}
    for message in params.messages:
        blocks = message.content_as_list
        said = "\n".join(
            _text(block) for block in blocks if not isinstance(block, types.ToolUseContent | types.ToolResultContent)
        )
        if message.role == "assistant":
            uses = [b for b in blocks if isinstance(b, types.ToolUseContent)]
            names |= {use.id: use.name for use in uses}
            calls = [ToolCall(id=use.id, name=use.name, arguments=use.input) for use in uses]
            found.append(AssistantMessage(text=said, tool_calls=calls))
            continue
        for result in (b for b in blocks if isinstance(b, types.ToolResultContent)):
            content = "\n".join(_text(block) for block in result.content)
            name = names.get(result.tool_use_id, "tool")
            found.append(
                ToolResultMessage(
                    call_id=result.tool_use_id, name=name, content=content, is_error=bool(result.is_error)
                )
            )
        if said or not any(isinstance(b, types.ToolResultContent) for b in blocks):
            found.append(UserMessage(content=said))
    return found


def sampling_tools(server: str, tools: list[types.Tool]) -> list[ToolSpec] | str:
    """The server's tools as the model is offered them, or why they cannot be (a name a provider refuses)."""
    bad = [tool.name for tool in tools if not PROVIDER_NAME.match(tool.name)]
    if bad:
        return sampling_texts.sampling_tool_name(server, bad[0])
    return [
        ToolSpec(
            name=t.name, description=t.description or t.title or t.name, input_schema=t.input_schema, source=server
        )
        for t in tools
    ]


def reply_with_tools(reply: ModelReply, model: str, stop_reason: str | None) -> types.CreateMessageResultWithTools:
    """The model's turn as the answer to a request with tools: its text and its tool calls as `tool_use` blocks."""
    blocks: list[types.SamplingMessageContentBlock] = []
    if reply.message.text or not reply.message.tool_calls:
        blocks.append(types.TextContent(type="text", text=reply.message.text))
    blocks += [
        types.ToolUseContent(type="tool_use", id=call.id, name=call.name, input=call.arguments)
        for call in reply.message.tool_calls
    ]
    stop = "toolUse" if reply.message.tool_calls else stop_reason
    return types.CreateMessageResultWithTools(role="assistant", content=blocks, model=model, stop_reason=stop)


def answer_text(reply: ModelReply) -> str:
    """What the run's record keeps of an answer: its text, and the tools it called."""
    calls = [f"{call.name}({json.dumps(call.arguments, sort_keys=True)})" for call in reply.message.tool_calls]
    return "\n".join(part for part in [reply.message.text, *calls] if part)


def _text(block: types.ContentBlock | types.SamplingMessageContentBlock) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return sampling_texts.sampling_media(block.type, block.mime_type, len(block.data) * 3 // 4)
    return f"[{block.type}]"
