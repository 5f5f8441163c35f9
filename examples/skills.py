"""Skills on the support desk: the desk's server offers saved instructions (process_return, shipping_delay,
damaged_item) as MCP prompts named skill.*; with skills on, the model sees only each skill's name and one-line
description (in the description of the load_skill tool) and loads a skill's full text when a ticket needs it.

    python examples/skills.py ["TICKET"] [--db PATH]
    python examples/skills.py --measure

With no API key it runs on the scripted model (`scripted:skills`, which loads the skill its ticket calls for and
follows its steps); with ANTHROPIC_API_KEY or OPENAI_API_KEY set it runs on that provider's default model
($TOOLWIRE_MODEL names another). `--measure` runs three tickets on the scripted model twice, once with the skill
index and once with every skill's text inlined in the system prompt instead, in a scratch database (the refund is
approved as a person would), and prints the input tokens of each (the project's estimate, tokens.py)."""

import itertools
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import anyio

from toolwire_client import (
    Agent,
    RunConfig,
    RunLimits,
    RunState,
    ServerSpec,
    StepRecord,
    build_agent,
    build_sources,
    estimate_prompt,
    estimate_text,
    inlined,
    list_skills,
    load_skill_spec,
    run_task,
    skill_use,
    spec_or_script,
    step_lines,
)

HERE = Path(__file__).resolve().parent
TICKET = "Ticket from cus_8123: my order A124 has not arrived yet. Where is it?"
TICKETS = [
    "Ticket from cus_8123: I want to return the keyboards of order A123 for a refund.",
    TICKET,
    "Ticket from cus_4410: the headphones in order B200 arrived broken. What can you do?",
]
SYSTEM = "You are a support agent for an online store. State only facts you read from a tool."


def desk(env: dict[str, str] | None = None) -> ServerSpec:
    argv = [sys.executable, "-m", "toolwire_server", f"{HERE}/support_tools.py:desk", "--stdio"]
    return ServerSpec(name="support", command=argv, env=env or {})


def config(spec: str, server: ServerSpec, *, skills: bool = True, system: str = SYSTEM) -> RunConfig:
    return RunConfig(model=spec, servers=[server], system=system, limits=RunLimits(max_steps=10), skills=skills)


def show(state: RunState, step: StepRecord) -> None:
    for line in step_lines(state, step):
        print(f"  {line}")


async def main(ticket: str, db: str | None) -> RunState:
    return await run_task(config(spec_or_script("skills"), desk()), ticket, db=db, on_step=show)


@dataclass(frozen=True)
class Measured:
    """One ticket run both ways on the scripted model: the input tokens of each request."""

    ticket: str
    skills: list[str]
    index: list[int]
    """Per request, with the skill index (load_skill offered): the first request is the one that loads the skill."""
    inline: list[int]
    """Per request, with every skill's text in the system prompt instead (no load step)."""

    @property
    def load_step(self) -> int:
        """What loading costs: one more request, the first."""
        return self.index[0]

    @property
    def per_step(self) -> float:
        """What each working request saves once the skill is loaded (the same step of the task, both ways)."""
        pairs = list(zip(self.inline, self.index[1:], strict=True))
        return sum(inline - index for inline, index in pairs) / len(pairs)

    def saved(self, working_steps: int) -> float:
        """Tokens saved over a run of `working_steps` requests after the load (negative: a loss)."""
        return working_steps * self.per_step - self.load_step


async def approved(agent: Agent, state: RunState) -> RunState:
    """The run, with each call it pauses for approved as a person would (the scratch database's refund)."""
    while state.status == "waiting_for_approval":
        for pending in state.pending:
            pending.state, pending.decision_reason = "approved", "approved by examples/skills.py --measure"
        state = await agent.resume(state)
    return state


async def run_once(run: RunConfig, ticket: str) -> RunState:
    agent = build_agent(run)
    try:
        async with agent.toolbox:
            return await approved(agent, await agent.run(ticket))
    finally:
        await agent.model.aclose()


async def measure() -> tuple[int, int, int, list[Measured]]:
    """The index's tokens, every skill's text inlined, the number of skills, and each ticket run both ways (each run
    on a fresh copy of the desk's database, so the refund of one does not change the other's path)."""
    with tempfile.TemporaryDirectory(prefix="toolwire-skills-") as scratch:
        databases = itertools.count(1)

        def fresh() -> ServerSpec:
            return desk({"TOOLWIRE_SUPPORT_DB": f"{scratch}/{next(databases)}.sqlite3"})

        [source] = build_sources([fresh()])
        await source.start()
        try:
            skills = await list_skills([source])
            inline = SYSTEM + "\n\n" + await inlined(skills)
        finally:
            await source.aclose()
        rows, index_tokens = [], 0
        for ticket in TICKETS:
            with_index = await run_once(config("scripted:skills", fresh()), ticket)
            inlined_run = await run_once(config("scripted:skills", fresh(), skills=False, system=inline), ticket)
            use = skill_use(with_index)
            index_tokens = use.index_tokens if use else 0
            per_request = [[step.usage.input_tokens for step in run.steps] for run in (with_index, inlined_run)]
            rows.append(Measured(ticket, use.loaded if use else [], *per_request))
        return index_tokens, estimate_text(inline) - estimate_text(SYSTEM), len(skills), rows


def per_skill(index_tokens: int, inline_tokens: int, count: int) -> tuple[float, float]:
    """What one more skill like these adds to each request: its index line, and its text inlined."""
    empty = load_skill_spec([])
    return (index_tokens - estimate_prompt([], [empty])) / count, inline_tokens / count


def print_measure(index_tokens: int, inline_tokens: int, count: int, rows: list[Measured]) -> None:
    print(f"per request: the index of {count} skills is {index_tokens} tokens; their texts inlined, {inline_tokens}")
    line, text = per_skill(index_tokens, inline_tokens, count)
    print(f"each more skill like these: {line:.0f} more tokens per request in the index, {text:.0f} inlined")
    for row in rows:
        total_index, total_inline = sum(row.index), sum(row.inline)
        print(
            f"  {', '.join(row.skills) or 'no skill'}: {len(row.index)} requests with the index ({total_index} input "
            f"tokens), {len(row.inline)} inlined ({total_inline}): saved {total_inline - total_index}; the load "
            f"request costs {row.load_step}, each later request saves {row.per_step:.0f}, so 10 working steps save "
            f"{row.saved(10):.0f} and the index breaks even after {row.load_step / row.per_step:.1f}"
        )
    for many in (10, 30):
        gain = (many - count) * (text - line)
        print(
            f"with {many} such skills (projected): each request after the load saves "
            f"{', '.join(f'{row.per_step + gain:.0f}' for row in rows)}; break-even after "
            f"{', '.join(f'{row.load_step / (row.per_step + gain):.1f}' for row in rows)} steps"
        )


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--measure"]:
        print_measure(*anyio.run(measure))
        sys.exit(0)
    db = None
    if "--db" in args:
        at = args.index("--db")
        db, args = args[at + 1], args[:at] + args[at + 2 :]
    state = anyio.run(main, args[0] if args else TICKET, db)
    use = skill_use(state)
    print(f"-> {state.status}: {state.report}")
    print(f"answer: {state.final_answer}")
    if use is not None:
        print(f"skills loaded: {', '.join(use.loaded) or 'none'} (index: {use.index_tokens} tokens per request)")
    print(f"saved as {state.run_id}: toolwire trace show {state.run_id}" + (f" --db {db}" if db else ""))
    sys.exit(0 if state.status == "done" else 1)
