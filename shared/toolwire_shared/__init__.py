"""The vocabulary the tool server and the agent loop both speak: messages, tool specs, results, errors, ids."""

from toolwire_shared.ids import new_call_id, new_run_id
from toolwire_shared.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    dump_messages,
    load_messages,
)
from toolwire_shared.results import ErrorKind, ToolResult
from toolwire_shared.tools import ToolPolicy, ToolSpec
from toolwire_shared.usage import Usage

__all__ = [
    "AssistantMessage",
    "ErrorKind",
    "Message",
    "SystemMessage",
    "ToolCall",
    "ToolPolicy",
    "ToolResult",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "dump_messages",
    "load_messages",
    "new_call_id",
    "new_run_id",
]
