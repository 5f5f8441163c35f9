"""A form generated from a JSON schema, and the posted form read back into a JSON value: the seam for a tool's
question to a person (an input request), whose answer must fit the schema the tool sent.

Flat object schemas only, as MCP elicitation allows: string (with `enum`, a select), number, integer, boolean
(a checkbox). Anything else is refused by `form_fields` (the page says the question cannot be answered here).
The answer read back is checked against the schema with `jsonschema` before anything records it."""

from collections.abc import Mapping
from dataclasses import dataclass
from html import escape
from typing import Any

import jsonschema

SIMPLE_TYPES = ("string", "number", "integer", "boolean")


class FormRefused(ValueError):
    """The schema is not one a form can ask, or the posted answer does not fit it: the message says which field."""


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    title: str
    required: bool
    choices: tuple[str, ...] = ()


def form_fields(schema: Mapping[str, Any]) -> list[Field]:
    """The fields of a flat object schema, in its order."""
    if schema.get("type") != "object" or not isinstance(schema.get("properties"), dict):
        raise FormRefused("only an object schema with properties can be asked as a form")
    required = set(schema.get("required", []))
    fields = []
    for name, prop in schema["properties"].items():
        kind = prop.get("type") if isinstance(prop, dict) else None
        if kind not in SIMPLE_TYPES:
            raise FormRefused(f"field {name!r}: type {kind!r} cannot be asked in a form (string, number, boolean)")
        choices = tuple(str(c) for c in prop.get("enum", ()))
        title = str(prop.get("title") or prop.get("description") or name)
        fields.append(Field(str(name), str(kind), title, name in required, choices))
    return fields


def render_fields(schema: Mapping[str, Any], posted: Mapping[str, str] | None = None) -> str:
    """The form's inputs (the caller wraps them in its <form> with the CSRF token), filled with what was `posted`
    when a refused answer is shown again."""
    posted = posted or {}
    out = []
    for f in form_fields(schema):
        given = posted.get(f"f.{f.name}")
        name, label = escape(f.name), escape(f.title) + (" *" if f.required else "")
        required = " required" if f.required and f.type != "boolean" else ""
        if f.choices:
            options = "".join(
                f'<option value="{escape(c)}"{" selected" if c == given else ""}>{escape(c)}</option>'
                for c in f.choices
            )
            field = f'<select name="f.{name}"{required}>{options}</select>'
        elif f.type == "boolean":
            checked = " checked" if given == "true" else ""
            field = f'<input type="checkbox" name="f.{name}" value="true"{checked}>'
        else:
            kind = "number" if f.type in ("number", "integer") else "text"
            step = ' step="1"' if f.type == "integer" else ' step="any"' if f.type == "number" else ""
            value = f' value="{escape(given)}"' if given else ""
            field = f'<input type="{kind}" name="f.{name}"{step}{value}{required}>'
        out.append(f"<label>{label} {field}</label>")
    return "".join(out)


def form_values(schema: Mapping[str, Any], posted: Mapping[str, str]) -> dict[str, Any]:
    """The answer as JSON, from the posted `f.NAME` fields, checked against the schema (FormRefused if not)."""
    value: dict[str, Any] = {}
    for f in form_fields(schema):
        raw = posted.get(f"f.{f.name}")
        if f.type == "boolean":
            value[f.name] = raw == "true"
            continue
        if raw is None or raw == "":
            continue
        try:
            value[f.name] = int(raw) if f.type == "integer" else float(raw) if f.type == "number" else raw
        except ValueError:
            wanted = "an integer" if f.type == "integer" else "a number"
            raise FormRefused(f"field {f.name!r}: {raw!r} is not {wanted}") from None
    try:
        jsonschema.validate(value, dict(schema))
    except jsonschema.ValidationError as exc:
        where = ".".join(str(p) for p in exc.absolute_path) or "the answer"
        raise FormRefused(f"{where}: {exc.message}") from None
    return value
