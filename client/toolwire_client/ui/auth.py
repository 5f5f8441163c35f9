"""Who is asking: Starlette's AuthenticationMiddleware with the console's backend. A request is authenticated by its
session cookie alone (guard.Sessions): a session starts at a login with a person's name and token (login.py;
people.py, throttled by throttle.py) or, without a tokens file, when a visitor first opens a page. `request.user` is
then a SessionUser, else Starlette's UnauthenticatedUser. What the routes ask of it:

- a page (views.py): a session, else the login page; without a tokens file one is started for the visitor;
- the live stream (live.py): a session, else 401;
- a decision or an answer (actions.py): a session and its CSRF token, else 403."""

from starlette.authentication import AuthCredentials, AuthenticationBackend, BaseUser
from starlette.requests import HTTPConnection, Request

from toolwire_client.ui.guard import Session, Sessions
from toolwire_client.ui.people import EVERYONE
from toolwire_client.ui.refusals import LoginFirst
from toolwire_client.ui.state import console_of


class SessionUser(BaseUser):
    """The person behind an open session of this console."""

    def __init__(self, session: Session) -> None:
        self.session = session

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.session.who or ""

    @property
    def identity(self) -> str:
        return self.session.viewer


class SessionBackend(AuthenticationBackend):
    def __init__(self, sessions: Sessions) -> None:
        self.sessions = sessions

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        session = self.sessions.of(conn)
        return None if session is None else (AuthCredentials(["session"]), SessionUser(session))


def session_of(conn: HTTPConnection) -> Session | None:
    user = conn.user
    return user.session if isinstance(user, SessionUser) else None


def page_session(request: Request) -> Session:
    """The session a page is drawn for: the visitor's; without a tokens file, one started for them now (once per
    request, so the page's forms carry the token of the session its cookie names: started_id); else LoginFirst."""
    session = session_of(request)
    if session is not None:
        return session
    sessions = console_of(request).sessions
    if sessions.login_required:
        raise LoginFirst
    if not hasattr(request.state, "started"):
        request.state.started = sessions.start(EVERYONE)
    started: Session = request.state.started[1]
    return started


def started_id(request: Request) -> str | None:
    """The id of the session page_session started for this request (its cookie to set), if it started one."""
    started: tuple[str, Session] | None = getattr(request.state, "started", None)
    return started[0] if started else None
