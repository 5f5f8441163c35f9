"""How a saved run stands, in the lines `resume` and `wait` print (light: `wait` imports no agent assembly)."""

import click

from toolwire_client import texts
from toolwire_client.run.state import RunState
from toolwire_shared.terminal import shown


def outcome_line(state: RunState) -> str:
    """`RUN: STATUS (WHY)`, as `resume` and `wait` print how a run stands."""
    return f"{state.run_id}: {texts.status_and_why(state.status, state.stop_reason)}"


def say_outcome(state: RunState, *, err: bool = False) -> None:
    """How a run ended, its report and its answer: `resume`'s and `wait`'s lines (on stderr under --json)."""
    click.echo(shown(outcome_line(state)), err=err)
    if state.report:
        click.echo(shown(state.report), err=err)
    if state.final_answer:
        click.echo(shown(f"answer: {state.final_answer}"), err=err)
