"""server-everything's `get-tiny-image` (a PNG between two texts) reaches each loopback provider (which records the
request bodies) in that provider's own form, and a model that takes no images reads its description; one
server-everything over Streamable HTTP serves the module. Its `tools/list_changed` is heard over stdio and the
list is read again before the first model call: it sends one while it registers the tools that depend on the
client's capabilities, before it answers the first `tools/list`, so nothing new appears. None of the five servers
adds a tool at run time (a tool added later and called: tests/loop/test_server_notifications.py)."""

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from external.servers import EverythingHttp, needs, npm_server
from helpers.fake_providers import (
    FakeProvider,
    anthropic_message,
    openai_call,
    openai_completion,
    responses_call,
    responses_message,
    responses_reply,
)
from helpers.polling import await_until
from toolwire_client.config import RunConfig
from toolwire_client.loop import Agent
from toolwire_client.models.anthropic import AnthropicModel
from toolwire_client.models.base import Model
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.models.openai_responses import OpenAIResponsesModel
from toolwire_client.run.state import RunState
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.toolbox import ToolBox

EVERYTHING = npm_server("server-everything")
IMAGE_TOOL = "get-tiny-image"
SAID = "Here's the image you requested:\n[image: image/png, 4.0 kB]\nThe image above is the MCP logo."
"""What every model reads as the text of the result: the image's description between the server's two texts."""
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

pytestmark = needs(EVERYTHING)


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EverythingHttp]:
    with EverythingHttp(tmp_path_factory.mktemp("everything") / "everything.log") as server:
        yield server


async def run_with(model: Model, server: EverythingHttp) -> RunState:
    try:
        box = ToolBox([McpSource("everything", url=server.url)])
        return await Agent(model, box, config=RunConfig(model="openai:gpt-fake")).run("What is in the picture?")
    finally:
        await model.aclose()


def the_image(state: RunState) -> str:
    """The base64 PNG the server returned, as the run saved it."""
    assert state.status == "done", state.stop_reason
    [result] = state.steps[0].results
    assert result.content == SAID and [part.label for part in result.media] == ["image/png 4.0 kB"]
    data = result.media[0].data
    assert base64.b64decode(data).startswith(PNG_MAGIC)
    return data


async def test_anthropic_gets_an_image_block_in_the_tool_result(everything: EverythingHttp) -> None:
    with FakeProvider() as fake:
        fake.push(anthropic_message("", [("toolu_a", IMAGE_TOOL, {})]), anthropic_message("The MCP logo."))
        model = AnthropicModel("claude-fake", api_key="k", base_url=fake.anthropic_url, media="on")
        png = the_image(await run_with(model, everything))
    [block] = fake.requests[1].body["messages"][-1]["content"]
    assert block["type"] == "tool_result" and block["tool_use_id"] == "toolu_a"
    assert block["content"] == [
        {"type": "text", "text": SAID},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}},
    ]


async def test_openai_chat_gets_an_image_part_in_a_user_message_after_the_tool_message(
    everything: EverythingHttp,
) -> None:
    with FakeProvider() as fake:
        fake.push(openai_completion(None, [openai_call("call_a", IMAGE_TOOL, "{}")]), openai_completion("A logo."))
        model = OpenAIChatModel("gpt-fake", api_key="k", base_url=fake.openai_url, media="on")
        png = the_image(await run_with(model, everything))
    tool, user = fake.requests[1].body["messages"][-2:]
    assert tool == {"role": "tool", "tool_call_id": "call_a", "content": SAID}
    assert user == {
        "role": "user",
        "content": [
            {"type": "text", "text": f"The {IMAGE_TOOL} call (call_a) returned:"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        ],
    }


async def test_openai_responses_gets_an_input_image_in_the_function_call_output(everything: EverythingHttp) -> None:
    with FakeProvider() as fake:
        fake.push(
            responses_reply([responses_call("call_a", IMAGE_TOOL, "{}")]),
            responses_reply([responses_message("A logo.")]),
        )
        model = OpenAIResponsesModel("gpt-fake", api_key="k", base_url=fake.openai_url, media="on")
        png = the_image(await run_with(model, everything))
    output = next(item for item in fake.requests[1].body["input"] if item.get("type") == "function_call_output")
    assert output["call_id"] == "call_a"
    assert output["output"] == [
        {"type": "input_text", "text": SAID},
        {"type": "input_image", "image_url": f"data:image/png;base64,{png}"},
    ]


async def test_a_model_that_takes_no_images_reads_the_description_only(everything: EverythingHttp) -> None:
    """An OpenAI-compatible server (a base URL) may run a text-only model: by default it is sent no image."""
    with FakeProvider() as fake:
        fake.push(openai_completion(None, [openai_call("call_a", IMAGE_TOOL, "{}")]), openai_completion("A logo."))
        model = OpenAIChatModel("gpt-fake", api_key="k", base_url=fake.openai_url)
        the_image(await run_with(model, everything))  # saved with the run all the same
    body: dict[str, Any] = fake.requests[1].body
    assert body["messages"][-1] == {"role": "tool", "tool_call_id": "call_a", "content": SAID}
    assert "base64" not in json.dumps(body)


def offered(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body["tools"]]


async def test_everything_s_list_changed_is_heard_and_the_list_read_again_before_the_model_call() -> None:
    source = McpSource("everything", command=[*EVERYTHING, "stdio"], sampling=True)
    with FakeProvider() as fake:
        fake.push(openai_completion(None, [openai_call("e", "echo", {"message": "hi"})]), openai_completion("ok"))
        model = OpenAIChatModel("gpt-fake", api_key="k", base_url=fake.openai_url)
        try:
            async with ToolBox([source]) as box:
                await await_until(lambda: source.tools_changed, "server-everything's tools/list_changed")
                state = await Agent(model, box, config=RunConfig(model="openai:gpt-fake")).run("echo hi")
        finally:
            await model.aclose()
    assert state.status == "done", state.stop_reason
    assert not source.tools_changed  # read again before the first model call
    first, second = (offered(request.body) for request in fake.requests)
    assert first == second and "trigger-sampling-request" in first  # one of the tools it registers after initialize
    assert [step.tools for step in state.steps] == [None, None]  # no step offered other tools than the first
    assert state.steps[0].results[0].content == "Echo: hi"
