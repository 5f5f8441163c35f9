"""Legacy HTTP sessions (Mcp-Session-Id), guarded: a session is bound to the agent (token) that opened it, so
another token using its id is refused with a readable 403; and no client can lock others out by opening sessions:
each agent has its own cap (at the cap its oldest idle session is closed for the new one, 429 if all are busy), and
the server-wide cap closes the oldest idle session of anyone (503 if none is idle).

The SDK's session manager keeps the sessions; this middleware, in front of it, only watches which requests open one
(the `Mcp-Session-Id` of a successful answer), counts the requests in flight on each, and closes a session by
sending it a DELETE, as its client would. Modern (2026-07-28) requests carry no session and pass untouched."""

import logging
import time
from dataclasses import dataclass
from typing import Any

from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolwire_server import texts
from toolwire_server.app import GRANT_SCOPE_KEY
from toolwire_server.auth.access import Grant
from toolwire_server.transports.bodies import discard, one_shot
from toolwire_server.transports.responses import send_json
from toolwire_shared import errors

log = logging.getLogger("toolwire.server")

SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")


@dataclass
class _Session:
    agent: str
    user: Any
    """What the Gate put in scope["user"] for its opener: a DELETE that closes it must come as the same user."""
    host: bytes
    in_flight: int = 0
    last_used: float = 0.0


class SessionGuard:
    def __init__(
        self, app: ASGIApp, *, mcp_path: str, max_sessions: int, max_per_agent: int, idle_timeout_s: float
    ) -> None:
        self.app, self.mcp_path = app, mcp_path
        self.max_sessions, self.max_per_agent, self.idle_timeout_s = max_sessions, max_per_agent, idle_timeout_s
        self._sessions: dict[str, _Session] = {}
        self._opening: dict[str, int] = {}
        """Requests that may open a session, per agent, not yet answered: they count against the caps."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        grant = scope.get(GRANT_SCOPE_KEY)
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.mcp_path or not isinstance(grant, Grant):
            await self.app(scope, receive, send)
            return
        session_id = _header(scope, SESSION_HEADER)
        if session_id is not None:
            await self._in_session(session_id, grant, scope, receive, send)
        elif may_open_session(scope):
            await self._opening_request(grant, scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _in_session(self, session_id: str, grant: Grant, scope: Scope, receive: Receive, send: Send) -> None:
        session = self._sessions.get(session_id)
        if session is None:  # unknown, expired or closed: the SDK answers 404
            await self.app(scope, receive, send)
            return
        if session.agent != grant.agent:
            log.warning(
                "403: agent %r used session %s of agent %r", grant.agent, errors.quoted(session_id), session.agent
            )
            await send_json(send, 403, {"error": "forbidden", "message": texts.SESSION_NOT_YOURS})
            return
        status: list[int] = []
        session.in_flight += 1
        try:
            await self.app(scope, receive, _watch(send, status))
        finally:
            session.in_flight -= 1
            session.last_used = time.monotonic()
        if status and (status[0] == 404 or (scope["method"] == "DELETE" and status[0] < 300)):
            self._sessions.pop(session_id, None)

    async def _opening_request(self, grant: Grant, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = await self._make_room(grant.agent, scope)
        if refusal is not None:
            await send_json(send, refusal[0], {"error": "too_many_sessions", "message": refusal[1]})
            return
        opened: list[_Session] = []

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                headers = message.get("headers", [])
                session_id = next((v.decode() for k, v in headers if k.lower() == SESSION_HEADER), None)
                if session_id is not None:  # known before the answer is complete, so its next request is recognised
                    host = _header(scope, b"host") or ""
                    session = _Session(grant.agent, scope.get("user"), host.encode(), in_flight=1)
                    self._sessions[session_id] = session
                    opened.append(session)
                    self._opening[grant.agent] -= 1  # counted as a session from now on, not twice
            await send(message)

        self._opening[grant.agent] = self._opening.get(grant.agent, 0) + 1
        try:
            await self.app(scope, receive, watched)
        finally:
            if not opened:
                self._opening[grant.agent] -= 1
            for session in opened:
                session.in_flight -= 1
                session.last_used = time.monotonic()

    async def _make_room(self, agent: str, scope: Scope) -> tuple[int, str] | None:
        """Close the oldest idle session where a cap is reached; the refusal (status, message) if none is idle."""
        # Any POST without a session id counts: only an initialize succeeds in opening one, and the SDK answers it.
        self._forget_expired()
        mine = [(sid, s) for sid, s in self._sessions.items() if s.agent == agent]
        if len(mine) + self._opening.get(agent, 0) >= self.max_per_agent:
            why = f"agent {agent!r} is at its cap of {self.max_per_agent}"
            if not await self._close_oldest_idle(mine, why, scope):
                return 429, texts.too_many_sessions(agent, self.max_per_agent)
        everyone = list(self._sessions.items())
        if len(everyone) + sum(self._opening.values()) >= self.max_sessions:
            why = f"the server is at its cap of {self.max_sessions}"
            if not await self._close_oldest_idle(everyone, why, scope):
                return 503, texts.server_full(self.max_sessions)
        return None

    async def _close_oldest_idle(self, candidates: list[tuple[str, _Session]], why: str, scope: Scope) -> bool:
        idle = [(s.last_used, sid) for sid, s in candidates if s.in_flight == 0]
        if not idle:
            return False
        _, session_id = min(idle)
        session = self._sessions.pop(session_id)  # forgotten before the await: nobody else picks it
        log.info("closing idle session %s of agent %r: %s", errors.quoted(session_id), session.agent, why)
        headers = [(b"host", session.host), (SESSION_HEADER, session_id.encode())]
        close = {**scope, "method": "DELETE", "headers": headers, "user": session.user}  # as its own client would
        try:
            await self.app(close, one_shot(b""), discard)
        except Exception as exc:  # the SDK may have ended it meanwhile; it is gone either way
            log.debug("closing session %s: %s", errors.quoted(session_id), exc)
        return True

    def _forget_expired(self) -> None:
        """Sessions idle past the idle timeout: the SDK has closed them already."""
        cutoff = time.monotonic() - self.idle_timeout_s
        for session_id in [sid for sid, s in self._sessions.items() if s.in_flight == 0 and s.last_used < cutoff]:
            del self._sessions[session_id]


def may_open_session(scope: Scope) -> bool:
    """A POST with no session id in the handshake era (or with no protocol version): an initialize would open a
    session. Modern (2026-07-28) requests name their version and never open one."""
    if scope["method"] != "POST" or _header(scope, SESSION_HEADER) is not None:
        return False
    return _header(scope, _VERSION_HEADER) in (None, *HANDSHAKE_PROTOCOL_VERSIONS)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _watch(send: Send, status: list[int]) -> Send:
    async def watching(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        await send(message)

    return watching
