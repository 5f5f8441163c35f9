"""The conformance fixture module for both suites: 0.1.16's (`examples/conformance_tools.py`, whose registry this one
extends) and 0.2.0-alpha.12's (`tasks-*`, SEP-2663; `input-required-result-*`, SEP-2322; the routing headers,
SEP-2243; the stateless server, SEP-2575), so one server passes `--suite all` of each.

`TOOLWIRE_TASK_STORE=tasks.sqlite toolwire serve examples.conformance_tasks:registry --http --port 3102`, then
`conformance server --url http://localhost:3102/mcp --suite all` (tests/server/test_tasks_node.py runs 0.2.0-alpha.12,
tests/server/test_server_node.py 0.1.16). A task-supporting tool here is an ordinary toolwire tool registered with
`task=...`."""

import itertools
import json
from typing import Annotated, Any, NoReturn

import anyio
import mcp_types as types
from examples.conformance_tools import registry
from mcp.shared.exceptions import MCPError
from pydantic import Field

from toolwire_server import ElicitationUnavailable, InputNeeded, RoundTrips, ToolContext


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


# ---- the input-required-result-* scenarios (SEP-2322, multi-round-trip): each fixture asks with the keys the suite
# names, so it builds its InputRequiredResult itself; the call's rounds (the answers of this round, and the earlier
# ones from the sealed requestState) are in its RoundTrips asker. An ordinary tool would call `ctx.elicit`.

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def _rounds(ctx: ToolContext) -> RoundTrips:
    if not isinstance(ctx.asker, RoundTrips):
        raise ElicitationUnavailable("this fixture answers in rounds: call it in the 2026-07-28 era")
    return ctx.asker


def _elicit(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def _sample(text: str, max_tokens: int) -> dict[str, Any]:
    message = {"role": "user", "content": {"type": "text", "text": text}}
    return {"method": "sampling/createMessage", "params": {"messages": [message], "maxTokens": max_tokens}}


_ROOTS = {"method": "roots/list", "params": {}}


def _ask(requests: dict[str, Any], state: dict[str, Any] | None = None) -> NoReturn:
    sealed = json.dumps(state) if state is not None else None  # sealed by the server's RequestStateBoundary
    body = {"resultType": "input_required", "inputRequests": requests, "requestState": sealed}
    raise InputNeeded(types.InputRequiredResult.model_validate(body))


def _content(answer: object, field: str) -> str | None:
    """The string `field` of an accepted form answer, else None (a malformed answer is asked again)."""
    if not isinstance(answer, dict) or answer.get("action") != "accept" or not isinstance(answer.get("content"), dict):
        return None
    value = answer["content"].get(field)
    return value if isinstance(value, str) else None


@registry.tool(description="Asks the user's name (an InputRequiredResult), then greets them.")
async def test_input_required_result_elicitation(ctx: ToolContext) -> str:
    name = _content(_rounds(ctx).responses.get("user_name"), "name")
    if name is None:
        _ask({"user_name": _elicit("What is your name?", NAME)})
    return f"Hello, {name}!"


@registry.tool(description="Asks the client's model a question (sampling in an InputRequiredResult).")
async def test_input_required_result_sampling(ctx: ToolContext) -> str:
    answer = _rounds(ctx).responses.get("capital_question")
    if not isinstance(answer, dict):
        _ask({"capital_question": _sample("What is the capital of France?", 100)})
    content = answer.get("content")
    return f"the model said: {content.get('text') if isinstance(content, dict) else content}"


@registry.tool(description="Asks the client's roots (roots/list in an InputRequiredResult).")
async def test_input_required_result_list_roots(ctx: ToolContext) -> str:
    answer = _rounds(ctx).responses.get("client_roots")
    if not isinstance(answer, dict) or not isinstance(answer.get("roots"), list):
        _ask({"client_roots": _ROOTS})
    return "roots: " + ", ".join(str(root.get("uri")) for root in answer["roots"] if isinstance(root, dict))


@registry.tool(description="Asks for a confirmation with a requestState, and checks the state comes back.")
async def test_input_required_result_request_state(ctx: ToolContext) -> str:
    rounds = _rounds(ctx)
    if rounds.answered.get("fixture") != "confirm" or "confirm" not in rounds.responses:
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        _ask({"confirm": _elicit("Please confirm", schema)}, {"fixture": "confirm"})
    return "state-ok: confirmed"


@registry.tool(description="Asks three things at once: a form, the client's model and its roots.")
async def test_input_required_result_multiple_inputs(ctx: ToolContext) -> str:
    rounds = _rounds(ctx)
    keys = ("user_name", "greeting", "client_roots")
    if rounds.answered.get("fixture") != "multiple" or any(key not in rounds.responses for key in keys):
        requests = {
            "user_name": _elicit("What is your name?", NAME),
            "greeting": _sample("Generate a greeting", 50),
            "client_roots": _ROOTS,
        }
        _ask(requests, {"fixture": "multiple"})
    return f"got {', '.join(keys)}"


@registry.tool(description="Asks in two rounds, the requestState carrying the first answer to the second.")
async def test_input_required_result_multi_round(ctx: ToolContext) -> str:
    rounds = _rounds(ctx)
    name = rounds.answered.get("name") or _content(rounds.responses.get("step1"), "name")
    if not isinstance(name, str):
        _ask({"step1": _elicit("Step 1: What is your name?", NAME)}, {"fixture": "step1"})
    color = _content(rounds.responses.get("step2"), "color") if rounds.answered.get("fixture") == "step2" else None
    if color is None:
        schema = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
        _ask({"step2": _elicit("Step 2: What is your favorite color?", schema)}, {"fixture": "step2", "name": name})
    return f"{name} likes {color}"


@registry.tool(description="Asks with a sealed requestState: a tampered one is refused before the tool runs.")
async def test_input_required_result_tampered_state(ctx: ToolContext) -> str:
    rounds = _rounds(ctx)
    if rounds.answered.get("fixture") != "sealed":
        _ask({"user_name": _elicit("What is your name?", NAME)}, {"fixture": "sealed"})
    return "state intact"


@registry.tool(description="Asks only what the client declared it can answer (a form, else its model).")
async def test_input_required_result_capabilities(ctx: ToolContext) -> str:
    rounds = _rounds(ctx)
    if rounds.responses:
        return "answered"
    capabilities = rounds.capabilities
    if capabilities is not None and capabilities.elicitation is not None:
        _ask({"user_name": _elicit("What is your name?", NAME)})
    if capabilities is not None and capabilities.sampling is not None:
        _ask({"capital_question": _sample("What is the capital of France?", 100)})
    return "nothing to ask: the client declared neither elicitation nor sampling"


@registry.tool(
    description="Asks the user's name first (an InputRequiredResult), then greets them as a task.",
    task="required",
    ask_before_task=True,
)
async def test_tool_with_task(ctx: ToolContext) -> str:
    answer = await ctx.elicit("What is your name?", NAME)
    name = (answer.content or {}).get("name") if answer.accepted else None
    await anyio.sleep(0.5)  # the long part, after the question
    return f"Hello, {name}!" if name else f"no name given ({answer.action})"


@registry.prompt(description="A prompt that asks what context to use (an InputRequiredResult from prompts/get).")
async def test_input_required_result_prompt(ctx: ToolContext) -> str:
    context = _content(_rounds(ctx).responses.get("user_context"), "context")
    if context is None:
        schema = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
        _ask({"user_context": _elicit("What context should the prompt use?", schema)})
    return f"Use this context: {context}"


# ---- http-custom-header-server-validation (SEP-2243): a parameter mirrored into an `Mcp-Param-*` header. The server
# checks the header against the body before the tool runs (the SDK's rule, on every HTTP path: transports/fast_http.py
# leaves such a call to it); a mismatch is a 400 with error -32020.


@registry.tool(description="Says which region a request was routed to (the region travels in Mcp-Param-Region too).")
async def region_status(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    return f"region {region}: ok"


# ---- server-stateless (SEP-2575): a tool that needs a client capability refuses a client that did not declare it,
# and the hooks that change the tool and prompt lists while a subscriptions/listen stream is open.


@registry.tool(description="Needs the client's model (sampling): refused with -32021 when it was not declared.")
async def test_missing_capability(ctx: ToolContext) -> str:
    ctx.require_client(types.ClientCapabilities(sampling=types.SamplingCapability()))
    return "the client can sample"


_added = itertools.count(1)


@registry.tool(description="Adds a tool to this server (its clients are told the tool list changed).")
async def test_trigger_tool_change() -> str:
    name = f"test_added_tool_{next(_added)}"
    registry.add(greet, name=name, description="A tool added while the server runs.")
    return f"added {name}"


@registry.tool(description="Adds a prompt to this server (its clients are told the prompt list changed).")
async def test_trigger_prompt_change() -> str:
    name = f"test_added_prompt_{next(_added)}"
    registry.prompt(name, description="A prompt added while the server runs.")(_added_prompt)
    return f"added {name}"


async def _added_prompt() -> str:
    return "A prompt added while the server ran."
