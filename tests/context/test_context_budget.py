"""--context-budget: past the budget the oldest results are cleared to a stub naming read_result, then older turns
are summarised by the run's model in a compact step (a side exchange: never in the run's list, its tokens counted);
every request stays valid. What the model was sent is reproducible: a run paused for a person and resumed by
another process sends exactly the requests an uninterrupted run sends, and `toolwire replay` finds the same views."""

import json
import sys
from pathlib import Path
from typing import Any

from context.pages_tools import page_text
from context.script import SUMMARY, PageReader
from context.test_kept_results import pages
from context.wire import WIRES, results_sent, system_sent, tools_sent
from helpers.cli import clean_env, run_toolwire
from helpers.fake_providers import FakeProvider
from toolwire_client import texts
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.run.ordering import check_order
from toolwire_client.store import open_store
from toolwire_shared.messages import AssistantMessage, ToolCall, ToolResultMessage, UserMessage

WAITING = 4
SERVER = f"{sys.executable} -m toolwire_server tests/context/pages_tools.py:registry --stdio --log-level ERROR"
BUDGET = "3000"


def chat_order(body: dict[str, Any]) -> None:
    """An OpenAI Chat request read back into messages and put through the loop's own ordering check."""
    messages: list[Any] = []
    for m in body["messages"]:
        if m["role"] == "assistant":
            calls = [ToolCall(id=c["id"], name=c["function"]["name"]) for c in m.get("tool_calls") or []]
            messages.append(AssistantMessage(text=m.get("content") or "", tool_calls=calls))
        elif m["role"] == "tool":
            messages.append(ToolResultMessage(call_id=m["tool_call_id"], name="?", content=m["content"]))
        elif m["role"] == "user":
            messages.append(UserMessage(content=m["content"]))
    check_order(messages)


def run_args(db: str, fake: FakeProvider, *extra: str) -> list[str]:
    model = ["--model", "openai:gpt-fake", "--base-url", fake.openai_url]
    return ["run", "Read every page of the report", *model, "--server", SERVER, "--db", db, *extra]


def test_a_resumed_run_and_a_replay_see_the_same_cleared_and_summarised_history(tmp_path: Path) -> None:
    env = clean_env(OPENAI_API_KEY="sk-test")
    limits = ["--context-budget", BUDGET, "--max-steps", "60"]
    straight_db, paused_db = str(tmp_path / "straight.db"), str(tmp_path / "paused.db")
    with FakeProvider(PageReader(WIRES[1], pages=16, note_at=13)) as fake:
        done = run_toolwire(*run_args(straight_db, fake, *limits), env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    straight = [request.body for request in fake.requests]

    with FakeProvider(PageReader(WIRES[1], pages=16, note_at=13)) as fake:
        paused = run_toolwire(*run_args(paused_db, fake, *limits, "--risky", "note"), env=env)
        assert paused.returncode == WAITING, paused.stdout + paused.stderr
        run_id = paused.stdout.split("toolwire approve ")[1].split()[0].strip("`")
        before = len(fake.requests)
        assert run_toolwire("approve", run_id, "--db", paused_db, env=env).returncode == 0
        resumed = run_toolwire(
            "resume", run_id, "--db", paused_db, env=env
        )  # another process: the view from the record
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    resumed_bodies = [request.body for request in fake.requests]

    summaries = [body for body in straight if texts.COMPACT_SYSTEM in system_sent(body)]
    assert summaries and all(not tools_sent(body) for body in summaries)  # a side exchange, no tools offered
    summary_before_pause = any(texts.COMPACT_SYSTEM in system_sent(b) for b in resumed_bodies[:before])
    assert summary_before_pause, "the pause comes after a summary: the resumed process must read it from the record"
    assert resumed_bodies == straight  # every request, the summary requests too, byte for byte as data

    turns = [body for body in straight if texts.COMPACT_SYSTEM not in system_sent(body)]
    for body in turns:
        chat_order(body)
        assert len(json.dumps(body)) // 4 < 2 * int(BUDGET)
    last = turns[-1]
    assert any(SUMMARY in (m.get("content") or "") for m in last["messages"] if m["role"] == "user")
    cleared = [text for text in results_sent(turns[-3]).values() if "was cleared to save room" in text]
    assert cleared and all('read_result(call_id="' in text for text in cleared)

    replayed = run_toolwire("replay", run_id, "--db", paused_db, env=env)
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout + replayed.stderr
    shown = json.loads(run_toolwire("trace", "show", run_id, "--json", "--db", paused_db, env=env).stdout)
    compact = [step for step in shown["steps"] if step["kind"] == "compact"]
    assert compact and all(step["view"]["summary_step"] == step["index"] for step in compact)


async def test_a_cleared_result_is_still_read_whole_and_the_summary_is_a_counted_step(tmp_path: Path) -> None:
    wire = WIRES[0]  # Anthropic Messages
    reader = PageReader(wire, pages=14, input_tokens=900)
    store = await open_store(str(tmp_path / "runs.db"))
    config = RunConfig(
        model="anthropic:fake", context_budget=3000, context_native="off", limits=RunLimits(max_steps=40)
    )
    with FakeProvider(reader) as fake:
        model = wire.model(fake)
        state = await Agent(model, pages(), config=config, store=store).run("Read every page")
        await model.aclose()
    assert state.status == "done", state.report
    compact = [step for step in state.steps if step.kind == "compact"]
    assert compact and reader.summaries
    assert all(step.usage.input_tokens == 900 and not step.tool_calls for step in compact)
    assert state.usage.input_tokens == 900 * len(state.steps)  # the summaries' tokens are the run's too
    assert not any(SUMMARY in getattr(m, "text", "") for m in state.messages)  # the list never holds the summary
    saved = await store.load(state.run_id)
    await store.aclose()
    whole = {m.call_id: m.content for m in saved.messages if isinstance(m, ToolResultMessage)}
    assert all(whole[f"p{n}"] == page_text(n) for n in range(1, 15))  # every result kept, byte for byte
    summary_body = reader.summaries[0].body
    assert "p1" in json.dumps(summary_body)  # the transcript names the call ids worth reading again
