"""`toolwire answer` gives a person's answer to the question a tool asked a paused run (MCP elicitation); `resume`
(or the worker fleet, which this wakes) sends the call again with it. Who may answer: whoever may write the run
store, as with `approve`; the answer is recorded once, with who gave it."""

import json
from typing import Any

import click

from toolwire_client.cli._json import json_option, printing_json
from toolwire_client.cli._store import db_option, with_store
from toolwire_client.cli.approvals import AS_HELP
from toolwire_client.fleet.decide import decide_and_wake
from toolwire_client.run.state import PendingCall, RunState
from toolwire_client.store import SqlRunStore
from toolwire_client.store.answers import AnswerRefused, answer, waiting_for_input
from toolwire_shared.elicitation import InputAnswer
from toolwire_shared.terminal import inert_json, shown

MAX_JSON_CHARS = 64_000
"""A form answer is a few fields; anything longer is a mistake (or an attempt to fill the store)."""


@click.command("answer")
@click.argument("run_id")
@click.argument("call_id", required=False)
@click.option("--value", default=None, metavar="'{...}'", help="Accept, with these form values (a JSON object).")
@click.option("--accept", is_flag=True, help="Accept a URL question (you went to the URL).")
@click.option("--decline", is_flag=True, help="Decline to answer; the tool is told so.")
@click.option("--cancel", is_flag=True, help="Dismiss the question without a choice; the tool is told so.")
@click.option("--as", "answerer", default=None, metavar="NAME", help=AS_HELP)
@json_option("Print what was answered as JSON.", old_value="--value")
@db_option
def answer_command(
    run_id: str,
    call_id: str | None,
    value: str | None,
    as_json: str | None,
    accept: bool,
    decline: bool,
    cancel: bool,
    answerer: str | None,
    db: str | None,
) -> None:
    """Answer the question CALL_ID of RUN_ID (or its only question) asked: `toolwire approvals` shows it."""
    print_json, old_value = printing_json(as_json, "--value")
    if old_value is not None and value is not None:
        raise click.UsageError("give the form's values once: --value '{...}'")
    given = _given(value if old_value is None else old_value, accept, decline, cancel)

    async def work(store: SqlRunStore) -> tuple[PendingCall, str | None]:
        return await decide_and_wake(db, store, run_id, lambda s: answer(s, run_id, call_id, given, by=answerer))

    pending, workflow = with_store(db, work)
    what = json.dumps(given.content, sort_keys=True) if given.content is not None else given.action
    go_on = f"the worker fleet goes on with it (workflow {workflow})" if workflow else f"`toolwire resume {run_id}`"
    if print_json:
        said: dict[str, Any] = {"run_id": run_id, "call_id": pending.call.id, "tool": pending.call.name}
        said["action"] = given.action
        said |= {"content": given.content, "by": pending.decided_by, "workflow": workflow}
        click.echo(inert_json(json.dumps(said, indent=2)))
        return
    click.echo(
        shown(
            f"answered {pending.call.id}: {pending.call.name} of run {run_id} with {what}, by {pending.decided_by}; "
            f"{go_on}"
        )
    )


def _given(value: str | None, accept: bool, decline: bool, cancel: bool) -> InputAnswer:
    chosen = [name for name, on in (("--value", value is not None), ("--accept", accept), ("--decline", decline),
                                    ("--cancel", cancel)) if on]  # fmt: skip
    if len(chosen) != 1:
        said = f"not {' and '.join(chosen)}" if chosen else "none was given"
        raise AnswerRefused(f"give one of --value '{{...}}', --accept, --decline or --cancel ({said})")
    if value is None:
        return InputAnswer(action="accept" if accept else "decline" if decline else "cancel")
    if len(value) > MAX_JSON_CHARS:
        raise AnswerRefused(f"--value is {len(value)} characters; an answer is at most {MAX_JSON_CHARS}")
    try:
        content: Any = json.loads(value)
    except ValueError as exc:
        raise AnswerRefused(f'--value is not JSON ({exc}); e.g. --value \'{{"name": "Ada", "party": 4}}\'') from None
    if not isinstance(content, dict):
        raise AnswerRefused(f"--value must be a JSON object of the form's values, not {type(content).__name__}")
    return InputAnswer(action="accept", content=content)


def input_hint(state: RunState) -> str | None:
    """What to do for a run that waits for an answer (the run/resume/wait commands print it), or None."""
    asked = waiting_for_input(state)
    if not asked:
        return None
    p = asked[0]
    how = "--accept (after visiting the URL)" if p.input and p.input.mode == "url" else "--value '{...}'"
    return f"see `toolwire approvals`, then `toolwire answer {state.run_id} {p.call.id} {how}` (or --decline)"
