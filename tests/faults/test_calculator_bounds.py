"""The example calculator (an AST walk on the event loop) stays responsive on nested big powers and other
expressions whose result would take minutes to compute: it bounds each step before computing it and says why."""

from pathlib import Path

import pytest
from mcp import Client

from helpers.servers import SUPPORT_TOOLS, stdio_params, text_of

TOO_LARGE = {
    "9**9**9**9": "about 1.23e+09 bits",
    "(10**10**8)": "about 3.32e+08 bits",
    "(((10**100)**100)**100)**100": "about 3.32e+04 bits",
    "10**1300": "about 4.32e+03 bits",
    "1e308 * 10": "",
}
OTHER = {
    "1+" * 400 + "1": "nested more than 100 levels deep",
    "1+" * 600 + "1": "at most 1000 are allowed",
    "(-8) ** 0.5": "not a real number",
    "1 / 0": "division by zero",
    "__import__('os')": "only numbers, parentheses and",
}


@pytest.fixture
def db(tmp_path: Path) -> dict[str, str]:
    return {"TOOLWIRE_SUPPORT_DB": str(tmp_path / "support.sqlite3")}


async def test_expressions_too_large_or_malformed_get_a_readable_error(db: dict[str, str]) -> None:
    async with Client(stdio_params(SUPPORT_TOOLS, env=db)) as client:
        for expression, detail in TOO_LARGE.items():
            result = await client.call_tool("calculator", {"expression": expression})
            assert result.is_error, (expression, text_of(result))
            assert text_of(result).startswith("ERROR: calculator failed: the result would be too large"), expression
            assert detail in text_of(result)
        for expression, detail in OTHER.items():
            result = await client.call_tool("calculator", {"expression": expression})
            assert result.is_error and detail in text_of(result), (expression, text_of(result))
        assert text_of(await client.call_tool("calculator", {"expression": "99**99 % 1000"})) == "899"
        assert text_of(await client.call_tool("calculator", {"expression": "2500 * 2 * 1.18"})) == "5900.0"
