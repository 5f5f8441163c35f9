"""`toolwire run TASK`: one agent run on the model and tool servers you name, saved step by step in the run store,
with the live step table (step | call | observation | tokens so far | cost)."""

import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import anyio
import click
from rich.console import Console

from toolwire_client.assembly.agents import build_agent
from toolwire_client.assembly.resume import AgentFactory
from toolwire_client.cli._store import db_option
from toolwire_client.cli.answer import input_hint
from toolwire_client.cli.progress import LiveProgress, LiveText
from toolwire_client.cli.run_config import config_from, config_options
from toolwire_client.cli.server_output import ServerOutput
from toolwire_client.cli.trace import step_lines
from toolwire_client.config import RunConfig, ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.mistakes import INTERRUPTED, run_exit
from toolwire_client.models.pricing import default_prices
from toolwire_client.models.providers import PROVIDERS
from toolwire_client.run.state import RunState, StepRecord
from toolwire_client.store import open_store
from toolwire_client.store.base import RunStore
from toolwire_client.tools.server_stderr import LineSink
from toolwire_client.tools.skills import skill_use
from toolwire_shared.ids import new_run_id
from toolwire_shared.terminal import inert_json, shown
from toolwire_shared.words import counted

F = TypeVar("F", bound=Callable[..., Any])


def print_step(console: Console, live: LiveText | None = None) -> Callable[[RunState, StepRecord], None]:
    def on_step(state: RunState, step: StepRecord) -> None:
        if live is not None:
            live.end_line()
        cost = f" | {state.cost_usd:.4f} USD" if state.cost_usd is not None else ""
        indent = "    script " if state.script is not None else "  "  # a run_code call's script's calls, nested
        for line in step_lines(state, step):
            console.print(shown(f"{indent}{line}{cost}"), markup=False, highlight=False)

    return on_step


def with_prices_and_printing(
    console: Console, stderr_sink: LineSink | None = None, live: LiveText | None = None
) -> AgentFactory:
    """Agent.from_config, plus the price table for costs, the live step table (with streamed text when `live`,
    and the progress of running tool calls) and where servers' stderr goes."""

    async def build(config: RunConfig, store: RunStore, servers: list[ServerSpec] | None = None) -> Agent:
        prices, model = default_prices(), config.model.partition(":")[2] or config.model
        return build_agent(
            config,
            store=store,
            price_fn=lambda usage: prices.cost(model, usage),
            on_step=print_step(console, live),
            stderr_sink=stderr_sink,
            on_text=live,
            on_progress=LiveProgress(console, live),
            servers=servers,
        )

    return build


def _scripted(state: RunState) -> bool:
    """Run on a model that needs no key (test, script:FILE, scripted:NAME): nothing to charge."""
    prefix = str((state.config or {}).get("model", "")).partition(":")[0]
    return prefix in PROVIDERS and PROVIDERS[prefix].key_env is None


def print_outcome(console: Console, state: RunState) -> None:
    console.print(shown(f"-> {state.status}: {state.report or state.stop_reason}"), markup=False, highlight=False)
    if state.final_answer:
        console.print(shown(f"answer: {state.final_answer}"), markup=False, highlight=False)
    skills = skill_use(state)
    if skills is not None:
        loaded = ", ".join(skills.loaded) or "none"
        console.print(
            shown(
                f"skills loaded: {loaded} ({skills.loaded_tokens} tokens, once); index: {skills.index_tokens} tokens "
                "per request"
            ),
            markup=False,
            highlight=False,
        )
    if state.cost_usd is not None:
        cost = f"{state.cost_usd:.4f} USD"
    elif _scripted(state):
        cost = "no charge (a model with no key)"
    else:
        cost = "cost unknown (model not in the price table)"
    console.print(
        f"tokens: {state.usage.input_tokens} in, {state.usage.output_tokens} out "
        f"({state.usage.cache_read_tokens} cache read); {cost}",
        markup=False,
        highlight=False,
    )


def print_run_id(console: Console, run_id: str) -> None:
    """The run's id, to look at it again: every command about a saved run takes it."""
    text = f"run: {run_id} (`toolwire trace show {run_id}` shows it, `toolwire replay {run_id}` replays it)"
    console.print(shown(text), markup=False, highlight=False)


def print_server_log(console: Console, output: ServerOutput) -> None:
    """Where the tool servers' own output went, when they wrote any."""
    log = output.close()
    if log is not None:
        console.print(f"tool server output: {log}", style="dim", markup=False, highlight=False)


def note_server_log(exc: BaseException, output: ServerOutput) -> None:
    """A failed run's error line names the log its tool servers wrote (their words come before ours)."""
    log = output.close()
    if log is not None:
        exc.add_note(f"tool server output: {log}")


verbose_option = click.option(
    "-v", "--verbose", is_flag=True, help="Show the tool servers' own output (stderr) inline instead of in a log file."
)


@click.command("run")
@click.argument("task")
@config_options
@click.option("--trace", "trace_to", metavar="otlp|console|FILE", help="Export the run's spans.")
@db_option
@verbose_option
@click.option(
    "--json", "as_json", is_flag=True, help="Print the final run state as JSON on stdout (the table on stderr)."
)
def run(task: str, trace_to: str | None, db: str | None, verbose: bool, as_json: bool, **options: Any) -> None:
    """Run the agent on TASK until it answers or the harness stops it."""
    from toolwire_otel.setup import configure_tracing

    config = config_from(**options)
    console = Console(soft_wrap=True, stderr=as_json)
    run_id = new_run_id()
    output = ServerOutput(run_id, verbose=verbose)
    live = LiveText(console) if config.stream else None
    try:
        with configure_tracing(trace_to):
            state = anyio.run(_run, task, run_id, config, db, with_prices_and_printing(console, output.line, live))
    except KeyboardInterrupt:
        interrupted(console, run_id, db)
    except Exception as exc:
        note_server_log(exc, output)
        raise
    finally:
        if live is not None:
            live.end_line()  # text of a reply whose step never ended (the run failed) still gets its line
    print_outcome(console, state)
    print_run_id(console, state.run_id)
    print_server_log(console, output)
    if state.status == "waiting_for_approval":
        hint = input_hint(state) or f"approve with `toolwire approve {state.run_id}`"
        console.print(shown(f"{hint} then `toolwire resume {state.run_id}`"), markup=False, highlight=False)
    if as_json:
        click.echo(inert_json(state.model_dump_json(indent=2)))
    sys.exit(run_exit(state.status))


def interrupted(console: Console, run_id: str, db: str | None) -> NoReturn:
    """Ctrl-C: the run stays as its last save left it (`running`, which `resume` goes on with, settling a call that
    was cut off); its id and the line that goes on, and exit status 130, instead of click's `Aborted!`."""
    from toolwire_client.store import RunNotFound

    async def saved() -> RunState | None:
        store = await open_store(db)
        try:
            return await store.load(run_id)
        except RunNotFound:
            return None
        finally:
            await store.aclose()

    state = anyio.run(saved)
    if state is None:
        line = f"interrupted before run {run_id} was saved; nothing to resume"
    else:
        steps = counted(len(state.steps), "step")
        line = f"interrupted: run {run_id} saved after {steps}; `toolwire resume {run_id}` goes on"
    console.print(shown(line), markup=False, highlight=False)
    sys.exit(INTERRUPTED)


async def _run(task: str, run_id: str, config: RunConfig, db: str | None, build: AgentFactory) -> RunState:
    store = await open_store(db)
    try:
        agent = await build(config, store)
        try:
            return await agent.run(task, run_id)
        finally:
            await agent.model.aclose()
    finally:
        await store.aclose()
