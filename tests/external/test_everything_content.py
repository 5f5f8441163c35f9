"""What server-everything returns reaches the model, through loopback providers that record each request body (one
server-everything over Streamable HTTP serves the module): `get-tiny-image` (a PNG between two texts) in each
provider's own form, or as its description for a model that takes no images; resource links as lines, an embedded
text resource inline, a linked or embedded resource read again by the client's `read_resource`; its `instructions`
in the system prompt. Its `tools/list_changed` is heard over stdio and the list is read again before the first model
call: it sends one while it registers the tools that depend on the client's capabilities, before it answers the
first `tools/list`, so nothing new appears. None of the five servers adds a tool at run time (a tool added later
and called: tests/loop/test_server_notifications.py)."""

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
    responses_call_then_answer,
)
from helpers.polling import await_until
from toolwire_client import texts
from toolwire_client.assembly.agents import toolbox_for
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
    """A run as `toolwire run --server-url` makes it (the client's read_resource tool included)."""
    config = RunConfig(model="openai:gpt-fake")
    try:
        box = toolbox_for(config, [McpSource("everything", url=server.url)])
        return await Agent(model, box, config=config).run("What is in the picture?")
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
        fake.push(*responses_call_then_answer("call_a", IMAGE_TOOL, "A logo."))
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


LINKED = "demo://resource/dynamic/text/2"
EMBEDDED = "demo://resource/dynamic/text/1"
"""get-resource-reference embeds it and says "You can access this resource using the URI: ..."."""
LINK_LINE = f'[resource link: {LINKED} "Text Resource 2" (text/plain): Resource 2: plaintext resource]'


async def test_resource_links_embedded_resources_read_resource_and_instructions(everything: EverythingHttp) -> None:
    with FakeProvider() as fake:
        fake.push(
            openai_completion(
                None,
                [
                    openai_call("links", "get-resource-links", {"count": 2}),
                    openai_call("ref", "get-resource-reference", {"resourceType": "Text", "resourceId": 1}),
                    openai_call("blob", "get-resource-reference", {"resourceType": "Blob", "resourceId": 1}),
                ],
            ),
            openai_completion(
                None,
                [
                    openai_call("read", "read_resource", {"uri": LINKED}),
                    openai_call("again", "read_resource", {"uri": EMBEDDED}),
                    openai_call("passwd", "read_resource", {"uri": "file:///etc/passwd"}),
                ],
            ),
            openai_completion("Two notes."),
        )
        state = await run_with(OpenAIChatModel("gpt-fake", api_key="k", base_url=fake.openai_url), everything)
    assert state.status == "done", state.stop_reason
    first, second, third = (request.body for request in fake.requests)
    system = first["messages"][0]
    assert system["role"] == "system"
    assert texts.server_instructions("everything", "# Everything Server – Server Instructions") in system["content"]
    assert "read_resource" in offered(first)  # it lists resources: offered from the first step
    links, embedded, blob = (m["content"] for m in second["messages"] if m["role"] == "tool")
    assert LINK_LINE in links.splitlines(), links
    assert embedded.splitlines()[1].startswith("Resource 1: This is a plaintext resource created at"), embedded
    assert blob.splitlines()[1] == "[resource: demo://resource/dynamic/blob/1, text/plain, 57 bytes, not shown]"
    read, again, passwd = (m["content"] for m in third["messages"][-3:])
    assert read.startswith("Resource 2: This is a plaintext resource created at"), read
    assert again.startswith("Resource 1: This is a plaintext resource created at"), again  # as the server says
    assert passwd.startswith("ERROR: no tool server of this run listed or linked the resource 'file:///etc/passwd'")


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
