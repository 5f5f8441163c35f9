"""Arguments made from a tool's input schema, with no model: the smallest value that fits, the same every time.

A port of the generator behind Pydantic AI's TestModel (`pydantic_ai.models.test._JsonSchemaTestData`, MIT): only
required properties (an optional one is left out, so the tool's own default applies), `const`, then an `enum`'s or
`examples`' first value, a `$ref` followed into `$defs`, the first `anyOf`/`oneOf` member, `allOf` members merged,
"a" for a string (a known `format` gets a value of that format, `minLength` repeats the letter), 0 for a number
within its bounds, False, one item for an array. `seed` moves every choice on (Pydantic AI's `seed`)."""

import math
import string
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any
from uuid import UUID

_CHARS = string.ascii_letters + string.digits + string.punctuation
_FORMATS: dict[str, Callable[[int], str]] = {
    "date": lambda seed: (date(2024, 1, 1) + timedelta(days=seed)).isoformat(),
    "date-time": lambda seed: f"{(date(2024, 1, 1) + timedelta(days=seed)).isoformat()}T00:00:00Z",
    "time": lambda seed: f"00:00:{seed % 60:02}Z",
    "email": lambda seed: f"user{seed}@example.com",
    "uri": lambda seed: f"https://example.com/{seed}",
    "uuid": lambda seed: str(UUID(int=seed)),
    "ipv4": lambda seed: f"192.0.2.{seed % 256}",
}


def example_arguments(schema: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Arguments for a tool whose `inputSchema` is `schema` (an object schema; anything else gives {})."""
    value = _Generator(schema, seed).any(schema)
    return value if isinstance(value, dict) else {}


class _Generator:
    def __init__(self, root: dict[str, Any], seed: int) -> None:
        self.root, self.seed = root, seed
        self.defs: dict[str, Any] = root.get("$defs") or root.get("definitions") or {}

    def any(self, schema: object) -> Any:
        if not isinstance(schema, dict):
            return self.char()  # a boolean schema has no structure to follow
        if "const" in schema:
            return schema["const"]
        for key in ("enum", "examples"):
            if isinstance(schema.get(key), list) and schema[key]:
                return schema[key][self.seed % len(schema[key])]
        if isinstance(schema.get("allOf"), list) and schema["allOf"]:
            return self.any(self.merged(schema))
        if isinstance(schema.get("$ref"), str):
            return self.any(self.resolve(schema["$ref"]))
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self.any(schema[key][self.seed % len(schema[key])])
        kind = schema.get("type")
        if isinstance(kind, list) and kind:
            return self.any({**schema, "type": kind[self.seed % len(kind)]})
        if kind == "object":
            return self.object_(schema)
        if kind == "string":
            return self.string(schema)
        if kind == "integer":
            return self.integer(schema)
        if kind == "number":
            return self.number(schema)
        if kind == "boolean":
            return bool(self.seed % 2)
        if kind == "array":
            return self.array(schema)
        if kind == "null":
            return None
        return self.char()

    def resolve(self, ref: str) -> Any:
        """`#/$defs/NAME` (or `#/definitions/NAME`), else a JSON pointer into the root schema; {} when it is none."""
        for prefix in ("#/$defs/", "#/definitions/"):
            if ref.startswith(prefix) and ref[len(prefix) :] in self.defs:
                return self.defs[ref[len(prefix) :]]
        target: Any = self.root
        for part in ref.removeprefix("#/").split("/") if ref.startswith("#/") else ["\0"]:
            target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
        return target if isinstance(target, dict) else {}

    def merged(self, schema: dict[str, Any]) -> dict[str, Any]:
        """`schema` without `allOf`, each member's properties and required names added, its other keywords kept
        where the schema has none of its own."""
        merged = {key: value for key, value in schema.items() if key != "allOf"}
        for member in schema["allOf"]:
            if isinstance(member, dict) and isinstance(member.get("$ref"), str):
                member = {**self.resolve(member["$ref"]), **{k: v for k, v in member.items() if k != "$ref"}}
            if not isinstance(member, dict):
                continue
            for key, value in member.items():
                if key == "properties" and isinstance(value, dict):
                    merged["properties"] = {**value, **(merged.get("properties") or {})}
                elif key == "required" and isinstance(value, list):
                    merged["required"] = [*(merged.get("required") or []), *value]
                elif key not in ("allOf", "$ref"):
                    merged.setdefault(key, value)
        return merged

    def object_(self, schema: dict[str, Any]) -> dict[str, Any]:
        required = set(schema.get("required") or [])
        properties: dict[str, Any] = schema.get("properties") or {}
        data = {key: self.any(value) for key, value in properties.items() if key in required}
        extra = schema.get("additionalProperties")
        if extra:
            key = "additionalProperty"
            while key in data:
                key += "_"
            data[key] = self.any(extra)
        return data

    def string(self, schema: dict[str, Any]) -> str:
        made = _FORMATS.get(str(schema.get("format")))
        if made is not None:
            value = made(self.seed)
            if schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value)):
                return value
        minimum = schema.get("minLength")
        if isinstance(minimum, int):
            return self.char() * minimum
        return "" if schema.get("maxLength") == 0 else self.char()

    def integer(self, schema: dict[str, Any]) -> int:
        low, high = _bound(schema, "minimum"), _bound(schema, "maximum")
        minimum = None if low is None else math.ceil(low)
        maximum = None if high is None else math.floor(high)
        if (exclusive := _bound(schema, "exclusiveMinimum")) is not None:
            minimum = max(minimum, math.floor(exclusive) + 1) if minimum is not None else math.floor(exclusive) + 1
        if (exclusive := _bound(schema, "exclusiveMaximum")) is not None:
            maximum = min(maximum, math.ceil(exclusive) - 1) if maximum is not None else math.ceil(exclusive) - 1
        if minimum is not None and maximum is not None:
            return minimum if maximum <= minimum else minimum + self.seed % (maximum - minimum + 1)
        if minimum is not None:
            return minimum + self.seed
        if maximum is not None:
            return maximum - self.seed
        return self.seed

    def number(self, schema: dict[str, Any]) -> float:
        low = _bound(schema, "minimum")
        above = _bound(schema, "exclusiveMinimum")
        high = _bound(schema, "maximum")
        below = _bound(schema, "exclusiveMaximum")
        if above is not None:
            low = above if low is None else max(low, above)
        if below is not None:
            high = below if high is None else min(high, below)
        if low is not None and high is not None:
            value = low + self.seed % (high - low) if high > low else low
            return float((low + high) / 2 if value in (above, below) else value)
        if low is not None:
            return float(low + self.seed + (1 if above is not None else 0))
        if high is not None:
            return float(high - self.seed - (1 if below is not None else 0))
        return float(self.seed)

    def array(self, schema: dict[str, Any]) -> list[Any]:
        items = schema.get("items", {})
        prefix = schema.get("prefixItems") or (items if isinstance(items, list) else [])
        items = {} if isinstance(items, list) else items
        data = [self.item(each, schema) for each in prefix]
        minimum, maximum = schema.get("minItems", 0), schema.get("maxItems")
        if minimum > len(data):
            data += [self.item(items, schema) for _ in range(minimum - len(data))]
        elif items and (maximum is None or maximum > len(data)):
            data.append(self.item(items, schema))
        return data

    def item(self, schema: object, array: dict[str, Any]) -> Any:
        value = self.any(schema)
        if array.get("uniqueItems"):
            self.seed += 1
        return value

    def char(self) -> str:
        """a, b, ..., then aa, ab, ... as the seed grows (spreadsheet columns)."""
        name, rest = "", self.seed // len(_CHARS)
        while rest > 0:
            name += _CHARS[(rest - 1) % len(_CHARS)]
            rest //= len(_CHARS)
        return name + _CHARS[self.seed % len(_CHARS)]


def _bound(schema: dict[str, Any], key: str) -> float | None:
    """A numeric bound, or None when missing, not a number (draft 4's boolean exclusive bounds) or infinite."""
    value = schema.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if isinstance(value, int) or math.isfinite(value) else None
