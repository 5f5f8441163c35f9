"""Skills against the real support desk server (examples.support_tools:desk): its prompts named skill.* are listed
to the model as an index in load_skill's description, and a skill's text is loaded on demand, over stdio, over
Streamable HTTP and in-process; a skill is fetched once and added once; an unknown name lists the valid ones; the
run says which skills it loaded; `toolwire run --skills` and the skills eval set, end to end."""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from examples.support_tools import POLICIES, desk

from helpers.cli import REPO, clean_env, run_toolwire
from helpers.servers import HttpServer
from toolwire_client import texts
from toolwire_client.assembly.agents import toolbox_for
from toolwire_client.config import RunConfig
from toolwire_client.evals.runner import EvalRunner
from toolwire_client.evals.spec import load_eval_file
from toolwire_client.loop import Agent
from toolwire_client.models.providers import make_scripted
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.replay import replay
from toolwire_client.strategies.delegation import Delegation
from toolwire_client.tools.mcp_source import McpSource
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.skills import SkillSource, list_skills, loaded_skills, skill_use
from toolwire_client.tools.source import RunContext, ServerRequestFailed, ToolSource
from toolwire_server.auth.access import Grant
from toolwire_shared.messages import AssistantMessage, Message, ToolCall

from .conftest import SUPPORT_TOOLS, stdio_source

DESK = "examples.support_tools:desk"
SKILLS = ["process_return", "shipping_delay", "damaged_item"]
LATE = "Ticket from cus_8123: my order A124 has not arrived yet. Where is it?"


def desk_env(tmp_path: Path) -> dict[str, str]:
    return {"TOOLWIRE_SUPPORT_DB": str(tmp_path / "support.sqlite3")}


def desk_stdio(tmp_path: Path) -> McpSource:
    return stdio_source(DESK, "support", desk_env(tmp_path))


class CountingGets(McpSource):
    """The real stdio source, counting the prompts/get requests it sends (to show a skill is fetched once)."""

    gets = 0

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        self.gets += 1
        return await super().get_prompt(name, arguments)


# ---- the source's prompts and resources, on each transport ------------------------------------------------------
async def check_prompts_and_resources(source: ToolSource) -> None:
    assert isinstance(source, McpSource | RegistrySource)
    prompts = {p.name: p for p in await source.list_prompts()}
    assert sorted(prompts) == sorted(["answer_ticket", *(f"skill.{name}" for name in SKILLS)])
    assert [skill.name for skill in await list_skills([source])] == SKILLS  # answer_ticket is no skill
    assert prompts["skill.process_return"].description == desk.prompts["skill.process_return"].description
    got = await source.get_prompt("skill.process_return")
    [message] = got.messages
    assert isinstance(message.content, types.TextContent) and "Call issue_refund" in message.content.text
    with pytest.raises(ServerRequestFailed) as refused:
        await source.get_prompt("skill.nope")
    assert str(refused.value) == (
        f"the tool server '{source.name}' answered prompts/get with an error: unknown prompt 'skill.nope'. "
        "Prompts on this server: answer_ticket, skill.damaged_item, skill.process_return, skill.shipping_delay."
    )
    assert [r.uri for r in await source.list_resources()] == ["policy://refunds"]
    policy = (await source.read_resource("policy://refunds")).contents[0]
    assert isinstance(policy, types.TextResourceContents) and policy.text == POLICIES["refund"]
    order = (await source.read_resource("orders://A123")).contents[0]
    assert isinstance(order, types.TextResourceContents) and json.loads(order.text)["item"] == "keyboard"
    with pytest.raises(ServerRequestFailed) as unknown:
        await source.read_resource("nope://x")
    assert str(unknown.value).startswith(
        f"the tool server '{source.name}' answered resources/read with an error: unknown resource 'nope://x'."
    )


async def test_prompts_over_stdio(tmp_path: Path) -> None:
    source = desk_stdio(tmp_path)
    await source.start()
    try:
        await check_prompts_and_resources(source)
    finally:
        await source.aclose()


async def test_prompts_over_http(tmp_path: Path) -> None:
    with HttpServer(DESK, "--log-level", "ERROR", env=desk_env(tmp_path)) as server:
        source = McpSource("support", url=server.url)
        await source.start()
        try:
            await check_prompts_and_resources(source)
        finally:
            await source.aclose()


async def test_prompts_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLWIRE_SUPPORT_DB", str(tmp_path / "support.sqlite3"))
    await check_prompts_and_resources(RegistrySource(desk, name="support"))


async def test_in_process_the_grant_applies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As on the server: a grant's patterns match prompt names and resource URIs; outside it, nothing exists."""
    monkeypatch.setenv("TOOLWIRE_SUPPORT_DB", str(tmp_path / "support.sqlite3"))
    tools_only = RegistrySource(desk, name="support", grant=Grant(agent="a", patterns=("get_order",)))
    assert await tools_only.list_prompts() == [] and await tools_only.list_resources() == []
    with pytest.raises(
        ServerRequestFailed, match=re.escape("unknown prompt 'skill.process_return'. Prompts on this server: (none).")
    ):
        await tools_only.get_prompt("skill.process_return")
    skills_only = RegistrySource(desk, name="support", grant=Grant(agent="b", patterns=("skill.*",)))
    assert [skill.name for skill in await list_skills([skills_only])] == SKILLS
    with pytest.raises(ServerRequestFailed, match=re.escape("unknown resource 'policy://refunds'")):
        await skills_only.read_resource("policy://refunds")


async def test_a_server_with_no_prompts_has_none(tmp_path: Path) -> None:
    source = stdio_source(SUPPORT_TOOLS, "plain", desk_env(tmp_path))
    await source.start()
    try:
        assert await source.list_prompts() == []
        assert await source.list_resources() == []
    finally:
        await source.aclose()


# ---- the index and load_skill -----------------------------------------------------------------------------------
async def test_index_lists_names_and_descriptions_only(tmp_path: Path) -> None:
    config = RunConfig(model="scripted:skills", skills=True)
    async with toolbox_for(config, [desk_stdio(tmp_path)]) as box:
        spec = box.spec(texts.SKILL_TOOL)
    assert spec is not None
    for name in SKILLS:
        line = desk.prompts[f"skill.{name}"].description
        assert f"- {name}: {line}" in spec.description
    assert "Call get_order" not in spec.description  # the texts are not in the index
    assert spec.policy.idempotent and spec.input_schema["required"] == ["name"]


async def call_load(box: Any, name: Any, call_id: str = "c1", **extra: Any) -> Any:
    call = ToolCall(id=call_id, name=texts.SKILL_TOOL, arguments={"name": name, **extra})
    return await box.call(call, RunContext("run-skills"))


async def test_load_skill_returns_the_text_and_repairs_a_wrong_name(tmp_path: Path) -> None:
    config = RunConfig(model="scripted:skills", skills=True)
    async with toolbox_for(config, [desk_stdio(tmp_path)]) as box:
        loaded = await call_load(box, "shipping_delay")
        prefixed = await call_load(box, "skill.damaged_item", "c2")
        unknown = await call_load(box, "returns", "c3")
        extra = await call_load(box, "process_return", "c4", reason="x")
    assert not loaded.is_error and loaded.content.startswith("Skill 'shipping_delay': follow these instructions")
    assert "2. Call get_policy with topic late_delivery." in loaded.content
    assert not prefixed.is_error and "Call get_policy with topic damaged_item" in prefixed.content
    assert unknown.is_error and unknown.error_kind == "bad_arguments"
    assert unknown.content == (
        "ERROR: no skill named 'returns'. Skills you may load: damaged_item, process_return, shipping_delay. "
        'A correct call: {"name": "damaged_item"}'
    )
    assert extra.is_error and "reason: not an argument of load_skill" in extra.content


def loads_twice(messages: list[Message]) -> AssistantMessage:
    """load_skill(shipping_delay), the same again on the next step, then an answer."""
    turns = sum(isinstance(m, AssistantMessage) for m in messages)
    if turns < 2:
        call = ToolCall(id=f"load_{turns}", name=texts.SKILL_TOOL, arguments={"name": "shipping_delay"})
        return AssistantMessage(tool_calls=[call])
    return AssistantMessage(text="done")


async def test_a_skill_loaded_twice_is_fetched_once_and_added_once(tmp_path: Path) -> None:
    source = CountingGets("support", command=desk_stdio(tmp_path).command, env=desk_env(tmp_path), cwd=str(REPO))
    config = RunConfig(model="scripted:loads_twice", skills=True)
    agent = Agent(ScriptedModel(loads_twice), toolbox_for(config, [source]), config=config)
    state = await agent.run("Where is A124?")
    first, second = (step.results[0] for step in state.steps[:2])
    assert first.content.startswith("Skill 'shipping_delay'") and not first.is_error
    assert second.content == texts.skill_loaded_before("shipping_delay") and not second.is_error
    assert sum("Call get_order" in getattr(m, "content", "") for m in state.messages) == 1
    assert source.gets == 1
    assert loaded_skills(state) == ["shipping_delay"]


async def test_a_sub_agent_gets_the_text_from_the_source_not_the_server(tmp_path: Path) -> None:
    """The parent loaded the skill; its sub-agent's own conversation gets the text too, with no second fetch."""
    source = CountingGets("support", command=desk_stdio(tmp_path).command, env=desk_env(tmp_path), cwd=str(REPO))

    def script(messages: list[Message]) -> AssistantMessage:
        turns = sum(isinstance(m, AssistantMessage) for m in messages)
        sub = messages[0].content == texts.DELEGATE_SYSTEM
        if turns == 0:
            return AssistantMessage(
                tool_calls=[ToolCall(id="l", name="load_skill", arguments={"name": "damaged_item"})]
            )
        if turns == 1 and not sub:
            return AssistantMessage(tool_calls=[ToolCall(id="d", name="delegate", arguments={"task": "load it"})])
        return AssistantMessage(text="sub done" if sub else "parent done")

    config = RunConfig(model="scripted:x", skills=True, delegate=Delegation())
    state = await Agent(ScriptedModel(script), toolbox_for(config, [source]), config=config).run("go")
    assert state.final_answer == "parent done" and source.gets == 1
    assert loaded_skills(state) == ["damaged_item"]


# ---- runs that follow a skill ------------------------------------------------------------------------------------
async def test_scripted_run_loads_the_skill_and_follows_it(tmp_path: Path) -> None:
    config = RunConfig(model="scripted:skills", skills=True)
    agent = Agent(make_scripted("skills"), toolbox_for(config, [desk_stdio(tmp_path)]), config=config)
    state = await agent.run(LATE)
    assert state.status == "done", state.report
    assert [c.name for s in state.steps for c in s.tool_calls] == ["load_skill", "get_order", "get_policy"]
    assert state.steps[2].tool_calls[0].arguments == {"topic": "late_delivery"}  # read from the skill's step 2
    assert state.final_answer is not None and "mouse in order A124 (shipped)" in state.final_answer
    use = skill_use(state)
    assert use is not None and use.loaded == ["shipping_delay"]
    assert 0 < use.index_tokens < use.loaded_tokens * 3
    assert (await replay(state)).identical


async def test_without_skills_there_is_no_load_skill(tmp_path: Path) -> None:
    config = RunConfig(model="scripted:skills")
    async with toolbox_for(config, [desk_stdio(tmp_path)]) as box:
        assert box.spec(texts.SKILL_TOOL) is None
        assert not any(isinstance(s, SkillSource) for s in box.sources)


def test_run_with_skills_on_the_cli(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "toolwire_server", DESK, "--stdio", "--log-level", "ERROR"]
    done = run_toolwire(
        "run", LATE, "--skills", "--model", "scripted:skills", "--server", shlex.join(argv),
        "--db", str(tmp_path / "runs.sqlite3"), "--json", env=clean_env(**desk_env(tmp_path)),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert 'step 1 | load_skill({"name": "shipping_delay"}) | Skill \'shipping_delay\'' in done.stderr
    assert "skills loaded: shipping_delay (" in done.stderr and "tokens per request" in done.stderr
    state = json.loads(done.stdout)
    assert state["config"]["skills"] is True and state["status"] == "done"


def test_skills_on_a_server_without_any_is_one_warning(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "toolwire_server", SUPPORT_TOOLS, "--stdio", "--log-level", "ERROR"]
    done = run_toolwire(
        "run", LATE, "--skills", "--model", "scripted:skills", "--server", shlex.join(argv),
        "--db", str(tmp_path / "runs.sqlite3"), env=clean_env(**desk_env(tmp_path)),
    )  # fmt: skip
    warnings = [line for line in done.stderr.splitlines() if "no tool server offers any" in line]
    assert len(warnings) == 1 and "Traceback" not in done.stderr
    assert "unknown tool 'load_skill'" in done.stdout  # the run went on without the tool


async def test_skills_eval_set() -> None:
    evals = load_eval_file(REPO / "examples/evals/skills.toml")
    attempts = {a.task: a for a in await EvalRunner(evals).run()}
    for attempt in attempts.values():
        assert attempt.success, (attempt.task, attempt.error, attempt.answer, attempt.called, attempt.skills)
    assert attempts["return-with-skill"].skills == ["process_return"]
    assert attempts["return-with-skill"].called[-1] == "issue_refund"
    assert attempts["return-not-delivered"].called == ["load_skill", "get_order", "get_policy"]
    assert attempts["damaged-with-skill"].right_skills is True


def test_the_example_runs_and_measures(tmp_path: Path) -> None:
    """examples/skills.py with no key: the late-order ticket on scripted:skills, then --measure."""
    env = clean_env(**desk_env(tmp_path))
    example = [sys.executable, "examples/skills.py"]
    done = subprocess.run([*example, "--db", str(tmp_path / "runs.sqlite3")], **in_repo(env))
    assert done.returncode == 0, done.stderr
    assert "skills loaded: shipping_delay (index: " in done.stdout and "mouse in order A124" in done.stdout
    measured = subprocess.run([*example, "--measure"], **in_repo(env))
    assert measured.returncode == 0, measured.stderr
    found = re.search(r"the index of 3 skills is (\d+) tokens; their texts inlined, (\d+)", measured.stdout)
    assert found is not None, measured.stdout
    assert int(found.group(1)) < int(found.group(2))
    assert measured.stdout.count("breaks even after") == 3


def in_repo(env: dict[str, str]) -> dict[str, Any]:
    return {"cwd": REPO, "env": env, "capture_output": True, "text": True, "timeout": 120}


async def test_the_wrong_skill_fails_the_path_check(tmp_path: Path) -> None:
    """expect.skills is a path check: a run that loaded another skill fails it, and the report says which it loaded."""
    from toolwire_client.evals.report import failures, table

    evals = load_eval_file(REPO / "examples/evals/skills.toml")
    task = next(t for t in evals.tasks if t.name == "shipping-delay-with-skill")
    assert task.expect is not None
    wrong = task.model_copy(update={"expect": task.expect.model_copy(update={"skills": ["process_return"]})})
    [attempt] = await EvalRunner(evals.model_copy(update={"tasks": [wrong]})).run()
    assert attempt.answer_ok and attempt.right_tools and attempt.right_skills is False and not attempt.success
    assert failures([attempt]) == [
        "shipping-delay-with-skill #1: skills loaded ['shipping_delay'] "
        "(called ['load_skill', 'get_order', 'get_policy'])"
    ]
    assert "right skills" in [column.header for column in table([attempt]).columns]
