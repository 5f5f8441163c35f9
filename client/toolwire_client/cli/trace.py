"""`toolwire trace show RUN` prints the seed's table (step | call | observation | tokens so far) and the stop reason;
`toolwire trace export RUN --json` writes the whole saved run."""

from typing import TextIO

import click

from toolwire_client.cli._store import db_option, with_store
from toolwire_client.exits import call_text
from toolwire_client.state import RunState
from toolwire_client.store import SqlRunStore

OBSERVATION_WIDTH = 200


def trace_lines(state: RunState, wide: bool = False) -> list[str]:
    """One line per tool call (or per final answer), as the seed prints them, then how the run ended."""

    def cut(text: str) -> str:
        flat = " ".join(text.split())
        return flat if wide or len(flat) <= OBSERVATION_WIDTH else flat[: OBSERVATION_WIDTH - 3] + "..."

    waiting = {p.call.id for p in state.pending if p.state == "pending_approval"}
    lines = []
    for step in state.steps:
        tokens = f"tokens so far {step.usage_so_far.total_tokens}"
        if not step.tool_calls:
            lines.append(f"step {step.index} | final: {cut(step.model_text)} | {tokens}")
            continue
        results = {r.call_id: r for r in step.results}
        for call in step.tool_calls:
            result = results.get(call.id)
            if result is not None:
                observation = cut(result.content)
            elif call.id in waiting:
                observation = "not run: waiting for approval"
            else:
                observation = "not run"
            lines.append(f"step {step.index} | {call_text(call)} | {observation} | {tokens}")
    lines.append(f"-> {state.status}, {state.stop_reason or 'no exit recorded (still running or cut off)'}"
                 f"{': ' + state.report if state.report else ''}")
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
@db_option
def show(run_id: str, wide: bool, db: str | None) -> None:
    """The seed's table for RUN_ID: step | call | observation | tokens so far, then the stop reason."""
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
