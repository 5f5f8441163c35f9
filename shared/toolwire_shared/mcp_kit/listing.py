"""An MCP listing: every page of it within bounds, and a tools/list page that breaks MCP's schema repaired tool by
tool (a broken tool is skipped and named with its field, so the server's other tools still work)."""

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import mcp_types as types
import pydantic
from mcp import Client
from mcp_types.methods import validate_server_result

from toolwire_shared.mcp_kit.sdk import absorb_tool_listing, send_raw_request

MAX_PAGES = 100
"""Pages of one listing at most: a server that answers with a next cursor for ever is refused, not followed."""
MAX_LISTED = 10_000
"""Tools (prompts, resources, templates) of one listing at most."""

Item = TypeVar("Item")


class ListingRefused(Exception):
    """A listing over a bound: what it says is why."""


class Page(Protocol):
    @property
    def next_cursor(self) -> str | None: ...


P = TypeVar("P", bound=Page)


async def every_page(
    list_page: Callable[[str | None], Awaitable[P | None]], items: Callable[[P], list[Item]], what: str
) -> list[Item]:
    """Every item of a paginated listing (`list_page(cursor)`; None: the server lists none of `what`), at most
    `MAX_PAGES` pages of `MAX_LISTED` items in all (else `ListingRefused`)."""
    found: list[Item] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await list_page(cursor)
        if page is None:
            return found
        found += items(page)
        if len(found) > MAX_LISTED:
            raise ListingRefused(f"its {what} are more than {MAX_LISTED}")
        cursor = page.next_cursor
        if not cursor:
            return found
    raise ListingRefused(f"its {what} go on past {MAX_PAGES} pages")


async def repaired_tools_page(
    client: Client, cursor: str | None, skipped: Callable[[str, str], None]
) -> types.ListToolsResult:
    """A tools/list page that failed MCP's schema, asked again unchecked and repaired (`repaired_tools`); the session
    keeps what it keeps of a listing it checked itself."""
    raw = await send_raw_request(client.session, "tools/list", {"cursor": cursor} if cursor else None, {})
    page = repaired_tools(raw, client.protocol_version or "2025-11-25", skipped)
    return absorb_tool_listing(client.session, page, complete=cursor is None and page.next_cursor is None)


def repaired_tools(raw: dict[str, Any], version: str, skipped: Callable[[str, str], None]) -> types.ListToolsResult:
    """An unchecked tools/list page checked tool by tool (as the SDK checks a page, for the session's protocol
    version): `skipped(tool name, problem)` for each tool that breaks MCP's schema."""
    tools: list[types.Tool] = []
    for item in raw.get("tools") or []:
        try:
            validate_server_result("tools/list", version, {"tools": [item]})
            tools.append(types.Tool.model_validate(item))
        except pydantic.ValidationError as exc:
            skipped(_tool_name(item), schema_problem(exc))
    next_cursor = raw.get("nextCursor")
    return types.ListToolsResult(tools=tools, next_cursor=next_cursor if isinstance(next_cursor, str) else None)


def _tool_name(item: object) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) else "?"


def schema_problem(exc: pydantic.ValidationError) -> str:
    """The first field of a listed tool that breaks MCP's schema: `inputSchema has no "type"`."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"] if not isinstance(part, int)]
    loc = loc[1:] if loc[:1] == ["tools"] else loc
    if error["type"] == "missing" and loc:
        parent = ".".join(loc[:-1])
        return f'{parent} has no "{loc[-1]}"' if parent else f'no "{loc[-1]}"'
    return f"{'.'.join(loc) or 'the tool'}: {error['msg']}"
