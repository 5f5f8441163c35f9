"""--context-native: with a context budget, the provider's own context management where it has one. Anthropic
clears old results itself (context editing, the `context_management` field and its beta on every request; what it
cleared recorded with each step) and writes the summary as a compaction block; OpenAI Responses writes it with
`POST /responses/compact`. Either way nothing is lost (read_result reads every result whole from the run), the
compaction is a step with its own tokens, every request is valid, and a replay and a run resumed after a kill make
the very requests the run made, the provider's compaction sent back from the record."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from context.native_script import NativeAnthropic, NativeResponses
from context.pages_tools import page_text
from context.script import SUMMARY
from context.test_context_budget import SERVER
from context.test_kept_results import pages
from context.wire import results_sent
from helpers.cli import TOOLWIRE, clean_env, run_toolwire
from helpers.fake_providers import FakeProvider, RecordedRequest
from helpers.polling import wait_until
from toolwire_client import replay as replay_module
from toolwire_client.cli.trace import trace_lines
from toolwire_client.config import ContextNativeMode, RunConfig, RunLimits
from toolwire_client.context.anthropic_native import compaction_body, editing
from toolwire_client.context.native import native_form, prepared
from toolwire_client.loop import Agent
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.base import ModelReply
from toolwire_client.replay import ReplayModel, replay
from toolwire_client.run.state import RunState
from toolwire_client.store import open_store
from toolwire_client.store.base import RunStore
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import Message, ToolCall
from toolwire_shared.tools import ToolSpec

BUDGET = 5000
PAGES = 16


async def read_back(box: ToolBox, state: RunState, pages: int) -> list[str]:
    """Every page read again through the run's own read_result, part by part."""
    texts = []
    for n in range(1, pages + 1):
        text, offset = "", 0
        while True:
            call = ToolCall(id=f"r{n}_{offset}", name="read_result", arguments={"call_id": f"p{n}", "offset": offset})
            result = await box.call(call, RunContext(state.run_id, state))
            assert not result.is_error, result.content
            part = result.content.split("]\n", 1)[1]
            text, offset = text + part, offset + len(part)
            if "(the end)" in result.content.split("\n", 1)[0]:
                break
        texts.append(text)
    return texts


async def anthropic_run(
    store: RunStore, context_native: ContextNativeMode
) -> tuple[RunState, NativeAnthropic, list[RecordedRequest]]:
    """The 16 pages read by an Anthropic run of this budget against the loopback provider; every page read back
    whole through the run's read_result afterwards (nothing lost, byte for byte)."""
    provider = NativeAnthropic(pages=PAGES)
    config = RunConfig(
        model="anthropic:claude-fake",
        system="You read reports page by page.",
        context_budget=BUDGET,
        context_native=context_native,
        limits=RunLimits(max_steps=40),
    )
    box = pages()
    with FakeProvider(provider) as fake:
        model = AnthropicModel("claude-fake", api_key="sk-ant-test", base_url=fake.anthropic_url)
        async with box.opened():
            state = await Agent(model, box, config=config, store=store).run("Read every page")
            readable = await read_back(box, state, PAGES)
        await model.aclose()
    assert state.status == "done", state.report
    assert readable == [page_text(n) for n in range(1, PAGES + 1)]
    return state, provider, fake.requests


async def test_anthropic_clears_and_compacts_itself_and_a_replay_makes_the_same_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await open_store(str(tmp_path / "runs.db"))
    state, provider, requests = await anthropic_run(store, "on")
    turns = [r for r in requests if "compaction" not in r.body]
    assert turns and all(r.body["context_management"] == editing(BUDGET) for r in turns)
    assert all("context-management-2025-06-27" in r.headers["anthropic-beta"].split(",") for r in turns)
    assert editing(BUDGET)["edits"][0] == {
        "type": "clear_tool_uses_20250919",
        "trigger": {"type": "input_tokens", "value": BUDGET},
        "keep": {"type": "tool_uses", "value": 3},
        "clear_at_least": {"type": "input_tokens", "value": BUDGET // 2},
        "exclude_tools": ["read_result"],
        "clear_tool_inputs": False,
    }
    # every turn sends each result whole (the provider clears), none as toolwire's stub
    assert "was cleared to save room" not in json.dumps([r.body for r in turns])

    acts = [step for step in state.steps if step.kind == "act"]
    edited = [step.model_reply.applied_edits for step in acts if step.model_reply and step.model_reply.applied_edits]
    assert edited and edited[-1][0]["type"] == "clear_tool_uses_20250919" and edited[-1][0]["cleared_tool_uses"] > 0

    compact = [step for step in state.steps if step.kind == "compact"]
    assert compact and provider.compactions
    asked = provider.compactions[0]
    assert asked.body["compaction"]["type"] == "summarize" and "context_management" not in asked.body
    assert "compact-2026-09-04" in asked.headers["anthropic-beta"].split(",")
    before = requests[requests.index(asked) - 1].body  # the same system prompt and tools as the turns
    assert asked.body["tools"] == before["tools"] and asked.body["system"] == before["system"]
    # what it summarises is what the model read: the results the provider cleared are toolwire's stubs there
    assert 'was cleared to save room; read_result(call_id="p1")' in results_sent(asked.body)["p1"]
    first = compact[0]
    assert first.usage.input_tokens == 900 and first.usage.output_tokens == 60  # the compaction iteration's
    assert first.view is not None and first.view.native == "anthropic" and first.view.summary_step == first.index
    block = first.model_reply.message.provider_content[0]  # type: ignore[union-attr,index]
    after = requests[requests.index(asked) + 1]
    assert after.body["messages"][0] == {"role": "assistant", "content": [block]}  # first, exactly as returned
    assert "compact-2026-09-04" in after.headers["anthropic-beta"].split(",")
    assert first.model_text.startswith(SUMMARY)

    saved = await store.load(state.run_id)
    await store.aclose()
    last = edited[-1][0]
    shown = f"the provider cleared {last['cleared_tool_uses']} tool results ({last['cleared_input_tokens']:,} tokens)"
    assert any(shown in line for line in trace_lines(saved))  # `trace show` says what the provider cleared
    sent: list[tuple[list[Message], list[ToolSpec]]] = []

    class Recording(ReplayModel):
        async def complete(
            self, messages: list[Message], tools: list[ToolSpec], max_output_tokens: int | None = None
        ) -> ModelReply:
            sent.append((list(messages), list(tools)))
            return await super().complete(messages, tools, max_output_tokens)

    monkeypatch.setattr(replay_module, "ReplayModel", Recording)
    outcome = await replay(saved)
    assert outcome.identical, outcome.difference
    again = prepared(
        AnthropicModel("claude-fake", api_key="sk-ant-test", base_url="http://127.0.0.1:9"), "anthropic", BUDGET
    )
    assert isinstance(again, AnthropicModel)
    remade = []
    for step, (messages, tools) in zip(saved.steps, sent, strict=True):
        made = compaction_body if step.kind == "compact" else AnthropicModel.request_body
        remade.append(json.loads(json.dumps(made(again, messages, tools, None))))
    await again.aclose()
    assert remade == [r.body for r in requests]  # the replay's requests, byte for byte as data


def responses_run(db: str, fake: FakeProvider, *extra: str) -> list[str]:
    model = ["--model", "openai-responses:gpt-fake", "--base-url", fake.openai_url, "--context-native", "on"]
    limits = ["--context-budget", str(BUDGET), "--max-steps", "60"]
    task = ["run", "Read every page of the report", "--system", "You read reports page by page."]
    return [*task, *model, *limits, "--server", SERVER, "--db", db, *extra]


def test_openai_compacts_with_responses_compact_and_a_run_resumed_after_a_kill_goes_on_from_the_item(
    tmp_path: Path,
) -> None:
    env = clean_env(OPENAI_API_KEY="sk-test")
    straight_db, killed_db = str(tmp_path / "straight.db"), str(tmp_path / "killed.db")
    with FakeProvider(NativeResponses(pages=16)) as fake:
        done = run_toolwire(*responses_run(straight_db, fake), env=env)
        assert done.returncode == 0, done.stdout + done.stderr
    straight = [(r.path, r.body) for r in fake.requests]

    compacts = [n for n, (path, _) in enumerate(straight) if path.endswith("/responses/compact")]
    assert compacts, "the budget must be passed far enough for a compaction"
    path, asked = straight[compacts[0]]
    assert path == "/v1/responses/compact" and set(asked) == {"model", "input", "instructions"}
    assert asked["model"] == "gpt-fake" and asked["instructions"] == "You read reports page by page."
    item = {"type": "compaction", "id": f"cmp_{_last(asked)}", "encrypted_content": f"enc-upto-{_last(asked)}"}
    later = [body for path, body in straight[compacts[0] + 1 :] if not path.endswith("/compact")]
    assert later and all(item in body["input"] for body in later[:2])  # sent back as input
    hang_at = int(_last(later[1]).removeprefix("p")) + 1  # a turn after the one after the compaction

    responder = NativeResponses(pages=16, hang_at=hang_at)
    with FakeProvider(responder) as fake:
        argv = [TOOLWIRE, *responses_run(killed_db, fake)]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_until(responder.hung.is_set, "the run's request after the compaction", timeout_s=120)
            proc.kill()
            proc.wait(30)
        finally:
            responder.release.set()
            proc.kill()
        killed = len(fake.requests)
        run_id = anyio.run(_only_run, killed_db)
        resumed = run_toolwire("resume", run_id, "--db", killed_db, env=env)
        assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    again = [(r.path, r.body) for r in fake.requests]
    assert any(path.endswith("/compact") for path, _ in again[:killed])  # the kill came after the compaction
    assert again[killed:] == straight[killed - 1 :]  # the resumed process sends what the straight run sent
    assert item in again[killed][1]["input"]  # the saved compaction item, read from the record

    replayed = run_toolwire("replay", run_id, "--db", killed_db, env=env)
    assert replayed.returncode == 0 and "identical" in replayed.stdout, replayed.stdout + replayed.stderr
    shown = json.loads(run_toolwire("trace", "show", run_id, "--json", "--db", killed_db, env=env).stdout)
    compact = [step for step in shown["steps"] if step["kind"] == "compact"]
    assert compact and compact[0]["view"]["native"] == "openai-responses"
    assert compact[0]["input_tokens"]["history"] == 700  # the compact request's own tokens


def _last(body: dict[str, Any]) -> str:
    return [m["call_id"] for m in body["input"] if m.get("type") == "function_call_output"][-1]


async def _only_run(db: str) -> str:
    store = await open_store(db)
    try:
        (run,) = await store.list_runs()
        return run.run_id
    finally:
        await store.aclose()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--model", "openai:gpt-fake", "--context-budget", "3000"), "the openai provider has no context management"),
        (("--model", "anthropic:claude-fake"), "--context-native on keeps a context budget: add --context-budget"),
    ],
)
def test_context_native_on_without_a_native_form_is_one_line_and_exit_2(extra: tuple[str, ...], said: str) -> None:
    done = run_toolwire("run", "x", *extra, "--context-native", "on", "--server", f"{sys.executable} -c pass")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and said in lines[0], done.stderr


async def test_auto_on_anthropic_clears_as_toolwire_does_and_has_the_provider_write_the_summary(
    tmp_path: Path,
) -> None:
    """`auto` keeps toolwire's clearing (measured cheaper: context/native.py) and asks Anthropic for the summary."""
    store = await open_store(str(tmp_path / "runs.db"))
    state, provider, requests = await anthropic_run(store, "auto")
    turns = [r for r in requests if "compaction" not in r.body]
    assert all("context_management" not in r.body for r in turns)  # no provider clearing asked for
    assert "was cleared to save room" in json.dumps([r.body for r in turns])  # toolwire's stubs went out instead
    compact = [step for step in state.steps if step.kind == "compact"]
    assert compact and provider.compactions and provider.compactions[0].body["compaction"]["type"] == "summarize"
    assert compact[0].view is not None and compact[0].view.native == "anthropic-compaction"
    after = requests[requests.index(provider.compactions[0]) + 1]
    assert after.body["messages"][0]["content"][0]["type"] == "compaction"  # the provider's block, sent back
    saved = await store.load(state.run_id)
    await store.aclose()
    outcome = await replay(saved)
    assert outcome.identical, outcome.difference


@pytest.mark.parametrize(
    ("model", "base_url", "mode", "form"),
    [
        ("anthropic:claude-sonnet-4-5", None, "auto", "anthropic-compaction"),  # toolwire's clearing: cheaper
        ("anthropic:claude-sonnet-4-5", None, "on", "anthropic"),
        ("openai-responses:gpt-5", None, "auto", "openai-responses"),
        ("openai:gpt-4.1-mini", None, "auto", None),  # Chat Completions has none: toolwire's own form
        ("anthropic:claude-sonnet-4-5", "http://127.0.0.1:9", "auto", None),  # another server speaking the format
        ("anthropic:claude-sonnet-4-5", "http://127.0.0.1:9", "on", "anthropic"),
        ("openai-responses:gpt-5", None, "off", None),
    ],
)
def test_the_native_form_is_chosen_from_the_config_alone(
    model: str, base_url: str | None, mode: str, form: str | None
) -> None:
    config = RunConfig(model=model, base_url=base_url, context_budget=BUDGET, context_native=mode)  # type: ignore[arg-type]
    assert native_form(config) == form
    assert native_form(config.model_copy(update={"context_budget": None, "context_native": "auto"})) is None


async def test_each_agent_sends_the_context_editing_its_own_config_asks_for() -> None:
    """The Agent asks a copy of the adapter that carries the edit; the model passed in, and a sub-agent's model (no
    budget of its own), send none."""
    model = AnthropicModel("claude-fake", api_key="sk-ant-test", base_url="http://127.0.0.1:9")
    config = RunConfig(model="anthropic:claude-fake", context_budget=BUDGET, context_native="on")
    agent = Agent(model, pages(), config=config)
    assert isinstance(agent.model, AnthropicModel) and agent.model.context_management == editing(BUDGET)
    assert model.context_management is None
    child = prepared(agent.model, None, None)
    assert isinstance(child, AnthropicModel) and child.context_management is None
    assert agent.model.context_management == editing(BUDGET)
    await model.aclose()
