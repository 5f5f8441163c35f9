"""The outcome of one tool call as the loop records it and the model reads it, and the one place error results
are made: the kind of a failure is data that travels with the result, never read back from its wording."""

import time
from datetime import datetime
from typing import Any, Literal, get_args

import mcp_types as types
from pydantic import BaseModel, ConfigDict

from toolwire_shared.tools import META_PREFIX
from toolwire_shared.usage import Usage

ErrorKind = Literal[
    "unknown_tool",
    "bad_arguments",
    "tool_failed",
    "timeout",
    "refused",
    "rejected",
    "blocked",
    "transport",
    "outcome_unknown",
    "bad_output",
    "limited",
]
ERROR_KINDS: frozenset[str] = frozenset(get_args(ErrorKind))

ERROR_KIND_META = META_PREFIX + "error_kind"
"""CallToolResult `_meta` key naming the kind of a failed call (set by the toolwire server)."""
TRUNCATED_META = META_PREFIX + "truncated"
"""CallToolResult `_meta` key set when the server cut the result: {"kept": N, "total": M} characters."""
RETRY_AFTER_META = META_PREFIX + "retry_after_s"
"""CallToolResult `_meta` key on a `limited` result: seconds until the server's limit lets the same call in again
(absent when no wait is known, e.g. a limit on calls in flight)."""


class SubRun(BaseModel):
    """The sub-agent run a delegate call started, as its parent counts it: the parent's totals include its usage and
    cost, its step limit its steps; a sub-agent waiting for a person makes the call wait too."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    status: str
    steps: int = 0
    usage: Usage = Usage()
    cost_usd: float | None = None


class ToolResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    call_id: str
    name: str
    content: str
    is_error: bool = False
    error_kind: ErrorKind | None = None
    truncated: bool = False
    duration_s: float = 0.0
    started_at: datetime | None = None
    """When the call was sent (the waterfall places parallel calls by it); None when the caller did not record it."""
    attempts: int = 1
    """How many times it was sent (idempotent retries); the waterfall marks calls sent more than once."""
    sub_run: SubRun | None = None
    """Set on a delegate call's result: the sub-agent run it started (client/toolwire_client/delegate.py)."""
    structured: dict[str, Any] | None = None
    """The result's `structuredContent` (checked against the tool's output schema), for code rather than the model."""
    retry_after_s: float | None = None
    """On a `limited` result: how long the server said to wait before the call is let in (the ToolBox waits it)."""


def failed(call_id: str, name: str, kind: ErrorKind, text: str, *, since: float | None = None) -> ToolResult:
    """An error result the model reads; `since` is the perf_counter() when the call started, for its duration."""
    took = time.perf_counter() - since if since is not None else 0.0
    return ToolResult(call_id=call_id, name=name, content=text, is_error=True, error_kind=kind, duration_s=took)


def failed_call(kind: ErrorKind, text: str) -> types.CallToolResult:
    """The server's answer for a failed call: the text the model reads, and its kind in `_meta`."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=True, meta={ERROR_KIND_META: kind}
    )


def kind_of(result: types.CallToolResult) -> ErrorKind | None:
    """The kind a server put on an error result; 'tool_failed' for an error from a server that names none."""
    if not result.is_error:
        return None
    kind = (result.meta or {}).get(ERROR_KIND_META)
    return kind if isinstance(kind, str) and kind in ERROR_KINDS else "tool_failed"  # type: ignore[return-value]


def from_call_result(call_id: str, name: str, result: types.CallToolResult, *, since: float) -> ToolResult:
    """What an MCP CallToolResult (from a server process or the in-process dispatch) becomes in the run."""
    meta: dict[str, Any] = dict(result.meta or {})
    return ToolResult(
        call_id=call_id,
        name=name,
        content=content_text(result.content),
        is_error=bool(result.is_error),
        error_kind=kind_of(result),
        truncated=TRUNCATED_META in meta,
        structured=None if result.is_error else result.structured_content,
        duration_s=time.perf_counter() - since,
        retry_after_s=_seconds(meta.get(RETRY_AFTER_META)),
    )


def _seconds(value: Any) -> float | None:
    """A wait a server sent, if it is a sane number of seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 10**7:
        return None
    return float(value)


def content_text(blocks: list[types.ContentBlock]) -> str:
    """Text blocks joined; anything else described in a line, so the model knows it was there."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(f"[{block.type}: {block.mime_type}, {len(block.data) * 3 // 4} bytes]")
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource link: {block.uri}]")
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource: {resource.uri}, {resource.mime_type}]")
    return "\n".join(parts)
