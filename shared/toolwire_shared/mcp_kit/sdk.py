"""Every private name of the `mcp` SDK toolwire uses, and only here: an SDK release that moves one breaks this module
(and tests/unit/test_sdk_names.py says which name), not five modules' imports at start-up.

Each is used for what the SDK offers no public way to do: an unchecked tools/list page (schema repair), a legacy
task call's raw answer, the handshake-era callbacks set after initialize, the 2026-07-28 input-required round loop,
and the server's context-carrying streams."""

from typing import Any

import mcp_types as types
from mcp.client._input_required import run_input_required_driver
from mcp.client._transport import TransportStreams
from mcp.client.session import ClientSession, ListRootsFnT, SamplingFnT
from mcp.shared._context_streams import create_context_streams
from mcp.shared.dispatcher import CallOptions

__all__ = [
    "SESSION_ATTRIBUTES",
    "TransportStreams",
    "absorb_tool_listing",
    "create_context_streams",
    "run_input_required_driver",
    "send_raw_request",
    "set_server_request_callbacks",
]

SESSION_ATTRIBUTES = ("_dispatcher", "_sampling_callback", "_list_roots_callback")
"""The private attributes of a ClientSession used below (the test checks a new session has each)."""


async def send_raw_request(
    session: ClientSession, method: str, params: dict[str, Any] | None, options: CallOptions
) -> dict[str, Any]:
    """A request whose answer comes back unchecked (a dict), where the session's own would validate it."""
    answer: dict[str, Any] = await session._dispatcher.send_raw_request(method, params, options)
    return answer


def absorb_tool_listing(
    session: ClientSession, page: types.ListToolsResult, *, complete: bool
) -> types.ListToolsResult:
    """What the session does with a tools/list page it checked itself (output schemas kept for its calls)."""
    return session._absorb_tool_listing(page, complete=complete)


def set_server_request_callbacks(session: ClientSession, *, sampling: SamplingFnT, list_roots: ListRootsFnT) -> None:
    """The session's callbacks for a server's sampling and roots requests, set after initialize (the SDK takes them
    only at construction, where they would also advertise the capabilities)."""
    session._sampling_callback = sampling
    session._list_roots_callback = list_roots
