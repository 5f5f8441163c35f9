"""The ToolBox over the real tool server on stdio: concurrency, timeouts that cancel on the server, a killed server."""

import os
import signal
from pathlib import Path

import anyio

from helpers.servers import wait_for_file
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import ToolCall


async def written(path: Path) -> str:
    """What the tool server (another process) writes to `path`, once it has."""
    await wait_for_file(path, timeout_s=10)
    return await anyio.Path(path).read_text()


async def test_sixteen_calls_are_in_flight_at_the_server_at_once(loop_source: McpSource) -> None:
    # Each call returns only once all 16 are inside the tool together: serialized calls cannot pass, whatever the
    # machine's speed. The first call that gives up (after within_s) says how many it met, and ends the test.
    arguments = {"group": "c16", "count": 16, "within_s": 20}
    calls = [ToolCall(id=f"c{i}", name="rendezvous", arguments={**arguments, "tag": str(i)}) for i in range(16)]
    results: dict[str, str] = {}
    async with ToolBox([loop_source]) as box, anyio.create_task_group() as group:

        async def one(call: ToolCall) -> None:
            results[call.id] = (await box.call(call, RunContext("r1"))).content
            if not results[call.id].startswith("met "):
                group.cancel_scope.cancel()  # one call gave up: the others would only wait out their bound too

        for call in calls:
            group.start_soon(one, call)
    assert results == {f"c{i}": f"met 16 {i}" for i in range(16)}, f"the 16 calls did not all run at once: {results}"


async def test_a_hanging_tool_is_cut_at_its_timeout_and_cancelled_on_the_server(
    loop_source: McpSource, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    async with ToolBox([loop_source], timeouts={"hang": 0.5}) as box:
        result = await box.call(ToolCall(id="h", name="hang", arguments={"marker": str(marker)}), RunContext("r"))
        assert result.is_error and result.error_kind == "timeout"
        assert result.content.startswith("ERROR: hang timed out after 0.5 s and was cancelled")
        assert await written(marker) == "cancelled"  # the server-side handler really was cancelled
        after = await box.call(ToolCall(id="e", name="echo", arguments={"text": "still here"}), RunContext("r"))
        assert after.content == "still here"


async def test_a_killed_server_is_restarted_once_and_the_call_in_flight_gets_a_readable_error(
    loop_source: McpSource, tmp_path: Path
) -> None:
    started = tmp_path / "started"
    async with ToolBox([loop_source]) as box:
        first_pid = int((await box.call(ToolCall(id="p1", name="pid"), RunContext("r"))).content)
        outcome: dict[str, object] = {}

        async def in_flight() -> None:
            call = ToolCall(id="f", name="in_flight", arguments={"started": str(started)})
            outcome["result"] = await box.call(call, RunContext("r"))

        async with anyio.create_task_group() as group:
            group.start_soon(in_flight)
            assert int(await written(started)) == first_pid
            os.kill(first_pid, signal.SIGKILL)
        result = outcome["result"]
        assert getattr(result, "error_kind", None) == "transport"
        assert "the tool server connection failed" in getattr(result, "content", "")
        assert "not sent again because it is not idempotent" in getattr(result, "content", "")
        second_pid = int((await box.call(ToolCall(id="p2", name="pid"), RunContext("r"))).content)
        assert second_pid != first_pid and loop_source.restarts == 1


async def test_tools_are_listed_with_policy_and_allow_list_narrows_them(loop_source: McpSource) -> None:
    async with ToolBox([loop_source], allow=["sl*", "echo"]) as box:
        assert sorted(spec.name for spec in box.specs) == ["echo", "sleepy"]
        assert box.spec("sleepy") is not None and box.spec("sleepy").policy.idempotent  # type: ignore[union-attr]
        refused = await box.call(ToolCall(id="x", name="pid"), RunContext("r"))
        assert refused.error_kind == "unknown_tool"
        assert refused.content == "ERROR: unknown tool 'pid'. Tools you may call: echo, sleepy."
