"""Argument models from type hints: one pydantic model per tool, so the schema the model sees and the check the
server runs are the same object."""

import inspect
from collections.abc import Callable
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from toolwire_server.functions.context import ToolContext
from toolwire_shared import errors

IDEMPOTENCY_KEY_PARAM = "idempotency_key"
"""A tool parameter with this name receives the request's idempotency key instead of a model-supplied argument."""


class _Forbid(BaseModel):
    model_config = ConfigDict(extra="forbid")


def injected_params(fn: Callable[..., Any]) -> dict[str, str]:
    """Parameters the server fills in (not the model): name -> 'context' | 'idempotency_key'."""
    hints = get_type_hints(fn, include_extras=True)
    injected: dict[str, str] = {}
    for name in inspect.signature(fn).parameters:
        if hints.get(name) is ToolContext:
            injected[name] = "context"
        elif name == IDEMPOTENCY_KEY_PARAM:
            injected[name] = "idempotency_key"
    return injected


def arguments_model(tool_name: str, fn: Callable[..., Any]) -> type[BaseModel]:
    """A model of the model-supplied parameters; `extra='forbid'` gives `additionalProperties: false`."""
    hints = get_type_hints(fn, include_extras=True)
    skip = injected_params(fn)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(fn).parameters.items():
        if name in skip:
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {tool_name}: *args/**kwargs cannot be described to a model")
        annotation = hints.get(name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (annotation, default)
    model: type[BaseModel] = create_model(f"{tool_name}_arguments", __base__=_Forbid, **fields)
    return model


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema without pydantic's generated titles (noise for a model reading it)."""
    schema: dict[str, Any] = strip_titles(model.model_json_schema())
    schema.setdefault("properties", {})
    return schema


def strip_titles(node: Any) -> Any:
    if isinstance(node, dict):
        return {
            key: (strip_titles(value) if key != "properties" else {k: strip_titles(v) for k, v in value.items()})
            for key, value in node.items()
            if key != "title" or not isinstance(value, str)
        }
    if isinstance(node, list):
        return [strip_titles(item) for item in node]
    return node


MAX_PROBLEMS = 10
"""How many problems one bad call lists; the rest are counted."""


def describe_problems(exc: ValidationError) -> list[str]:
    """One line per problem, naming the argument: missing, unexpected, or of the wrong type/value. A caller's
    value (or an unexpected argument's name) is quoted clipped, so a hostile argument never comes back whole."""
    problems = []
    found = exc.errors(include_url=False)
    for error in found[:MAX_PROBLEMS]:
        where = errors.clip(".".join(str(part) for part in error["loc"]), errors.QUOTE_CHARS) or "(arguments)"
        if error["type"] == "missing":
            problems.append(f"missing required argument '{where}'")
        elif error["type"] == "extra_forbidden":
            problems.append(f"unexpected argument '{where}'")
        else:
            message = errors.clip(error["msg"], errors.QUOTE_CHARS)
            problems.append(f"argument '{where}': {message} (got {errors.quoted(error['input'])})")
    if len(found) > MAX_PROBLEMS:
        problems.append(errors.more_problems(len(found) - MAX_PROBLEMS))
    return problems
