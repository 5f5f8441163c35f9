"""Skills: saved instructions for one kind of task ("how to process a return"), served by a tool server as MCP
prompts named `skill.NAME` (toolwire_shared.tools.SKILL_PREFIX). With `RunConfig.skills` on, the model is offered
one client-side tool, `load_skill(name)`, whose description is the skill index (each skill's name and one-line
description); a call's result is the skill's full text. So a skill costs its one index line on every request and
its full text only from the step it is loaded on. The text is fetched from its server once per source and added
once per conversation: loading it again answers that it is already there."""

import logging
import time
from collections import Counter
from dataclasses import dataclass

import mcp_types as types

from toolwire_client import texts
from toolwire_client.models.tokens import estimate_prompt, estimate_text
from toolwire_client.run.state import RunState
from toolwire_client.tools.source import ServerRequestFailed, ToolRequest, ToolSource
from toolwire_shared import errors
from toolwire_shared.results import ToolResult, failed
from toolwire_shared.tools import SKILL_PREFIX, ToolPolicy, ToolSpec, closed_object

log = logging.getLogger("toolwire.client.skills")

TOOL = texts.SKILL_TOOL
SCHEMA = closed_object({"name": {"type": "string", "description": texts.SKILL_NAME_HELP}}, ["name"])


@dataclass(frozen=True)
class Skill:
    """One skill as the index lists it, and where its text comes from."""

    name: str
    description: str
    prompt: str
    """The prompt's name on its server (`skill.NAME`)."""
    source: ToolSource
    """A source that `offers_prompts`."""


def skill_name(prompt: str) -> str:
    return prompt.removeprefix(SKILL_PREFIX)


def prompt_text(result: types.GetPromptResult) -> str:
    """A prompt's messages as one text: its text blocks (and embedded text resources), a blank line apart."""
    parts: list[str] = []
    for message in result.messages:
        content = message.content
        if isinstance(content, types.TextContent):
            parts.append(content.text)
        elif isinstance(content, types.EmbeddedResource) and isinstance(content.resource, types.TextResourceContents):
            parts.append(content.resource.text)
    return "\n\n".join(parts)


def first_loads(state: RunState) -> dict[str, ToolResult]:
    """Each skill this run loaded, by name in the order it was first loaded, with the result that added its text
    (derived from the steps: the first load_skill call per skill that did not fail)."""
    loads: dict[str, ToolResult] = {}
    for step in state.steps:
        asked = {call.id: call for call in step.tool_calls}
        for result in step.results:
            call = asked.get(result.call_id)
            name = call.arguments.get("name") if call is not None else None
            if result.name == TOOL and not result.is_error and isinstance(name, str):
                loads.setdefault(skill_name(name), result)
    return loads


def loaded_skills(state: RunState) -> list[str]:
    """The skills this run loaded, in the order it first loaded them."""
    return list(first_loads(state))


@dataclass(frozen=True)
class SkillUse:
    """What skills cost a run: the index on every request, and the text of each skill it loaded, once."""

    loaded: list[str]
    index_tokens: int
    """The load_skill tool definition (the index), sent with every request."""
    loaded_tokens: int
    """The loaded skills' texts, each in the conversation from the step it was loaded on."""


def skill_use(state: RunState) -> SkillUse | None:
    """None for a run that was not offered load_skill (from the tool definitions saved with it)."""
    spec = next((tool for tool in state.config.get("tools", []) if tool.get("name") == TOOL), None)
    if spec is None:
        return None
    loads = first_loads(state)
    return SkillUse(
        loaded=list(loads),
        index_tokens=estimate_prompt([], [ToolSpec.model_validate(spec)]),
        loaded_tokens=sum(estimate_text(result.content) for result in loads.values()),
    )


async def list_skills(sources: list[ToolSource]) -> list[Skill]:
    """The skills the sources' servers offer. A skill whose prompt needs arguments is left out (load_skill passes
    none); a name two servers share is prefixed with its server's name, as a tool's is."""
    found: list[Skill] = []
    for source in sources:
        if not source.offers_prompts:
            continue
        try:
            prompts = await source.list_prompts()
        except ServerRequestFailed as exc:
            log.warning("no skills from %s: %s", source.name, exc)
            continue
        for prompt in prompts:
            if not prompt.name.startswith(SKILL_PREFIX):
                continue
            if any(argument.required for argument in prompt.arguments or []):
                log.warning("skill %s of %s left out: it needs arguments, a skill takes none", prompt.name, source.name)
                continue
            line = (prompt.description or prompt.title or skill_name(prompt.name)).strip().splitlines()[0]
            found.append(Skill(skill_name(prompt.name), line, prompt.name, source))
    counts = Counter(skill.name for skill in found)
    return [
        Skill(f"{s.source.name}__{s.name}", s.description, s.prompt, s.source) if counts[s.name] > 1 else s
        for s in found
    ]


async def inlined(skills: list[Skill]) -> str:
    """Every skill's full text as one block (what a system prompt carries without load_skill): the alternative the
    index is measured against (examples/skills.py)."""
    blocks = [
        texts.skill_text(skill.name, prompt_text(await skill.source.get_prompt(skill.prompt))) for skill in skills
    ]
    return "\n\n".join(blocks)


class SkillSource(ToolSource):
    """A ToolSource: the one tool `load_skill`, over the prompts of the run's other sources (listed when
    it starts, so it comes after them in the ToolBox)."""

    name = TOOL
    # times_out_itself stays False: a prompts/get crosses a process boundary, the ToolBox's backstop bounds it

    def __init__(self, sources: list[ToolSource]):
        self.sources = sources
        self.skills: dict[str, Skill] = {}
        self._texts: dict[str, str] = {}  # skill name -> its text, fetched once

    async def start(self) -> None:
        self.skills = {skill.name: skill for skill in await list_skills(self.sources)}
        if not self.skills:
            log.warning("skills are on, but no tool server offers any (prompts named %s...)", SKILL_PREFIX)

    async def list_tools(self) -> list[ToolSpec]:
        if not self.skills:
            return []
        return [load_skill_spec([(skill.name, skill.description) for skill in self.skills.values()])]

    async def call(self, request: ToolRequest) -> ToolResult:
        started = time.perf_counter()
        call_id, name, arguments = request.call.id, request.call.name, request.call.arguments
        asked = arguments.get("name")
        problems = [f"{key}: not an argument of {TOOL}" for key in arguments if key != "name"]
        if not isinstance(asked, str):
            problems.insert(0, "name: a skill's name (a string) is required")
        if problems or not isinstance(asked, str):
            return failed(call_id, name, "bad_arguments", errors.bad_arguments(TOOL, problems, SCHEMA), since=started)
        skill = self.skills.get(skill_name(asked))
        if skill is None:
            return failed(call_id, name, "bad_arguments", texts.unknown_skill(asked, self.skills), since=started)
        state = request.run.state
        if state is not None and skill.name in loaded_skills(state):
            text = texts.skill_loaded_before(skill.name)
        else:
            try:
                text = texts.skill_text(skill.name, await self._text(skill))
            except ServerRequestFailed as exc:
                return failed(call_id, name, "tool_failed", texts.skill_failed(skill.name, str(exc)), since=started)
        return ToolResult(call_id=call_id, name=name, content=text, duration_s=time.perf_counter() - started)

    async def _text(self, skill: Skill) -> str:
        if skill.name not in self._texts:
            self._texts[skill.name] = prompt_text(await skill.source.get_prompt(skill.prompt))
        return self._texts[skill.name]


def load_skill_spec(index: list[tuple[str, str]]) -> ToolSpec:
    """The `load_skill` tool as the model is offered it: its description lists the skills (name, description)."""
    description = texts.skills_description(index)
    return ToolSpec(name=TOOL, description=description, input_schema=SCHEMA, policy=ToolPolicy(idempotent=True))
