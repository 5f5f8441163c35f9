"""The one call pipeline: every tools/call, whatever way it came in (the SDK's handler, the stdio and HTTP fast
paths, the in-process RegistrySource, a task run in the background, an upstream's tool), is one CallRequest run
through the same ordered stages (tools/stages.py):

    Audited -> Granted -> Limited -> Validated -> Admitted -> TimedOut -> Gated -> invoke (shape, cut)

Audited and Limited are there under a policy (`serve --config`), Admitted for a tool that may run as a task, Gated
for a tool with `max_concurrency`, TimedOut unless the tool never awaits (nothing to cancel). The chains are built
once, the head per registry and the rest per tool, and kept in `registry.chains` (emptied when a tool, the policy or
isolation changes), so a call allocates no closures: the in-process call without a policy runs Granted, Validated
and the tool."""

from collections.abc import Awaitable

import mcp_types as types

from toolwire_server.tools import stages
from toolwire_server.tools.execution import invoke
from toolwire_server.tools.registry import RegisteredTool, Registry
from toolwire_server.tools.request import Answer, CallRequest, Chain, Stage

HEAD = ""
"""`registry.chains`'s key of the head (a tool's name is never empty)."""


def run(request: CallRequest) -> Awaitable[Answer]:
    """The one entry point: the call's answer (a one-text-block answer within the cap as a TextAnswer, which an
    in-process caller reads directly). Raises only cancellation, InputNeeded (the 2026-07-28 era's question: its
    InputRequiredResult is the answer), a ClientLacks protocol error, and for a task the MCPError its tool raised."""
    registry = request.registry
    head = registry.chains.get(HEAD) or _built(registry)
    return head(request)


async def call(request: CallRequest) -> types.CallToolResult:
    """`run`, for a way in that answers on the wire: the answer as a CallToolResult."""
    return result_of(await run(request))


def result_of(answer: Answer) -> types.CallToolResult:
    return answer if isinstance(answer, types.CallToolResult) else answer.call_result()


def _built(registry: Registry) -> Chain:
    """The head: the audit (under a policy), then the grant, which goes on into the called tool's own chain."""
    policy = registry.policy
    head = _chained([stages.Audited(policy)] if policy is not None else [], _linked(stages.Granted(), _tool))
    registry.chains[HEAD] = head
    return head


def _tool(request: CallRequest) -> Awaitable[Answer]:
    tool = request.tool
    assert tool is not None  # the grant stage found it
    chain = request.registry.chains.get(tool.name) or _tool_chain(request.registry, tool)
    return chain(request)


def _tool_chain(registry: Registry, tool: RegisteredTool) -> Chain:
    """The stages this tool's calls have something to do in, in their order."""
    policy = registry.policy
    steps: list[Stage] = []
    if policy is not None and policy.rules:
        steps.append(stages.Limited(policy))
    steps.append(stages.Validated())
    if tool.task is not None:
        steps.append(stages.Admitted())
    if not (tool.awaits_nothing and tool.limiter is None and tool.isolation != "process"):
        steps.append(stages.TimedOut())  # a timeout is delivered at an await: one that has none runs without
    if tool.limiter is not None:
        steps.append(stages.Gated(tool.limiter))
    chain = _chained(steps, invoke)
    registry.chains[tool.name] = chain
    return chain


def _chained(steps: list[Stage], last: Chain) -> Chain:
    chain = last
    for step in reversed(steps):
        chain = _linked(step, chain)
    return chain


def _linked(step: Stage, call_next: Chain) -> Chain:
    """`step` with the rest of the chain after it (made once per chain, not per call: a closure is the cheapest
    call there is, about a third of a keyword `partial`'s)."""

    run_step = step.__call__  # bound once: calling it skips the instance's call slot

    def linked(request: CallRequest) -> Awaitable[Answer]:
        return run_step(request, call_next)

    return linked
