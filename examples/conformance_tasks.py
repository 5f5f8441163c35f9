"""The fixture tools the conformance suite's `tasks-*` scenarios (0.2.0-alpha.12, SEP-2663) call.

`TOOLWIRE_TASK_STORE=/tmp/tasks.sqlite toolwire serve examples.conformance_tasks:registry --http --port 3102`, then
`conformance server --url http://localhost:3102/mcp --scenario tasks-lifecycle` (tests/server/test_tasks_node.py
runs them all). A task-supporting tool here is an ordinary toolwire tool registered with `task=...`."""

import anyio
from mcp.shared.exceptions import MCPError

from toolwire_server import Registry, ToolContext

registry = Registry("toolwire-conformance-tasks")


@registry.tool(description="Greets someone (a plain call, never a task).")
async def greet(name: str) -> str:
    return f"Hello, {name}!"


@registry.tool(
    description="Sleeps `seconds` seconds, then says it is done (a task when the client takes tasks).",
    task="optional",
    timeout_s=300,
)
async def slow_compute(seconds: float, ctx: ToolContext, label: str = "") -> str:
    for step in range(int(seconds)):
        await ctx.report_progress(step, seconds, f"computing {label}".strip())
        await anyio.sleep(1)
    await anyio.sleep(seconds - int(seconds))
    return f"computed {label} in {seconds:g} s".replace("  ", " ")


@registry.tool(description="Fails with a tool error after a second (runs only as a task).", task="required")
async def failing_job() -> str:
    await anyio.sleep(1)
    raise RuntimeError("the job failed")


@registry.tool(description="Fails with a JSON-RPC (protocol) error.", task="optional")
async def protocol_error_job() -> str:
    raise MCPError(code=-32603, message="the job crashed")


def _confirm(key: str, message: str) -> dict[str, object]:
    schema = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
    return {
        key: {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}
    }


@registry.tool(description="Deletes a file after the user confirms (asks as a task).", task="optional")
async def confirm_delete(filename: str, ctx: ToolContext) -> str:
    if ctx.ask_fn is None:
        return f"not deleted: {filename} (confirmation needs the tasks extension)"
    answers = await ctx.ask_fn(_confirm("confirm", f"Delete {filename}?"))
    answer = answers.get("confirm") or {}
    confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm") is True
    return f"{'deleted' if confirmed else 'kept'}: {filename}"


@registry.tool(description="Asks two questions at once (asks as a task).", task="optional")
async def multi_input(ctx: ToolContext) -> str:
    if ctx.ask_fn is None:
        return "no answers (needs the tasks extension)"
    answers = await ctx.ask_fn({**_confirm("first", "First?"), **_confirm("second", "Second?")})
    return "answers: " + ", ".join(sorted(answers))
