"""Tools for the server tests (not an example): slow, failing, large and rendezvous tools that record what
happened to them in files, so a test can see a cancellation in another process."""

import os
import sys
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import anyio
import anyio.lowlevel
import mcp_types as types
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolwire_server import Registry, ToolContext

registry = Registry("toolwire-test-tools")
_arrived: dict[str, int] = {}
_all_here: dict[str, anyio.Event] = {}


@registry.tool(description="Echo the text back.")
async def echo(text: str) -> str:
    return text


@registry.tool(description="Add two non-negative integers.")
async def add(a: Annotated[int, Field(ge=0)], b: int, mode: Literal["exact", "rounded"] = "exact") -> int:
    return a + b


@registry.tool(description="Always fails with the given message.")
async def boom(message: str) -> str:
    raise RuntimeError(message)


@registry.tool(description="Return n characters.")
async def big_text(n: int) -> str:
    return "x" * n


@registry.tool(description="Sleep, recording start / finish / cancellation next to `marker`.")
async def slow_sleep(seconds: float, marker: str) -> str:
    return await _sleep_and_record(seconds, marker)


@registry.tool(description="Like slow_sleep but with a 0.5 s timeout.", timeout_s=0.5)
async def slow_with_timeout(seconds: float, marker: str) -> str:
    return await _sleep_and_record(seconds, marker)


def _touch(path: str) -> None:
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))


async def _sleep_and_record(seconds: float, marker: str) -> str:
    _touch(marker + ".started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _touch(marker + ".cancelled")
        raise
    _touch(marker + ".finished")
    return "slept"


@registry.tool(description="Return once `count` calls with this `group` are in flight at the same time.", timeout_s=20)
async def rendezvous(group: str, count: int, ctx: ToolContext) -> int:
    event = _all_here.setdefault(group, anyio.Event())
    _arrived[group] = _arrived.get(group, 0) + 1
    if _arrived[group] >= count:
        event.set()
    await event.wait()  # only returns if all `count` calls really ran concurrently (else the 20 s timeout)
    return _arrived[group]


_limited = {"in_flight": 0, "peak": 0}
_pair_here = anyio.Event()
_third_here = anyio.Event()


@registry.tool(
    description="Report the most calls of this tool ever running at once (its limit is 2).", max_concurrency=2
)
async def limited() -> int:
    _limited["in_flight"] += 1
    _limited["peak"] = max(_limited["peak"], _limited["in_flight"])
    if _limited["in_flight"] >= 2:
        _pair_here.set()
    if _limited["in_flight"] >= 3:
        _third_here.set()  # only possible if the limit is broken
    try:
        await _pair_here.wait()  # the first two calls always meet inside the tool
        with anyio.move_on_after(0.3):  # give a third call every chance to get in, were it allowed
            await _third_here.wait()
        return _limited["peak"]
    finally:
        _limited["in_flight"] -= 1


@registry.tool(description="Write to stdout (must not corrupt the stdio wire) and return ok.")
def noisy() -> str:
    print("stray print from a tool")
    sys.stdout.flush()
    return "ok"


@registry.tool(description="Only some agents may call this.")
async def admin_only() -> str:
    return "admin"


class Order(BaseModel):
    id: str
    total: int


class Stock(TypedDict):
    sku: str
    count: int


@dataclass
class Parcel:
    weight_kg: float
    fragile: bool = False


@registry.tool(description="An order, as structured output (a pydantic model).")
async def order(order_id: str) -> Order:
    return Order(id=order_id, total=42)


@registry.tool(description="Stock levels, as structured output (a list of TypedDicts, wrapped as result).")
def stock(skus: list[str]) -> list[Stock]:
    return [{"sku": sku, "count": len(sku)} for sku in skus]


@registry.tool(description="A parcel, as structured output (a dataclass).")
def parcel(weight_kg: float) -> Parcel:
    return Parcel(weight_kg=weight_kg)


@registry.tool(description="Says it returns an order, returns something else (the server catches it).")
async def bad_order() -> Order:
    wrong: Any = {"id": "A1", "total": "lots"}
    return wrong  # type: ignore[no-any-return]


@registry.tool(description="Sends its own result whose structuredContent breaks its schema (the server catches it).")
async def forged_order() -> Annotated[types.CallToolResult, Order]:
    forged = {"id": 7}
    return types.CallToolResult(content=[types.TextContent(type="text", text="{}")], structured_content=forged)
