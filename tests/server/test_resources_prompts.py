"""Prompts, resources, templates, subscriptions, completion and list-changed notifications, against the real tool
server as a subprocess: over stdio and over Streamable HTTP, in both protocol eras the SDK client speaks."""

import base64
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Literal

import anyio
import httpx2
import mcp_types as types
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.subscriptions import PromptsListChanged, ResourceUpdated, ToolsListChanged

from helpers.servers import REPO, HttpServer, http_client, stdio_params, text_of, tokens_file

SURFACE = "tests/server/surface.py:registry"
Mode = Literal["auto", "legacy"]
WAYS = [("stdio", "auto"), ("stdio", "legacy"), ("http", "auto"), ("http", "legacy")]


@pytest.fixture(scope="module")
def http_server() -> Iterator[HttpServer]:
    with HttpServer(SURFACE) as running:
        yield running


@asynccontextmanager
async def connect(transport: str, mode: Mode, http_server: HttpServer) -> AsyncIterator[Client]:
    if transport == "stdio":
        async with Client(stdio_params(SURFACE), mode=mode, read_timeout_seconds=30) as client:
            yield client
    else:
        async with http_client(http_server.url, mode=mode) as client:
            yield client


@pytest.mark.parametrize(("transport", "mode"), WAYS)
async def test_prompts_list_and_get(transport: str, mode: Mode, http_server: HttpServer) -> None:
    async with connect(transport, mode, http_server) as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert set(prompts) == {"summarize", "greeting", "broken", "reply"}
        arguments = {a.name: (a.required, a.description) for a in prompts["summarize"].arguments or []}
        assert arguments == {"ticket": (True, "the ticket id"), "tone": (False, None)}
        assert prompts["greeting"].description == "A one-line greeting prompt."

        got = await client.get_prompt("summarize", {"ticket": "T-7", "tone": "friendly"})
        assert [(m.role, m.content.text) for m in got.messages] == [  # type: ignore[union-attr]
            ("user", "Summarize ticket T-7 in a friendly tone."),
            ("assistant", "Which details matter?"),
        ]
        plain = await client.get_prompt("greeting")
        assert plain.messages[0].content == types.TextContent(type="text", text="Say hello.")


@pytest.mark.parametrize(("transport", "mode"), WAYS)
async def test_prompt_mistakes_are_readable_errors(transport: str, mode: Mode, http_server: HttpServer) -> None:
    async with connect(transport, mode, http_server) as client:
        with pytest.raises(MCPError) as missing:
            await client.get_prompt("summarize", {"tone": "curt"})
        assert missing.value.error.code == types.INVALID_PARAMS
        assert "missing required argument 'ticket'" in missing.value.error.message
        assert '{"name": "summarize", "arguments": {"ticket": "..."}}' in missing.value.error.message

        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("nope")
        assert unknown.value.error.code == types.INVALID_PARAMS
        listing = "broken, greeting, reply, summarize"
        assert unknown.value.error.message == f"unknown prompt 'nope'. Prompts on this server: {listing}."

        with pytest.raises(MCPError) as failed:
            await client.get_prompt("broken")
        assert failed.value.error.message == "prompt 'broken' failed: the prompt store is down"


@pytest.mark.parametrize(("transport", "mode"), WAYS)
async def test_resources_list_and_read(transport: str, mode: Mode, http_server: HttpServer) -> None:
    async with connect(transport, mode, http_server) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert set(listed) == {"docs://readme", "docs://logo", "data://counter", "docs://broken"}
        assert (listed["docs://readme"].mime_type, listed["docs://readme"].description) == (
            "text/markdown",
            "How to use this desk.",
        )
        assert listed["docs://logo"].description == "The desk's logo."
        templates = {t.uri_template: t for t in (await client.list_resource_templates()).resource_templates}
        assert set(templates) == {"orders://{order_id}", "pages://{n}"}
        assert templates["orders://{order_id}"].description == "One order by id, e.g. orders://A123."

        text = (await client.read_resource("docs://readme")).contents[0]
        assert isinstance(text, types.TextResourceContents)
        assert (text.text, text.mime_type) == ("# Desk\nAsk about an order.", "text/markdown")
        blob = (await client.read_resource("docs://logo")).contents[0]
        assert isinstance(blob, types.BlobResourceContents)
        assert (base64.b64decode(blob.blob), blob.mime_type) == (bytes.fromhex("89504e470d0a1a0a"), "image/png")
        data = (await client.read_resource("data://counter")).contents[0]
        assert isinstance(data, types.TextResourceContents) and data.mime_type == "application/json"
        assert set(json.loads(data.text)) == {"count"}

        order = (await client.read_resource("orders://A124")).contents[0]
        assert isinstance(order, types.TextResourceContents)
        assert (str(order.uri), order.text) == ("orders://A124", "order A124: mouse")
        page = (await client.read_resource("pages://3")).contents[0]
        assert isinstance(page, types.TextResourceContents) and page.text == "page 3"


@pytest.mark.parametrize(("transport", "mode"), WAYS)
async def test_resource_mistakes_are_readable_errors(transport: str, mode: Mode, http_server: HttpServer) -> None:
    async with connect(transport, mode, http_server) as client:
        with pytest.raises(MCPError) as unknown:
            await client.read_resource("docs://nope")
        assert unknown.value.error.code == types.INVALID_PARAMS
        assert unknown.value.error.message == (
            "unknown resource 'docs://nope'. Resources and templates on this server: docs://readme, docs://logo, "
            "data://counter, docs://broken, orders://{order_id}, pages://{n}."
        )
        with pytest.raises(MCPError) as bad:
            await client.read_resource("pages://three")
        assert bad.value.error.code == types.INVALID_PARAMS
        assert bad.value.error.message.startswith("bad resource URI 'pages://three': argument 'n': Input should be")
        with pytest.raises(MCPError) as failed:
            await client.read_resource("docs://broken")
        assert failed.value.error.message == "reading resource 'docs://broken' failed: disk gone"
        with pytest.raises(MCPError) as missing:
            await client.read_resource("orders://Z999")
        assert missing.value.error.message == "reading resource 'orders://Z999' failed: 'no order Z999'"


@pytest.mark.parametrize(("transport", "mode"), WAYS)
async def test_completion_of_prompt_arguments_and_template_variables(
    transport: str, mode: Mode, http_server: HttpServer
) -> None:
    async with connect(transport, mode, http_server) as client:
        capabilities = client.server_capabilities
        assert capabilities is not None and capabilities.completions is not None
        by_prompt = await client.complete(
            types.PromptReference(type="ref/prompt", name="reply"), {"name": "order_id", "value": "a1"}
        )
        assert by_prompt.completion.values == ["A123", "A124"]
        assert by_prompt.completion.total == 2 and by_prompt.completion.has_more is False
        template = types.ResourceTemplateReference(type="ref/resource", uri="orders://{order_id}")
        by_template = await client.complete(template, {"name": "order_id", "value": "B"})
        assert by_template.completion.values == ["B200"]
        nothing = await client.complete(
            types.PromptReference(type="ref/prompt", name="greeting"), {"name": "x", "value": ""}
        )
        assert nothing.completion.values == []
        with pytest.raises(MCPError) as unknown:
            await client.complete(types.PromptReference(type="ref/prompt", name="nope"), {"name": "x", "value": ""})
        assert unknown.value.error.message.startswith("nothing to complete: no prompt 'nope' on this server")
        with pytest.raises(MCPError) as failed:
            pages = types.ResourceTemplateReference(type="ref/resource", uri="pages://{n}")
            await client.complete(pages, {"name": "n", "value": "1"})
        assert failed.value.error.message == "completing 'n' failed: the page index is rebuilding"


@pytest.fixture(scope="module")
def changing_server() -> Iterator[HttpServer]:
    """A server of its own for the tests that register things at runtime (the listings above stay exact)."""
    with HttpServer(SURFACE) as running:
        yield running


@asynccontextmanager
async def legacy_notes(transport: str, server: HttpServer) -> AsyncIterator[tuple[Client, "Notes"]]:
    """A handshake-era client whose server notifications land in a stream the test reads."""
    send, receive = anyio.create_memory_object_stream[types.ServerNotification](100)

    async def on_message(message: object) -> None:
        if not isinstance(message, Exception):
            await send.send(message)  # type: ignore[arg-type]

    if transport == "stdio":
        client_cm = Client(stdio_params(SURFACE), mode="legacy", message_handler=on_message, read_timeout_seconds=30)
        async with client_cm as client:
            yield client, Notes(receive)
    else:
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            Client(
                streamable_http_client(server.url, http_client=http), mode="legacy", message_handler=on_message
            ) as client,
        ):
            yield client, Notes(receive)


class Notes:
    def __init__(self, receive: MemoryObjectReceiveStream[types.ServerNotification]) -> None:
        self.receive = receive

    async def next_of(self, method: str) -> types.ServerNotification:
        """The next notification of that method (others, e.g. a log line, are skipped); fails after 10 s."""
        with anyio.fail_after(10):
            while True:
                note = await self.receive.receive()
                if note.method == method:
                    return note

    async def next_of_any(self) -> types.ServerNotification:
        with anyio.fail_after(10):
            while True:
                note = await self.receive.receive()
                if note.method != "notifications/message":
                    return note


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_legacy_subscribe_gets_resource_updated(transport: str, changing_server: HttpServer) -> None:
    async with legacy_notes(transport, changing_server) as (client, notes):
        capabilities = client.server_capabilities
        assert capabilities is not None and capabilities.resources is not None
        assert capabilities.resources.subscribe is True and capabilities.resources.list_changed is True
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource("data://counter")
        await client.call_tool("bump", {})
        updated = await notes.next_of("notifications/resources/updated")
        assert updated.params.uri == "data://counter"  # type: ignore[union-attr]

        with pytest.warns(MCPDeprecationWarning):
            await client.unsubscribe_resource("data://counter")
        await client.call_tool("bump", {})
        await client.call_tool("add_resource", {"uri": f"notes://{transport}-after-unsubscribe", "text": "x"})
        # the next notification is the list change: no update for the URI unsubscribed from came before it
        assert (await notes.next_of_any()).method == "notifications/resources/list_changed"

        with pytest.raises(MCPError) as unknown, pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource("docs://nope")
        assert unknown.value.error.message.startswith("unknown resource 'docs://nope'")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_legacy_list_changed_after_runtime_registration(transport: str, changing_server: HttpServer) -> None:
    async with legacy_notes(transport, changing_server) as (client, notes):
        name = f"late_{transport}"
        await client.call_tool("add_tool", {"name": name})
        await notes.next_of("notifications/tools/list_changed")
        assert name in {t.name for t in (await client.list_tools()).tools}
        assert text_of(await client.call_tool(name, {})) == name

        await client.call_tool("add_prompt", {"name": f"{name}_prompt"})
        await notes.next_of("notifications/prompts/list_changed")
        assert f"{name}_prompt" in {p.name for p in (await client.list_prompts()).prompts}

        await client.call_tool("add_resource", {"uri": f"notes://{name}", "text": "late note"})
        await notes.next_of("notifications/resources/list_changed")
        note = (await client.read_resource(f"notes://{name}")).contents[0]
        assert isinstance(note, types.TextResourceContents) and note.text == "late note"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_modern_listen_gets_list_changed_and_updates(transport: str, changing_server: HttpServer) -> None:
    async with connect(transport, "auto", changing_server) as client:
        capabilities = client.server_capabilities
        assert capabilities is not None and capabilities.tools is not None and capabilities.resources is not None
        assert capabilities.tools.list_changed is True and capabilities.resources.subscribe is True
        name = f"modern_{transport}"
        async with client.listen(
            tools_list_changed=True,
            prompts_list_changed=True,
            resources_list_changed=True,
            resource_subscriptions=["data://counter"],
        ) as events:
            await client.call_tool("add_tool", {"name": name})
            with anyio.fail_after(10):
                assert isinstance(await anext(events), ToolsListChanged)
            assert name in {t.name for t in (await client.list_tools()).tools}

            await client.call_tool("add_prompt", {"name": f"{name}_prompt"})
            with anyio.fail_after(10):
                assert isinstance(await anext(events), PromptsListChanged)

            await client.call_tool("bump", {})
            with anyio.fail_after(10):
                updated = await anext(events)
            assert isinstance(updated, ResourceUpdated) and updated.uri == "data://counter"


CLERK, TOOLS_ONLY = "tok-clerk-5e1d", "tok-tools-77b0"


@pytest.fixture(scope="module")
def granted_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    grants = {"clerk": (CLERK, ["echo", "orders://*", "docs://readme", "reply"]), "tools_only": (TOOLS_ONLY, ["echo"])}
    tokens = tokens_file(tmp_path_factory.mktemp("access"), grants)
    with HttpServer(SURFACE, "--tokens", str(tokens)) as running:
        yield running


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_grants_cover_prompts_and_resources(granted_server: HttpServer, mode: Mode) -> None:
    async with http_client(granted_server.url, token=CLERK, mode=mode) as clerk:
        assert [p.name for p in (await clerk.list_prompts()).prompts] == ["reply"]
        assert [str(r.uri) for r in (await clerk.list_resources()).resources] == ["docs://readme"]
        templates = (await clerk.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["orders://{order_id}"]
        order = (await clerk.read_resource("orders://A123")).contents[0]
        assert isinstance(order, types.TextResourceContents) and order.text == "order A123: keyboard"
        with pytest.raises(MCPError) as hidden:
            await clerk.read_resource("docs://logo")
        assert hidden.value.error.message == (
            "unknown resource 'docs://logo'. Resources and templates on this server: docs://readme, orders://{order_id}."
        )
        with pytest.raises(MCPError) as hidden_prompt:
            await clerk.get_prompt("summarize", {"ticket": "T-1"})
        assert hidden_prompt.value.error.message == "unknown prompt 'summarize'. Prompts on this server: reply."

    async with http_client(granted_server.url, token=TOOLS_ONLY, mode=mode) as tools_only:
        assert (await tools_only.list_prompts()).prompts == []
        assert (await tools_only.list_resources()).resources == []
        assert (await tools_only.list_resource_templates()).resource_templates == []
        with pytest.raises(MCPError):
            await tools_only.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="orders://{order_id}"),
                {"name": "order_id", "value": "A"},
            )


async def test_support_desk_offers_the_refund_policy_and_orders(support_db: dict[str, str]) -> None:
    from examples.support_tools import POLICIES

    params = stdio_params("examples.support_tools:desk", env=support_db)
    async with Client(params, read_timeout_seconds=30) as desk:
        policy = (await desk.read_resource("policy://refunds")).contents[0]
        assert isinstance(policy, types.TextResourceContents)
        called = await desk.call_tool("get_policy", {"topic": "refund"})
        assert policy.text == POLICIES["refund"] == text_of(called)  # one source of the text

        order = (await desk.read_resource("orders://A124")).contents[0]
        assert isinstance(order, types.TextResourceContents) and order.mime_type == "application/json"
        assert json.loads(order.text) == (await desk.call_tool("get_order", {"order_id": "A124"})).structured_content
        template = types.ResourceTemplateReference(type="ref/resource", uri="orders://{order_id}")
        ids = await desk.complete(template, {"name": "order_id", "value": "B"})
        assert ids.completion.values == ["B200", "B201"]
        with pytest.raises(MCPError) as missing:
            await desk.read_resource("orders://Z9")
        assert (
            missing.value.error.message
            == "reading resource 'orders://Z9' failed: no order with id Z9; ids look like A123"
        )


def test_desk_surface_example_runs(support_db: dict[str, str]) -> None:
    script = REPO / "examples" / "desk_surface.py"
    proc = subprocess.run(
        [sys.executable, str(script)], env={**os.environ, **support_db}, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert (
        "prompt   answer_ticket(order_id, topic?): Answer a customer's ticket about one order: the policy for "
        "its topic, then the order to look up." in lines
    )
    assert "resource policy://refunds [text/plain]" in lines
    assert "template orders://{order_id} [application/json]" in lines
    assert "complete orders://{order_id} from 'A': A123, A124, A125" in lines
    assert lines[-1].startswith("message  user: A customer writes about order A123 (damaged item).")
