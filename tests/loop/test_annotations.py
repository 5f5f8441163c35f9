"""MCP tool annotations as policy (issue 23), on a real stdio server that marks its tools only with annotations
(annotated_server.py): `destructiveHint` asks for approval unless the server is trusted, `readOnlyHint` runs,
an untrusted server's `idempotentHint` never allows a resend after a crash; the reason a call waits is saved and
shown by `toolwire approvals`."""

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

from toolwire_client.assembly.sources import build_sources
from toolwire_client.calls import DESTRUCTIVE, MARKED_RISKY, NAMED_RISKY, approval_reason
from toolwire_client.config import RunConfig, ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.store.sqlite import SqliteRunStore
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolPolicy, ToolSpec

REPO = Path(__file__).resolve().parents[2]
SERVER = str(REPO / "tests" / "loop" / "annotated_server.py")


class Crash(BaseException):
    """The process dies after the server ran the call and before its result was saved."""


class CrashAfter:
    async def before_tool(self, call: ToolCall) -> None:
        return None

    async def after_tool(self, call: ToolCall, result: ToolResult) -> ToolResult | None:
        raise Crash(call.name)


def one_call(name: str, **arguments: str) -> ScriptedModel:
    """Calls `name` once, then answers with what came back."""

    def script(messages: list[Message]) -> AssistantMessage:
        if isinstance(messages[-1], ToolResultMessage):
            return AssistantMessage(text=f"got: {messages[-1].content}")
        return AssistantMessage(tool_calls=[ToolCall(id="c1", name=name, arguments=arguments)])

    return ScriptedModel(script)


def spec(tmp_path: Path, trust: bool = False) -> ServerSpec:
    return ServerSpec(
        name="notes", command=[sys.executable, SERVER], env={"NOTES_FILE": str(tmp_path / "notes.log")}, trust=trust
    )


def ran(tmp_path: Path) -> list[str]:
    log = tmp_path / "notes.log"
    return log.read_text().splitlines() if log.exists() else []


async def run_one(
    tmp_path: Path, name: str, *, trust: bool = False, risky: tuple[str, ...] = (), **arguments: str
) -> tuple[SqliteRunStore, str]:
    config = RunConfig(model="scripted:annotations", servers=[spec(tmp_path, trust)], risky_tools=list(risky))
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    agent = Agent(one_call(name, **arguments), ToolBox(build_sources(config.servers)), config=config, store=store)
    state = await agent.run(f"call {name}")
    return store, state.run_id


async def test_a_destructive_tool_waits_for_approval_and_says_why(tmp_path: Path) -> None:
    store, run_id = await run_one(tmp_path, "write_note", text="hello")
    state = await store.load(run_id)
    await store.aclose()
    assert state.status == "waiting_for_approval" and ran(tmp_path) == []
    [waiting] = state.pending
    assert (waiting.call.name, waiting.state) == ("write_note", "pending_approval")
    assert waiting.approval_reason == DESTRUCTIVE

    env = {**os.environ, "TOOLWIRE_DB": str(tmp_path / "runs.sqlite3")}
    shown = await anyio.run_process([sys.executable, "-m", "toolwire_client.cli", "approvals"], env=env, check=False)
    out = shown.stdout.decode()
    assert shown.returncode == 0, shown.stderr.decode()
    assert "write_note" in out and "destructive per the server's" in out, out
    listed = await anyio.run_process([sys.executable, "-m", "toolwire_client.cli", "approvals", "--json"], env=env)
    [row] = json.loads(listed.stdout)["waiting"]
    assert row["approval_reason"] == DESTRUCTIVE


async def test_a_trusted_servers_destructive_tool_runs(tmp_path: Path) -> None:
    store, run_id = await run_one(tmp_path, "write_note", trust=True, text="hello")
    state = await store.load(run_id)
    await store.aclose()
    assert (state.status, state.final_answer) == ("done", "got: written")
    assert ran(tmp_path) == ["write_note hello"]


async def test_a_read_only_tool_runs_but_never_lifts_a_risky(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    store, run_id = await run_one(tmp_path / "plain", "read_note")
    state = await store.load(run_id)
    await store.aclose()
    assert (state.status, ran(tmp_path / "plain")) == ("done", ["read_note"])
    (tmp_path / "named").mkdir()
    store, run_id = await run_one(tmp_path / "named", "read_note", risky=("read_note",))
    state = await store.load(run_id)
    await store.aclose()
    assert state.status == "waiting_for_approval" and state.pending[0].approval_reason == NAMED_RISKY


@pytest.mark.parametrize(("trust", "resent"), [(False, False), (True, True)])
async def test_an_untrusted_idempotent_hint_never_resends_after_a_crash(
    tmp_path: Path, trust: bool, resent: bool
) -> None:
    config = RunConfig(model="scripted:annotations", servers=[spec(tmp_path, trust)])
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    crashing = Agent(
        one_call("retry_me", flag="on"),
        ToolBox(build_sources(config.servers)),
        config=config,
        store=store,
        hooks=(CrashAfter(),),
    )
    with pytest.raises(Crash):
        await crashing.run("set the flag", run_id="run_crash")
    [left] = (await store.load("run_crash")).pending
    assert (left.state, left.idempotent) == ("sent", resent)
    assert ran(tmp_path) == ["retry_me on"]

    again = Agent(one_call("retry_me", flag="on"), ToolBox(build_sources(config.servers)), config=config, store=store)
    done = await again.resume("run_crash")
    await store.aclose()
    [result] = [m for m in done.messages if isinstance(m, ToolResultMessage)]
    if resent:
        assert ran(tmp_path) == ["retry_me on", "retry_me on"] and result.content == "flag on set"
    else:
        assert ran(tmp_path) == ["retry_me on"] and "outcome" in result.content and result.is_error


def test_the_rule_at_the_policy_level() -> None:
    def tool(**policy: bool) -> ToolSpec:
        return ToolSpec(name="t", description="t", policy=ToolPolicy(**policy))

    def hints(read_only: bool | None, destructive: bool | None, idempotent: bool | None, trusted: bool) -> ToolPolicy:
        return ToolPolicy().with_annotations(
            read_only=read_only, destructive=destructive, idempotent=idempotent, trusted=trusted
        )

    call = ToolCall(id="1", name="t", arguments={})
    assert approval_reason(call, tool(destructive_hint=True), set()) == DESTRUCTIVE
    assert approval_reason(call, tool(destructive_hint=True, trusted=True), set()) is None
    assert approval_reason(call, tool(risky=True, trusted=True), set()) == MARKED_RISKY  # trust waives hints only
    assert approval_reason(call, tool(trusted=True), {"t"}) == NAMED_RISKY
    assert approval_reason(call, tool(), set()) is None
    assert not hints(None, None, None, False).destructive_hint  # no annotations: runs as before
    assert not hints(True, True, None, False).destructive_hint  # readOnlyHint wins (destructiveHint is moot)
    assert hints(False, True, None, False).destructive_hint
    assert not hints(None, None, True, False).resend_ok  # an untrusted idempotentHint does not allow a resend
    assert hints(None, None, True, True).resend_ok and hints(True, None, None, True).resend_ok
    assert ToolPolicy(idempotent=True).resend_ok  # toolwire's own policy, trusted or not
