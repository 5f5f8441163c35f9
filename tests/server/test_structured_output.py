"""Structured tool output: outputSchema from the return annotation, structuredContent beside the text, and the
checks of it (the server's of its own results, the ToolBox's of any server's), over a real stdio server process and
in-process alike."""

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from typing_extensions import TypedDict

from helpers.servers import REPO, TEST_TOOLS, serve_argv, stdio_params, text_of
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.source import RunContext, ToolSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry, load_registry
from toolwire_shared.messages import ToolCall

ORDER_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "total": {"type": "integer"}},
    "required": ["id", "total"],
}


async def test_output_schemas_listed_and_structured_content_sent_over_stdio() -> None:
    async with Client(stdio_params(TEST_TOOLS)) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert tools["order"].output_schema == ORDER_SCHEMA
        assert tools["parcel"].output_schema is not None
        assert tools["parcel"].output_schema["required"] == ["weight_kg"]
        stock = tools["stock"].output_schema
        assert (
            stock is not None and stock["required"] == ["result"] and stock["properties"]["result"]["type"] == "array"
        )
        assert tools["echo"].output_schema == {
            "type": "object",
            "properties": {"result": {"type": "string"}},
            "required": ["result"],
        }

        order = await client.call_tool("order", {"order_id": "A7"})
        assert order.structured_content == {"id": "A7", "total": 42}
        assert json.loads(text_of(order)) == order.structured_content  # the text block is the same JSON
        listed = await client.call_tool("stock", {"skus": ["ab", "xyz"]})
        assert listed.structured_content == {"result": [{"sku": "ab", "count": 2}, {"sku": "xyz", "count": 3}]}
        assert json.loads(text_of(listed)) == listed.structured_content["result"]
        parcel = await client.call_tool("parcel", {"weight_kg": 1.5})
        assert parcel.structured_content == {"weight_kg": 1.5, "fragile": False}
        echoed = await client.call_tool("echo", {"text": "hi"})
        assert (text_of(echoed), echoed.structured_content) == ("hi", {"result": "hi"})  # the model reads "hi"


async def test_a_cut_result_keeps_its_structured_content() -> None:
    """MCP requires structuredContent of a tool with an output schema; only the model's text is cut."""
    async with Client(stdio_params(TEST_TOOLS, "--max-result-chars", "100")) as client:
        big = await client.call_tool("big_text", {"n": 500})
    assert big.meta is not None and big.meta["io.toolwire/truncated"] == {"kept": 100, "total": 500}
    assert big.structured_content == {"result": "x" * 500}


def _stdio_source() -> McpSource:
    return McpSource("tools", command=[*serve_argv(TEST_TOOLS), "--stdio"], cwd=str(REPO))


def _isolated() -> McpSource:
    """Every tool in a worker process: the worker makes the structured value (and the bad_output error) itself."""
    return McpSource("tools", command=[*serve_argv(TEST_TOOLS), "--stdio", "--isolate"], cwd=str(REPO))


def _in_process() -> RegistrySource:
    return RegistrySource(load_registry(TEST_TOOLS))


SOURCES = [
    pytest.param(_stdio_source, id="stdio"),
    pytest.param(_isolated, id="stdio-isolated"),
    pytest.param(_in_process, id="in-process"),
]


async def _call(box: ToolBox, name: str, arguments: dict[str, Any]) -> Any:
    return await box.call(ToolCall(id="c1", name=name, arguments=arguments), RunContext("r"))


@pytest.mark.parametrize("make", SOURCES)
async def test_tool_results_keep_the_structured_value(make: Any) -> None:
    source: ToolSource = make()
    async with ToolBox([source]) as box:
        spec = box.spec("order")
        assert spec is not None and spec.output_schema == ORDER_SCHEMA
        order = await _call(box, "order", {"order_id": "B2"})
        assert (order.is_error, order.structured) == (False, {"id": "B2", "total": 42})
        failed = await _call(box, "boom", {"message": "no"})
        assert failed.is_error and failed.structured is None


@pytest.mark.parametrize(
    ("tool", "where"),
    [
        ("bad_order", ["at 'total'", "'lots'"]),  # a value against the return annotation
        ("forged_order", ["at 'id'", "at 'total'"]),  # the tool's own CallToolResult against it
    ],
)
@pytest.mark.parametrize("make", SOURCES)
async def test_a_result_that_breaks_the_tools_own_schema_is_bad_output(make: Any, tool: str, where: list[str]) -> None:
    """Caught by the server, which checks what a tool returns against its output annotation before it is sent."""
    async with ToolBox([make()]) as box:
        result = await _call(box, tool, {})
    assert (result.is_error, result.error_kind, result.structured) == (True, "bad_output", None)
    assert f"{tool} returned a result that does not match its own output schema" in result.content
    assert all(part in result.content for part in where), result.content


async def test_structured_content_that_breaks_the_schema_is_caught_by_the_client() -> None:
    """A server that sends whatever its tool returns (the SDK's low-level Server): the ToolBox checks the result
    against the schema the server listed."""
    argv = [sys.executable, str(Path(__file__).with_name("forging_server.py"))]
    async with ToolBox([McpSource("forger", command=argv, cwd=str(REPO))]) as box:
        result = await _call(box, "forged_order", {})
    assert (result.is_error, result.error_kind) == (True, "bad_output")
    assert "forged_order returned a result that does not match" in result.content
    assert "at 'id': 7 is not of type 'string'" in result.content and "'total' is a required property" in result.content


def test_registration_states_an_undescribable_return_type() -> None:
    import typing

    class Stdlib(typing.TypedDict):  # nested in a list, pydantic needs typing_extensions' TypedDict below 3.12
        n: int

    registry = Registry("r")

    def rows() -> list[Stdlib]:
        """Rows."""
        return []

    if sys.version_info >= (3, 12):
        assert registry.add(rows).output is not None
        return
    with pytest.raises(TypeError, match=r"tool 'rows': its return annotation .* cannot be made into an output schema"):
        registry.add(rows)


def test_annotations_that_give_no_schema() -> None:
    class Row(TypedDict):
        n: int

    registry = Registry("r")

    def untyped():  # type: ignore[no-untyped-def]
        """No annotation."""

    def anything() -> Any:
        """Any."""

    def row() -> Row:
        """A row."""
        return {"n": 1}

    assert registry.add(untyped).output is None
    assert registry.add(anything).output is None
    assert registry.add(row).spec().output_schema == {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }
