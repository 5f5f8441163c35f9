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

Render = Callable[[], Awaitable[dict[str, str]]]
"""The page's fragments now: element id -> its HTML."""


def fragment_stream(request: Request, render: Render) -> StreamingResponse:
    async def events() -> AsyncIterator[str]:
        sent: dict[str, str] = {}
        quiet = 0
        while not await request.is_disconnected():
            parts = await render()
            changed = {key: html for key, html in parts.items() if sent.get(key) != html}
            if changed:
                sent.update(changed)
                quiet = 0
                yield f"event: fragments\ndata: {json.dumps(changed)}\n\n"
            else:
                quiet += 1
                if quiet % KEEPALIVE_EVERY == 0:
                    yield ": still here\n\n"
            await anyio.sleep(POLL_S)

    headers = {"cache-control": "no-store", "x-accel-buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)
