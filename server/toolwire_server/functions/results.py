"""Turning what a tool returned into an MCP `CallToolResult`, cut to the configured size."""

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from toolwire_server import texts
from toolwire_server.functions.output import OutputMismatch, OutputShape
from toolwire_shared import errors
from toolwire_shared.results import TRUNCATED_META, failed_call

_CONTENT_TYPES = (
    types.TextContent,
    types.ImageContent,
    types.AudioContent,
    types.EmbeddedResource,
    types.ResourceLink,
)


@dataclass(frozen=True, slots=True)
class TextAnswer:
    """A tool's answer that is one text block within the size limit, and its structured value: the CallToolResult
    `to_result` makes, not made yet (the in-process source reads these two fields, so it is never built)."""

    text: str
    structured: dict[str, Any] | None = None

    def call_result(self) -> types.CallToolResult:
        # structured_content given even when None, as it always was: a dump that leaves out unset fields is unchanged
        text = [types.TextContent(type="text", text=self.text)]
        return types.CallToolResult(content=text, structured_content=self.structured)


def to_result(value: Any, max_chars: int, *, tool: str = "", output: OutputShape | None = None) -> types.CallToolResult:
    """A tool may return a `CallToolResult`, content blocks, a string, or anything JSON-serialisable. With an
    `output` shape, a value also becomes `structuredContent` (the text block stays what the model reads: the same
    JSON for an object, the plain value for a wrapped one); a value that does not fit it is a `bad_output` error."""
    answer = answer_of(value, max_chars, tool=tool, output=output)
    return answer.call_result() if isinstance(answer, TextAnswer) else answer


def answer_of(
    value: Any, max_chars: int, *, tool: str = "", output: OutputShape | None = None
) -> types.CallToolResult | TextAnswer:
    """`to_result`, but a value that becomes one text block within `max_chars` as a TextAnswer."""
    if type(value) is str:  # the commonest answer is none of the MCP types below: no instance checks (ABCs, ~1 us)
        return _text_answer(value, max_chars, tool, output)
    if isinstance(value, types.CallToolResult):
        try:
            if output is not None:
                output.check(value)
        except OutputMismatch as exc:
            result = failed_call("bad_output", errors.bad_output(tool, exc.problems))
        else:
            result = value
    elif isinstance(value, _CONTENT_TYPES):
        result = types.CallToolResult(content=[value])
    elif isinstance(value, list) and value and all(isinstance(item, _CONTENT_TYPES) for item in value):
        result = types.CallToolResult(content=list(value))
    else:
        return _text_answer(value, max_chars, tool, output)
    return cut(result, max_chars)


def _text_answer(
    value: Any, max_chars: int, tool: str, output: OutputShape | None
) -> types.CallToolResult | TextAnswer:
    """A value that is its own text (and, with an output shape, its structured value)."""
    try:
        structured = output.structured(value) if output is not None else None
    except OutputMismatch as exc:
        return cut(failed_call("bad_output", errors.bad_output(tool, exc.problems)), max_chars)
    answer = TextAnswer(_as_text(value), structured)
    if len(answer.text) <= max_chars:
        return answer  # what cut() would leave as it is
    return cut(answer.call_result(), max_chars)


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(to_jsonable_python(value), ensure_ascii=False)


def cut(result: types.CallToolResult, max_chars: int) -> types.CallToolResult:
    """Cut the text blocks so their total stays within `max_chars`, and say so in a note the model reads."""
    total = sum(len(block.text) for block in result.content if isinstance(block, types.TextContent))
    if total <= max_chars:
        return result
    budget = max_chars
    content: list[types.ContentBlock] = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            kept = block.text[: max(budget, 0)]
            budget -= len(kept)
            if kept:
                content.append(types.TextContent(type="text", text=kept))
        else:
            content.append(block)
    content.append(types.TextContent(type="text", text=texts.truncated_note(max_chars, total)))
    meta = {**(result.meta or {}), TRUNCATED_META: {"kept": max_chars, "total": total}}
    # structuredContent stays whole: MCP requires it of a tool with an output schema, and it is for code, not the model.
    return types.CallToolResult(
        content=content, is_error=result.is_error, structured_content=result.structured_content, meta=meta
    )
