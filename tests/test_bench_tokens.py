"""The tool-search bench's parts, cheaply: the generated catalog is 500 distinct, realistic tools, and the ranker
finds each scripted task's tool among its first five matches (what the bench's model needs to answer right)."""

from bench.tokens_bench import CATALOG_TASKS, SEARCH_LIMIT
from bench.tool_catalog import catalog

from toolwire_shared.tool_index import ToolIndex
from toolwire_shared.tools import ToolSpec


def test_the_catalog_has_500_distinct_tools_with_described_parameters() -> None:
    tools = catalog(500)
    assert len({tool["name"] for tool in tools}) == 500
    assert all(len(tool["description"]) > 80 for tool in tools)
    assert all(p["description"] for tool in tools for p in tool["inputSchema"]["properties"].values())


def test_each_task_finds_its_tool_among_the_first_five_of_500() -> None:
    index = ToolIndex(
        ToolSpec(name=t["name"], description=t["description"], input_schema=t["inputSchema"]) for t in catalog(500)
    )
    missed = [
        task.tool
        for task in CATALOG_TASKS
        if task.tool not in [spec.name for spec in index.search(task.query, SEARCH_LIMIT)]
    ]
    assert missed == []
    assert index.search("billing_create_invoice", 1)[0].name == "billing_create_invoice"  # a name: first
    assert index.search("zzz qqq", 5) == []
