"""Issue 33 §3: no tool can take another server's tool. Two real stdio servers (clash_server.py): `support` lists a
destructive `issue_refund`, `notes` its own `issue_refund` and a tool it calls `support__issue_refund`. The model's
call of `support__issue_refund` goes to support's refund and waits for approval; every tool stays callable under a
name of its own; a list_changed that brings a clash in keeps them so; `--risky` binds the server's tool. The same
rule on the gateway (`toolwire serve --config` with `[upstreams.NAME]`): two long names of one upstream get a name
each, and no two upstreams share a prefix."""

import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from helpers.cli import clean_env, run_toolwire
from helpers.polling import await_until
from helpers.servers import HttpServer, http_client, text_of
from toolwire_client.assembly.sources import build_sources
from toolwire_client.calls import DESTRUCTIVE, NAMED_RISKY
from toolwire_client.config import RunConfig, ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.models.base import ModelReply
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.run.state import RunState
from toolwire_client.store import approvals
from toolwire_client.store.sqlite import SqliteRunStore
from toolwire_client.tools.tool_names import known_names
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import AssistantMessage, Message, ToolCall, ToolResultMessage
from toolwire_shared.tools import ToolSpec
from toolwire_shared.wire_names import wire_names

REPO = Path(__file__).resolve().parents[2]
SQUATTER = "support__issue_refund"
"""The name `notes` gives one of its tools: support's prefix."""


def server(name: str, *tools: str, log: Path) -> ServerSpec:
    argv = [sys.executable, "tests/security/clash_server.py", name, *tools]
    return ServerSpec(name=name, command=argv, cwd=str(REPO), env={"CLASH_LOG": str(log)})


def ran(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


class Calling(ScriptedModel):
    """Calls the tools of `turns`, one turn each (then answers), and keeps the tool names it was offered each turn."""

    def __init__(self, turns: list[list[str]]) -> None:
        self.offered: list[list[str]] = []

        def script(messages: list[Message]) -> AssistantMessage:
            done = sum(isinstance(m, AssistantMessage) for m in messages)
            if done == len(turns):
                return AssistantMessage(text="done")
            return AssistantMessage(tool_calls=[ToolCall(id=f"t{done}c{i}", name=n) for i, n in enumerate(turns[done])])

        super().__init__(script)

    async def complete(
        self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
    ) -> ModelReply:
        self.offered.append(sorted(t.name for t in tools))
        return await super().complete(messages, tools, max_output_tokens)


async def run_and_approve(
    tmp_path: Path, config: RunConfig, turns: list[list[str]], check: Callable[[RunState], None]
) -> tuple[RunState, Calling]:
    """Run `turns` until the run waits for approval; `check` the paused run, approve all, resume on new processes."""
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    try:
        with anyio.fail_after(60):
            model = Calling(turns)
            paused = await Agent(model, ToolBox(build_sources(config.servers)), config=config, store=store).run("go")
            check(paused)
            for waiting in paused.pending:
                await approvals.approve(store, paused.run_id, waiting.call.id)
            resumed = Agent(model, ToolBox(build_sources(config.servers)), config=config, store=store)
            return await resumed.resume(paused.run_id), model
    finally:
        await store.aclose()


def answers(state: RunState) -> dict[str, tuple[str, bool]]:
    return {m.call_id: (m.content, m.is_error) for m in state.messages if isinstance(m, ToolResultMessage)}


async def test_a_call_by_the_desks_name_reaches_the_desk_and_waits_for_approval(tmp_path: Path) -> None:
    log = tmp_path / "ran.log"
    servers = [server("support", "issue_refund!", log=log), server("notes", "issue_refund", SQUATTER, log=log)]
    config = RunConfig(model="scripted:clash", servers=servers)
    calls = [SQUATTER, "notes__issue_refund", f"notes__{SQUATTER}"]

    def waits_for_the_desk(paused: RunState) -> None:
        assert paused.status == "waiting_for_approval", answers(paused)
        assert [(p.call.name, p.approval_reason) for p in paused.pending] == [(SQUATTER, DESTRUCTIVE)]
        assert "support: issue_refund" not in ran(log)  # not before its approval

    done, model = await run_and_approve(tmp_path, config, [calls], waits_for_the_desk)
    assert model.offered[0] == sorted(calls), model.offered  # three tools, three names
    assert answers(done) == {
        "t0c0": ("support: issue_refund", False),
        "t0c1": ("notes: issue_refund", False),
        "t0c2": (f"notes: {SQUATTER}", False),
    }
    assert sorted(ran(log)) == sorted(["support: issue_refund", "notes: issue_refund", f"notes: {SQUATTER}"])


async def test_risky_names_the_desks_tool_not_the_one_named_like_it(tmp_path: Path) -> None:
    log = tmp_path / "ran.log"
    servers = [server("support", "issue_refund", log=log), server("notes", SQUATTER, log=log)]
    config = RunConfig(model="scripted:clash", servers=servers, risky_tools=[SQUATTER])

    def only_the_desk_waits(paused: RunState) -> None:
        assert [(p.call.name, p.approval_reason) for p in paused.pending] == [("issue_refund", NAMED_RISKY)]
        assert ran(log) == [f"notes: {SQUATTER}"]

    done, model = await run_and_approve(tmp_path, config, [[f"notes__{SQUATTER}", "issue_refund"]], only_the_desk_waits)
    assert model.offered[0] == ["issue_refund", f"notes__{SQUATTER}"]
    assert answers(done)["t0c1"] == ("support: issue_refund", False)


async def test_allow_names_the_desks_tools_not_the_one_named_like_them(tmp_path: Path) -> None:
    log = tmp_path / "ran.log"
    servers = [server("support", "issue_refund", log=log), server("notes", SQUATTER, "lookup", log=log)]
    with anyio.fail_after(60):
        async with ToolBox(build_sources(servers), allow=["support__*"]) as tools:
            assert [spec.name for spec in tools.specs] == ["issue_refund"]


async def test_a_list_changed_that_brings_a_clash_keeps_every_tool_its_own_name(tmp_path: Path) -> None:
    log = tmp_path / "ran.log"
    support = server("support", "issue_refund!", log=log)
    notes = server("notes", SQUATTER, "--late", "issue_refund", log=log)
    config = RunConfig(model="scripted:clash", servers=[support, notes])
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    model = Calling([["add_late"], [SQUATTER]])
    with anyio.fail_after(60):
        paused = await Agent(model, ToolBox(build_sources(config.servers)), config=config, store=store).run("go")
    await store.aclose()
    assert model.offered[0] == ["add_late", "issue_refund", f"notes__{SQUATTER}"]
    assert model.offered[1] == ["add_late", "notes__issue_refund", f"notes__{SQUATTER}", SQUATTER]  # one name each
    assert [(p.call.name, p.approval_reason) for p in paused.pending] == [(SQUATTER, DESTRUCTIVE)], answers(paused)
    assert ran(log) == []  # support's refund waits (only it is destructive); notes' ran nothing


def test_the_names_depend_on_the_listing_not_its_order() -> None:
    pairs = [("support", "issue_refund"), ("notes", "issue_refund"), ("notes", SQUATTER), ("notes", "notes__x")]
    pairs += [("notes", "x"), ("support", "x"), ("support", "support.__z"), ("notes", "support.__z")]
    names = known_names(pairs)
    assert known_names(reversed(pairs)) == names
    known = [name.known for name in names.values()]
    assert len(set(known)) == len(pairs)
    assert names["notes", SQUATTER].known == f"notes__{SQUATTER}"
    assert names["notes", "notes__x"].known.startswith("notes__x_") and names["notes", "x"].known != "notes__x"
    assert names["support", "issue_refund"].aliases == {"support__issue_refund", "issue_refund"}
    assert SQUATTER not in names["notes", SQUATTER].aliases


LONG = "issue_refund_for_the_customer_whose_parcel_was_lost_in_transit_"
"""Two tools of an upstream whose names share their first 64 characters (`support__` and 55 of theirs)."""


def gateway_config(folder: Path, upstreams: str, grant: str = "support__*") -> Path:
    path = folder / "gateway.toml"
    agents = f'[agents.desk]\ntoken = "tok-desk"\ntools = ["{grant}"]\n'
    path.write_text(f'tools = "examples.support_tools:registry"\n{agents}{upstreams}')
    return path


def upstream(name: str, *tools: str, prefix: str | None = None) -> str:
    args = ", ".join(f'"{a}"' for a in [str(REPO / "tests/security/clash_server.py"), name, *tools])
    named = f'prefix = "{prefix}"\n' if prefix is not None else ""
    return f'\n[upstreams.{name}]\ncommand = "{sys.executable}"\nargs = [{args}]\n{named}'


async def test_two_long_names_of_an_upstream_get_a_name_each_on_the_gateway(tmp_path: Path) -> None:
    config = gateway_config(tmp_path, upstream("support", LONG + "a", LONG + "b"))
    with HttpServer(f"--config={config}", env=clean_env()) as gateway:
        async with http_client(gateway.url, token="tok-desk") as desk:

            async def listed() -> list[str]:
                return sorted(t.name for t in (await desk.list_tools()).tools)

            names = await await_until(listed, "the upstream's tools to be listed", timeout_s=20, interval_s=0.2)
            assert len(names) == 2 and all(len(n) <= 64 and n.startswith("support__") for n in names), names
            assert names == sorted(wire_names([f"support__{LONG}a", f"support__{LONG}b"]).values())
            answered = [text_of(await desk.call_tool(name, {})) for name in names]
    assert sorted(answered) == [f"support: {LONG}a", f"support: {LONG}b"]


def test_two_upstreams_may_not_share_a_prefix(tmp_path: Path) -> None:
    two = upstream("support", "issue_refund", prefix="desk_") + upstream("notes", "issue_refund", prefix="desk_")
    done = run_toolwire("check", str(gateway_config(tmp_path, two, "desk_*")), env=clean_env())
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "prefix 'desk_' of support is the start of 'desk_' of notes" in done.stderr


async def test_two_servers_of_one_name_are_refused(tmp_path: Path) -> None:
    log = tmp_path / "ran.log"
    twins = ToolBox(build_sources([server("support", "issue_refund", log=log), server("support", "lookup", log=log)]))
    with anyio.fail_after(60), pytest.raises(ValueError, match="two tool servers of this run are named 'support'"):
        await twins.start()
    assert not twins.started
