"""Who may use the console, and from where.

- Host and Origin: the tool server's rule (toolwire_shared.host_origin), on every request, before any route: a page
  on another name cannot reach the console by pointing that name at this machine, nor post to it from elsewhere.
- A POST must carry an Origin (browsers send one on every POST) that passes the rule, and the session's CSRF token:
  a forged cross-site form is refused twice over.
- Sessions: a random id in an HttpOnly, SameSite=Strict cookie, kept in this process only (a restart logs everyone
  out). Without a tokens file (bound to loopback only) every visitor gets one, and decides as the OS user, like the
  CLI; with one, a session starts only from a person's name and token (people.py: never an agent's token), decides
  under that name, and sees and decides only what the person may; failed logins are throttled (throttle.py).
- Every page is sent with a CSP allowing only this server's own script and styles, and may not be framed (an
  approve button in someone else's frame is a click away from being pressed for them).
"""

import secrets
import time
from dataclasses import dataclass, field
from html import escape

from starlette.requests import HTTPConnection, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolwire_client.ui.people import Person
from toolwire_client.ui.throttle import LoginThrottle
from toolwire_shared.host_origin import HostOriginRule, request_headers
from toolwire_shared.tokens import find_token

COOKIE = "toolwire_ui_session"
SESSION_S = 12 * 3600.0

SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        b"form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),  # no-referrer would make the browser send `Origin: null` on a POST
    (b"cache-control", b"no-store"),
]


@dataclass
class Session:
    person: Person
    """Who decides here, and what they may see and decide (people.py): EVERYONE for the OS user without a login."""
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    expires: float = field(default_factory=lambda: time.monotonic() + SESSION_S)
    flash: list[str] = field(default_factory=list)
    viewer: str = field(default_factory=lambda: secrets.token_urlsafe(9))
    """The session's public name, on its pages (not a secret: the live worker tells sessions apart by it)."""

    ended: bool = False
    """Logged out: a live stream of the session ends with it."""

    @property
    def still_open(self) -> bool:
        return not self.ended and self.expires >= time.monotonic()

    @property
    def who(self) -> str | None:
        """The approver recorded with a decision: the person's name, or None for the OS user (approvals.py)."""
        return self.person.name


@dataclass(frozen=True)
class LoginRefused:
    status: int
    said: str


class Sessions:
    """The console's sessions; `people` (token -> Person) None: no login, every visitor decides as the OS user."""

    def __init__(self, people: dict[str, Person] | None) -> None:
        self.people = people
        self.open: dict[str, Session] = {}
        self.throttle = LoginThrottle()

    @property
    def login_required(self) -> bool:
        return self.people is not None

    def of(self, conn: HTTPConnection) -> Session | None:
        sid = conn.cookies.get(COOKIE)
        session = self.open.get(sid) if sid else None
        if session is not None and session.expires < time.monotonic():
            self.open.pop(str(sid), None)
            return None
        return session

    def start(self, person: Person) -> tuple[str, Session]:
        self._forget_expired()
        sid = secrets.token_urlsafe(32)
        self.open[sid] = session = Session(person)
        return sid, session

    def login(self, client: str, name: str, token: str) -> tuple[str, Session] | LoginRefused:
        """A session for the person named, if the token is theirs; else why not (throttle.py counts the failure)."""
        people = self.people or {}
        account = name if any(p.name == name for p in people.values()) else None
        if self.throttle.refused(client, account):
            return LoginRefused(429, "too many failed logins from this address; try again in a minute")
        person = find_token(people, token)
        if person is None or person.name != name:
            self.throttle.failed(client, account)
            return LoginRefused(401, "that name and token are not a person of the console's tokens file")
        self.throttle.succeeded(client)
        return self.start(person)

    def end(self, conn: HTTPConnection) -> None:
        ended = self.open.pop(conn.cookies.get(COOKIE, ""), None)
        if ended is not None:
            ended.ended = True

    def _forget_expired(self) -> None:
        now = time.monotonic()
        for sid in [sid for sid, s in self.open.items() if s.expires < now]:
            del self.open[sid]


def set_cookie(response: Response, request: Request, sid: str) -> None:
    secure = request.url.scheme == "https" or request.headers.get("x-forwarded-proto") == "https"
    response.set_cookie(COOKIE, sid, max_age=int(SESSION_S), httponly=True, samesite="strict", secure=secure)


def csrf_ok(session: Session, sent: object) -> bool:
    return isinstance(sent, str) and secrets.compare_digest(session.csrf.encode(), sent.encode())


class Guard:
    """The outermost middleware: the Host/Origin rule on every request; an Origin required on every POST; the
    security headers on every response."""

    def __init__(self, app: ASGIApp, rule: HostOriginRule) -> None:
        self.app, self.rule = app, rule

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host, origin, local = request_headers(scope)
        refusal = self.rule.check(host, origin, local)
        if refusal is None and scope["method"] not in ("GET", "HEAD") and not origin:
            message = (
                "a form sent to this console must carry the Origin header every browser sends with a POST; "
                "this request had none, so it was not accepted"
            )
            await _refuse(send, 403, message)
            return
        if refusal is not None:
            await _refuse(send, refusal.status, refusal.message)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


async def _refuse(send: Send, status: int, message: str) -> None:
    body = f"<!doctype html><title>refused</title><p id=refused>{escape(message)}</p>\n".encode()
    headers = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})
