"""The run's tools as the script sees them: a valid Python name for each wire name, and a typed `async def` line
for each, from its input schema (and its output schema's return type), which run_code's description lists."""

import keyword
import re
from collections.abc import Iterable
from typing import Any

from toolwire_shared.tools import ToolSpec

_NOT_NAME = re.compile(r"[^0-9A-Za-z_]")
MAX_DESCRIPTION = 200
"""A tool's description is cut to its first sentence or this many characters in the listing."""


def python_names(wire_names: Iterable[str]) -> dict[str, str]:
    """Wire name -> a Python identifier the script calls it by (unique; '-' and '.' become '_', never a keyword)."""
    taken: set[str] = set()
    names: dict[str, str] = {}
    for wire in wire_names:
        name = _NOT_NAME.sub("_", wire)
        if not name or name[0].isdigit():
            name = "_" + name
        if keyword.iskeyword(name) or name in ("asyncio", "json", "print"):
            name += "_"
        base, n = name, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        names[wire] = name
    return names


def type_of(schema: Any, depth: int = 0) -> str:
    """A Python type annotation for a JSON schema (Any where it says too little or too much)."""
    if not isinstance(schema, dict) or depth > 4:
        return "Any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]"
    if "const" in schema:
        return f"Literal[{schema['const']!r}]"
    for union in ("anyOf", "oneOf"):
        if isinstance(schema.get(union), list):
            parts = list(dict.fromkeys(type_of(s, depth + 1) for s in schema[union]))
            return " | ".join(parts) if "Any" not in parts else "Any"
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(type_of({**schema, "type": k}, depth + 1) for k in kind)
    if kind == "array":
        return f"list[{type_of(schema.get('items'), depth + 1)}]"
    if kind == "object":
        return "dict"
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}.get(
        str(kind), "Any"
    )


def returns_of(spec: ToolSpec) -> str:
    """The script's value of the tool's result: its structured value's type (unwrapped from `{"result": ...}`), else
    `str` (its text)."""
    schema = spec.output_schema
    if not schema:
        return "str"
    wrapped = unwrapped_schema(schema)
    return type_of(wrapped if wrapped is not None else schema)


def unwrapped_schema(schema: dict[str, Any]) -> Any:
    """The schema of the value a `{"result": value}` wrapper holds, or None when the output is not wrapped."""
    properties = schema.get("properties")
    if isinstance(properties, dict) and list(properties) == ["result"] and schema.get("required") == ["result"]:
        return properties["result"]
    return None


def signature(name: str, spec: ToolSpec) -> str:
    """The tool's description as a comment, then `async def name(*, a: str, b: int | None = None) -> dict`."""
    properties = spec.input_schema.get("properties") or {}
    required = set(spec.input_schema.get("required") or [])
    params = []
    for param, schema in sorted(properties.items(), key=lambda item: item[0] not in required):
        annotation = type_of(schema)
        if param in required:
            params.append(f"{param}: {annotation}")
        else:
            default = schema.get("default") if isinstance(schema, dict) else None
            params.append(f"{param}: {annotation} = {default!r}")
    args = "*, " + ", ".join(params) if params else ""
    described = " ".join(spec.description.split())
    if len(described) > MAX_DESCRIPTION:
        described = described[: MAX_DESCRIPTION - 3] + "..."
    return f"# {described}\nasync def {name}({args}) -> {returns_of(spec)}"
