"""The console's two POSTs: a decision on a call, and an answer to a tool's question. Each needs the session's CSRF
token (and an Origin: guard.py) and a person who may decide the call, and is recorded through fleet/decide.py, as
`toolwire approve`, `reject` and `answer` do. A refusal is raised (refusals.py draws it) and records nothing."""

import re

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from toolwire_client.fleet.decide import decide_and_wake
from toolwire_client.run.state import PendingCall
from toolwire_client.store import SqlRunStore, answers
from toolwire_client.store import approvals as decisions
from toolwire_client.ui import pages
from toolwire_client.ui.auth import session_of
from toolwire_client.ui.forms import FormRefused, form_values
from toolwire_client.ui.guard import Session, csrf_ok
from toolwire_client.ui.reads import may_decide, waiting_question
from toolwire_client.ui.refusals import NotRecorded
from toolwire_client.ui.state import Console, console_of
from toolwire_client.ui.views import page
from toolwire_shared.elicitation import InputAnswer

REASON_CHARS = 2000
ANSWER_CHARS = 64_000
"""A form's answer is a few fields (as `toolwire answer --json`): anything longer is a mistake or an attempt to fill
the store."""
_BACK = re.compile(r"/(runs/[A-Za-z0-9_.:@-]{1,200}|decisions)?")
"""Where a decision may send the browser back to: a page of this console, never another site."""


async def decide(request: Request) -> Response:
    run_id, call_id = request.path_params["run_id"], request.path_params["call_id"]
    session, form, back = await checked(request)
    console = console_of(request)
    await may_decide_here(console, session, run_id, call_id)
    decision, reason = form.get("decision"), str(form.get("reason", "")).strip()
    shown = str(form.get("hash", "")) or None
    if decision not in ("approve", "reject") or len(reason) > REASON_CHARS:
        said = f"a decision is approve or reject, with a reason of at most {REASON_CHARS} characters"
        raise NotRecorded(400, said)

    async def record(s: SqlRunStore) -> PendingCall:
        if decision == "approve":
            return await decisions.approve(s, run_id, call_id, shown_hash=shown, by=session.who)
        return await decisions.reject(s, run_id, call_id, reason, shown_hash=shown, by=session.who)

    pending, workflow = await decide_and_wake(console.settings.db, console.store, run_id, record)
    said = f"{pending.decided_as} {pending.call.name} (call {call_id}) of run {run_id} as {pending.decided_by}"
    session.flash.append(f"{said}; {await goes_on(console, run_id, workflow)}")
    return RedirectResponse(back, 303)


async def answer(request: Request) -> Response:
    """A person's answer to a tool's question: read from the generated form and checked against the schema
    (forms.py; a misfit shows the form again with why, recording nothing), then recorded by store/answers.answer
    through fleet/decide.py, exactly as `toolwire answer` does."""
    run_id, call_id = request.path_params["run_id"], request.path_params["call_id"]
    session, form, back = await checked(request)
    console = console_of(request)
    await may_decide_here(console, session, run_id, call_id)
    action = form.get("action")
    posted = {k: v for k, v in form.items() if k.startswith("f.") and isinstance(v, str)}
    if action not in ("accept", "decline", "cancel") or sum(map(len, posted.values())) > ANSWER_CHARS:
        said = f"an answer is accept, decline or cancel, with at most {ANSWER_CHARS} characters of values"
        raise NotRecorded(400, said)
    asked = await waiting_question(console.store, run_id, call_id, session.person)
    content = None
    if action == "accept" and asked is not None and asked.pending.input and asked.pending.input.mode == "form":
        try:
            content = form_values(asked.pending.input.requested_schema or {}, posted)
        except FormRefused as exc:
            body = pages.answer_refused_body(asked, session.csrf, back, str(exc), posted)
            shown = await page(request, "answer not recorded", body, None)
            shown.status_code = 400
            return shown
    given = InputAnswer(action=action, content=content)
    pending, workflow = await decide_and_wake(
        console.settings.db,
        console.store,
        run_id,
        lambda s: answers.answer(s, run_id, call_id, given, by=session.who),
    )
    what = {"accept": "answered", "decline": "declined", "cancel": "cancelled"}[given.action]
    said = f"{what} the question of {pending.call.name} (call {call_id}) of run {run_id} as {pending.decided_by}"
    session.flash.append(f"{said}; {await goes_on(console, run_id, workflow)}")
    return RedirectResponse(back, 303)


async def checked(request: Request) -> tuple[Session, FormData, str]:
    """A POST's session, form and page to go back to (also `request.state.back`, for a refusal's link); refused
    when the form carries no valid CSRF token of a session (a forged cross-site post, a stale or foreign tab)."""
    form = await request.form()
    back = str(form.get("next", "/"))
    back = request.state.back = back if _BACK.fullmatch(back) else "/"
    session = session_of(request)
    if session is None or not csrf_ok(session, form.get("csrf")):
        said = "this form is not from a page this console gave you (no session, or a stale or forged token); "
        raise NotRecorded(403, said + "open the page again")
    return session, form, back


async def may_decide_here(console: Console, session: Session, run_id: str, call_id: str) -> None:
    """Refused, recording nothing, when the person may not decide this call (another agent's run, a tool not
    theirs): a run they may not see reads as no such run (RunNotFound)."""
    if not await may_decide(console.store, run_id, call_id, session.person):
        said = f"{session.who} may not decide {call_id} of run {run_id} (the console's tokens file says what they may)"
        raise NotRecorded(403, said)


async def goes_on(console: Console, run_id: str, workflow: str | None) -> str:
    """After a decision or an answer: the fleet run was woken, or the local run is resumed here once nothing is left
    for a person."""
    if workflow:
        return f"the worker fleet goes on with it (workflow {workflow})"
    return await console.resumes.after_decision(await decisions.root_run(console.store, run_id))
