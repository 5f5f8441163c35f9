"""The console's app: Guard (Host/Origin on every request, an Origin on every POST, the security headers: guard.py)
around Starlette, with the session backend (auth.py) under Starlette's AuthenticationMiddleware, the endpoints
(views.py: the pages; live.py: their live stream; actions.py: a decision, an answer; login.py), the refusals as
exception handlers (refusals.py) and ui/static served by StaticFiles. What the endpoints share is
`app.state.console` (state.py); its store is opened, and the runs it resumes run, in the lifespan."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from toolwire_client.store import open_store
from toolwire_client.ui import actions, live, login, refusals, views
from toolwire_client.ui.auth import SessionBackend
from toolwire_client.ui.guard import Guard
from toolwire_client.ui.resumes import LocalResumes
from toolwire_client.ui.state import Console, UiSettings
from toolwire_shared.host_origin import HostOriginRule


def routes() -> list[BaseRoute]:
    return [
        Route("/", views.runs_page),
        Route("/runs/{run_id}", views.run_page),
        Route("/decisions", views.decisions_page),
        Route("/events", live.events),
        Route("/runs/{run_id}/calls/{call_id}/decide", actions.decide, methods=["POST"]),
        Route("/runs/{run_id}/requests/{call_id}/answer", actions.answer, methods=["POST"]),
        Route("/login", login.login, methods=["GET", "POST"]),
        Route("/logout", login.logout, methods=["POST"]),
        Mount("/static", StaticFiles(packages=[("toolwire_client.ui", "static")]), name="static"),
    ]


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    console: Console = app.state.console
    console.store = await open_store(console.settings.db, connections=4)
    try:
        async with anyio.create_task_group() as group:
            console.resumes = LocalResumes(console.store, console.settings.trust, group)
            yield
            group.cancel_scope.cancel()
    finally:
        console.fleet.close()
        await console.store.aclose()


def build_app(settings: UiSettings) -> ASGIApp:
    console = Console(settings)
    app = Starlette(
        routes=routes(),
        middleware=[Middleware(AuthenticationMiddleware, backend=SessionBackend(console.sessions))],
        exception_handlers=refusals.HANDLERS,
        lifespan=lifespan,
    )
    app.state.console = console
    rule = HostOriginRule(settings.host, settings.port, settings.allowed_hosts, settings.allowed_origins)
    return Guard(app, rule)
