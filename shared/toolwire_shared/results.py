"""The outcome of one tool call as the loop records it and the model reads it, and the one place error results
are made: the kind of a failure is data that travels with the result, never read back from its wording."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from pydantic import Field

from toolwire_shared.elicitation import InputWanted
from toolwire_shared.media import MediaBudget, MediaPart
from toolwire_shared.tools import META_PREFIX
from toolwire_shared.usage import Usage

if TYPE_CHECKING:  # the MCP types load with the first MCP result, not with every reader of a saved run
    import mcp_types as types

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


@dataclass(frozen=True, slots=True, kw_only=True)
class SubRun:
    """The sub-agent run a delegate call started, as its parent counts it: the parent's totals include its usage and
    cost, its step limit its steps; a sub-agent waiting for a person makes the call wait too."""

    run_id: str
    status: str
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRun:
    """The MCP task a call ran as: its id and its last status (completed, failed, cancelled, input_required)."""

    task_id: str
    status: str


@dataclass(slots=True, kw_only=True)
class ToolResult:
    """A plain record (made on every call): validated where a run is loaded, dumped to the same JSON as ever."""

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
    input_wanted: InputWanted | None = None
    """Set when the tool asked a person a question no one answered yet: the call pauses (not a result the model
    reads); the run waits for `toolwire answer` (client/toolwire_client/calls.py)."""
    media: Annotated[list[MediaPart], Field(exclude_if=lambda parts: not parts)] = field(default_factory=list)
    """Its images and audio, for a model that takes them (each also described in `content`); left out of a saved
    result that has none, so runs saved before this field load and save unchanged."""
    links: Annotated[list[str], Field(exclude_if=lambda uris: not uris)] = field(default_factory=list)
    """The URIs of the resource links and embedded resources it returned (read_resource reads them from the server
    that sent them)."""
    retry_after_s: float | None = None
    """On a `limited` result: how long the server said to wait before the call is let in (the ToolBox waits it)."""
    task: Annotated[TaskRun | None, Field(exclude_if=lambda task: task is None)] = None
    """Set when the server ran the call as an MCP task (client/toolwire_client/tools/tasks.py): its id and how it
    ended, for the step table."""


def failed(call_id: str, name: str, kind: ErrorKind, text: str, *, since: float | None = None) -> ToolResult:
    """An error result the model reads; `since` is the perf_counter() when the call started, for its duration."""
    took = time.perf_counter() - since if since is not None else 0.0
    return ToolResult(call_id=call_id, name=name, content=text, is_error=True, error_kind=kind, duration_s=took)


def failed_call(kind: ErrorKind, text: str) -> types.CallToolResult:
    import mcp_types as types

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
    meta: dict[str, Any] = result.meta or {}
    read = read_content(result.content)
    return ToolResult(
        call_id=call_id,
        name=name,
        content=read.text,
        is_error=bool(result.is_error),
        error_kind=kind_of(result),
        truncated=TRUNCATED_META in meta,
        duration_s=time.perf_counter() - since,
        structured=None if result.is_error else result.structured_content,
        media=read.media,
        links=read.links,
        retry_after_s=_seconds(meta.get(RETRY_AFTER_META)),
    )


def _seconds(value: Any) -> float | None:
    """A wait a server sent, if it is a sane number of seconds."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 10**7:
        return None
    return float(value)


@dataclass(frozen=True)
class ReadContent:
    """A result's content blocks as the run keeps them (a dataclass: it is made on every call)."""

    text: str
    """Text blocks and embedded text resources joined; every other block described in a line, so the model knows
    it was there (a model that takes no images reads only this)."""
    media: list[MediaPart]
    links: list[str]


def read_content(blocks: list[types.ContentBlock]) -> ReadContent:
    import mcp_types as types

    parts: list[str] = []
    media = MediaBudget()
    links: list[str] = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent | types.AudioContent):
            parts.append(media.line(block.type, block.mime_type, block.data))
        elif isinstance(block, types.ResourceLink):
            links.append(block.uri)
            parts.append(link_line(block))
        elif isinstance(block, types.EmbeddedResource):
            links.append(block.resource.uri)  # readable again from its server, as servers tell models to do
            parts.append(embedded_text(block.resource))
    return ReadContent(text="\n".join(parts), media=media.parts, links=links)


def link_line(link: types.ResourceLink) -> str:
    """`[resource link: uri "name" (mime): description]`: what the model needs to decide to read it."""
    line = f"[resource link: {link.uri}"
    line += f' "{link.name}"' if link.name and link.name != link.uri else ""
    line += f" ({link.mime_type})" if link.mime_type else ""
    line += f": {link.description}" if link.description else ""
    return line + "]"


def embedded_text(resource: types.TextResourceContents | types.BlobResourceContents) -> str:
    """An embedded text resource's text as it is; a blob described (its bytes are not for the model)."""
    import mcp_types as types

    if isinstance(resource, types.TextResourceContents):
        return resource.text
    size = len(resource.blob) * 3 // 4
    return f"[resource: {resource.uri}, {resource.mime_type or 'binary'}, {size} bytes, not shown]"
