"""A tool that cannot do its job without something of the client's (its model, its roots, a person to ask) refuses a
client that did not declare it: error -32021 naming what is missing (SEP-2575; HTTP 400), before it relies on it,
instead of a result that pretends. `ctx.require_client(types.ClientCapabilities(sampling=...))` in the tool."""

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError


class ClientLacks(Exception):
    """Raised through the tool (tools/execution.py): the call ends as the protocol error `error()` says."""

    def __init__(self, required: types.ClientCapabilities, missing: list[str]):
        super().__init__(f"the client did not declare {', '.join(missing)}")
        self.required, self.missing = required, missing

    def error(self) -> MCPError:
        data = types.MissingRequiredClientCapabilityErrorData(required_capabilities=self.required)
        return MCPError(
            code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=f"this tool needs the client's {', '.join(self.missing)}: declare it in the request's "
            "capabilities (_meta['io.modelcontextprotocol/clientCapabilities'], or initialize's)",
            data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
        )


def check(declared: types.ClientCapabilities | None, required: types.ClientCapabilities) -> None:
    """Raise ClientLacks unless every capability set in `required` is declared (present) in `declared`."""
    wanted = required.model_dump(exclude_none=True)
    have: dict[str, Any] = declared.model_dump(exclude_none=True) if declared is not None else {}
    missing = [name for name in wanted if name not in have]
    if missing:
        raise ClientLacks(required, missing)
