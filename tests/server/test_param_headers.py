"""A tool parameter mirrored into an `Mcp-Param-*` header (SEP-2243, `x-mcp-header` in its schema): a valid one is
listed as declared, one clients would drop (so the tool would be offered to nobody) is refused at registration."""

from typing import Annotated

import pytest
from pydantic import Field

from toolwire_server import Registry


def _header(token: object) -> object:
    return Field(json_schema_extra={"x-mcp-header": token})


def test_a_header_parameter_is_listed_with_its_annotation() -> None:
    registry = Registry("headers")

    @registry.tool(description="Routes by region.")
    async def route(region: Annotated[str, _header("Region")], body: str = "") -> str:
        return region

    assert registry.get("route").schema["properties"]["region"]["x-mcp-header"] == "Region"


@pytest.mark.parametrize(
    ("annotation", "why"),
    [
        (Annotated[float, _header("Amount")], "only permitted on integer/string/boolean"),
        (Annotated[str, _header("Bad Token")], "not an RFC 9110 token"),
        (Annotated[str, _header(7)], "must be a string"),
    ],
)
def test_a_header_clients_would_drop_is_refused_at_registration(annotation: object, why: str) -> None:
    registry = Registry("headers")

    async def route(region: str) -> str:
        return region

    route.__annotations__["region"] = annotation
    with pytest.raises(ValueError, match=f"tool 'route': property 'region': x-mcp-header .*{why}"):
        registry.add(route, description="Routes by region.")
    assert registry.get("route") is None


def test_two_parameters_cannot_share_a_header() -> None:
    registry = Registry("headers")

    async def route(region: Annotated[str, _header("Where")], zone: Annotated[str, _header("where")]) -> str:
        return region + zone

    with pytest.raises(ValueError, match="duplicates property"):
        registry.add(route, description="Routes by region.")
