"""The stages of the call pipeline, in their order (tools/pipeline.py puts them together): each does its part and
calls the rest (`call_next`) or ends the call with a result. A stage a call has nothing to do in is not in its
chain at all (no policy: no audit, no limits; no `max_concurrency`: no gate; a tool that never awaits: no timeout)."""

import logging
import time
from collections.abc import Awaitable

import anyio
from pydantic import ValidationError

from toolwire_server.functions.elicit import InputNeeded
from toolwire_server.functions.schema import describe_problems
from toolwire_server.policy.guard import CallPolicy, outcome_of
from toolwire_server.tools.execution import STOPPED, failed, where
from toolwire_server.tools.request import Answer, CallRequest, Chain
from toolwire_shared import errors

log = logging.getLogger("toolwire.server")


class Audited:
    """First, under a policy: every call that reaches the server, however it ends (refused by its grant or a limit,
    run, cancelled), is one audit record and one `toolwire.server.call.duration` value, written when it ends (for a
    task: when the task ends, with its real latency)."""

    __slots__ = ("policy",)

    def __init__(self, policy: CallPolicy) -> None:
        self.policy = policy

    async def __call__(self, request: CallRequest, call_next: Chain) -> Answer:
        started = time.perf_counter()
        agent, name, arguments = request.grant.agent, request.name, request.arguments
        try:
            answer = await call_next(request)
        except BaseException as exc:
            self.policy.record(agent, name, arguments, None, started, _ended_by(exc))
            raise
        self.policy.record(agent, name, arguments, answer, started, outcome_of(answer))
        return answer


def _ended_by(exc: BaseException) -> str:
    if isinstance(exc, anyio.get_cancelled_exc_class()):
        return "cancelled"
    if isinstance(exc, InputNeeded):  # the tool asked; the client calls again with the answer (a call of its own)
        return "input_required"
    return "tool_failed"  # a protocol error the tool raised (a task's `failed`)


async def answered(answer: Answer) -> Answer:
    """An answer a stage made itself, as the awaitable a chain returns (a stage that only looks and passes the call
    on returns the rest's awaitable: no coroutine of its own, one frame less a call)."""
    return answer


class Granted:
    """The tool, looked up by name and within the caller's grant; then the tool's own chain (`call_next`)."""

    __slots__ = ()

    def __call__(self, request: CallRequest, call_next: Chain) -> Awaitable[Answer]:
        registry, grant = request.registry, request.grant
        tool = registry.get(request.name)
        if tool is None:
            log.info("agent %r called unknown tool %s", grant.agent, errors.quoted(request.name))
            known = [n for n in registry.names() if grant.allows(n)]
            return answered(failed("unknown_tool", errors.unknown_tool(request.name, known), request.max_result_chars))
        if not grant.allows(tool.name):
            log.warning("refused: agent %r called tool %r outside its grant", grant.agent, tool.name)
            return answered(failed("refused", errors.refused(tool.name, grant.agent), request.max_result_chars))
        request.tool = tool
        return call_next(request)


class Limited:
    """Under limit rules: the call is counted against every rule that matches its agent and tool, or refused
    (`limited`, the tool not run); a rule with `in_flight` holds its slot until the call (a task: the task) ends."""

    __slots__ = ("policy",)

    def __init__(self, policy: CallPolicy) -> None:
        self.policy = policy

    async def __call__(self, request: CallRequest, call_next: Chain) -> Answer:
        agent, policy = request.grant.agent, self.policy
        rules = policy.rules_for(agent, request.name)
        if not rules:
            return await call_next(request)
        refused = await policy.spend(agent, request.name, rules)
        if refused is not None:
            return refused
        if not any(rule.in_flight is not None for _, rule in rules):
            return await call_next(request)
        try:
            answer = await call_next(request)
        except BaseException:  # cancelled too: the slot is given back all the same
            with anyio.CancelScope(shield=True):  # only here: a cancel scope costs µs a call
                await policy.counters.give_back(agent, rules)
            raise
        await policy.counters.give_back(agent, rules)
        return answer


class Validated:
    """The arguments, checked against the tool's model (built once, at registration): a readable `bad_arguments`
    result with the schema, the tool not run."""

    __slots__ = ()

    def __call__(self, request: CallRequest, call_next: Chain) -> Awaitable[Answer]:
        tool = request.tool
        assert tool is not None
        try:
            request.validated = tool.model.__pydantic_validator__.validate_python(request.arguments or {})
        except ValidationError as exc:
            text = errors.bad_arguments(tool.name, describe_problems(exc), tool.schema)
            return answered(failed("bad_arguments", text, request.max_result_chars))
        return call_next(request)


class Admitted:
    """For a tool that may run as a task: tell the way in that the call passed its limits and arguments (a task is
    stored now, and the caller answered with its handle; the rest runs in the background)."""

    __slots__ = ()

    async def __call__(self, request: CallRequest, call_next: Chain) -> Answer:
        if request.admitted is not None:
            await request.admitted()
        return await call_next(request)


class Gated:
    """A tool with `max_concurrency`: at most that many of its calls run at once; the others wait here."""

    __slots__ = ("limiter",)

    def __init__(self, limiter: anyio.CapacityLimiter) -> None:
        self.limiter = limiter

    async def __call__(self, request: CallRequest, call_next: Chain) -> Answer:
        async with self.limiter:
            return await call_next(request)


class TimedOut:
    """The tool's timeout (narrowed by the request's): past it the call is stopped and answered `timeout`. The
    wait for a concurrency slot counts against it."""

    __slots__ = ()

    async def __call__(self, request: CallRequest, call_next: Chain) -> Answer:
        tool = request.tool
        assert tool is not None
        timeout = tool.policy.timeout_s if request.timeout_s is None else min(request.timeout_s, tool.policy.timeout_s)
        answer: Answer | None = None
        with anyio.move_on_after(timeout) as scope:
            answer = await call_next(request)
        if scope.cancelled_caught or answer is None:
            log.warning("tool %s timed out after %gs and was %s", tool.name, timeout, STOPPED[where(tool)])
            return failed("timeout", errors.timed_out(tool.name, timeout), request.max_result_chars)
        return answer
