"""server-everything's `simulate-research-query` (listed with `execution.taskSupport: "required"`, 2025-11-25's
experimental tasks on a handshake-era connection) from toolwire's client: offered because the server says it runs
tools/call as tasks, called with `params.task`, its task id saved before it is followed with `tasks/get`, its result
fetched with `tasks/result`; a saved task followed again is not created again; a task that asks for input (its
question would come on the `tasks/result` stream) is cancelled, readably."""

import anyio

from external.servers import needs, npm_server
from toolwire_client.run.state import PendingCall, RunState, args_hash
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ToolResult

EVERYTHING = npm_server("server-everything")
TOOL = "simulate-research-query"

pytestmark = needs(EVERYTHING)


async def test_a_legacy_task_tool_is_called_as_a_task_and_followed_to_its_result() -> None:
    noted: list[tuple[str, str]] = []

    async def note_task(call_id: str, task_id: str) -> None:
        noted.append((call_id, task_id))

    plain = ToolCall(id="c1", name=TOOL, arguments={"topic": "tides"})
    asking = ToolCall(id="c2", name=TOOL, arguments={"topic": "python", "ambiguous": True})
    results: dict[str, ToolResult] = {}
    async with ToolBox([McpSource("everything", command=EVERYTHING)]) as box:
        assert TOOL in [spec.name for spec in box.specs]

        async def call(one: ToolCall) -> None:
            results[one.id] = await box.call(one, RunContext("run_t", note_task=note_task), timeout_s=60)

        async with anyio.create_task_group() as group:
            group.start_soon(call, plain)
            group.start_soon(call, asking)
        done = results["c1"]
        assert not done.is_error and done.content.startswith("# Research Report: tides"), done
        assert done.task is not None and done.task.status == "completed"
        assert (plain.id, done.task.task_id) in noted  # saved before the first tasks/get

        # A run that crashed after saving the task id follows the same task: no second task is created.
        pending = PendingCall(call=plain, state="sent", args_hash=args_hash(plain.arguments), task_id=done.task.task_id)
        crashed = RunState(run_id="run_t", agent_name="agent", task="research", model="scripted:x", pending=[pending])
        again = await box.call(plain, RunContext("run_t", crashed, note_task=note_task), timeout_s=60)
    assert again.content == done.content and again.task == done.task
    assert [call_id for call_id, _ in noted] == sorted(["c1", "c2"])  # the resumed call created nothing
    refused = results["c2"]
    assert refused.is_error and "asked for input" in refused.content and "cancelled" in refused.content, refused
    assert refused.task is not None and refused.task.status == "cancelled"
