"""The tool server as a real subprocess over stdio, driven by `mcp.Client` in both protocol eras."""

from pathlib import Path
from typing import Literal

import anyio
import pytest
from mcp import Client

from helpers.servers import (
    SUPPORT_TOOLS,
    TEST_TOOLS,
    check_client_cancel_stops_the_tool,
    stdio_params,
    text_of,
)
from toolwire_shared.tools import IDEMPOTENCY_KEY_META, META_RISKY

MODES: list[Literal["auto", "legacy"]] = ["auto", "legacy"]


@pytest.mark.parametrize("mode", MODES)
async def test_support_tools_listed_and_called(
    mode: Literal["auto", "legacy"], support_db: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with Client(stdio_params(SUPPORT_TOOLS, env=support_db), mode=mode) as client:
        expected_version = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert client.session.protocol_version == expected_version
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"get_order", "search_orders", "calculator", "issue_refund"}
        search = tools["search_orders"]
        assert search.input_schema["additionalProperties"] is False
        assert search.input_schema["required"] == ["customer_id"]
        assert "at most 20" in (search.description or "") and "empty list" in (search.description or "")
        status_schema = search.input_schema["properties"]["status"]
        assert ["open", "shipped", "delivered", "refunded", "cancelled"] in [
            branch.get("enum") for branch in status_schema.get("anyOf", [status_schema])
        ]
        refund = tools["issue_refund"]
        assert refund.annotations is not None and refund.annotations.destructive_hint is True
        assert refund.meta is not None and refund.meta[META_RISKY] is True
        assert refund.input_schema["properties"]["amount_cents"]["minimum"] == 1
        assert "idempotency_key" not in refund.input_schema["properties"]

        order = await client.call_tool("get_order", {"order_id": "A123"})
        assert not order.is_error and '"item": "keyboard"' in text_of(order) and '"unit_price": 2500' in text_of(order)
        total = await client.call_tool("calculator", {"expression": "2500 * 2 * 1.18"})
        assert text_of(total) == "5900.0"
        nothing = await client.call_tool("search_orders", {"customer_id": "cus_nobody"})
        assert not nothing.is_error and text_of(nothing) == "[]"
        found = await client.call_tool("search_orders", {"customer_id": "cus_8123", "status": "open"})
        assert '"A125"' in text_of(found) and '"A123"' not in text_of(found)

        key = {IDEMPOTENCY_KEY_META: f"refund-{mode}"}
        first = await client.call_tool("issue_refund", {"order_id": "A123", "amount_cents": 500}, meta=key)
        again = await client.call_tool("issue_refund", {"order_id": "A123", "amount_cents": 500}, meta=key)
        assert not first.is_error and '"repeated": false' in text_of(first)
        assert '"repeated": true' in text_of(again)
        assert text_of(first).split('"refund_id": ')[1][:16] == text_of(again).split('"refund_id": ')[1][:16]
    # The repeated key refunded nothing more: exactly one refund row in the real SQLite file.
    monkeypatch.setenv("TOOLWIRE_SUPPORT_DB", support_db["TOOLWIRE_SUPPORT_DB"])
    from examples.support_tools import refunds_total

    assert refunds_total("A123") == 500


async def test_every_failure_is_a_readable_result() -> None:
    async with Client(stdio_params(TEST_TOOLS, "--max-result-chars", "1000")) as client:
        unknown = await client.call_tool("nope", {})
        assert unknown.is_error and "unknown tool 'nope'" in text_of(unknown) and "echo" in text_of(unknown)

        missing = await client.call_tool("add", {"b": 1})
        assert missing.is_error and "missing required argument 'a'" in text_of(missing)
        assert 'A correct call looks like add({"a": 0, "b": 1})' in text_of(missing)
        extra = await client.call_tool("add", {"a": 1, "b": 2, "c": 3})
        assert "unexpected argument 'c'" in text_of(extra)
        wrong = await client.call_tool("add", {"a": "many", "b": 2})
        assert "argument 'a'" in text_of(wrong) and "'many'" in text_of(wrong)
        bad_enum = await client.call_tool("add", {"a": 1, "b": 2, "mode": "fuzzy"})
        assert "argument 'mode'" in text_of(bad_enum) and "'exact'" in text_of(bad_enum)

        raised = await client.call_tool("boom", {"message": "disk on fire"})
        assert raised.is_error and text_of(raised) == "ERROR: boom failed: disk on fire"

        big = await client.call_tool("big_text", {"n": 5000})
        assert not big.is_error
        assert big.content[0].text == "x" * 1000  # type: ignore[union-attr]
        assert "cut to 1000 of 5000 characters" in text_of(big) and "Ask for less" in text_of(big)

        ok = await client.call_tool("add", {"a": 2, "b": 3})
        assert not ok.is_error and text_of(ok) == "5"
        noisy = await client.call_tool("noisy", {})
        assert text_of(noisy) == "ok"  # a stray print went to stderr, the wire stayed intact
        assert text_of(await client.call_tool("echo", {"text": "still alive"})) == "still alive"


async def test_timeout_says_seconds_and_cancels_the_tool(tmp_path: Path) -> None:
    marker = tmp_path / "timeout"
    async with Client(stdio_params(TEST_TOOLS)) as client:
        result = await client.call_tool("slow_with_timeout", {"seconds": 60, "marker": str(marker)})
    assert result.is_error and "slow_with_timeout timed out after 0.5 s and was cancelled" in text_of(result)
    assert (tmp_path / "timeout.started").exists()
    assert (tmp_path / "timeout.cancelled").exists()
    assert not (tmp_path / "timeout.finished").exists()


@pytest.mark.parametrize("mode", MODES)
async def test_client_cancel_stops_the_tool(mode: Literal["auto", "legacy"], tmp_path: Path) -> None:
    async with Client(stdio_params(TEST_TOOLS), mode=mode) as client:
        await check_client_cancel_stops_the_tool(client, tmp_path)


async def test_fifty_concurrent_calls_on_one_connection() -> None:
    results: list[str] = []
    async with Client(stdio_params(TEST_TOOLS)) as client:

        async def one() -> None:
            result = await client.call_tool("rendezvous", {"group": "g50", "count": 50})
            results.append("error: " + text_of(result) if result.is_error else text_of(result))

        async with anyio.create_task_group() as tg:
            for _ in range(50):
                tg.start_soon(one)
    # Each call returns only once all 50 were in flight together (else it times out with an error).
    assert len(results) == 50 and all(r == "50" for r in results), results[:3]


async def test_max_concurrency_caps_the_calls_of_one_tool_running_at_once() -> None:
    peaks: list[int] = []
    async with Client(stdio_params(TEST_TOOLS)) as client:
        spec = next(t for t in (await client.list_tools()).tools if t.name == "limited")
        assert (spec.meta or {}).get("io.toolwire/max_concurrency") == 2

        async def one() -> None:
            result = await client.call_tool("limited", {})
            assert not result.is_error, text_of(result)
            peaks.append(int(text_of(result)))

        async with anyio.create_task_group() as tg:
            for _ in range(8):
                tg.start_soon(one)
    # 8 calls in flight on the connection, never more than 2 inside the tool; the first two met inside it
    assert len(peaks) == 8 and max(peaks) == 2, peaks


async def test_agent_option_limits_stdio_tools(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[agents.reader]\ntoken = "t1"\ntools = ["echo", "add"]\n')
    async with Client(stdio_params(TEST_TOOLS, "--tokens", str(tokens), "--agent", "reader")) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
        assert names == {"echo", "add"}
        refused = await client.call_tool("boom", {"message": "x"})
        assert refused.is_error and text_of(refused) == "ERROR: tool 'boom' is not permitted for agent 'reader'."
