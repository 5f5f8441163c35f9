"""The live part of a page: a server-sent event stream (sse-starlette) that sends the page's fragments again whenever
one of them changed in the store (static/live.js swaps them in). The store has no change feed, so the stream reads it
every POLL_S; an unchanged page sends nothing but a keep-alive comment now and then."""

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import parse_qsl, unquote, urlsplit

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from toolwire_client.store import RunNotFound
from toolwire_client.ui.auth import session_of
from toolwire_client.ui.guard import Session
from toolwire_client.ui.state import Console, console_of
from toolwire_client.ui.views import decisions_parts, run_parts, runs_parts

POLL_S = 0.4
KEEPALIVE_S = 16
"""Seconds between two keep-alive comments (under common proxies' idle timeouts)."""
WATCHED_MAX = 32
"""Pages one live stream keeps current (a browser's open tabs of this console): a bound on the work one asks for."""
_RUN_PAGE = re.compile(r"/runs/([^/]{1,200})")
SEP = "\n"

Render = Callable[[str], Awaitable[dict[str, str]]]
"""A watched page's fragments now: element id -> its HTML."""


async def events(request: Request) -> Response:
    """One stream for every page a browser has open (static/live-worker.js shares it between its tabs), each page
    given as `?watch=PATH`, drawn for the session's person."""
    session = session_of(request)
    if session is None:
        raise HTTPException(401, "log in first")
    console = console_of(request)
    watched = sorted(set(request.query_params.getlist("watch")))[:WATCHED_MAX]
    return fragment_stream(watched, lambda page: watched_parts(console, session, page), lambda: session.still_open)


async def watched_parts(console: Console, session: Session, watched: str) -> dict[str, str]:
    """The fragments of the page at `watched` (a page's own path and query, as its data-live says); none for a page
    that is not one of the console's, or a run the person may not see."""
    url = urlsplit(watched)
    query = dict(parse_qsl(url.query))
    if url.path == "/":
        return await runs_parts(console, session.person, query.get("status", ""), query.get("q", ""))
    if url.path == "/decisions":
        return await decisions_parts(console, session.person, session.csrf)
    run = _RUN_PAGE.fullmatch(url.path)
    if run is None:
        return {}
    try:
        return await run_parts(console, session.person, unquote(run.group(1)), session.csrf)
    except RunNotFound:
        return {}


def fragment_stream(watched: list[str], render: Render, open_: Callable[[], bool]) -> EventSourceResponse:
    """One stream for the pages in `watched` (every tab a browser has open on this console: static/live-worker.js
    shares one stream between them, so tabs never use up the browser's few connections to one host). Each event
    is {page: {element id: HTML}}, with only what changed. It ends when its session does (`open_`): the browser
    then connects again with the cookie it holds now, and renders for whoever that is; sse-starlette ends it when
    the browser goes away or the server stops."""

    async def changes() -> AsyncIterator[ServerSentEvent]:
        sent: dict[tuple[str, str], str] = {}
        while open_():
            changed: dict[str, dict[str, str]] = {}
            for page in watched:
                for key, html in (await render(page)).items():
                    if sent.get((page, key)) != html:
                        sent[page, key] = html
                        changed.setdefault(page, {})[key] = html
            if changed:
                yield ServerSentEvent(json.dumps(changed), event="fragments", sep=SEP)
            await anyio.sleep(POLL_S)

    return EventSourceResponse(
        changes(),
        ping=KEEPALIVE_S,
        ping_message_factory=lambda: ServerSentEvent(comment="still here", sep=SEP),
        sep=SEP,
    )
