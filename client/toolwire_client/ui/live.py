"""The live part of a page: a server-sent event stream that sends the page's fragments again whenever one of them
changed in the store (static/live.js swaps them in). The store has no change feed, so the stream reads it every
POLL_S; an unchanged page sends nothing but a keep-alive comment now and then."""

import json
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
from starlette.requests import Request
from starlette.responses import StreamingResponse

POLL_S = 0.4
KEEPALIVE_EVERY = 40
"""Polls between two keep-alive comments when nothing changed (about 16 s: under common proxies' idle timeouts)."""

Render = Callable[[str], Awaitable[dict[str, str]]]
"""A watched page's fragments now: element id -> its HTML."""


def fragment_stream(
    request: Request, watched: list[str], render: Render, open_: Callable[[], bool]
) -> StreamingResponse:
    """One stream for the pages in `watched` (every tab a browser has open on this console: static/live-worker.js
    shares one stream between them, so tabs never use up the browser's few connections to one host). Each event
    is {page: {element id: HTML}}, with only what changed. It ends when its session does (`open_`): the browser
    then connects again with the cookie it holds now, and renders for whoever that is."""

    async def events() -> AsyncIterator[str]:
        sent: dict[tuple[str, str], str] = {}
        quiet = 0
        while open_() and not await request.is_disconnected():
            changed: dict[str, dict[str, str]] = {}
            for page in watched:
                for key, html in (await render(page)).items():
                    if sent.get((page, key)) != html:
                        sent[page, key] = html
                        changed.setdefault(page, {})[key] = html
            if changed:
                quiet = 0
                yield f"event: fragments\ndata: {json.dumps(changed)}\n\n"
            else:
                quiet += 1
                if quiet % KEEPALIVE_EVERY == 0:
                    yield ": still here\n\n"
            await anyio.sleep(POLL_S)

    headers = {"cache-control": "no-store", "x-accel-buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)
