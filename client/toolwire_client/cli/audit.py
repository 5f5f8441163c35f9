"""`toolwire audit`: the tool server's audit trail (one record per call that reached it), filtered, as a table or
JSON. It reads the database the server's configuration file names in [audit] (or `--db`), read-only."""

import json
import re
import time
from datetime import datetime

import click
from rich.console import Console
from rich.table import Table

from toolwire_server.policy.audit import read_records
from toolwire_server.policy.config import ConfigError, load_config
from toolwire_shared.terminal import inert

_SPAN = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def _since(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    found = _SPAN.match(value.strip())
    if found is None:
        raise click.BadParameter(f"{value!r}: a span such as 90s, 15m, 1h or 7d", ctx, param)
    return time.time() - float(found[1]) * _UNIT_S[found[2]]


@click.command("audit")
@click.option(
    "--config",
    "config_file",
    type=click.Path(exists=True, dir_okay=False),
    help="The server's configuration file: read the audit database its [audit] table names.",
)
@click.option("--db", metavar="PATH|URL", help="The audit database instead: a SQLite file or a postgresql:// URL.")
@click.option("--agent", help="Only this agent's calls.")
@click.option("--tool", help="Only calls of this tool.")
@click.option("--since", callback=_since, metavar="SPAN", help="Only calls in the last SPAN (90s, 15m, 1h, 7d).")
@click.option("--outcome", metavar="KIND", help="Only calls that ended so: ok, limited, refused, timeout, ...")
@click.option("--limit", default=200, show_default=True, type=click.IntRange(min=1), help="The newest N records.")
@click.option("--json", "as_json", is_flag=True, help="Print the records as a JSON list.")
def audit(
    config_file: str | None,
    db: str | None,
    agent: str | None,
    tool: str | None,
    since: float | None,
    outcome: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """Show the tool server's audit trail: time, agent, tool, outcome, latency, result size, trace, replica."""
    database = _database(config_file, db)
    try:
        records = read_records(database, agent=agent, tool=tool, outcome=outcome, since=since, limit=limit)
    except Exception as exc:  # sqlite3 / psycopg: a missing file, a database with no audit table, a refused login
        raise click.ClickException(f"cannot read the audit trail in {database}: {exc}") from exc
    if as_json:
        click.echo(json.dumps(records, indent=2))
        return
    table = Table("time", "agent", "tool", "outcome", "ms", "chars", "trace", "replica", box=None)
    for r in records:
        when = datetime.fromtimestamp(r["at"]).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        cells = (
            when,
            r["agent"],
            r["tool"],
            r["outcome"],
            f"{r['latency_ms']:.1f}",
            r["result_chars"],
            (r["trace_id"] or "-")[:16],
            r["replica"],
        )
        table.add_row(*map(inert, cells))
    Console(width=200).print(table)
    click.echo(f"{len(records)} records", err=True)


def _database(config_file: str | None, db: str | None) -> str:
    if (config_file is None) == (db is None):
        raise click.UsageError("give --config FILE (the server's configuration) or --db DATABASE, one of them")
    if db is not None:
        return db
    try:
        database = load_config(config_file or "").audit_database()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    if database is None:
        raise click.ClickException(f"{config_file} has no [audit] table: the server keeps no audit trail")
    return database
