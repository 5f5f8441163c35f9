"""The session guard's count at the moment that raced in CI: a request whose answer (with its new session id) has
reached the client, but whose handler has not returned yet, is one session, not a session and an opening request.
The app below the guard answers like the SDK's session manager and holds the handler open on a gate, so the next
opening request arrives in exactly that window every time."""

from typing import Any

import anyio
from starlette.types import Message, Receive, Scope, Send

from toolwire_server.app import GRANT_SCOPE_KEY
from toolwire_server.auth.access import Grant
from toolwire_server.transports.sessions import SessionGuard

AGENT = Grant(agent="a", patterns=("*",))


class HeldOpenSessions:
    """Opens session s0, s1, ... on each POST, answers DELETE; an opening handler returns only when its gate is set."""

    def __init__(self, sessions: int) -> None:
        self.opened = 0
        self.closed: list[str] = []
        self.gates = [anyio.Event() for _ in range(sessions)]
        self.answered = [anyio.Event() for _ in range(sessions)]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        if scope["method"] == "DELETE":
            self.closed.append(headers[b"mcp-session-id"].decode())
            await _answer(send, [])
            return
        n, self.opened = self.opened, self.opened + 1
        await _answer(send, [(b"mcp-session-id", f"s{n}".encode())])
        self.answered[n].set()
        await self.gates[n].wait()


async def _answer(send: Send, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"{}"})


def _opening_post() -> Scope:
    return {"type": "http", "method": "POST", "path": "/mcp", "headers": [(b"host", b"t")], GRANT_SCOPE_KEY: AGENT}


async def _open(guard: SessionGuard) -> None:
    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        return None

    await guard(_opening_post(), receive, send)


async def test_a_just_answered_opening_is_counted_once_against_the_cap() -> None:
    app = HeldOpenSessions(3)
    guard = SessionGuard(app, mcp_path="/mcp", max_sessions=10, max_per_agent=3, idle_timeout_s=600)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_open, guard)
        await app.answered[0].wait()
        app.gates[0].set()  # s0: answered and returned, idle
        tasks.start_soon(_open, guard)
        await app.answered[1].wait()  # s1: answered, its handler not returned yet
        tasks.start_soon(_open, guard)  # s2 opens in that window
        await app.answered[2].wait()
        assert app.closed == []  # two sessions and one opening are under a cap of three: nothing to close
        for gate in app.gates:
            gate.set()
