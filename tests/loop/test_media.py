"""A tool's images, audio, resource links and embedded resources reach the model in each provider's own wire form
(the loopback providers record the request bodies), a model that takes none reads their descriptions, and the
client's read_resource tool reads a linked or listed resource only through the server that offered it. The tool
server is an SDK server of the tests' own (media_server.py), over stdio."""

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import clean_env, run_toolwire
from helpers.fake_providers import (
    FakeProvider,
    anthropic_message,
    openai_call,
    openai_completion,
    responses_call_then_answer,
)
from loop.media_server import PASSWD_STAND_IN, PNG, WAV
from toolwire_client.assembly.agents import toolbox_for
from toolwire_client.config import RunConfig
from toolwire_client.loop import Agent
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.base import Model
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.models.openai_responses import OpenAIResponsesModel
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.replay import replay
from toolwire_client.run.state import RunState
from toolwire_client.store.base import Ruling
from toolwire_client.store.sqlite import SqliteRunStore
from toolwire_client.tools.mcp_source import McpSource
from toolwire_shared.media import MAX_MEDIA_BYTES
from toolwire_shared.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResultMessage,
    dump_messages,
    load_messages,
)

REPO = Path(__file__).resolve().parents[2]
TASK = "What does the chart show?"
IMAGE_LINE = "[image: image/png, 4.1 kB]"
AUDIO_LINE = "[audio: audio/wav, 2.0 kB]"


def media_source(lists: bool = False) -> McpSource:
    env = {"MEDIA_LISTS": "1"} if lists else {}
    return McpSource("media", command=[sys.executable, "tests/loop/media_server.py"], env=env, cwd=str(REPO))


async def run_with(model: Model, config: RunConfig | None = None) -> RunState:
    config = config or RunConfig(model="openai:gpt-fake")
    try:
        return await Agent(model, toolbox_for(config, [media_source()]), config=config).run(TASK)
    finally:
        await model.aclose()


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool.get("name") or tool["function"]["name"] for tool in body.get("tools", [])}


async def test_anthropic_gets_the_image_in_its_tool_result_block() -> None:
    with FakeProvider() as fake:
        fake.push(anthropic_message("", [("toolu_a", "snapshot", {})]), anthropic_message("It is rising."))
        state = await run_with(AnthropicModel("claude-fake", api_key="k", base_url=fake.anthropic_url, media="on"))
    assert state.status == "done"
    block = fake.requests[1].body["messages"][-1]["content"][0]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_a"
    text, image = block["content"][0], block["content"][1]
    assert image == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
    assert len(block["content"]) == 2  # Anthropic takes no audio: it is described in the text
    assert text["type"] == "text" and IMAGE_LINE in text["text"] and AUDIO_LINE in text["text"]
    assert "legend: red is up" in text["text"]  # an embedded text resource, inline
    assert '[resource link: notes://chart "chart notes" (text/plain)]' in text["text"]
    assert "[resource: blob://raw, application/octet-stream, 2004 bytes, not shown]" in text["text"]
    # the link made read_resource worth offering: not on the first request, on the next
    assert "read_resource" not in tool_names(fake.requests[0].body)
    assert "read_resource" in tool_names(fake.requests[1].body)


async def test_responses_gets_an_input_image_in_the_function_call_output() -> None:
    with FakeProvider() as fake:
        fake.push(*responses_call_then_answer("call_a", "snapshot", "It is rising."))
        model = OpenAIResponsesModel("gpt-fake", api_key="k", base_url=fake.openai_url, media="on")
        state = await run_with(model)
    assert state.status == "done"
    output = next(i for i in fake.requests[1].body["input"] if i.get("type") == "function_call_output")
    assert output["call_id"] == "call_a"
    assert output["output"][0]["type"] == "input_text" and IMAGE_LINE in output["output"][0]["text"]
    assert output["output"][1:] == [{"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}]


async def test_chat_gets_the_images_and_audio_in_a_user_message_after_the_tool_messages() -> None:
    with FakeProvider() as fake:
        fake.push(
            openai_completion(None, [openai_call("call_a", "snapshot", "{}"), openai_call("call_b", "snapshot", "{}")]),
            openai_completion("It is rising."),
        )
        state = await run_with(OpenAIChatModel("gpt-fake", api_key="k", base_url=fake.openai_url, media="on"))
    assert state.status == "done"
    sent = fake.requests[1].body["messages"]
    roles = [m["role"] for m in sent]
    assert roles[-3:] == ["tool", "tool", "user"]  # after every tool message of the turn, never between
    assert all(isinstance(m["content"], str) and IMAGE_LINE in m["content"] for m in sent[-3:-1])
    parts = sent[-1]["content"]
    assert parts[0] == {"type": "text", "text": "The snapshot call (call_a) returned:"}
    assert parts[1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}
    assert parts[2] == {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}}
    assert parts[3]["text"] == "The snapshot call (call_b) returned:" and len(parts) == 6


async def test_media_off_sends_the_descriptions_only() -> None:
    with FakeProvider() as fake:
        fake.push(openai_completion(None, [openai_call("call_a", "snapshot", "{}")]), openai_completion("ok"))
        state = await run_with(OpenAIChatModel("gpt-fake", api_key="k", base_url=fake.openai_url, media="off"))
    sent = fake.requests[1].body["messages"]
    assert sent[-1]["role"] == "tool" and IMAGE_LINE in sent[-1]["content"]
    assert "base64" not in json.dumps(fake.requests[1].body)
    assert [p.label for p in state.steps[0].results[0].media] == ["image/png 4.1 kB", "audio/wav 2.0 kB"]


def test_auto_sends_images_to_the_official_endpoint_audio_to_an_audio_model_and_nothing_to_a_base_url() -> None:
    """A compatible server may run a text-only model (the tiny local one would refuse an image)."""
    assert OpenAIChatModel("gpt-4.1-mini", api_key="k", base_url="http://127.0.0.1:9/v1").media_kinds == set()
    assert OpenAIChatModel("gpt-4.1-mini", api_key="k").media_kinds == {"image"}
    assert OpenAIChatModel("gpt-4o-audio-preview", api_key="k").media_kinds == {"image", "audio"}
    assert AnthropicModel("claude-x", api_key="k").media_kinds == {"image"}
    assert OpenAIResponsesModel("gpt-x", api_key="k", media="on").media_kinds == {"image"}


def reads(*uris: str) -> ScriptedModel:
    """Calls snapshot, then read_resource for each uri in turn, then answers."""
    asked = list(uris)

    def script(messages: list[Message]) -> AssistantMessage:
        turn = sum(isinstance(m, AssistantMessage) for m in messages)
        if turn == 0:
            return AssistantMessage(tool_calls=[ToolCall(id="snap", name="snapshot")])
        if turn <= len(asked):
            call = ToolCall(id=f"read{turn}", name="read_resource", arguments={"uri": asked[turn - 1]})
            return AssistantMessage(tool_calls=[call])
        return AssistantMessage(text="done")

    return ScriptedModel(script)


async def test_read_resource_reads_only_through_the_server_that_offered_the_uri() -> None:
    uris = ["notes://chart", "file:///etc/passwd", "notes://nobody", "pictures://chart"]
    state = await run_with(reads(*uris), RunConfig(model="scripted:x"))
    results = {r.call_id: r for step in state.steps for r in step.results}
    assert results["read1"].content == "notes on chart: rising since Monday"
    # a hostile link: the server's own resources/read answered, this machine's file was never read
    assert results["read2"].content == PASSWD_STAND_IN and "root:" not in results["read2"].content
    # a URI no server listed or linked: refused without asking any server, naming what can be read
    unknown = results["read3"]
    assert unknown.is_error and unknown.error_kind == "bad_arguments"
    assert "no tool server of this run listed or linked the resource 'notes://nobody'" in unknown.content
    assert "notes://chart" in unknown.content and 'A correct call: {"uri": ' in unknown.content
    # an image resource comes back as an image the model is sent, saved with the run's messages
    assert [p.label for p in results["read4"].media] == ["image/png 4.1 kB"]
    saved = next(m for m in state.messages if isinstance(m, ToolResultMessage) and m.call_id == "read4")
    assert saved.media == results["read4"].media


async def test_a_resumed_run_reads_a_link_returned_before_its_pause(tmp_path: Path) -> None:
    """A new process knows no links: the resumed ToolBox is told the saved results' links before the approved
    read_resource call runs, so it is routed, and reads from the server that sent the link."""
    config = RunConfig(model="scripted:x", risky_tools=["read_resource"])
    store = await SqliteRunStore(tmp_path / "runs.sqlite3").open()
    try:
        first = Agent(reads("notes://chart"), toolbox_for(config, [media_source()]), config=config, store=store)
        paused = await first.run(TASK)
        assert paused.status == "waiting_for_approval"
        await store.decide(paused.run_id, paused.pending[0].call.id, Ruling("approve", by="test"))
        again = Agent(reads("notes://chart"), toolbox_for(config, [media_source()]), config=config, store=store)
        done = await again.resume(paused.run_id)
    finally:
        await store.aclose()
    assert done.status == "done"
    read = next(r for step in done.steps for r in step.results if r.call_id == "read1")
    assert (read.is_error, read.content) == (False, "notes on chart: rising since Monday")
    outcome = await replay(done)  # offline, from the record: the same tools offered, the same media saved
    assert outcome.identical, outcome.describe()


async def test_listed_resources_offer_read_resource_from_the_start_unless_allow_or_opt_out_leave_it_out() -> None:
    config = RunConfig(model="scripted:x")
    async with toolbox_for(config, [media_source(lists=True)]) as box:
        spec = box.spec("read_resource")
        assert spec is not None and "notes://listed: the listed note" in spec.description
    narrowed = RunConfig(model="scripted:x", allow=["snapshot"])  # an allow-list that does not name it: not offered
    async with toolbox_for(narrowed, [media_source(lists=True)]) as box:
        assert [spec.name for spec in box.specs] == ["snapshot"]
    off = RunConfig(model="scripted:x", read_resources=False)
    assert [source.name for source in toolbox_for(off, [media_source(lists=True)]).sources] == ["media"]


def test_media_is_saved_with_the_messages_and_old_saved_runs_load_unchanged() -> None:
    old = [{"role": "tool", "call_id": "c", "name": "t", "content": "x", "is_error": False}]
    loaded = load_messages(old)
    assert isinstance(loaded[0], ToolResultMessage) and loaded[0].media == []
    assert dump_messages(loaded) == old  # and saved again as it was


def test_the_step_table_shows_the_media(tmp_path: Path) -> None:
    """`toolwire run --media on` then `toolwire trace show`: the table names the image and the audio."""
    db = str(tmp_path / "runs.sqlite3")
    with FakeProvider() as fake:
        fake.push(openai_completion(None, [openai_call("call_a", "snapshot", "{}")]), openai_completion("rising"))
        server = f"{sys.executable} tests/loop/media_server.py"
        args = ["run", TASK, "--model", "openai:gpt-fake", "--base-url", fake.openai_url, "--server", server]
        out = run_toolwire(*args, "--media", "on", "--db", db, env=clean_env(OPENAI_API_KEY="sk-test"))
    assert out.returncode == 0, out.stderr
    assert "| [image/png 4.1 kB] [audio/wav 2.0 kB] the chart as of today" in out.stdout  # the live table too
    assert fake.requests[1].body["messages"][-1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64")
    run_id = out.stdout.split("run: ", 1)[1].split()[0]
    shown = run_toolwire("trace", "show", run_id, "--db", db, env=clean_env())
    assert "[image/png 4.1 kB] [audio/wav 2.0 kB] the chart as of today" in shown.stdout, shown.stdout + shown.stderr


@pytest.mark.parametrize(
    ("kind", "mime", "data", "said"),
    [
        ("image", "image/svg+xml", PNG, "not sent, models take no image/svg+xml"),
        ("image", "image/png", "not base64!", "not sent, its data is not valid base64"),
        ("audio", "audio/ogg", WAV, "not sent, models take no audio/ogg"),
    ],
)
def test_what_no_provider_takes_is_described_never_sent(kind: str, mime: str, data: str, said: str) -> None:
    from toolwire_shared.media import accepted

    part, line = accepted(kind, mime, data, MAX_MEDIA_BYTES)  # type: ignore[arg-type]
    assert part is None and said in line


def test_images_past_the_limit_are_described_with_a_note() -> None:
    import base64

    import mcp_types as types

    from toolwire_shared.results import read_content

    big = base64.b64encode(bytes(700_000)).decode()
    image = types.ImageContent(type="image", data=big, mime_type="image/png")
    read = read_content([image, image])  # 1.4 MB together: the first fits the 1 MB, the second does not
    assert len(read.media) == 1
    assert read.text.splitlines()[1] == (
        "[image: image/png, 700.0 kB: not sent, over the 1.0 MB limit for one result's images and audio; ask for less]"
    )


def test_a_budget_counts_an_image_as_an_image_not_as_its_base64() -> None:
    from toolwire_client.models.tokens import MEDIA_PART_TOKENS, estimate_prompt
    from toolwire_shared.media import MediaPart

    big = MediaPart(kind="image", mime_type="image/png", data="A" * 1_300_000)
    plain = ToolResultMessage(call_id="c", name="snapshot", content=IMAGE_LINE)
    with_image = replace(plain, media=[big])
    assert estimate_prompt([with_image], []) == estimate_prompt([plain], []) + MEDIA_PART_TOKENS
