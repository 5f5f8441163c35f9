"""An --allow pattern or a tool choice that names no tool of the run is a mistake said when the run starts, once
every source has listed its tools: a pattern that matches nothing on one server but something on another is fine."""

import pytest

from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.toolbox import NoSuchTool, ToolBox
from toolwire_server import Registry


def _sources() -> list[RegistrySource]:
    orders, maths = Registry("orders"), Registry("maths")

    @orders.tool()
    def get_order(order_id: str) -> str:
        """Look an order up."""
        return order_id

    @maths.tool()
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return [RegistrySource(orders), RegistrySource(maths)]


async def test_patterns_are_checked_across_all_sources() -> None:
    async with ToolBox(_sources(), allow=["get_*", "add"], choice="add") as box:  # each misses one source
        assert sorted(spec.name for spec in box.specs) == ["add", "get_order"]


@pytest.mark.parametrize(
    ("allow", "choice", "said"),
    [
        (["get_*", "ad"], None, "--allow 'ad' matches no tool of this run (its tools: add, get_order)"),
        (None, "get_ordr", "--tool-choice 'get_ordr' names no tool of this run (its tools: add, get_order)"),
        (["get_*"], "add", "--tool-choice 'add' names no tool of this run (its tools: get_order)"),
    ],
)
async def test_a_name_of_no_tool_is_refused_and_the_sources_closed(
    allow: list[str] | None, choice: str | None, said: str
) -> None:
    box = ToolBox(_sources(), allow=allow, choice=choice)
    with pytest.raises(NoSuchTool) as refused:
        await box.start()
    assert str(refused.value) == said
    assert not box.started


async def test_choice_words_name_no_tool() -> None:
    for word in ("auto", "required", "none"):
        async with ToolBox(_sources(), choice=word) as box:
            assert len(box.specs) == 2


async def test_a_risky_name_of_no_tool_is_refused_by_the_name_users_know() -> None:
    """A `--risky` typo would let the tool meant to wait run unasked; a server's own risky list (a servers file's
    `risky = [...]`) is checked against that server's tools."""
    for risky, marked, said in (
        (["get_ordr"], {}, "--risky 'get_ordr' names no tool of this run (its tools: add, get_order)"),
        ([], {"maths": frozenset({"get_order"})}, "servers.maths.risky 'get_order' names no tool of server maths"),
    ):
        box = ToolBox(_sources(), risky=risky, marked=marked)
        with pytest.raises(NoSuchTool) as refused:
            await box.start()
        assert str(refused.value).startswith(said) and not box.started
    async with ToolBox(_sources(), risky=["add"], marked={"orders": frozenset({"get_order"})}) as box:
        assert [(spec.name, spec.policy.risky) for spec in box.specs] == [("get_order", True), ("add", False)]
