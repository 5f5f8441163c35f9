"""`toolwire runs` lists saved runs (it imports no model, tool source or MCP: `resume` lives in cli/resume.py)."""

import json

import click
from rich.console import Console
from rich.table import Table

from toolwire_client.cli._store import db_option, store_name, with_store
from toolwire_client.store import RunSummary, SqlRunStore
from toolwire_client.store.tree import as_tree
from toolwire_shared.terminal import inert, shown


def _when(summary: RunSummary, field: str) -> str:
    return str(getattr(summary, field).astimezone().strftime("%Y-%m-%d %H:%M:%S"))


@click.command("runs")
@db_option
@click.option("--limit", default=50, show_default=True, type=click.IntRange(min=1), help="How many runs, newest first.")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as a JSON list.")
def runs(db: str | None, limit: int, as_json: bool) -> None:
    """List saved runs: id, task, status, steps, tokens, started, updated."""

    async def work(store: SqlRunStore) -> list[RunSummary]:
        return await store.list_runs(limit)

    found = with_store(db, work)
    if as_json:
        click.echo(json.dumps([s.model_dump(mode="json") for s in found], indent=2))
        return
    if not found:
        click.echo(shown(f"no saved runs in {store_name(db)}; `toolwire run` or `toolwire demo` saves one"))
        return
    table = Table("id", "task", "status", "steps", "tokens", "started", "updated")
    for depth, s in as_tree(found):
        task = s.task if len(s.task) <= 60 else s.task[:57] + "..."
        run_id = "  " * depth + s.run_id
        cells = (run_id, task, s.status, s.steps, s.tokens, _when(s, "started_at"), _when(s, "updated_at"))
        table.add_row(*map(inert, cells))
    Console(width=200).print(table)
