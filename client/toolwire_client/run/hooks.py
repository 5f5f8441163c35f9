"""Hooks the harness runs around each tool call: observe it, block it (the model reads the reason), or change it."""

from dataclasses import dataclass, replace
from typing import Protocol

from toolwire_client import texts
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult, failed


@dataclass(frozen=True)
class Block:
    """Returned by a before-hook: the call is not run and the model gets `reason` as an error observation."""

    reason: str


class ToolHook(Protocol):
    async def before_tool(self, call: ToolCall) -> ToolCall | Block | None:
        """None to let the call through unchanged, a ToolCall to change it (same id), Block to stop it."""
        ...

    async def after_tool(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        """None to keep the result, or a replacement (e.g. redacted)."""
        ...


async def run_before(hooks: tuple[ToolHook, ...], call: ToolCall) -> ToolCall | ToolResult:
    """The call to send (maybe changed), or the blocked result to append instead."""
    for hook in hooks:
        decision = await hook.before_tool(call)
        if isinstance(decision, Block):
            return failed(call.id, call.name, "blocked", texts.blocked(call.name, decision.reason))
        if decision is not None:
            call = replace(decision, id=call.id)
    return call


async def run_after(hooks: tuple[ToolHook, ...], call: ToolCall, result: ToolResult) -> ToolResult:
    for hook in hooks:
        replaced = await hook.after_tool(call, result)
        if replaced is not None:
            result = replaced
    return result
