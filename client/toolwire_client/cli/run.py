"""`toolwire run TASK`: one agent run on the model and tool servers you name, saved step by step in the run store,
with the live step table (step | call | observation | tokens so far | cost)."""

import shlex
import sys
from collections.abc import Callable

import anyio
import click
from rich.console import Console

from toolwire_client.cli._store import db_option
from toolwire_client.cli.trace import step_lines
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.durable import AgentFactory
from toolwire_client.loop import Agent
from toolwire_client.models import default_spec, spec_help
from toolwire_client.pricing import default_prices
from toolwire_client.state import RunState, StepRecord
from toolwire_client.store import open_store
from toolwire_client.store.base import RunStore


def print_step(console: Console) -> Callable[[RunState, StepRecord], None]:
    def on_step(state: RunState, step: StepRecord) -> None:
        cost = f" | {state.cost_usd:.4f} USD" if state.cost_usd is not None else ""
        for line in step_lines(state, step):
            console.print(f"  {line}{cost}", markup=False, highlight=False)

    return on_step


def with_prices_and_printing(console: Console) -> AgentFactory:
    """Agent.from_config, plus the price table for costs and the live step table."""

    async def build(config: RunConfig, store: RunStore) -> Agent:
        prices, model = default_prices(), config.model.partition(":")[2] or config.model
        price_fn = lambda usage: prices.cost(model, usage)  # noqa: E731
        return Agent.from_config(config, store=store, price_fn=price_fn, on_step=print_step(console))

    return build


def _scripted(state: RunState) -> bool:
    return bool(state.config) and str(state.config.get("model", "")).startswith("scripted:")


def print_outcome(console: Console, state: RunState) -> None:
    console.print(f"-> {state.status}: {state.report or state.stop_reason}", markup=False, highlight=False)
    if state.final_answer:
        console.print(f"answer: {state.final_answer}", markup=False, highlight=False)
    if state.cost_usd is not None:
        cost = f"{state.cost_usd:.4f} USD"
    elif _scripted(state):
        cost = "no charge (scripted model)"
    else:
        cost = "cost unknown (model not in the price table)"
    console.print(
        f"tokens: {state.usage.input_tokens} in, {state.usage.output_tokens} out "
        f"({state.usage.cache_read_tokens} cache read); {cost}",
        markup=False,
        highlight=False,
    )


@click.command("run")
@click.argument("task")
@click.option("--model", "model_spec", metavar="SPEC", help=f"Model: {spec_help()}.")
@click.option("--base-url", metavar="URL", help="Provider base URL (an OpenAI-compatible local server, a proxy).")
@click.option(
    "--server",
    "commands",
    multiple=True,
    metavar="CMD",
    help="A stdio tool server command (e.g. 'toolwire serve examples.support_tools:registry --stdio').",
)
@click.option("--server-url", "urls", multiple=True, metavar="URL", help="A Streamable HTTP tool server.")
@click.option("--token-env", metavar="VAR", help="Environment variable holding the bearer token for --server-url.")
@click.option("--allow", multiple=True, metavar="GLOB", help="Only these tools (client-side allow-list).")
@click.option("--risky", multiple=True, metavar="TOOL", help="Also pause for approval before this tool.")
@click.option("--system", help="System prompt.")
@click.option("--max-steps", default=12, show_default=True)
@click.option("--max-tokens", type=int, help="Token budget, checked before each model call.")
@click.option("--max-cost", type=float, help="Budget in USD, checked before each model call.")
@click.option("--max-wall", type=float, help="Wall-clock limit for the whole run, in seconds.")
@click.option("--trace", "trace_to", metavar="otlp|console|FILE", help="Export the run's spans.")
@db_option
def run(
    task: str,
    model_spec: str | None,
    base_url: str | None,
    commands: tuple[str, ...],
    urls: tuple[str, ...],
    token_env: str | None,
    allow: tuple[str, ...],
    risky: tuple[str, ...],
    system: str | None,
    max_steps: int,
    max_tokens: int | None,
    max_cost: float | None,
    max_wall: float | None,
    trace_to: str | None,
    db: str | None,
) -> None:
    """Run the agent on TASK until it answers or the harness stops it."""
    from toolwire_otel.setup import configure_tracing

    if not commands and not urls:
        raise click.UsageError("name at least one tool server: --server 'CMD' or --server-url URL")
    servers = [ServerSpec(name=f"stdio{i}", command=shlex.split(c)) for i, c in enumerate(commands)]
    servers += [ServerSpec(name=f"http{i}", url=u, token_env=token_env) for i, u in enumerate(urls)]
    try:
        spec = model_spec or default_spec()
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    limits = RunLimits(max_steps=max_steps, max_tokens=max_tokens, max_cost_usd=max_cost, max_wall_s=max_wall)
    config = RunConfig(model=spec, base_url=base_url, servers=servers, system=system, limits=limits)
    config = config.model_copy(update={"risky_tools": list(risky), "allow": list(allow) or None})
    console = Console(soft_wrap=True)
    with configure_tracing(trace_to):
        state = anyio.run(_run, task, config, db, console)
    print_outcome(console, state)
    if state.status == "waiting_for_approval":
        console.print(
            f"approve with `toolwire approve {state.run_id}` then `toolwire resume {state.run_id}`",
            markup=False,
            highlight=False,
        )
    sys.exit(0 if state.status in ("done", "waiting_for_approval") else 1)


async def _run(task: str, config: RunConfig, db: str | None, console: Console) -> RunState:
    store = await open_store(db)
    try:
        agent = await with_prices_and_printing(console)(config, store)
        try:
            return await agent.run(task)
        finally:
            await agent.model.aclose()
    finally:
        await store.aclose()
