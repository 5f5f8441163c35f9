"""`toolwire replay RUN`: re-run a saved run with no network, model or tool server and say whether the path is the
same. Optional limit overrides show what a change to the harness would have done to this run."""

import json

import click

from toolwire_client.cli._json import json_option
from toolwire_client.cli._store import db_option, with_store
from toolwire_client.config import RunLimits, config_of
from toolwire_client.replay import ReplayOutcome, replay
from toolwire_client.store import SqlRunStore
from toolwire_shared.terminal import inert_json, shown


@click.command("replay")
@click.argument("run_id")
@click.option(
    "--max-steps", type=click.IntRange(min=1), help="Replay with this step limit instead of the recorded one."
)
@click.option(
    "--repeat-limit",
    type=click.IntRange(min=2),
    help="Replay with this repeated-call limit (the same call this many times is a loop; 2 or more).",
)
@click.option("--max-tokens", type=click.IntRange(min=1), help="Replay with this token budget.")
@json_option("Print the outcome as JSON: identical, the first difference, the replayed steps and calls.")
@db_option
def replay_command(
    run_id: str,
    max_steps: int | None,
    repeat_limit: int | None,
    max_tokens: int | None,
    as_json: bool,
    db: str | None,
) -> None:
    """Re-run RUN_ID from its record, offline: "identical" (exit 0) or the first difference (exit 1)."""

    async def work(store: SqlRunStore) -> ReplayOutcome:
        recorded = await store.load(run_id)
        limits = config_of(recorded).limits if recorded.config else None
        changes = {
            k: v
            for k, v in {"max_steps": max_steps, "repeat_limit": repeat_limit, "max_tokens": max_tokens}.items()
            if v is not None
        }
        if changes:
            if limits is None:
                raise ValueError(f"run {run_id} has no saved limits to change")
            limits = RunLimits.model_validate({**limits.model_dump(), **changes})
        return await replay(recorded, limits=limits)

    outcome = with_store(db, work)
    if as_json:
        said = {"run_id": run_id, "identical": outcome.identical, "difference": outcome.difference}
        said |= {"steps": len(outcome.replayed.steps), "tool_calls": len(outcome.sent)}
        said["status"] = outcome.replayed.status
        click.echo(inert_json(json.dumps(said, indent=2)))
    else:
        click.echo(shown(f"{run_id}: {outcome.describe()}"))
    if not outcome.identical:
        raise SystemExit(1)
