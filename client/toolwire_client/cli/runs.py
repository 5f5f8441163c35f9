"""`toolwire runs` lists saved runs; `toolwire resume RUN` continues one in this process, under a claim."""

import click
from rich.console import Console
from rich.table import Table

from toolwire_client.cli._store import db_option, with_store
from toolwire_client.durable import build_agent, resume_run
from toolwire_client.state import RunState
from toolwire_client.store import RunSummary, SqlRunStore


def _when(summary: RunSummary, field: str) -> str:
    return str(getattr(summary, field).astimezone().strftime("%Y-%m-%d %H:%M:%S"))


@click.command("runs")
@db_option
@click.option("--limit", default=50, show_default=True, help="How many runs, newest first.")
def runs(db: str | None, limit: int) -> None:
    """List saved runs: id, task, status, steps, tokens, started, updated."""

    async def work(store: SqlRunStore) -> list[RunSummary]:
        return await store.list_runs(limit)

    table = Table("id", "task", "status", "steps", "tokens", "started", "updated")
    for s in with_store(db, work):
        task = s.task if len(s.task) <= 60 else s.task[:57] + "..."
        table.add_row(
            s.run_id, task, s.status, str(s.steps), str(s.tokens), _when(s, "started_at"), _when(s, "updated_at")
        )
    Console(width=200).print(table)


@click.command("resume")
@click.argument("run_id")
@db_option
def resume(run_id: str, db: str | None) -> None:
    """Continue RUN_ID: run approved calls, answer rejected ones, settle calls cut off by a crash, go on."""

    async def work(store: SqlRunStore) -> RunState:
        return await resume_run(store, run_id, build_agent)

    state = with_store(db, work)
    click.echo(f"{state.run_id}: {state.status} ({state.stop_reason})")
    if state.report:
        click.echo(state.report)
    if state.final_answer:
        click.echo(f"answer: {state.final_answer}")
    if state.status == "waiting_for_approval":
        click.echo(f"see `toolwire approvals`, then `toolwire approve {state.run_id} CALL` or `toolwire reject ...`")
