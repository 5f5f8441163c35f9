"""A plain record (a slotted dataclass: a message, a tool result, a step) as JSON data, exactly as a run saves it.

The records are validated and dumped by pydantic where a run is loaded or saved; this is the same dump for one record
on its own (the CLI's JSON output, the console), with one TypeAdapter per record type, made once."""

from typing import Any

from pydantic import TypeAdapter

_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


def _adapter(kind: type) -> TypeAdapter[Any]:
    made = _ADAPTERS.get(kind)
    if made is None:
        made = _ADAPTERS[kind] = TypeAdapter(kind)
    return made


def record_json(record: object, *, exclude: set[str] | None = None) -> Any:
    """`record` as the JSON-ready data it saves as (its fields in order, datetimes as ISO text)."""
    return _adapter(type(record)).dump_python(record, mode="json", exclude=exclude)


def record_text(record: object, *, exclude: set[str] | None = None) -> str:
    """`record` as the JSON text it saves as (what a token count of it measures)."""
    return _adapter(type(record)).dump_json(record, exclude=exclude).decode()
