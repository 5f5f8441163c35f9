"""Sampling and roots against servers nobody here wrote (pinned in .ci/run): server-everything registers its
`trigger-sampling-request` tool only for a client that advertises sampling, and its request is answered by the
run's model (a loopback OpenAI Chat server that records it) and charged to the run; server-filesystem, started
with no folder, works in the client's roots (`roots/list` right after initialize)."""

from pathlib import Path

from external.servers import needs, npm_server
from helpers.fake_providers import FakeProvider, openai_call, openai_completion
from helpers.polling import await_until
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.server_stderr import ServerStderr
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_shared.messages import ToolCall

EVERYTHING = npm_server("server-everything")
FILESYSTEM = npm_server("server-filesystem")
SAMPLING_TOOL = "trigger-sampling-request"


@needs(EVERYTHING)
async def test_everything_s_sampling_tool_is_answered_by_the_run_s_model_and_charged() -> None:
    with FakeProvider() as fake:
        fake.push(
            openai_completion(None, [openai_call("s1", SAMPLING_TOOL, {"prompt": "name a river", "maxTokens": 30})]),
            openai_completion("The Danube.", usage={"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24}),
            openai_completion("done"),
        )
        model = OpenAIChatModel("gpt-fake", api_key="sk-test", base_url=fake.openai_url)
        source = McpSource("everything", command=[*EVERYTHING, "stdio"], sampling=True)
        config = RunConfig(model="openai:gpt-fake", limits=RunLimits(max_sampling_requests=1))
        try:
            state = await Agent(model, ToolBox([source]), config=config).run("sample something")
        finally:
            await model.aclose()
    assert state.status == "done", state.stop_reason
    asked = fake.requests[1].body
    assert asked["messages"][0] == {"role": "system", "content": "You are a helpful test server."}
    assert asked["messages"][1]["content"].endswith("name a river") and asked["max_completion_tokens"] == 30
    result = state.steps[0].results[0]
    assert not result.is_error and '"text": "The Danube."' in result.content, result.content
    assert state.usage.total_tokens == 15 + 24 + 15
    assert [(r.server, r.call_id, r.answer) for r in state.sampling] == [("everything", "s1", "The Danube.")]


@needs(EVERYTHING)
async def test_everything_offers_no_sampling_tool_to_a_client_that_does_not_lend_its_model() -> None:
    async with ToolBox([McpSource("everything", command=[*EVERYTHING, "stdio"])]) as box:
        assert SAMPLING_TOOL not in [spec.name for spec in box.specs]


@needs(FILESYSTEM)
async def test_filesystem_started_with_no_folder_works_in_the_run_s_roots(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "note.txt").write_text("inside the root\n")
    said: list[str] = []
    stderr = ServerStderr("files", lambda server, line: said.append(line))
    async with ToolBox([McpSource("files", command=FILESYSTEM, roots=[str(root)], stderr=stderr)]) as box:
        # it asks for the roots after initialize, on its own time: its stderr says when it has them
        await await_until(
            lambda: [line for line in said if "from MCP roots: 1 valid" in line], "the roots", timeout_s=20
        )
        run = RunContext("run_roots")
        listed = await box.call(ToolCall(id="l", name="list_allowed_directories"), run)
        read = await box.call(ToolCall(id="r", name="read_text_file", arguments={"path": str(root / "note.txt")}), run)
    assert not listed.is_error and str(root) in listed.content, listed.content
    assert not read.is_error and read.content == "inside the root\n", read.content
