"""Structured tool output: the `outputSchema` a tool's return annotation gives, derived as the SDK's MCPServer
derives it (objects as they are; anything else wrapped as `{"result": ...}`), and the structured value of a result."""

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from math import isfinite
from typing import Any

import mcp_types as types
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from pydantic import ValidationError

from toolwire_server import texts
from toolwire_server.functions.schema import MAX_PROBLEMS, strip_titles
from toolwire_shared import errors


class OutputMismatch(Exception):
    """A tool returned a value its own return annotation does not describe; `problems` says where."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


@dataclass(frozen=True)
class OutputShape:
    """What a tool's results look like: the published schema, and the SDK metadata that checks and dumps them."""

    schema: dict[str, Any]
    wrapped: bool
    """True when the return type is not an object, so the value travels as `{"result": value}`."""
    _meta: FuncMetadata = field(repr=False, compare=False)
    _scalar: type | None = field(default=None, repr=False, compare=False)
    """The return annotation when it is str, int, float or bool: a value of exactly that type is its own JSON."""

    def structured(self, value: Any) -> dict[str, Any]:
        """The value as `structuredContent`, checked against the return annotation and dumped to JSON types."""
        if self._scalar is not None and type(value) is self._scalar and (type(value) is not float or isfinite(value)):
            return {"result": value}  # what the SDK's validation would give, without its cost on every call
        try:
            result = self._meta.convert_result(value)
        except ValidationError as exc:
            raise OutputMismatch(_problems(exc)) from exc
        structured = getattr(result, "structured_content", None)
        if not isinstance(structured, dict):
            raise OutputMismatch([f"it returned {type(value).__name__}, not its declared return type"])
        return structured

    def check(self, result: types.CallToolResult) -> None:
        """A result the tool made itself must fit the schema too (MCP requires it of a tool with an output schema)."""
        if result.is_error:
            return
        if result.structured_content is None:
            raise OutputMismatch([errors.no_structured_output()])
        try:
            self._meta.convert_result(result)  # validates its structuredContent against the return annotation
        except ValidationError as exc:
            raise OutputMismatch(_problems(exc)) from exc


def output_shape(fn: Callable[..., Any]) -> OutputShape | None:
    """The tool's output shape, or None when its return annotation gives none (no annotation, `Any`, content
    blocks, a `CallToolResult`). Built once, at registration; the arguments are the registry's business."""
    returns = inspect.signature(fn, eval_str=True).return_annotation
    if returns is inspect.Signature.empty:
        return None

    def stand_in() -> None:
        """The return annotation alone: the SDK's derivation also judges parameters, which are not its business."""

    stand_in.__name__ = getattr(fn, "__name__", "tool")
    stand_in.__signature__ = inspect.Signature(return_annotation=returns)  # type: ignore[attr-defined]
    try:
        meta = func_metadata(stand_in)
    except Exception as exc:
        raise TypeError(texts.undescribable_output(stand_in.__name__, repr(returns), str(exc).splitlines()[0])) from exc
    if meta.output_schema is None:
        return None
    scalar = returns if meta.wrap_output and returns in _SCALARS else None
    return OutputShape(schema=strip_titles(meta.output_schema), wrapped=meta.wrap_output, _meta=meta, _scalar=scalar)


_SCALARS = (str, int, float, bool)


def _problems(exc: ValidationError) -> list[str]:
    """One line per place the value differs from the declared type; a value is quoted clipped."""
    found = exc.errors(include_url=False)
    problems = [
        errors.output_problem(".".join(str(part) for part in error["loc"]), error["msg"], error.get("input"))
        for error in found[:MAX_PROBLEMS]
    ]
    if len(found) > MAX_PROBLEMS:
        problems.append(errors.more_problems(len(found) - MAX_PROBLEMS))
    return problems
