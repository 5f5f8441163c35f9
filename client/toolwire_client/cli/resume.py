"""`toolwire resume RUN` continues a saved run in this process, under a claim."""

import sys

import click
from rich.console import Console

from toolwire_client.assembly.agents import build_agent
from toolwire_client.assembly.resume import resume_run
from toolwire_client.assembly.trusted_servers import resume_trust
from toolwire_client.cli._json import json_option
from toolwire_client.cli._store import db_option, with_store
from toolwire_client.cli.answer import input_hint
from toolwire_client.cli.outcome import say_outcome
from toolwire_client.cli.run import interrupted, note_server_log, print_server_log, verbose_option
from toolwire_client.cli.server_output import ServerOutput
from toolwire_client.cli.servers import servers_file_option
from toolwire_client.config import RunConfig, ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.mistakes import run_exit
from toolwire_client.run.state import RunState
from toolwire_client.store import SqlRunStore
from toolwire_client.store.base import RunStore
from toolwire_shared.terminal import inert_json, shown


@click.command("resume")
@click.argument("run_id")
@db_option
@servers_file_option(
    "Tool servers to start for the run, by the names it saved (for a run this user's toolwire did not save)."
)
@verbose_option
@json_option("Print the final run state as JSON on stdout (the lines on stderr).")
def resume(run_id: str, db: str | None, servers_file: str | None, verbose: bool, as_json: bool) -> None:
    """Continue RUN_ID: run approved calls, answer rejected ones, settle calls cut off by a crash, go on."""
    output = ServerOutput(run_id, verbose=verbose)
    trust = resume_trust(servers_file)

    async def build(config: RunConfig, store: RunStore, servers: list[ServerSpec] | None = None) -> Agent:
        return build_agent(config, store=store, stderr_sink=output.line, servers=servers)

    async def work(store: SqlRunStore) -> RunState:
        return await resume_run(store, run_id, build, trust)

    try:
        state = with_store(db, work)
    except KeyboardInterrupt:
        interrupted(Console(soft_wrap=True), run_id, db)
    except Exception as exc:
        note_server_log(exc, output)
        raise
    say_outcome(state, err=as_json)
    print_server_log(Console(soft_wrap=True, stderr=as_json), output)
    if state.status == "waiting_for_approval":
        hint = input_hint(state)
        hint = hint or f"see `toolwire approvals`, then `toolwire approve {state.run_id} CALL` or `toolwire reject ...`"
        click.echo(shown(hint), err=as_json)
    if as_json:
        click.echo(inert_json(state.model_dump_json(indent=2)))
    sys.exit(run_exit(state.status))
