"""The output check's fast accept (tools/output_check.py `plain_accept`) never passes what jsonschema refuses: for
plain object schemas and values of every JSON kind, a True from it is a valid value, the check's verdict is
jsonschema's, and a schema outside its subset is left to jsonschema alone."""

from typing import Any

import pytest
from jsonschema.validators import validator_for

from toolwire_client.tools.output_check import _problems, plain_accept

PLAIN: list[dict[str, Any]] = [
    {"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]},
    {"type": "object", "properties": {"n": {"type": "integer", "title": "N"}, "ok": {"type": "boolean"}}},
    {"type": "object", "properties": {"x": {"type": "number"}, "gone": {"type": "null"}}, "required": ["x", "gone"]},
    {"type": "object", "required": ["id"], "title": "Anything with an id"},
]
NOT_PLAIN: list[dict[str, Any]] = [
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "string", "minLength": 3}}},
    {"type": "object", "properties": {"a": {"type": ["string", "null"]}}},
    {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"type": "string"}}},
    {"type": "object", "properties": {"a": {"type": "string", "format": "email"}}},
    {"properties": {"a": {"type": "string"}}},
    {"type": "object", "$schema": "http://json-schema.org/draft-03/schema#", "properties": {"a": {"type": "string"}}},
]
KINDS: list[Any] = ["x", "", 0, 1, -7, 1.0, 1.5, float("nan"), True, False, None, [], ["x"], {}, {"k": 1}]
VALUES: list[Any] = [
    {},
    *({name: kind} for name in ("result", "n", "ok", "x", "gone", "id", "a") for kind in KINDS),
    {"x": 1, "gone": None},
    {"x": True, "gone": None},
    {"x": 2.5, "gone": None, "extra": [1]},
    {"n": 1, "ok": True},
    {"n": 1.0, "ok": 0},
]


def _valid(schema: dict[str, Any], value: Any) -> bool:
    return bool(validator_for(schema)(schema).is_valid(value))


@pytest.mark.parametrize("schema", PLAIN)
def test_a_plain_schema_is_accepted_fast_only_where_jsonschema_agrees(schema: dict[str, Any]) -> None:
    accept = plain_accept(schema)
    assert accept is not None
    accepted = [value for value in VALUES if accept(value)]
    assert accepted, "the fast accept never took a value: it is not in use"
    for value in VALUES:
        if accept(value):
            assert _valid(schema, value), value
        assert (_problems(schema, value) == []) == _valid(schema, value), value


@pytest.mark.parametrize("schema", NOT_PLAIN)
def test_any_other_schema_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert plain_accept(schema) is None
    for value in VALUES:
        assert (_problems(schema, value) == []) == _valid(schema, value), value
