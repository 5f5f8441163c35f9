"""`toolwire demo` (what `make demo` runs): the support agent from the seeds, end to end, with no API key and
nothing started by hand. The tool server runs in its own process over stdio on a fresh SQLite file; the model asks
for two tools in parallel, repairs a bad call from the readable error, and the refund pauses for a person's approval,
which the demo then gives before resuming the saved run."""

import os
import sys
import tempfile
from pathlib import Path

import anyio
import click
from rich.console import Console
from rich.text import Text

from toolwire_client.assembly.resume import resume_run
from toolwire_client.cli._store import db_option, store_name
from toolwire_client.cli.run import (
    note_server_log,
    print_outcome,
    print_server_log,
    verbose_option,
    with_prices_and_printing,
)
from toolwire_client.cli.server_output import ServerOutput
from toolwire_client.config import RunConfig, RunLimits, ServerSpec
from toolwire_client.models.pricing import default_prices
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore, open_store
from toolwire_client.store.approvals import approve
from toolwire_client.tools.server_stderr import LineSink
from toolwire_shared.ids import new_run_id
from toolwire_shared.terminal import inert, shown

TASK = "Customer cus_8123 says the keyboards in order A123 arrived broken. Check the order and refund one keyboard."
SYSTEM = (
    "You are a support agent for an online store. Use the tools to look up real data; never state an order "
    "status you have not read from a tool. Refunds need a person's approval."
)
SUPPORT_TOOLS = "examples.support_tools:registry"
REFERENCE_MODEL = "claude-sonnet-4-5"


PACKAGED_TOOLS = Path(__file__).resolve().parents[1] / "examples" / "support_tools.py"
"""Where the wheel puts examples/support_tools.py (pyproject.toml's force-include): the demo runs from an install."""


def _support_tools() -> tuple[str, Path]:
    """The tool server's target and working folder: the checkout's examples/ when there is one (the repo root, which
    the server imports the example tools from), else the copy the installed package holds."""
    for folder in (Path.cwd(), *Path(__file__).resolve().parents):
        if (folder / "examples" / "support_tools.py").is_file():
            return SUPPORT_TOOLS, folder
    if PACKAGED_TOOLS.is_file():
        return f"{PACKAGED_TOOLS}:registry", PACKAGED_TOOLS.parent
    raise click.ClickException("cannot find examples/support_tools.py: reinstall toolwire or run from its checkout")


def _model_spec(model: str | None) -> str:
    if model:
        return model
    if os.environ.get("ANTHROPIC_API_KEY"):
        return "anthropic:claude-sonnet-4-5"
    if os.environ.get("OPENAI_API_KEY"):
        return "openai:gpt-4.1-mini"
    return "scripted:support_demo"


@click.command("demo")
@click.option("--model", help="Run on this model instead (default: scripted, or the provider whose API key is set).")
@click.option(
    "--trace",
    "trace_to",
    metavar="otlp|console|FILE",
    help="Export the run's spans (and its tool server's): otlp, console or a JSON-lines FILE.",
)
@db_option
@verbose_option
def demo(model: str | None, trace_to: str | None, db: str | None, verbose: bool) -> None:
    """Run the support agent end to end: parallel calls, a repaired call, an approval, a resume.

    The run is saved in the run store, like any `toolwire run`; the support desk's own database lives in a
    temporary folder that is removed at the end, so the demo leaves nothing in the working folder or /tmp.
    """
    from toolwire_otel.setup import child_process_env, configure_tracing

    console = Console(soft_wrap=True)
    tools, folder = _support_tools()
    with tempfile.TemporaryDirectory(prefix="toolwire-demo-") as work:
        server = ServerSpec(
            name="support",
            command=[sys.executable, "-m", "toolwire_server", tools, "--stdio"],
            cwd=str(folder),
            env={"TOOLWIRE_SUPPORT_DB": str(Path(work) / "support.db"), **child_process_env()},
        )
        config = RunConfig(
            model=_model_spec(model),
            servers=[server],
            name="support-agent",
            system=SYSTEM,
            limits=RunLimits(max_steps=8, max_wall_s=120),
        )
        said = f" - model {config.model}, tool server over stdio, store {store_name(db)}"
        console.print(Text.assemble(("toolwire demo", "bold"), inert(said)))
        console.print(f"task: {TASK}\n", markup=False, highlight=False)
        run_id = new_run_id()
        output = ServerOutput(run_id, verbose=verbose)
        try:
            with configure_tracing(trace_to):
                state = anyio.run(_demo, config, run_id, db, console, output.line)
        except Exception as exc:
            note_server_log(exc, output)
            raise
    print_outcome(console, state)
    if config.model.startswith("scripted:"):
        reference = default_prices().cost(REFERENCE_MODEL, state.usage)
        if reference is not None:
            console.print(
                f"(the same tokens on {REFERENCE_MODEL} would cost {reference:.4f} USD)", markup=False, highlight=False
            )
    print_server_log(console, output)
    if trace_to:
        where = f"spans exported ({trace_to})" if trace_to in ("otlp", "console") else f"trace written to {trace_to}"
        console.print(where, markup=False, highlight=False)
    store = f" --db {db}" if db else ""
    console.print(
        shown(
            f"the run is saved in {store_name(db)}: `toolwire trace show {state.run_id}{store}` (add --waterfall for "
            f"its timeline), `toolwire replay {state.run_id}{store}`"
        ),
        markup=False,
        highlight=False,
    )
    sys.exit(0 if state.status == "done" else 1)


async def _demo(config: RunConfig, run_id: str, db: str | None, console: Console, sink: LineSink) -> RunState:
    store = await open_store(db)
    build = with_prices_and_printing(console, sink)
    try:
        agent = await build(config, store)
        try:
            state = await agent.run(TASK, run_id)
        finally:
            await agent.model.aclose()
        while state.status == "waiting_for_approval":
            await _approve_all(store, state, console)
            console.print("resuming the saved run ...", markup=False, highlight=False)
            state = await resume_run(store, state.run_id, build)
        return state
    finally:
        await store.aclose()


async def _approve_all(store: SqlRunStore, state: RunState, console: Console) -> None:
    """Stands in for the person who would run `toolwire approve RUN CALL` hours later."""
    for pending in state.pending:
        if not pending.waits_for_approval:
            continue
        call = pending.call
        said = f": {call.name}({call.arguments}) - a person approves it (`toolwire approve {state.run_id} {call.id}`)"
        console.print(Text.assemble("\n", ("waiting for approval", "yellow"), inert(said)))
        await approve(store, state.run_id, call.id, shown_hash=pending.args_hash)
