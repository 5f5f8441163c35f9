"""The one check of a result's `structuredContent` against its tool's `outputSchema`, for every tool source (the
ToolBox runs it), so a server that breaks its own contract gives a `bad_output` error result, never bad data."""

from typing import Any

from jsonschema import SchemaError
from jsonschema.protocols import Validator
from jsonschema.validators import validator_for
from referencing import Registry

from toolwire_client import texts
from toolwire_shared import errors
from toolwire_shared.results import ToolResult, failed
from toolwire_shared.tools import ToolSpec

MAX_PROBLEMS = 10
"""How many places one bad result lists; the rest are counted."""
MAX_CACHED = 1024

_validators: dict[int, tuple[dict[str, Any], Validator]] = {}
"""Compiled once per schema object (a tool's spec keeps its one schema dict): compiling, or even turning the schema
into a key, costs more than validating. The entry holds the schema, so its id is never reused while cached."""


def checked(result: ToolResult, spec: ToolSpec) -> ToolResult:
    """`result` itself when it fits the tool's output schema (or the tool has none, or it is an error); else a
    `bad_output` error result. A result the server cut carries no structured value, and that is no mismatch; nor
    does a call paused on its tool's question (no result yet)."""
    paused = result.input_wanted is not None
    if spec.output_schema is None or result.is_error or paused or (result.structured is None and result.truncated):
        return result
    problems = _problems(spec.output_schema, result.structured)
    if not problems:
        return result
    bad = failed(result.call_id, result.name, "bad_output", errors.bad_output(spec.name, problems))
    return bad.model_copy(update={"duration_s": result.duration_s})


def _problems(schema: dict[str, Any], value: dict[str, Any] | None) -> list[str]:
    if value is None:
        return [errors.no_structured_output()]
    try:
        validator = _validator(schema)
    except SchemaError as exc:
        return [texts.invalid_output_schema(exc.message)]
    found = sorted(validator.iter_errors(value), key=lambda error: [str(part) for part in error.absolute_path])
    problems = [
        errors.output_problem(".".join(str(part) for part in error.absolute_path), error.message, error.instance)
        for error in found[:MAX_PROBLEMS]
    ]
    if len(found) > MAX_PROBLEMS:
        problems.append(errors.more_problems(len(found) - MAX_PROBLEMS))
    return problems


def _validator(schema: dict[str, Any]) -> Validator:
    cached = _validators.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    cls = validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema, registry=Registry())
    if len(_validators) >= MAX_CACHED:  # specs come and go with tool sources: keep the cache bounded
        _validators.clear()
    _validators[id(schema)] = (schema, validator)
    return validator
