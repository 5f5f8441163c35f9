"""No tool freezes the server: an isolated tool runs in a worker process that its timeout (or the caller's cancel)
kills, so /healthz answers while it burns CPU and a hung tool is really stopped; a CPU-bound tool left on the event
loop is named in the log by the stall watchdog."""

import os
import time
from pathlib import Path

import anyio
import httpx2
import pytest

from faults.harness import FAULT_TOOLS, logged_stdio_client, raw_stdio, read_log, request
from helpers.polling import await_until
from helpers.servers import HttpServer, http_client, text_of, wait_for_file
from toolwire_server import ALL_TOOLS, load_registry
from toolwire_server.tools.pipeline import call
from toolwire_server.tools.request import CallRequest
from toolwire_shared.results import ERROR_KIND_META
from toolwire_shared.tools import IDEMPOTENCY_KEY_META


def alive(pid: int) -> bool:
    """Whether a process with this pid exists (a zombie counts: it has not been reaped)."""
    return Path(f"/proc/{pid}").exists()


async def started_pid(marker: Path) -> int:
    started = marker.with_name(marker.name + ".started")
    await wait_for_file(started)
    await await_until(lambda: started.read_text().strip(), f"{started} to hold a pid")
    return int(started.read_text())


def kind(result: object) -> str | None:
    meta = getattr(result, "meta", None) or {}
    found: str | None = meta.get(ERROR_KIND_META)
    return found


@pytest.mark.parametrize("tool", ["hang", "huge_power"])
async def test_a_hung_or_cpu_bound_isolated_tool_times_out_and_its_worker_is_gone(tmp_path: Path, tool: str) -> None:
    """A sync tool blocked forever, and an async one stuck in big-integer C code (9 ** 9 ** 9): both 1.5 s."""
    marker = tmp_path / tool
    async with logged_stdio_client(tmp_path / "server.log") as client:
        # The timeout counts the wait for a worker too: on a slow machine a cold one may not reach the tool in 1.5 s.
        assert int(text_of(await client.call_tool("worker_pid", {}))) != os.getpid()
        result = await client.call_tool(tool, {"marker": str(marker)})
        pid = await started_pid(marker)
        assert result.is_error and kind(result) == "timeout", text_of(result)
        assert not alive(pid), f"worker {pid} still exists after the timeout"
        fresh = int(text_of(await client.call_tool("worker_pid", {})))
        assert fresh != pid
    assert f"its worker process {pid} was stopped (exit -9)" in read_log(tmp_path / "server.log")


async def test_a_cancelled_call_kills_its_worker(tmp_path: Path) -> None:
    marker = tmp_path / "spin"
    async with logged_stdio_client(tmp_path / "server.log") as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "spin_isolated", {"seconds": 600, "marker": str(marker)})
            pid = await started_pid(marker)
            tg.cancel_scope.cancel()
        await await_until(lambda: not alive(pid), f"worker {pid} to be killed after the cancel", timeout_s=20)
        assert text_of(await client.call_tool("echo", {"text": "usable"})) == "usable"


async def test_isolate_flag_makes_the_timeout_of_an_async_cpu_bound_tool_fire(tmp_path: Path) -> None:
    """`spin` never awaits: on the loop its 0.5 s timeout cannot fire; with --isolate it does, and the worker goes."""
    marker = tmp_path / "spin"
    async with logged_stdio_client(tmp_path / "server.log", "--isolate", "--isolate-workers", "1") as client:
        # The timeout counts the wait for a worker too: let the one worker start before a 0.5 s call.
        assert text_of(await client.call_tool("echo", {"text": "warm"})) == "warm"
        result = await client.call_tool("spin", {"seconds": 600, "marker": str(marker)})
        assert kind(result) == "timeout", text_of(result)
        pid = await started_pid(marker)
        assert pid != os.getpid() and not alive(pid)


async def test_what_a_worker_gets_of_the_context(tmp_path: Path) -> None:
    """Progress and log entries are relayed from the worker; tool, agent and idempotency key are passed; the
    session (server-to-client requests) is not."""
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with logged_stdio_client(tmp_path / "server.log") as client:
        result = await client.call_tool(
            "context_in_worker", {}, progress_callback=on_progress, meta={IDEMPOTENCY_KEY_META: "key-1"}
        )
    assert not result.is_error, text_of(result)
    assert text_of(result) == '{"tool": "context_in_worker", "agent": "local", "key": "key-1", "session": true}'
    assert seen == [(1, 2, "half"), (2, 2, "done")]


async def test_a_worker_that_dies_is_reported_and_replaced(tmp_path: Path) -> None:
    async with logged_stdio_client(tmp_path / "server.log") as client:
        died = await client.call_tool("die", {})
        assert kind(died) == "tool_failed"
        assert "its worker process ended during the call (exit code 3)" in text_of(died)
        raised = await client.call_tool("fail_isolated", {"text": "this"})
        assert text_of(raised) == "ERROR: fail_isolated failed: cannot handle this"
        assert text_of(await client.call_tool("worker_pid", {})).isdigit()


async def test_isolated_tools_in_process_without_a_server() -> None:
    """The one call path isolates in-process callers (RegistrySource) too: no server, no warm-up, same kill."""
    registry = load_registry(FAULT_TOOLS)
    try:
        pid = await call(CallRequest(registry, ALL_TOOLS, "worker_pid", {}, max_result_chars=1000))
        assert int(text_of(pid)) != os.getpid()
        hung = await call(
            CallRequest(registry, ALL_TOOLS, "hang", {"marker": os.devnull + "-x"}, max_result_chars=1000)
        )
        assert kind(hung) == "timeout"
    finally:
        registry.workers.close()


async def test_healthz_answers_while_an_isolated_cpu_bound_tool_runs(tmp_path: Path) -> None:
    marker = tmp_path / "spin"
    with HttpServer(FAULT_TOOLS) as server:
        async with http_client(server.url) as client, httpx2.AsyncClient(timeout=30) as http:
            returned = anyio.Event()

            async def call() -> None:
                await client.call_tool("spin_isolated", {"seconds": 600, "marker": str(marker)})
                returned.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                pid = await started_pid(marker)
                began = time.perf_counter()
                health = await http.get(server.base + "/healthz")
                took = time.perf_counter() - began
                assert health.status_code == 200
                assert not returned.is_set() and alive(pid), "the tool should still be running"
                print(f"\n/healthz while an isolated CPU-bound tool runs: {took * 1000:.1f} ms")
                tg.cancel_scope.cancel()
            await await_until(lambda: not alive(pid), f"worker {pid} to be killed after the cancel", timeout_s=20)


async def test_a_cpu_bound_tool_on_the_loop_is_named_by_the_watchdog(tmp_path: Path) -> None:
    """The contrast: `spin` (not isolated) holds the loop for 1.5 s, so /healthz waits for it; its 0.5 s timeout
    cannot fire; the watchdog logs the stall with the tool's name."""
    marker = tmp_path / "spin"
    with HttpServer(FAULT_TOOLS) as server:
        async with http_client(server.url) as client, httpx2.AsyncClient(timeout=30) as http:
            results: list[str] = []

            async def call() -> None:
                results.append(text_of(await client.call_tool("spin", {"seconds": 1.5, "marker": str(marker)})))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call)
                await started_pid(marker)
                began = time.perf_counter()
                health = await http.get(server.base + "/healthz")
                took = time.perf_counter() - began
                assert health.status_code == 200
                assert marker.with_name("spin.finished").exists(), "/healthz answered before the tool let go"
                print(f"\n/healthz while a CPU-bound tool holds the event loop: {took * 1000:.1f} ms")
        assert results == ["spun"]  # not a timeout: nothing can interrupt code that never awaits
        await await_until(lambda: "event loop stalled" in server.stderr(), "the watchdog's line", timeout_s=10)
        assert "tool spin ran" in server.stderr()


async def test_workers_end_with_a_killed_server(tmp_path: Path) -> None:
    """SIGKILL leaves the server no chance to clean up: its forkserver sees it gone and ends, and the kernel ends
    the worker with it, even one busy in a CPU-bound loop."""
    marker = tmp_path / "spin"
    async with raw_stdio(tmp_path / "server.log") as server:
        await server.initialize()
        await server.send(
            request(1, "tools/call", {"name": "spin_isolated", "arguments": {"seconds": 600, "marker": str(marker)}})
        )
        pid = await started_pid(marker)
        server.proc.kill()
        await server.proc.wait()
        await await_until(lambda: not alive(pid), f"worker {pid} to end with its server", timeout_s=20)
