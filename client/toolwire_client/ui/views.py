"""The console's pages (GET /, /runs/RUN, /decisions), each drawn for the session's person from what that person may
see of the store (reads.py), and their fragments: what the live stream (live.py) sends again when one changed."""

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from toolwire_client.store import approvals as decisions
from toolwire_client.ui import pages
from toolwire_client.ui.auth import page_session, started_id
from toolwire_client.ui.guard import Session, set_cookie
from toolwire_client.ui.people import Person
from toolwire_client.ui.reads import run_rows, run_view, seen_answers, seen_decisions, waiting_calls
from toolwire_client.ui.state import Console, console_of

DECIDED_SHOWN = 20


async def runs_parts(console: Console, person: Person, status: str, text: str) -> dict[str, str]:
    store = console.store
    return {
        "fleet": pages.fleet_fragment(await console.fleet_info()),
        "runs": pages.runs_fragment(await run_rows(store, status, text, person)),
        "waiting-count": pages.waiting_badge(len(await waiting_calls(store, person))),
    }


async def run_parts(console: Console, person: Person, run_id: str, csrf: str) -> dict[str, str]:
    store = console.store
    view = await run_view(store, run_id, person)
    waiting = await waiting_calls(store, person, run_id)
    return {
        "run-head": pages.run_head(view.root, console.settings.trace_url),
        "decide": pages.decide_fragment(waiting, csrf, f"/runs/{run_id}"),
        "resume": pages.resume_fragment(console.resumes.notes.get(run_id, "")),
        "steps": pages.steps_fragment(view),
        "waterfall": pages.waterfall_fragment(view.root),
        "tree": pages.tree_fragment(view),
        "waiting-count": pages.waiting_badge(len(await waiting_calls(store, person))),
    }


async def decisions_parts(console: Console, person: Person, csrf: str) -> dict[str, str]:
    store = console.store
    waiting = await waiting_calls(store, person)
    return {
        "decide": pages.decide_fragment(waiting, csrf, "/decisions"),
        "decided": pages.decided_fragment(await seen_decisions(store, person, DECIDED_SHOWN)),
        "answered": pages.answered_fragment(await seen_answers(store, person, DECIDED_SHOWN)),
        "waiting-count": pages.waiting_badge(len(waiting)),
    }


async def runs_page(request: Request) -> Response:
    session = page_session(request)
    status, text = request.query_params.get("status", ""), request.query_params.get("q", "")
    parts = await runs_parts(console_of(request), session.person, status, text)
    body = pages.runs_body(parts["fleet"], parts["runs"], status, text)
    return await page(request, "runs", body, "/?" + urlencode({"status": status, "q": text}))


async def run_page(request: Request) -> Response:
    """A run and the calls of it waiting for the person (RunNotFound for a run they may not see: refusals.py)."""
    session, console = page_session(request), console_of(request)
    run_id = request.path_params["run_id"]
    view = await run_view(console.store, run_id, session.person)
    waiting = await waiting_calls(console.store, session.person, run_id)
    decide = pages.decide_fragment(waiting, session.csrf, f"/runs/{run_id}")
    note = console.resumes.notes.get(run_id, "")
    body = pages.run_body(view, decide, note, console.settings.trace_url)
    return await page(request, f"run {run_id}", body, f"/runs/{run_id}")


async def decisions_page(request: Request) -> Response:
    session = page_session(request)
    parts = await decisions_parts(console_of(request), session.person, session.csrf)
    body = pages.decisions_body(parts["decide"], parts["decided"], parts["answered"])
    return await page(request, "decisions", body, "/decisions")


async def page(request: Request, title: str, body: str, live: str | None) -> Response:
    """`body` in the console's layout, for the session's person; the cookie of a session started for this request."""
    session, console = page_session(request), console_of(request)
    count = len(await waiting_calls(console.store, session.person))
    flash, session.flash = session.flash, []
    csrf = session.csrf if console.sessions.login_required else None
    html = pages.layout(
        title, body, live=live, viewer=session.viewer, who=who(session), csrf=csrf, waiting=count, flash=flash
    )
    response = HTMLResponse(html)
    if sid := started_id(request):
        set_cookie(response, request, sid)
    return response


def who(session: Session) -> str:
    return session.who or f"{decisions.default_approver()} (the OS user)"
