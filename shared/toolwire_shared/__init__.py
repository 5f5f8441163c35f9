"""The vocabulary the tool server and the agent loop both speak: messages, tool specs, results, errors, ids.

Names load on first use, so a module of this package that needs none of them (`words`, `terminal`, `db_timeouts`) is
imported without pydantic and the MCP types; type checkers see them as plain imports."""

from typing import TYPE_CHECKING

from toolwire_shared.lazy import loader

if TYPE_CHECKING:
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

_WHERE = {
    "new_call_id": "ids",
    "new_run_id": "ids",
    "AssistantMessage": "messages",
    "Message": "messages",
    "SystemMessage": "messages",
    "ToolCall": "messages",
    "ToolResultMessage": "messages",
    "UserMessage": "messages",
    "dump_messages": "messages",
    "load_messages": "messages",
    "ErrorKind": "results",
    "ToolResult": "results",
    "ToolPolicy": "tools",
    "ToolSpec": "tools",
    "Usage": "usage",
}

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


__getattr__ = loader(__name__, _WHERE, globals())
