"""The server's call pipeline (tools/pipeline.py, tools/stages.py) in process: which stages a registry's and a tool's
chain are built of and in what order, and what that order guarantees (a refused grant is still audited once, a
limit refusal validates nothing, a bad argument never reaches the tool, a refused call is never admitted as a task,
the wait for a slot counts against the timeout). A real Registry of small tools, a real CallPolicy with in-memory
counters on a clock that never moves, and an audit log in a SQLite file of a temporary folder. Nothing is started;
every timeout is a zero deadline, so nothing waits. tests/security/test_call_pipeline.py runs the same stages through
every way in."""

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from toolwire_server.auth.access import Grant
from toolwire_server.policy.audit import AuditLog, read_records
from toolwire_server.policy.config import LimitRule
from toolwire_server.policy.counting import MemoryCounters
from toolwire_server.policy.guard import CallPolicy, outcome_of
from toolwire_server.tools import pipeline
from toolwire_server.tools.registry import Registry
from toolwire_server.tools.request import CallRequest, Chain

SHM = Path("/dev/shm")
ANYONE = Grant(agent="desk", patterns=("*",))
CAP = 2000


class Tools:
    """A registry of small tools that write down what ran."""

    def __init__(self, audit: Path) -> None:
        self.audit = audit
        self.registry = Registry("unit")
        self.ran: list[str] = []
        self.started = anyio.Event()
        self.release = anyio.Event()
        add, ran = self.registry.add, self.ran

        async def refund(order: int) -> str:
            """Refund an order."""
            await anyio.lowlevel.checkpoint()
            ran.append(f"refund {order}")
            return "refunded"

        async def peek(order: int) -> str:
            """Read an order (never awaits)."""
            ran.append(f"peek {order}")
            return "open"

        async def hold() -> str:
            """Wait until released."""
            ran.append("hold")
            self.started.set()
            await self.release.wait()
            ran.append("released")
            return "held"

        add(refund)
        add(peek)
        add(hold)

    def policy(self, *rules: LimitRule) -> None:
        """Limits and an audit log of every call from now on."""
        audit = AuditLog(str(self.audit), flush_s=60)
        self.registry.policy = CallPolicy(list(rules), MemoryCounters(clock=lambda: 0.0), audit)

    def audited(self) -> list[tuple[str, str, str]]:
        """(agent, tool, outcome) of every audit record, once the log has written its queue."""
        self.close()
        return [(r["agent"], r["tool"], r["outcome"]) for r in read_records(str(self.audit))]

    def close(self) -> None:
        policy = self.registry.policy
        if policy is not None and policy.audit is not None:
            policy.audit.close()


@pytest.fixture
def tools(audit: Path) -> Iterator[Tools]:
    made = Tools(audit)
    yield made
    made.close()  # before the audit's folder goes


@pytest.fixture
def audit(request: pytest.FixtureRequest) -> Iterator[Path]:
    """The audit database's path: in memory (tmpfs) where there is one, as a sync to disk is most of its cost."""
    if not SHM.is_dir():
        yield request.getfixturevalue("tmp_path") / "audit.sqlite3"
        return
    with tempfile.TemporaryDirectory(dir=SHM, prefix="toolwire-unit-") as folder:
        yield Path(folder) / "audit.sqlite3"


async def call(registry: Registry, name: str, arguments: dict[str, Any] | None = None, **fields: Any) -> str:
    """The call's outcome: `ok` or its error kind."""
    grant = fields.pop("grant", ANYONE)
    request = CallRequest(registry, grant, name, arguments, max_result_chars=CAP, **fields)
    return outcome_of(await pipeline.call(request))


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def stages_of(chain: Chain) -> list[str]:
    """The chain's stages by class name, in order, and its last link (`invoke`, or the head's `_tool`)."""
    names: list[str] = []
    while chain.__closure__ is not None and chain.__code__.co_freevars == ("call_next", "run_step"):
        call_next, run_step = (cell.cell_contents for cell in chain.__closure__)
        names.append(type(run_step.__self__).__name__)
        chain = call_next
    return [*names, chain.__name__]


# --- how the chains are built ---------------------------------------------------------------------------------


async def test_without_a_policy_a_call_is_granted_validated_timed_and_run(tools: Tools) -> None:
    assert await call(tools.registry, "refund", {"order": 1}) == "ok"
    assert stages_of(tools.registry.chains[pipeline.HEAD]) == ["Granted", "_tool"]
    assert stages_of(tools.registry.chains["refund"]) == ["Validated", "TimedOut", "invoke"]


async def test_a_tool_that_never_awaits_has_no_timeout_stage(tools: Tools) -> None:
    assert await call(tools.registry, "peek", {"order": 1}) == "ok"
    assert stages_of(tools.registry.chains["peek"]) == ["Validated", "invoke"]


async def test_a_policy_without_limit_rules_audits_first_and_counts_nothing(tools: Tools) -> None:
    tools.policy()
    assert await call(tools.registry, "refund", {"order": 1}) == "ok"
    assert stages_of(tools.registry.chains[pipeline.HEAD]) == ["Audited", "Granted", "_tool"]
    assert stages_of(tools.registry.chains["refund"]) == ["Validated", "TimedOut", "invoke"]


async def test_limit_rules_come_before_the_arguments_in_every_tools_chain(tools: Tools) -> None:
    tools.policy(LimitRule(tool="nothing_here", per_minute=1))
    assert await call(tools.registry, "peek", {"order": 1}) == "ok"
    assert stages_of(tools.registry.chains["peek"]) == ["Limited", "Validated", "invoke"]


async def test_a_task_tool_is_admitted_after_its_arguments_and_before_its_timeout(tools: Tools) -> None:
    async def report() -> str:
        """A report, as a task."""
        await anyio.lowlevel.checkpoint()
        return "done"

    tools.registry.add(report, task="optional")
    assert await call(tools.registry, "report", {}) == "ok"
    assert stages_of(tools.registry.chains["report"]) == ["Validated", "Admitted", "TimedOut", "invoke"]


async def test_max_concurrency_gates_inside_the_timeout_even_for_a_tool_that_never_awaits(tools: Tools) -> None:
    async def count() -> int:
        """Count (never awaits)."""
        return 1

    tools.registry.add(count, max_concurrency=1)
    assert await call(tools.registry, "count", {}) == "ok"
    assert stages_of(tools.registry.chains["count"]) == ["Validated", "TimedOut", "Gated", "invoke"]


async def test_a_process_isolated_tool_keeps_its_timeout_though_it_never_awaits(tools: Tools) -> None:
    async def crunch(n: int) -> int:
        """Crunch (never awaits)."""
        return n

    tools.registry.add(crunch, isolation="process")
    assert await call(tools.registry, "crunch", {"n": "many"}) == "bad_arguments"  # builds the chain, starts nothing
    assert stages_of(tools.registry.chains["crunch"]) == ["Validated", "TimedOut", "invoke"]


async def test_the_chains_are_kept_and_forgotten_when_a_tool_or_the_policy_changes(tools: Tools) -> None:
    registry = tools.registry
    await call(registry, "refund", {"order": 1})
    head, refund = registry.chains[pipeline.HEAD], registry.chains["refund"]
    await call(registry, "refund", {"order": 2})
    assert registry.chains[pipeline.HEAD] is head and registry.chains["refund"] is refund

    def later() -> str:
        """Registered later."""
        return "x"

    registry.add(later)
    assert registry.chains == {}
    await call(registry, "refund", {"order": 3})
    tools.policy()
    assert registry.chains == {}


# --- what the order guarantees ------------------------------------------------------------------------------------


async def test_a_call_outside_the_grant_is_refused_audited_once_and_runs_nothing(tools: Tools) -> None:
    tools.policy()
    only_peek = Grant(agent="desk", patterns=("peek",))
    assert await call(tools.registry, "refund", {"order": 1}, grant=only_peek) == "refused"
    assert tools.ran == []
    assert tools.audited() == [("desk", "refund", "refused")]


async def test_an_unknown_tool_is_audited_and_answered_with_the_tools_the_grant_allows(tools: Tools) -> None:
    tools.policy()
    only_peek = Grant(agent="desk", patterns=("peek", "hold"))
    result = await pipeline.call(CallRequest(tools.registry, only_peek, "refnud", {}, max_result_chars=CAP))
    assert outcome_of(result) == "unknown_tool"
    assert text_of(result).endswith("Tools you may call: hold, peek.")
    assert tools.audited() == [("desk", "refnud", "unknown_tool")]


async def test_a_limit_refusal_validates_nothing_and_runs_nothing(tools: Tools) -> None:
    tools.policy(LimitRule(agent="desk", tool="refund", per_minute=1, burst=1))
    assert await call(tools.registry, "refund", {"order": 1}) == "ok"
    assert await call(tools.registry, "refund", {"order": "not a number"}) == "limited"  # not bad_arguments
    assert await call(tools.registry, "peek", {"order": 2}) == "ok"  # the rule names refund only
    assert tools.ran == ["refund 1", "peek 2"]
    assert [outcome for *_, outcome in tools.audited()] == ["ok", "limited", "ok"]


async def test_a_bad_argument_never_reaches_the_tool_and_the_answer_shows_a_correct_call(tools: Tools) -> None:
    request = CallRequest(tools.registry, ANYONE, "refund", {"order": "A100"}, max_result_chars=CAP)
    result = await pipeline.call(request)
    assert outcome_of(result) == "bad_arguments" and tools.ran == [] and request.validated is None
    assert "A correct call looks like" in text_of(result) and '"order"' in text_of(result)


async def test_a_call_refused_by_its_limit_or_its_arguments_is_never_admitted_as_a_task(tools: Tools) -> None:
    async def report(pages: int) -> str:
        """A report, as a task."""
        await anyio.lowlevel.checkpoint()
        tools.ran.append("report")
        return "done"

    tools.registry.add(report, task="optional")
    tools.policy(LimitRule(tool="report", per_minute=1, burst=2))

    async def admitted() -> None:
        tools.ran.append("admitted")

    assert await call(tools.registry, "report", {"pages": "many"}, admitted=admitted) == "bad_arguments"
    assert await call(tools.registry, "report", {"pages": 1}, admitted=admitted) == "ok"
    assert await call(tools.registry, "report", {"pages": 1}, admitted=admitted) == "limited"
    assert tools.ran == ["admitted", "report"]


async def test_past_its_timeout_a_call_is_answered_timeout_and_the_tool_stopped(tools: Tools) -> None:
    async def stuck() -> str:
        """Never done in time."""
        tools.ran.append("stuck")
        await anyio.Event().wait()
        tools.ran.append("done")
        return "late"

    tools.registry.add(stuck, timeout_s=0)
    assert await call(tools.registry, "stuck", {}) == "timeout"
    assert tools.ran == ["stuck"]  # stopped at its first await


async def test_a_clients_deadline_narrows_the_tools_timeout_but_never_widens_it(tools: Tools) -> None:
    async def instant() -> str:
        """Has no time at all."""
        await anyio.lowlevel.checkpoint()
        return "late"

    tools.registry.add(instant, timeout_s=0)
    assert await call(tools.registry, "instant", {}, timeout_s=60) == "timeout"
    assert await call(tools.registry, "refund", {"order": 1}, timeout_s=0) == "timeout"
    assert await call(tools.registry, "refund", {"order": 2}, timeout_s=60) == "ok"


async def test_a_tool_that_never_awaits_answers_even_at_a_zero_deadline(tools: Tools) -> None:
    assert await call(tools.registry, "peek", {"order": 1}, timeout_s=0) == "ok"
    assert tools.ran == ["peek 1"]


async def test_the_wait_for_a_concurrency_slot_counts_against_the_timeout(tools: Tools) -> None:
    async def slot() -> str:
        """One at a time."""
        tools.ran.append("slot")
        return "in"

    tool = tools.registry.add(slot, max_concurrency=1)
    assert tool.limiter is not None
    async with tool.limiter:  # another call holds the only slot
        assert await call(tools.registry, "slot", {}, timeout_s=0) == "timeout"
    assert tools.ran == []
    assert await call(tools.registry, "slot", {}) == "ok"
    assert tools.ran == ["slot"]


async def test_an_in_flight_slot_is_held_while_the_call_runs_and_given_back_when_it_ends(tools: Tools) -> None:
    tools.policy(LimitRule(tool="*", in_flight=1))
    outcomes: list[str] = []
    async with anyio.create_task_group() as group:

        async def first() -> None:
            outcomes.append(await call(tools.registry, "hold", {}))

        group.start_soon(first)
        await tools.started.wait()
        outcomes.append(await call(tools.registry, "peek", {"order": 1}))  # the one slot is taken
        tools.release.set()
    outcomes.append(await call(tools.registry, "peek", {"order": 2}))
    assert outcomes == ["limited", "ok", "ok"]
    assert [o for *_, o in tools.audited()] == ["limited", "ok", "ok"]


async def test_a_cancelled_call_gives_its_slot_back_and_is_audited_cancelled(tools: Tools) -> None:
    tools.policy(LimitRule(tool="*", in_flight=1))
    async with anyio.create_task_group() as group:
        group.start_soon(call, tools.registry, "hold", {})
        await tools.started.wait()
        group.cancel_scope.cancel()
    assert await call(tools.registry, "peek", {"order": 1}) == "ok"
    assert tools.ran == ["hold", "peek 1"]
    assert tools.audited() == [("desk", "hold", "cancelled"), ("desk", "peek", "ok")]
