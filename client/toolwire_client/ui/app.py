"""The console's routes: the runs list, a run, the decisions, their live streams, a decision, an answer to a tool's
question, log in and out. Every route is behind guard.Guard (Host/Origin, an Origin on every POST); every page needs
a session (guard.py); every decision and answer needs the session's CSRF token and goes through fleet/decide.py, as
`toolwire approve` and `toolwire answer` do."""

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib.resources import files
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import anyio
from starlette.applications import Starlette
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from toolwire_client.assembly.trusted_servers import ServerTrust, resume_trust
from toolwire_client.fleet.decide import decide_and_wake
from toolwire_client.fleet.overview import FleetInfo, FleetView
from toolwire_client.run.state import PendingCall
from toolwire_client.store import ApprovalRefused, RunNotFound, SqlRunStore, answers, open_store
from toolwire_client.store import approvals as decisions
from toolwire_client.ui import pages
from toolwire_client.ui.forms import FormRefused, form_values
from toolwire_client.ui.guard import Guard, LoginRefused, Session, Sessions, csrf_ok, set_cookie
from toolwire_client.ui.live import fragment_stream
from toolwire_client.ui.people import EVERYONE, Person
from toolwire_client.ui.reads import (
    may_decide,
    run_rows,
    run_view,
    seen_answers,
    seen_decisions,
    waiting_calls,
    waiting_question,
)
from toolwire_client.ui.resumes import LocalResumes
from toolwire_shared.elicitation import InputAnswer
from toolwire_shared.host_origin import HostOriginRule

STATIC = {"live.js": "text/javascript", "live-worker.js": "text/javascript", "ui.css": "text/css"}
REASON_CHARS = 2000
ANSWER_CHARS = 64_000
"""A form's answer is a few fields (as `toolwire answer --json`): anything longer is a mistake or an attempt to fill
the store."""
_BACK = re.compile(r"/(runs/[A-Za-z0-9_.:@-]{1,200}|decisions)?")
"""Where a decision may send the browser back to: a page of this console, never another site."""
_RUN_PAGE = re.compile(r"/runs/([^/]{1,200})")
WATCHED_MAX = 32
"""Pages one live stream keeps current (a browser's open tabs of this console): a bound on the work one asks for."""
DECIDED_SHOWN = 20


@dataclass(frozen=True)
class UiSettings:
    db: str | None
    host: str = "127.0.0.1"
    port: int = 8400
    people: dict[str, Person] | None = None
    """token -> Person, the tokens file's people (people.py); None: no login (loopback only)."""
    trust: ServerTrust = field(default_factory=lambda: resume_trust(None))
    """Which tool servers a run resumed here may start (as `toolwire resume --servers`)."""
    trace_url: str | None = None
    """A tracing backend's page of one trace, with `{trace_id}` in it."""
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()


class Console:
    """What the routes share while the app runs: the store, the sessions, the fleet view, local resumes."""

    store: SqlRunStore
    resumes: LocalResumes

    def __init__(self, settings: UiSettings) -> None:
        self.settings = settings
        self.sessions = Sessions(settings.people)
        self.fleet = FleetView(settings.db)

    async def fleet_info(self) -> FleetInfo | None:
        return await self.fleet.read(self.store)


def build_app(settings: UiSettings) -> ASGIApp:
    console = Console(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        console.store = await open_store(settings.db, connections=4)
        try:
            async with anyio.create_task_group() as group:
                console.resumes = LocalResumes(console.store, settings.trust, group)
                yield
                group.cancel_scope.cancel()
        finally:
            console.fleet.close()
            await console.store.aclose()

    routes = _routes(console)
    app = Starlette(routes=routes, lifespan=lifespan)
    rule = HostOriginRule(settings.host, settings.port, settings.allowed_hosts, settings.allowed_origins)
    return Guard(app, rule)


Handler = Callable[[Request], Awaitable[Response]]


def _routes(console: Console) -> list[Route]:

    def store() -> SqlRunStore:
        return console.store  # opened in the lifespan

    sessions = console.sessions

    def session_of(request: Request) -> tuple[Session | None, str | None]:
        """The visitor's session, and a new session id to set when one was started for them (no login needed):
        once per request, so the page's forms carry the token of the session its cookie names."""
        if not hasattr(request.state, "session"):
            session, sid = sessions.of(request), None
            if session is None and not sessions.login_required:
                sid, session = sessions.start(EVERYONE)
            request.state.session, request.state.sid = session, sid
        return request.state.session, request.state.sid

    def who(session: Session) -> str:
        return session.who or f"{decisions.default_approver()} (the OS user)"

    async def page(request: Request, title: str, body: str, live: str | None) -> Response:
        session, sid = session_of(request)
        if session is None:
            return RedirectResponse("/login", 303)
        count = len(await waiting_calls(store(), session.person))
        flash, session.flash = session.flash, []
        csrf = session.csrf if sessions.login_required else None
        html = pages.layout(
            title, body, live=live, viewer=session.viewer, who=who(session), csrf=csrf, waiting=count, flash=flash
        )
        response = HTMLResponse(html)
        if sid:
            set_cookie(response, request, sid)
        return response

    def session_here(request: Request) -> Session:
        """The session of a page behind login_first (there is one)."""
        session, _ = session_of(request)
        assert session is not None
        return session

    async def runs_parts(person: Person, status: str, text: str) -> dict[str, str]:
        return {
            "fleet": pages.fleet_fragment(await console.fleet_info()),
            "runs": pages.runs_fragment(await run_rows(store(), status, text, person)),
            "waiting-count": pages.waiting_badge(len(await waiting_calls(store(), person))),
        }

    async def run_parts(person: Person, run_id: str, csrf: str) -> dict[str, str]:
        view = await run_view(store(), run_id, person)
        waiting = await waiting_calls(store(), person, run_id)
        return {
            "run-head": pages.run_head(view.root, console.settings.trace_url),
            "decide": pages.decide_fragment(waiting, csrf, f"/runs/{run_id}"),
            "resume": pages.resume_fragment(console.resumes.notes.get(run_id, "")),
            "steps": pages.steps_fragment(view),
            "waterfall": pages.waterfall_fragment(view.root),
            "tree": pages.tree_fragment(view),
            "waiting-count": pages.waiting_badge(len(await waiting_calls(store(), person))),
        }

    async def decisions_parts(person: Person, csrf: str) -> dict[str, str]:
        waiting = await waiting_calls(store(), person)
        return {
            "decide": pages.decide_fragment(waiting, csrf, "/decisions"),
            "decided": pages.decided_fragment(await seen_decisions(store(), person, DECIDED_SHOWN)),
            "answered": pages.answered_fragment(await seen_answers(store(), person, DECIDED_SHOWN)),
            "waiting-count": pages.waiting_badge(len(waiting)),
        }

    def login_first(handler: Handler) -> Handler:
        """A page reads nothing of the store for a visitor who must log in first (not even whether a run exists)."""

        async def guarded(request: Request) -> Response:
            session, _ = session_of(request)
            return RedirectResponse("/login", 303) if session is None else await handler(request)

        return guarded

    async def runs_page(request: Request) -> Response:
        status, text = request.query_params.get("status", ""), request.query_params.get("q", "")
        parts = await runs_parts(session_here(request).person, status, text)
        body = pages.runs_body(parts["fleet"], parts["runs"], status, text)
        return await page(request, "runs", body, "/?" + urlencode({"status": status, "q": text}))

    async def run_page(request: Request) -> Response:
        run_id, session = request.path_params["run_id"], session_here(request)
        try:
            view = await run_view(store(), run_id, session.person)
        except RunNotFound as exc:
            return HTMLResponse(pages.refused_page("No such run", str(exc), "/"), 404)
        waiting = await waiting_calls(store(), session.person, run_id)
        decide = pages.decide_fragment(waiting, session.csrf, f"/runs/{run_id}")
        note = console.resumes.notes.get(run_id, "")
        body = pages.run_body(view, decide, note, console.settings.trace_url)
        return await page(request, f"run {run_id}", body, f"/runs/{run_id}")

    async def decisions_page(request: Request) -> Response:
        session = session_here(request)
        parts = await decisions_parts(session.person, session.csrf)
        return await page(
            request,
            "decisions",
            pages.decisions_body(parts["decide"], parts["decided"], parts["answered"]),
            "/decisions",
        )

    async def watched_parts(session: Session, watched: str) -> dict[str, str]:
        """The fragments of the page at `watched` (a page's own path and query, as its data-live says)."""
        url = urlsplit(watched)
        query = dict(parse_qsl(url.query))
        if url.path == "/":
            return await runs_parts(session.person, query.get("status", ""), query.get("q", ""))
        if url.path == "/decisions":
            return await decisions_parts(session.person, session.csrf)
        run = _RUN_PAGE.fullmatch(url.path)
        if run is None:
            return {}
        try:
            return await run_parts(session.person, unquote(run.group(1)), session.csrf)
        except RunNotFound:
            return {}

    async def events(request: Request) -> Response:
        """One stream for every page a browser has open (static/live-worker.js shares it between its tabs)."""
        session = sessions.of(request)
        if session is None:
            return Response("log in first", 401)
        watched = sorted(set(request.query_params.getlist("watch")))[:WATCHED_MAX]
        return fragment_stream(request, watched, lambda page: watched_parts(session, page), lambda: session.still_open)

    async def checked(request: Request) -> tuple[Session, FormData, str] | Response:
        """A decision's session, form and page to go back to, or the refusal when the form carries no valid CSRF
        token of a session (a forged cross-site post, a stale or foreign tab)."""
        form = await request.form()
        back = str(form.get("next", "/"))
        back = back if _BACK.fullmatch(back) else "/"
        session = sessions.of(request)
        if session is None or not csrf_ok(session, form.get("csrf")):
            said = "this form is not from a page this console gave you (no session, or a stale or forged token); "
            return HTMLResponse(pages.refused_page("Not recorded", said + "open the page again", back), 403)
        return session, form, back

    async def not_theirs(session: Session, run_id: str, call_id: str, back: str) -> Response | None:
        """The refusal, recording nothing, when the person may not decide this call (another agent's run, a tool
        not theirs): a run they may not see reads as no such run."""
        try:
            if await may_decide(store(), run_id, call_id, session.person):
                return None
        except RunNotFound as exc:
            return HTMLResponse(pages.refused_page("Not recorded", str(exc), back), 404)
        said = f"{session.who} may not decide {call_id} of run {run_id} (the console's tokens file says what they may)"
        return HTMLResponse(pages.refused_page("Not recorded", said, back), 403)

    async def goes_on(run_id: str, workflow: str | None) -> str:
        """After a decision or an answer: the fleet run was woken, or the local run is resumed here once nothing
        is left for a person."""
        if workflow:
            return f"the worker fleet goes on with it (workflow {workflow})"
        return await console.resumes.after_decision(await decisions.root_run(store(), run_id))

    async def decide(request: Request) -> Response:
        run_id, call_id = request.path_params["run_id"], request.path_params["call_id"]
        got = await checked(request)
        if isinstance(got, Response):
            return got
        session, form, back = got
        if refusal := await not_theirs(session, run_id, call_id, back):
            return refusal
        decision, reason = form.get("decision"), str(form.get("reason", "")).strip()
        shown = str(form.get("hash", "")) or None
        if decision not in ("approve", "reject") or len(reason) > REASON_CHARS:
            said = f"a decision is approve or reject, with a reason of at most {REASON_CHARS} characters"
            return HTMLResponse(pages.refused_page("Not recorded", said, back), 400)

        async def record(s: SqlRunStore) -> PendingCall:
            if decision == "approve":
                return await decisions.approve(s, run_id, call_id, shown_hash=shown, by=session.who)
            return await decisions.reject(s, run_id, call_id, reason, shown_hash=shown, by=session.who)

        try:
            pending, workflow = await decide_and_wake(console.settings.db, store(), run_id, record)
        except (ApprovalRefused, RunNotFound) as exc:
            return HTMLResponse(pages.refused_page("Not recorded", str(exc), back), 409)
        verb = pending.decided_as
        said = f"{verb} {pending.call.name} (call {call_id}) of run {run_id} as {pending.decided_by}"
        session.flash.append(f"{said}; {await goes_on(run_id, workflow)}")
        return RedirectResponse(back, 303)

    async def answer(request: Request) -> Response:
        """A person's answer to a tool's question: read from the generated form and checked against the schema
        (forms.py; a misfit shows the form again with why, recording nothing), then recorded by
        store/answers.answer through fleet/decide.py, exactly as `toolwire answer` does."""
        run_id, call_id = request.path_params["run_id"], request.path_params["call_id"]
        got = await checked(request)
        if isinstance(got, Response):
            return got
        session, form, back = got
        if refusal := await not_theirs(session, run_id, call_id, back):
            return refusal
        action = form.get("action")
        posted = {k: v for k, v in form.items() if k.startswith("f.") and isinstance(v, str)}
        if action not in ("accept", "decline", "cancel") or sum(map(len, posted.values())) > ANSWER_CHARS:
            said = f"an answer is accept, decline or cancel, with at most {ANSWER_CHARS} characters of values"
            return HTMLResponse(pages.refused_page("Not recorded", said, back), 400)
        try:
            asked = await waiting_question(store(), run_id, call_id, session.person)
        except RunNotFound as exc:
            return HTMLResponse(pages.refused_page("Not recorded", str(exc), back), 409)
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
        try:
            pending, workflow = await decide_and_wake(
                console.settings.db,
                store(),
                run_id,
                lambda s: answers.answer(s, run_id, call_id, given, by=session.who),
            )
        except (ApprovalRefused, RunNotFound) as exc:
            return HTMLResponse(pages.refused_page("Not recorded", str(exc), back), 409)
        what = {"accept": "answered", "decline": "declined", "cancel": "cancelled"}[given.action]
        said = f"{what} the question of {pending.call.name} (call {call_id}) of run {run_id} as {pending.decided_by}"
        session.flash.append(f"{said}; {await goes_on(run_id, workflow)}")
        return RedirectResponse(back, 303)

    async def login(request: Request) -> Response:
        if not sessions.login_required:
            return RedirectResponse("/", 303)
        if request.method == "GET":
            return HTMLResponse(pages.login_page())
        form = await request.form()
        client = request.client.host if request.client else ""
        started = sessions.login(client, str(form.get("name", "")), str(form.get("token", "")))
        if isinstance(started, LoginRefused):
            return HTMLResponse(pages.login_page(started.said), started.status)
        response = RedirectResponse("/", 303)
        set_cookie(response, request, started[0])
        return response

    async def logout(request: Request) -> Response:
        session = sessions.of(request)
        form = await request.form()
        if session is not None and csrf_ok(session, form.get("csrf")):
            sessions.end(request)
        return RedirectResponse("/login" if sessions.login_required else "/", 303)

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return Response("not found", 404)
        body = files("toolwire_client.ui").joinpath("static", name).read_bytes()
        return Response(body, media_type=STATIC[name])

    return [
        Route("/", login_first(runs_page)),
        Route("/runs/{run_id}", login_first(run_page)),
        Route("/decisions", login_first(decisions_page)),
        Route("/events", events),
        Route("/runs/{run_id}/calls/{call_id}/decide", decide, methods=["POST"]),
        Route("/runs/{run_id}/requests/{call_id}/answer", answer, methods=["POST"]),
        Route("/login", login, methods=["GET", "POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/static/{name}", static),
    ]
