"""`toolwire trace show RUN` prints the seed's table (step | call | observation | tokens so far) and the stop reason;
`toolwire trace export RUN --json` writes the whole saved run."""

from typing import TextIO

import click

from toolwire_client.cli._store import db_option, with_store
from toolwire_client.state import RunState, StepRecord
from toolwire_client.store import SqlRunStore

OBSERVATION_WIDTH = 200


def _cut(text: str, wide: bool) -> str:
    flat = " ".join(text.split())
    return flat if wide or len(flat) <= OBSERVATION_WIDTH else flat[: OBSERVATION_WIDTH - 3] + "..."


def step_lines(state: RunState, step: StepRecord, wide: bool = False) -> list[str]:
    """One line per tool call of the step (or one for its final answer), as the seed prints them."""
    tokens = f"tokens so far {step.usage_so_far.total_tokens}"
    if not step.tool_calls:
        return [f"step {step.index} | final: {_cut(step.model_text, wide)} | {tokens}"]
    waiting = {p.call.id for p in state.pending if p.state == "pending_approval"}
    results = {r.call_id: r for r in step.results}
    lines = []
    for call in step.tool_calls:
        result = results.get(call.id)
        if result is not None:
            observation = _cut(result.content, wide)
        elif call.id in waiting:
            observation = "not run: waiting for approval"
        else:
            observation = "not run"
        lines.append(f"step {step.index} | {call.signature} | {observation} | {tokens}")
    return lines


def trace_lines(state: RunState, wide: bool = False) -> list[str]:
    """The seed's table for the whole run, then how the run ended."""
    lines = [line for step in state.steps for line in step_lines(state, step, wide)]
    lines.append(
        f"-> {state.status}, {state.stop_reason or 'no exit recorded (still running or cut off)'}"
        f"{': ' + state.report if state.report else ''}"
    )
    return lines


def _load(db: str | None, run_id: str) -> RunState:
    async def work(store: SqlRunStore) -> RunState:
        return await store.load(run_id)

    return with_store(db, work)


@click.group("trace")
def trace() -> None:
    """Show or export the saved trace of a run."""


@trace.command("show")
@click.argument("run_id")
@click.option("--wide", is_flag=True, help="Do not shorten long observations.")
@click.option("--waterfall", is_flag=True, help="Draw the timeline: model and tool calls as bars on a time axis.")
@db_option
def show(run_id: str, wide: bool, waterfall: bool, db: str | None) -> None:
    """The seed's table for RUN_ID: step | call | observation | tokens so far, then the stop reason."""
    if waterfall:
        from rich.console import Console

        from toolwire_client.waterfall import waterfall as draw

        Console().print(draw(_load(db, run_id)))
        return
    for line in trace_lines(_load(db, run_id), wide):
        click.echo(line)


@trace.command("export")
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, required=True, help="Write the whole saved run as JSON.")
@click.option("-o", "--output", type=click.File("w"), default="-", help="File to write (default: stdout).")
@db_option
def export(run_id: str, as_json: bool, output: TextIO, db: str | None) -> None:
    """The whole saved run (messages, steps with model replies, results, tokens, latency) as JSON."""
    output.write(_load(db, run_id).model_dump_json(indent=2) + "\n")
