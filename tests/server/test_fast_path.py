"""The stdio fast path for modern-era tools/call (server/toolwire_server/transports/fast_path.py): the same answers
as the SDK path, byte for byte as JSON, for every kind of outcome; cancellation, parallel calls and end of input
still work; and what it must not take (a ToolContext tool, a handshake-era call, a malformed envelope) reaches the
SDK."""

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from helpers.polling import await_until
from helpers.servers import REPO, TEST_TOOLS, serve_argv
from toolwire_server.transports.fast_path import CAPABILITIES_META, FAST_PATH_OFF_ENV

MODERN = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    CAPABILITIES_META: {},
}
FAST_LINE = "on the fast path"


class Wire:
    """A raw NDJSON client: what it sends is exactly what the server reads."""

    def __init__(self, process: Process):
        self.process, self._buffer = process, b""

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            chunk = await self.process.stdout.receive()
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        answer: dict[str, Any] = json.loads(line)
        return answer

    async def call(self, request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        await self.send(_call(request_id, name, arguments))
        return await self.receive()


def _call(request_id: int, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments, "_meta": MODERN if meta is None else meta}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@asynccontextmanager
async def server(*args: str, fast: bool = True, stderr: Path | None = None) -> AsyncIterator[Wire]:
    env = {**os.environ, FAST_PATH_OFF_ENV: "0" if fast else "1"}
    argv = serve_argv(TEST_TOOLS, "--stdio", "--log-level", "DEBUG", *args)
    errors = stderr.open("wb") if stderr is not None else None
    with anyio.fail_after(30):
        async with await anyio.open_process(argv, cwd=str(REPO), env=env, stderr=errors) as process:
            try:
                yield Wire(process)
            finally:
                assert process.stdin is not None
                await process.stdin.aclose()
                await process.wait()
                if errors is not None:
                    errors.close()


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"text": "hi"}),  # a wrapped str
    ("order", {"order_id": "A7"}),  # a pydantic model, as structured output
    ("stock", {"skus": ["ab", "xyz"]}),  # a list of TypedDicts, wrapped
    ("add", {"a": -1, "b": 2}),  # bad arguments
    ("add", {"a": 1}),  # a missing argument
    ("boom", {"message": "no"}),  # the tool raised
    ("bad_order", {}),  # a result its annotation denies
    ("forged_order", {}),  # its own CallToolResult breaks its schema
    ("big_text", {"n": 500}),  # cut to --max-result-chars
    ("nope", {}),  # not registered
    ("noisy", {}),  # a sync tool that prints to stdout
]


async def _answers(fast: bool, stderr: Path) -> list[dict[str, Any]]:
    async with server("--max-result-chars", "100", fast=fast, stderr=stderr) as wire:
        return [await wire.call(i, name, arguments) for i, (name, arguments) in enumerate(CALLS, start=1)]


async def test_the_fast_path_answers_exactly_what_the_sdk_path_answers(tmp_path: Path) -> None:
    fast = await _answers(True, tmp_path / "fast.log")
    slow = await _answers(False, tmp_path / "slow.log")
    assert fast == slow
    kinds = [a["result"].get("_meta", {}).get("io.toolwire/error_kind") for a in fast]
    assert kinds == [None] * 3 + ["bad_arguments"] * 2 + [
        "tool_failed",
        "bad_output",
        "bad_output",
        None,
        "unknown_tool",
        None,
    ]
    assert fast[8]["result"]["_meta"]["io.toolwire/truncated"] == {"kept": 100, "total": 500}
    fast_log, slow_log = (tmp_path / "fast.log").read_text(), (tmp_path / "slow.log").read_text()
    assert fast_log.count(FAST_LINE) == len(CALLS) and FAST_LINE not in slow_log


async def test_what_the_fast_path_must_not_take_reaches_the_sdk(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with server(stderr=log) as wire:
        # A ToolContext tool (it could report progress or log): the SDK's session serves it.
        meet = await wire.call(1, "rendezvous", {"group": "g", "count": 1})
        # No client capabilities in the envelope: the SDK answers the malformed request itself.
        await wire.send(_call(2, "echo", {"text": "x"}, meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28"}))
        malformed = await wire.receive()
        # An unsupported version.
        await wire.send(
            _call(3, "echo", {"text": "x"}, meta={**MODERN, "io.modelcontextprotocol/protocolVersion": "1999"})
        )
        unsupported = await wire.receive()
        plain = await wire.call(4, "echo", {"text": "y"})
    assert meet["result"]["structuredContent"] == {"result": 1}
    assert "error" in malformed and "error" in unsupported
    assert plain["result"]["content"] == [{"type": "text", "text": "y"}]
    assert log.read_text().count(FAST_LINE) == 1  # only the last call


async def test_a_cancelled_call_stops_and_gets_no_answer_while_others_go_on(tmp_path: Path) -> None:
    marker = str(tmp_path / "sleep")
    async with server() as wire:
        await wire.send(_call(1, "slow_sleep", {"seconds": 30, "marker": marker}))
        await await_until(lambda: Path(marker + ".started").exists(), "the sleep to start")
        await wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}})
        await await_until(lambda: Path(marker + ".cancelled").exists(), "the sleep to be cancelled")
        after = await wire.call(2, "echo", {"text": "next"})
    assert after["id"] == 2  # the first answer after the cancel is the next call's: id 1 got none
    assert not await anyio.Path(marker + ".finished").exists()


async def test_parallel_calls_are_answered_by_id_and_in_flight_calls_finish_at_end_of_input(tmp_path: Path) -> None:
    async with server() as wire:
        for i in range(1, 9):
            await wire.send(_call(i, "echo", {"text": f"t{i}"}))
        await wire.send(_call(9, "slow_sleep", {"seconds": 0.3, "marker": str(tmp_path / "last")}))
        assert wire.process.stdin is not None
        await wire.process.stdin.aclose()  # end of input with the sleep in flight
        answers = [await wire.receive() for _ in range(9)]
    by_id = {a["id"]: a["result"]["content"][0]["text"] for a in answers}
    assert by_id == {**{i: f"t{i}" for i in range(1, 9)}, 9: "slept"}


@pytest.mark.skipif(sys.platform == "win32", reason="pipes")
async def test_a_client_that_goes_away_mid_call_leaves_the_server_exiting_cleanly(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with server(stderr=log) as wire:
        await wire.send(_call(1, "slow_sleep", {"seconds": 0.2, "marker": str(tmp_path / "gone")}))
        assert wire.process.stdout is not None
        await wire.process.stdout.aclose()  # nobody reads the answer
    assert wire.process.returncode == 0, log.read_text()
    assert "Traceback" not in log.read_text()
