"""Reading an HTTP request body once in ASGI middleware and handing it on: the whole body (or its first bytes past a
limit, enough to know it is too large), then a `receive` that replays it before the connection's own messages."""

from starlette.types import Message, Receive


async def read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    """(body, disconnected): the whole body, or its first bytes past `limit`."""
    chunks = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"", True
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False) or size > limit:
            return b"".join(chunks), False


def replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives `body` first, then whatever the connection says next (e.g. its disconnect)."""
    return put_back({"type": "http.request", "body": body, "more_body": False}, receive)


def put_back(first: Message, receive: Receive) -> Receive:
    """A `receive` that gives `first` (a message already taken), then the connection's own messages."""
    given = False

    async def again() -> Message:
        nonlocal given
        if not given:
            given = True
            return first
        return await receive()

    return again


def one_shot(payload: bytes) -> Receive:
    """A `receive` for a request made up inside the server: `payload`, then a disconnect."""
    sent = False

    async def once() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": payload, "more_body": False}

    return once


async def discard(message: Message) -> None:
    """A `send` for a request made up inside the server: its answer goes nowhere."""
    return None
