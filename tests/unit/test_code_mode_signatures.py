"""run_code's description: each tool a typed `async def` line under a valid Python name, and what `only` offers."""

from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.tools.code_mode.layer import CodeModeLayer
from toolwire_client.tools.code_mode.signatures import python_names, signature, type_of
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_shared.tools import ToolSpec


def test_wire_names_become_python_names_that_never_clash() -> None:
    names = python_names(["get-order", "db.query", "3d", "class", "get_order", "print"])
    assert names == {
        "get-order": "get_order",
        "db.query": "db_query",
        "3d": "_3d",
        "class": "class_",
        "get_order": "get_order_2",
        "print": "print_",
    }


def test_schemas_become_annotations() -> None:
    assert type_of({"type": "string", "enum": ["a", "b"]}) == "Literal['a', 'b']"
    assert type_of({"anyOf": [{"type": "integer"}, {"type": "null"}]}) == "int | None"
    assert type_of({"type": "array", "items": {"type": "object"}}) == "list[dict]"
    assert type_of({}) == "Any"
    spec = ToolSpec(
        name="search",
        description="Find  things.\nNewest first.",
        input_schema={
            "type": "object",
            "properties": {"limit": {"type": "integer", "default": 20}, "q": {"type": "string"}},
            "required": ["q"],
        },
        output_schema={"type": "object", "properties": {"result": {"type": "array"}}, "required": ["result"]},
    )
    assert (
        signature("search", spec)
        == "# Find things. Newest first.\nasync def search(*, q: str, limit: int = 20) -> list[Any]"
    )


async def test_code_mode_offers_run_code_beside_the_tools_or_alone() -> None:
    registry = Registry("t")

    @registry.tool(description="Add two numbers.")
    def add(a: int, b: int) -> int:
        return a + b

    for only, offered in ((False, ["add", "run_code"]), (True, ["run_code"])):
        async with ToolBox([RegistrySource(registry)], layers=[CodeModeLayer(CodeMode(only=only))]) as box:
            assert [s.name for s in box.specs] == offered
            [code] = [s for s in box.specs if s.name == "run_code"]
            assert "async def add(*, a: int, b: int) -> int" in code.description
            assert box.spec("add") is not None  # routed either way: a script calls it through the ToolBox
