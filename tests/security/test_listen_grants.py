"""Hole 6: `subscriptions/listen` against a real `toolwire serve --http`. An agent hears a resource update only for a
URI its grant allows (one granted nothing asked for `data://counter` and heard it), and one agent cannot hold all
of the server's listen streams: past `--max-listen-streams-per-agent` it is refused, readably, and other agents are
not."""

from collections.abc import Iterator
from contextlib import AsyncExitStack

import anyio
import pytest
from mcp import Client, MCPError
from mcp.shared.subscriptions import ResourceUpdated, ServerEvent, ToolsListChanged

from helpers.polling import await_until
from helpers.servers import HttpServer, http_client

SURFACE = "tests/server/surface.py:registry"
NOBODY, WATCHER, ADMIN = "tok-listen-nobody-1a", "tok-listen-watcher-2b", "tok-listen-admin-3c"
CAP = 2


def _tokens(tmp_path_factory: pytest.TempPathFactory) -> str:
    tokens = tmp_path_factory.mktemp("access") / "tokens.toml"
    tokens.write_text(
        f'[agents.nobody]\ntoken = "{NOBODY}"\ntools = []\n'
        f'[agents.watcher]\ntoken = "{WATCHER}"\ntools = ["data://*"]\n'
        f'[agents.admin]\ntoken = "{ADMIN}"\ntools = ["*"]\n'
    )
    return str(tokens)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    with HttpServer(SURFACE, "--tokens", _tokens(tmp_path_factory)) as running:
        yield running


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    args = ("--tokens", _tokens(tmp_path_factory), "--max-listen-streams-per-agent", str(CAP))
    with HttpServer(SURFACE, *args) as running:
        yield running


async def _next(events: object) -> ServerEvent:
    with anyio.fail_after(10):
        event: ServerEvent = await anext(events)  # type: ignore[call-overload]
        return event


async def test_a_resource_update_reaches_only_agents_granted_its_uri(server: HttpServer) -> None:
    async with (
        http_client(server.url, token=NOBODY) as nobody,
        http_client(server.url, token=WATCHER) as watcher,
        http_client(server.url, token=ADMIN) as admin,
        nobody.listen(tools_list_changed=True, resource_subscriptions=["data://counter"]) as nobody_hears,
        watcher.listen(tools_list_changed=True, resource_subscriptions=["data://counter"]) as watcher_hears,
    ):
        await admin.call_tool("bump", {})  # posts notifications/resources/updated for data://counter
        await admin.call_tool("add_tool", {"name": "listen_grants_marker"})  # then a tools list change
        assert await _next(watcher_hears) == ResourceUpdated(uri="data://counter")
        assert isinstance(await _next(watcher_hears), ToolsListChanged)
        # events reach a stream in order: the list change coming first means no update was delivered before it
        assert isinstance(await _next(nobody_hears), ToolsListChanged)


async def _listen(client: Client, stack: AsyncExitStack) -> None:
    await stack.enter_async_context(client.listen(tools_list_changed=True))


async def test_one_agent_holds_at_most_its_cap_of_listen_streams(capped: HttpServer) -> None:
    async with (
        http_client(capped.url, token=ADMIN) as admin,
        http_client(capped.url, token=WATCHER) as watcher,
        AsyncExitStack() as first,
        AsyncExitStack() as rest,
    ):
        await _listen(admin, first)
        for _ in range(CAP - 1):
            await _listen(admin, rest)
        with pytest.raises(MCPError) as refused:
            await _listen(admin, rest)
        assert refused.value.error.message == (
            f"agent 'admin' has {CAP} subscriptions/listen streams open; this server allows {CAP} per agent "
            "(toolwire serve --max-listen-streams-per-agent). Close one, or listen for several things on one stream."
        )
        async with watcher.listen(tools_list_changed=True):  # another agent is not refused
            pass
        await first.aclose()

        async def opens_again() -> bool:
            try:
                async with admin.listen(tools_list_changed=True):
                    return True
            except MCPError:
                return False

        await await_until(opens_again, "admin's closed stream to free its slot", timeout_s=15, interval_s=0.1)
