"""The tool source seam: a ToolSource declares its optional abilities (the defaults are none), and what the model is
offered of the sources' tools is a stack of layers, so a new concern (a tool search, a code mode) is one more layer
given to the ToolBox, over the `--allow` filter and under the wire names and approval marks."""

from collections.abc import Sequence
from dataclasses import replace

from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.source import RunContext, ToolRequest, ToolSource
from toolwire_client.tools.tool_layers import Route
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolSpec


def _orders() -> RegistrySource:
    orders = Registry("orders")

    @orders.tool()
    def get_order(order_id: str) -> str:
        """Look an order up."""
        return f"order {order_id}"

    @orders.tool()
    def refund(order_id: str) -> str:
        """Refund an order."""
        return f"refunded {order_id}"

    @orders.tool()
    def cancel(order_id: str) -> str:
        """Cancel an order."""
        return f"cancelled {order_id}"

    return RegistrySource(orders)


class Counted(ToolSource):
    """A source that declares only its tools: every optional ability is the base's default."""

    def __init__(self, tools: list[str], instructions: str | None = None, name: str = "counted") -> None:
        self.name, self.tools, self.lists = name, tools, 0
        if instructions is not None:
            self.instructions = instructions

    async def list_tools(self) -> list[ToolSpec]:
        self.lists += 1
        return [ToolSpec(name=name, description=f"Says {name}.", source=self.name) for name in self.tools]

    async def call(self, request: ToolRequest) -> ToolResult:
        return ToolResult(call_id=request.call.id, name=request.call.name, content=f"{self.name}:{request.call.name}")


class SearchLayer:
    """A tool search as a layer: offers only the routes named in `shown`, and one `find_tools` tool of its own."""

    def __init__(self, shown: set[str]) -> None:
        self.shown = shown
        self.seen: set[str] = set()
        self.source = Counted(["find_tools"])

    def check(self, named: list[Route], sources: Sequence[ToolSource]) -> None:
        return None

    async def start(self) -> None:
        self.spec = (await self.source.list_tools())[0]

    def offer(self, routes: list[Route]) -> list[Route]:
        self.seen = {route.known for route in routes}
        own = Route(self.source, "find_tools", self.spec, "find_tools", frozenset({"find_tools"}))
        return [route for route in routes if route.known in self.shown] + [own]


async def test_a_source_that_declares_no_ability_has_the_defaults() -> None:
    source = Counted(["hello"])
    assert (source.instructions, source.tools_changed) == (None, False)
    assert (source.offers_prompts, source.offers_resources, source.watches_links) == (False, False, False)
    assert (source.times_out_itself, source.checks_output) == (False, False)
    assert await source.list_prompts() == [] and await source.list_resources() == []
    async with ToolBox([source, Counted(["bye"], instructions="Say bye politely.", name="polite")]) as box:
        assert box.instructions == [("polite", "Say bye politely.")]
        result = await box.call(ToolCall(id="c1", name="hello", arguments={}), RunContext("run_1"))
        assert result.content == "counted:hello"


async def test_a_declared_tool_change_is_listed_again_and_cleared() -> None:
    source = Counted(["hello"])
    async with ToolBox([source]) as box:
        assert not await box.refresh() and source.lists == 1  # nothing declared changed: not listed again
        source.tools, source.tools_changed = ["hello", "again"], True
        assert await box.refresh()
        assert [spec.name for spec in box.specs] == ["hello", "again"] and not source.tools_changed


async def test_a_layer_sees_the_allowed_tools_and_may_hide_and_add_tools() -> None:
    layer = SearchLayer({"get_order"})
    await layer.start()
    marked = {"orders": frozenset({"refund"})}
    async with ToolBox([_orders()], allow=["get_order", "refund"], layers=[layer], marked=marked) as box:
        assert layer.seen == {"get_order", "refund"}  # over the --allow filter: cancel never reaches it
        assert [spec.name for spec in box.specs] == ["get_order", "find_tools"]
        found = await box.call(ToolCall(id="c1", name="find_tools", arguments={}), RunContext("run_1"))
        assert found.content == "counted:find_tools"  # routed to the layer's own source
        got = await box.call(ToolCall(id="c2", name="get_order", arguments={"order_id": "A1"}), RunContext("run_1"))
        assert got.content == "order A1"
        hidden = await box.call(ToolCall(id="c3", name="refund", arguments={"order_id": "A1"}), RunContext("run_1"))
        assert hidden.error_kind == "unknown_tool"


async def test_the_approval_marks_sit_over_the_given_layers() -> None:
    """A layer that passes a route on keeps it under the servers file's risky marks: hiding a tool from search
    never lets it through unmarked."""

    class Renamed(SearchLayer):
        def offer(self, routes: list[Route]) -> list[Route]:
            return [replace(route, known=f"shop_{route.known}") for route in routes]

    async with ToolBox([_orders()], layers=[Renamed(set())], marked={"orders": frozenset({"refund"})}) as box:
        risky = {spec.name: spec.policy.risky for spec in box.specs}
        assert risky == {"shop_get_order": False, "shop_refund": True, "shop_cancel": False}
