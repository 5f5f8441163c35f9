"""Logging in and out. A login checks a person's name and token against the tokens file (guard.Sessions.login:
never an agent's token, failures throttled) and sets the session's cookie; a logout needs the session's CSRF token.
Without a tokens file there is nothing to log in to: every visitor has a session of their own (auth.py)."""

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from toolwire_client.ui import pages
from toolwire_client.ui.auth import session_of
from toolwire_client.ui.guard import LoginRefused, csrf_ok, set_cookie
from toolwire_client.ui.state import console_of


async def login(request: Request) -> Response:
    sessions = console_of(request).sessions
    if not sessions.login_required:
        return RedirectResponse("/", 303)
    if request.method == "GET":
        return HTMLResponse(pages.login_page())
    form = await request.form()
    client = request.client.host if request.client else ""
    started = sessions.login(client, str(form.get("name", "")), str(form.get("token", "")))
    if isinstance(started, LoginRefused):
        return HTMLResponse(pages.login_page(started.said), started.status)
    response = RedirectResponse("/", 303)
    set_cookie(response, request, started[0])
    return response


async def logout(request: Request) -> Response:
    sessions = console_of(request).sessions
    session = session_of(request)
    form = await request.form()
    if session is not None and csrf_ok(session, form.get("csrf")):
        sessions.end(request)
    return RedirectResponse("/login" if sessions.login_required else "/", 303)
