"""Tool names the providers refuse (a dot, 70 and 77 characters) reach the model as valid wire names, the same on
every step, after a resume and in a replay, and a call by wire name reaches the right server's tool. Real servers
over stdio (tests/loop/names_server.py), the real adapters against a loopback provider that records each body."""

import hashlib
import re
import sys
from pathlib import Path
from typing import Any

from context.wire import ANTHROPIC, OPENAI, run_scripted
from helpers.cli import clean_env, run_toolwire
from helpers.fake_providers import FakeProvider
from loop.names_server import LONG_NAME
from toolwire_client.config import RunConfig
from toolwire_client.loop import Agent
from toolwire_client.replay import replay
from toolwire_client.store import approvals
from toolwire_client.store.sqlite import SqliteRunStore
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.wire_names import wire_names

REPO = Path(__file__).resolve().parents[2]
OPENAI_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ANTHROPIC_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


def hashed(known: str) -> str:
    """The documented rule for a name too long: its first 55 characters, `_`, 8 hex digits of its SHA-256."""
    return f"{known[:55]}_{hashlib.sha256(known.encode()).hexdigest()[:8]}"


ALPHA_LONG, BETA_LONG = hashed(f"alpha__{LONG_NAME}"), hashed(f"beta__{LONG_NAME}")
CALLS = [("c1", "files_read", {"path": "notes.txt"}), ("c2", ALPHA_LONG, {}), ("c3", BETA_LONG, {})]


def names_source(label: str, *flags: str) -> McpSource:
    argv = [sys.executable, "tests/loop/names_server.py", label, *flags]
    return McpSource(label, command=argv, cwd=str(REPO))


def toolbox() -> ToolBox:
    """Two servers: alpha offers files.read, dump and the long-named tool; beta the long-named tool too."""
    return ToolBox([names_source("alpha", "--all"), names_source("beta")])


def test_the_rule_keeps_valid_names_and_makes_the_others_valid_and_distinct() -> None:
    names = ["get_order", "files.read", "files/read", "files_write", "a.b", "a_b", "x" * 70, "x" * 70 + "y"]
    wire = wire_names(names)
    assert wire["get_order"] == "get_order" and wire["files_write"] == "files_write" and wire["a_b"] == "a_b"
    sha = hashlib.sha256(b"files.read").hexdigest()[:8]
    assert wire["files.read"] == f"files_read_{sha}" != wire["files/read"]  # two names sanitise alike: both hashed
    assert wire["a.b"].startswith("a_b_") and len(wire["x" * 70]) == 64
    assert len(set(wire.values())) == len(names) and all(OPENAI_NAME.match(w) for w in wire.values())
    assert wire_names(reversed(names)) == wire  # not from listing order
    assert wire_names(wire.values()) == {w: w for w in wire.values()}  # a wire name is its own (replay)
    assert wire_names(["files.read"]) == {"files.read": "files_read"}


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] if "function" in t else t["name"] for t in body["tools"]]


async def test_openai_chat_gets_valid_names_and_calls_reach_the_right_servers() -> None:
    script = [OPENAI.reply(calls=CALLS), OPENAI.reply("read")]
    state, requests = await run_scripted(OPENAI, toolbox(), "read them", script)
    first, second = (tool_names(r.body) for r in requests)
    assert all(OPENAI_NAME.match(name) for name in first), first
    assert first == second and sorted(first) == sorted(["files_read", "dump", ALPHA_LONG, BETA_LONG])
    answers = {r.call_id: (r.content, r.is_error) for r in state.steps[0].results}
    assert answers == {
        "c1": ("alpha: read notes.txt", False),
        "c2": ("alpha: long-named tool", False),
        "c3": ("beta: long-named tool", False),
    }
    assert state.status == "done"


async def test_anthropic_gets_valid_names_and_calls_reach_the_right_servers() -> None:
    script = [ANTHROPIC.reply(calls=CALLS), ANTHROPIC.reply("read")]
    state, requests = await run_scripted(ANTHROPIC, toolbox(), "read them", script)
    first, second = (tool_names(r.body) for r in requests)
    assert all(OPENAI_NAME.match(n) and ANTHROPIC_NAME.match(n) for n in first), first
    assert first == second and set(first) == {"files_read", "dump", ALPHA_LONG, BETA_LONG}
    assert [r.content for r in state.steps[0].results] == [
        "alpha: read notes.txt",
        "alpha: long-named tool",
        "beta: long-named tool",
    ]


async def test_names_hold_after_resume_and_replay_and_risky_matches_the_real_name(tmp_path: Path) -> None:
    config = RunConfig(model="openai:gpt-fake", risky_tools=["files.read"])  # the name the user knows
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    with FakeProvider() as fake:
        fake.push(OPENAI.reply(calls=CALLS), OPENAI.reply("all read"))  # the calls, then after the resume the answer
        model = OPENAI.model(fake)
        paused = await Agent(model, toolbox(), config=config, store=store).run("read them", run_id="run_names")
        assert paused.status == "waiting_for_approval"
        assert [p.call.name for p in paused.pending] == ["files_read"]
        await approvals.approve(store, "run_names", "c1")
        done = await Agent(model, toolbox(), config=config, store=store).resume("run_names")  # new server processes
        await model.aclose()
    assert done.status == "done" and done.final_answer == "all read"
    first, after_resume = (tool_names(r.body) for r in fake.requests)
    assert first == after_resume
    saved = RunConfig.model_validate(done.config)
    assert [s.name for s in saved.tools] == first  # what the run records is what the model was offered
    assert {r.call_id: r.content for s in done.steps for r in s.results}["c1"] == "alpha: read notes.txt"
    outcome = await replay(await store.load("run_names"))
    assert outcome.identical, outcome.describe()
    assert [c.name for c in outcome.sent] == [n for _, n, _ in CALLS]
    await store.aclose()


def test_toolwire_resume_offers_the_same_names(tmp_path: Path) -> None:
    env, db = clean_env(OPENAI_API_KEY="sk-test"), str(tmp_path / "runs.sqlite3")
    alpha = f"{sys.executable} tests/loop/names_server.py alpha --all"
    beta = f"{sys.executable} tests/loop/names_server.py beta"
    with FakeProvider() as fake:
        fake.push(OPENAI.reply(calls=CALLS), OPENAI.reply("all read"))  # the calls, then after the resume the answer
        args = ["run", "read them", "--model", "openai:gpt-fake", "--base-url", fake.openai_url, "--db", db]
        paused = run_toolwire(*args, "--server", alpha, "--server", beta, "--risky", "files.read", env=env)
        assert "waiting_for_approval" in paused.stdout + paused.stderr, paused.stderr
        run_id = re.findall(r"run_[0-9a-zA-Z_-]+", paused.stdout + paused.stderr)[0]
        assert run_toolwire("approve", run_id, "--db", db, env=env).returncode == 0
        resumed = run_toolwire("resume", run_id, "--db", db, env=env)
        assert resumed.returncode == 0, resumed.stderr
    first, after_resume = (tool_names(r.body) for r in fake.requests)
    assert first == after_resume and all(OPENAI_NAME.match(name) for name in first)
    assert "all read" in resumed.stdout
