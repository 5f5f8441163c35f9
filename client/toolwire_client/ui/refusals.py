"""What the console answers when it will not do what was asked, raised by the endpoints and drawn here, once (the
app's exception handlers): a page for a visitor who must log in first sends them to the login page; a decision or
an answer refused records nothing and says why on a page linking back to where it was made (`request.state.back`,
set by actions.checked); a run the person may not see reads as no such run."""

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from toolwire_client.store import ApprovalRefused, RunNotFound
from toolwire_client.ui import pages


class LoginFirst(Exception):
    """A page asked for by a visitor with no session, where the console needs a login: nothing of the store is read
    for them (not even whether a run exists)."""


class NotRecorded(Exception):
    """A decision or an answer refused before anything was recorded: the HTTP status and why."""

    def __init__(self, status: int, said: str) -> None:
        super().__init__(said)
        self.status, self.said = status, said


def _back(request: Request) -> str:
    back: str = getattr(request.state, "back", "/")
    return back


def login_first(request: Request, exc: Exception) -> Response:
    return RedirectResponse("/login", 303)


def not_recorded(request: Request, exc: Exception) -> Response:
    status = exc.status if isinstance(exc, NotRecorded) else 409  # ApprovalRefused: the store's reason
    return HTMLResponse(pages.refused_page("Not recorded", str(exc), _back(request)), status)


def no_such_run(request: Request, exc: Exception) -> Response:
    if request.method == "POST":
        return HTMLResponse(pages.refused_page("Not recorded", str(exc), _back(request)), 404)
    return HTMLResponse(pages.refused_page("No such run", str(exc), "/"), 404)


HANDLERS = {LoginFirst: login_first, NotRecorded: not_recorded, ApprovalRefused: not_recorded, RunNotFound: no_such_run}
