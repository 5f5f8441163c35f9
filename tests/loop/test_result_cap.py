"""A result from any server longer than the client's cap is cut by the ToolBox, with a note the model can act on,
and marked truncated: here an SDK server (not toolwire's, which cuts its own) answers 200,000 characters."""

import sys
from pathlib import Path

from helpers.cli import clean_env, run_toolwire
from helpers.fake_providers import FakeProvider, openai_call, openai_completion
from loop.names_server import DUMP_CHARS
from toolwire_client import texts
from toolwire_client.assembly.agents import toolbox_for
from toolwire_client.config import RunConfig, RunLimits
from toolwire_client.loop import Agent
from toolwire_client.models.openai_chat import OpenAIChatModel
from toolwire_client.run.limits import DEFAULT_MAX_RESULT_CHARS
from toolwire_client.tools.mcp_source import McpSource
from toolwire_server.limits import DEFAULT_MAX_RESULT_CHARS as SERVER_DEFAULT

REPO = Path(__file__).resolve().parents[2]


def dump_source() -> McpSource:
    return McpSource("alpha", command=[sys.executable, "tests/loop/names_server.py", "alpha", "--all"], cwd=str(REPO))


def test_the_default_cap_is_the_servers() -> None:
    assert RunLimits().max_result_chars == DEFAULT_MAX_RESULT_CHARS == SERVER_DEFAULT


async def test_a_200k_result_is_cut_to_the_cap_with_a_note() -> None:
    # every result inline: the cap alone (a result kept out of the prompt is tests/context/test_kept_results.py)
    config = RunConfig(model="openai:gpt-fake", limits=RunLimits(max_result_chars=5_000), inline_result_chars=None)
    with FakeProvider() as fake:
        fake.push(openai_completion(None, [openai_call("d", "dump", "{}")]), openai_completion("too long"))
        model = OpenAIChatModel("gpt-fake", api_key="sk-test", base_url=fake.openai_url)
        state = await Agent(model, toolbox_for(config, [dump_source()]), config=config).run("dump it")
        await model.aclose()
    result = state.steps[0].results[0]
    note = texts.result_cut(5_000, DUMP_CHARS)
    assert result.truncated and not result.is_error
    assert result.content == "y" * 5_000 + note and "first 5000 of 200000 characters" in note
    sent = [m for m in fake.requests[1].body["messages"] if m["role"] == "tool"]
    assert sent[0]["content"] == result.content  # what the model reads


def test_run_takes_max_result_chars(tmp_path: Path) -> None:
    with FakeProvider() as fake:
        fake.push(openai_completion(None, [openai_call("d", "dump", "{}")]), openai_completion("ok"))
        server = f"{sys.executable} tests/loop/names_server.py alpha --all"
        args = ["run", "read", "--model", "openai:gpt-fake", "--base-url", fake.openai_url, "--server", server]
        args += ["--max-result-chars", "1000", "--db", str(tmp_path / "runs.sqlite3")]
        out = run_toolwire(*args, env=clean_env(OPENAI_API_KEY="sk-test"))
    assert out.returncode == 0, out.stderr
    tool = next(m for m in fake.requests[1].body["messages"] if m["role"] == "tool")["content"]
    assert tool == "y" * 1_000 + texts.result_cut(1_000, DUMP_CHARS)
