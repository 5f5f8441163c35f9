"""Reading a provider's JSON defensively: a member that should be an object may be missing, null or of another type
(local servers and proxies bend the formats), and the adapters then read it as empty rather than fail."""

from typing import Any


def member(data: Any, key: str) -> dict[str, Any]:
    """`data[key]` when `data` is an object and that member is one too, else {}."""
    found = data.get(key) if isinstance(data, dict) else None
    return found if isinstance(found, dict) else {}
