"""The in-process call's short cuts give what the one call path gives: a tool that awaits nothing runs without a
timeout scope (functions/awaits.py), and an answer that is one text block reaches RegistrySource as a TextAnswer
instead of a CallToolResult read back; both give the same results as the pipeline's `call` and `from_call_result`."""

import functools
import time
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from typing_extensions import TypedDict

from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.source import RunContext, ToolRequest
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_server.auth.access import ALL_TOOLS
from toolwire_server.functions.awaits import never_awaits
from toolwire_server.functions.context import ToolContext
from toolwire_server.functions.results import TextAnswer
from toolwire_server.limits import ServerLimits
from toolwire_server.tools.pipeline import call, run
from toolwire_server.tools.request import CallRequest
from toolwire_shared.messages import ToolCall
from toolwire_shared.records import record_json
from toolwire_shared.results import from_call_result, kind_of

CAP = 50


class Parcel(TypedDict):
    weight_kg: float


async def plain(text: str) -> str:
    """Awaits nothing."""
    return text


async def parcel(weight: float) -> Parcel:
    """A structured answer."""
    return {"weight_kg": weight}


async def untyped(n: int):  # type: ignore[no-untyped-def]  # no annotation: no output schema, the JSON as text
    """Returns a dict."""
    return {"n": n}


async def napping(text: str) -> str:
    """Awaits, inside a cancel scope of its own (what a first step run before the timeout's scope broke)."""
    with anyio.CancelScope():
        await anyio.lowlevel.checkpoint()
    return text.upper()


async def stuck() -> str:
    """Awaits longer than its timeout."""
    await anyio.sleep(30)
    return "never"


async def who(context: ToolContext) -> str:
    """Reads its context (made only for a tool that reads one)."""
    return f"{context.tool} for {context.agent}"


def sync_tool(text: str) -> str:
    """Runs in a thread."""
    return text[::-1]


async def refuses() -> str:
    """Raises without awaiting."""
    raise RuntimeError("no")


async def _sleeps() -> None:
    await anyio.lowlevel.checkpoint()


async def _enters() -> None:
    async with anyio.Lock():
        pass


async def _loops(items: Any) -> None:
    async for _ in items:
        pass


async def _comprehends(items: Any) -> list[Any]:
    return [item async for item in items]


class _Callable:
    async def __call__(self) -> str:
        return "x"


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (plain, True),
        (refuses, True),
        (_sleeps, False),
        (_enters, False),
        (_loops, False),
        (_comprehends, False),
        (napping, False),
        (sync_tool, False),
        (functools.partial(plain, "x"), False),
        (_Callable(), False),
        (lambda: plain("x"), False),  # a sync function that returns a coroutine
    ],
)
def test_never_awaits_only_for_an_async_def_with_no_await(fn: Any, expected: bool) -> None:
    assert never_awaits(fn) is expected


def _registry() -> Registry:
    registry = Registry("answers")
    for fn in (plain, parcel, untyped, napping, sync_tool, refuses, who):
        registry.add(fn)
    registry.add(stuck, timeout_s=0.05)
    return registry


CALLS: list[tuple[str, dict[str, Any], bool]] = [  # tool, arguments, answered as a TextAnswer
    ("plain", {"text": "hello"}, True),
    ("plain", {"text": "x" * (CAP + 1)}, False),  # cut: a CallToolResult with its note
    ("plain", {"text": 3}, False),  # bad arguments
    ("parcel", {"weight": 2.5}, True),
    ("untyped", {"n": 7}, True),
    ("napping", {"text": "quiet"}, True),
    ("sync_tool", {"text": "abc"}, True),
    ("who", {}, True),
    ("refuses", {}, False),
    ("stuck", {}, False),  # timed out: its scope is there
    ("nope", {}, False),
]


@pytest.mark.parametrize(("tool", "arguments", "text_answer"), CALLS)
async def test_the_in_process_answer_is_the_call_path_result(
    tool: str, arguments: dict[str, Any], text_answer: bool
) -> None:
    registry = _registry()
    wire = await call(CallRequest(registry, ALL_TOOLS, tool, arguments, max_result_chars=CAP))
    answer = await run(CallRequest(registry, ALL_TOOLS, tool, arguments, max_result_chars=CAP))
    assert isinstance(answer, TextAnswer) is text_answer
    made = answer.call_result() if isinstance(answer, TextAnswer) else answer
    assert made.model_dump_json(by_alias=True, exclude_unset=True) == wire.model_dump_json(
        by_alias=True, exclude_unset=True
    )
    if tool == "stuck":
        assert kind_of(wire) == "timeout"

    source = RegistrySource(registry, limits=ServerLimits(max_result_chars=CAP))
    made_call = ToolCall(id="c1", name=tool, arguments=arguments)
    result = await source.call(ToolRequest(made_call, RunContext("r1"), timeout_s=5))
    expected = from_call_result("c1", tool, wire, since=time.perf_counter())
    skip = {"duration_s", "started_at"}
    assert record_json(result, exclude=skip) == record_json(expected, exclude=skip)


async def test_a_toolbox_result_carries_when_it_was_sent() -> None:
    async with ToolBox([RegistrySource(_registry())]) as box:
        result = await box.call(ToolCall(id="c1", name="plain", arguments={"text": "hi"}), RunContext("r1"))
        timed_out = await box.call(ToolCall(id="c2", name="stuck", arguments={}), RunContext("r1"))
    assert (result.content, result.started_at is not None, result.attempts) == ("hi", True, 1)
    assert (timed_out.error_kind, timed_out.started_at is not None) == ("timeout", True)
    assert result.started_at is not None and timed_out.started_at is not None
    assert result.started_at <= timed_out.started_at
