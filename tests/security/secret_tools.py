"""A tool whose arguments carry secrets under keys of any spelling, for the audit test of `secret_fields`."""

from typing import Any

from toolwire_server import Registry

registry = Registry("secret-tools")


@registry.tool(description="Pay with the given details.")
async def pay(details: dict[str, Any]) -> str:
    return f"paid ({len(details)} details)"
