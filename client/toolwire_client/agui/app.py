"""The AG-UI endpoint: POST /ag-ui with a RunAgentInput, answered by an SSE stream of AG-UI events (stream.py).

A thread is a toolwire run: the input's threadId is the run's id. A thread the store does not hold is a new run of
the served agent on the last user message; a thread it holds is followed (replayed from the store, then live); a
resume (the input's `resume` entries, answering the interrupts the last stream ended with) records each decision as
`toolwire approve`/`answer` would and goes on with the run here (or lets the worker fleet go on with it). Who may
use it: a person of the tokens file, by `Authorization: Bearer TOKEN`, their token or, with the file's [oauth] table,
their OAuth access token (ui/people.py: the runs of their agents, the calls of their tools); without a tokens file,
bound to loopback only, the OS user. The Host/Origin rule of the tool server applies to every request."""

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
from ag_ui.core import RunAgentInput, UserMessage
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from toolwire_client.agui import resumes
from toolwire_client.agui.driver import Driver
from toolwire_client.agui.fleet_driver import FleetDriver
from toolwire_client.agui.stream import Leg, events, sent_before
from toolwire_client.assembly.trusted_servers import ServerTrust, resume_trust
from toolwire_client.config import RunConfig
from toolwire_client.fleet.door import FleetDoor
from toolwire_client.run.state import RunState
from toolwire_client.store import RunNotFound, SqlRunStore, open_store
from toolwire_client.store import approvals as decisions
from toolwire_client.ui.people import EVERYONE, Person
from toolwire_shared.host_origin import HostOriginRule, request_headers
from toolwire_shared.oauth.callers import CallerAuth, Callers

PATH = "/ag-ui"
THREAD_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
EXAMPLE = '{"threadId": "t1", "runId": "r1", "messages": [{"id": "m1", "role": "user", "content": "Refund A123"}]}'
BODY_BYTES = 1_000_000
PERSON = "toolwire.person"


@dataclass(frozen=True)
class AgUiSettings:
    config: RunConfig
    """The served agent: every new thread is a run of it (its name is the agent a person must see)."""
    db: str | None = None
    host: str = "127.0.0.1"
    port: int = 8500
    people: Callers[Person] | None = None
    """The tokens file's people by token and OAuth subject (ui/people.py); None: no tokens file, the OS user
    (loopback only)."""
    trust: ServerTrust = field(default_factory=lambda: resume_trust(None))
    fleet: bool = False
    """Runs driven by the worker fleet (`--fleet`): the endpoint submits and wakes, and only reads the store."""


class Endpoint:
    """What the endpoint holds while the app runs: the store and the driver of the runs it starts and resumes."""

    store: SqlRunStore
    driver: Driver | FleetDriver

    def __init__(self, settings: AgUiSettings) -> None:
        self.settings = settings

    async def handle(self, request: Request) -> Response:
        person: Person | None = EVERYONE if self.settings.people is None else request.scope.get(PERSON)
        if person is None:  # the PersonGate sets it on every POST it lets in
            return _refused(401, "send a person's token of the tokens file: Authorization: Bearer TOKEN")
        body = await request.body()
        if len(body) > BODY_BYTES:
            return _refused(413, f"a RunAgentInput is at most {BODY_BYTES} bytes")
        try:
            given = RunAgentInput.model_validate_json(body)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            return _refused(400, f"not a RunAgentInput ({where}: {first['msg']}); e.g. {EXAMPLE}")
        if not THREAD_ID.fullmatch(given.thread_id):
            said = f"threadId {given.thread_id[:40]!r}: a thread is a run id, 1-128 of A-Z a-z 0-9 _ . : -"
            return _refused(400, said)
        try:
            leg = await self._leg(given, person)
        except resumes.Refused as exc:
            return _refused(exc.status, str(exc))
        headers = {"cache-control": "no-store", "x-accel-buffering": "no"}
        stream = events(self.store, leg, self.driver.trouble)
        return StreamingResponse(stream, media_type="text/event-stream", headers=headers)

    async def _leg(self, given: RunAgentInput, person: Person) -> Leg:
        """What this request's stream is: a new run started, a run followed from its start, or a run resumed
        after the interrupt the front end answers (the records it has already are not sent again)."""
        run_id, store = given.thread_id, self.store
        try:
            saved: RunState | None = await store.load(run_id)
        except RunNotFound:
            saved = None
        agent = saved.agent_name if saved is not None else self.settings.config.name
        if not person.sees(agent) and saved is not None:  # another person's run reads as no run at all
            raise resumes.Refused(404, f"no run {run_id}")
        if not person.sees(agent):
            raise resumes.Refused(403, f"{person.name} may not run {agent}")
        leg = Leg(given, run_id, person.sees)
        if given.resume:
            if saved is None:
                raise resumes.Refused(404, f"no run {run_id} to resume")
            leg.sent = await sent_before(store, saved, person.sees)  # the front end has it, up to the interrupt
            root = await decisions.root_run(store, run_id)
            woken = await resumes.record(self.settings.db, store, root, given.resume, person)
            if not woken and await decisions.decided(store, await store.load(root)):
                self.driver.go_on(root)
        elif saved is None and run_id not in self.driver.driving:
            task = _task(given)
            if task is None:
                raise resumes.Refused(400, f"a new thread needs a user message with text; e.g. {EXAMPLE}")
            self.driver.start(run_id, task)
        return leg


def build_app(settings: AgUiSettings) -> ASGIApp:
    endpoint = Endpoint(settings)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        endpoint.store = store = await open_store(settings.db, connections=4)
        fleet = await FleetDoor(settings.db, store, settings.config).open() if settings.fleet else None
        try:
            async with anyio.create_task_group() as group:
                if fleet is not None:
                    endpoint.driver = FleetDriver(fleet, group)
                else:
                    endpoint.driver = Driver(store, settings.config, settings.trust, group)
                yield
                group.cancel_scope.cancel()
        finally:
            if fleet is not None:
                fleet.close()
            await store.aclose()

    async def about(request: Request) -> Response:
        return JSONResponse({"agent": settings.config.name, "protocol": "AG-UI", "post": PATH})

    routes = [Route(PATH, endpoint.handle, methods=["POST"]), Route(PATH, about)]
    app = Starlette(routes=routes, lifespan=lifespan)
    gated: ASGIApp = app if settings.people is None else PersonGate(app, settings.people, settings.config.name)
    return HostOriginCheck(gated, HostOriginRule(settings.host, settings.port))


def _refused(status: int, said: str) -> Response:
    return JSONResponse({"error": said}, status)


def _task(given: RunAgentInput) -> str | None:
    """The last user message's text: the task of a new run."""
    for message in reversed(given.messages):
        if isinstance(message, UserMessage):
            content = message.content
            text = content if isinstance(content, str) else "\n".join(getattr(p, "text", "") or "" for p in content)
            return text.strip() or None
    return None


class HostOriginCheck:
    """The tool server's Host/Origin rule on every request, before any route (a page on another name must not
    reach a loopback endpoint by DNS rebinding, nor a page on another origin post to it)."""

    def __init__(self, app: ASGIApp, rule: HostOriginRule) -> None:
        self.app, self.rule = app, rule

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (refusal := self.rule.check(*request_headers(scope))) is not None:
            await JSONResponse({"error": refusal.message}, refusal.status)(scope, receive, send)
            return
        await self.app(scope, receive, send)


class PersonGate:
    """A run's POST carries a person's bearer token of the tokens file or their OAuth access token (else 401/403,
    as the tool server answers); the protected-resource metadata is public."""

    def __init__(self, app: Starlette, people: Callers[Person], name: str) -> None:
        self.app, self.auth = app, CallerAuth(people, name, "person")
        self.auth.refresh_keys_while(app)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and await self.auth.metadata(scope, send):
            return
        if scope["type"] == "http" and scope["method"] == "POST":
            person = await self.auth.identify(scope, receive, send)
            if person is None:
                return
            scope[PERSON] = person
        await self.app(scope, receive, send)
