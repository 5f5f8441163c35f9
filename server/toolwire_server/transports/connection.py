"""What our server's protocol (slow_clients.py) tells the app about the connection a request came on, through the
request's scope: when the client goes away (so the HTTP fast path cancels a call whose client left without a task
per call waiting on `receive()` for the disconnect), and whether the request's whole body has arrived (so Gate
reads it without arming a deadline). Under another ASGI server there is none, and the app does without."""

from collections.abc import Callable, Mapping
from typing import Any

CONNECTION_SCOPE_KEY = "toolwire.connection"


class Connection:
    """One per connection. `gone`: the client went away. `body_in`: the last request begun on it has arrived
    whole (so every request before it has too). At most one callback (HTTP/1.1 serves one request at a time)."""

    __slots__ = ("_on_gone", "body_in", "gone")

    def __init__(self) -> None:
        self.gone = self.body_in = False
        self._on_gone: Callable[[], Any] | None = None

    def watch(self, callback: Callable[[], Any]) -> None:
        """Run `callback` when the client goes away (now, if it already has) until `unwatch`."""
        if self.gone:
            callback()
        else:
            self._on_gone = callback

    def unwatch(self) -> None:
        self._on_gone = None

    def lost(self) -> None:
        """The protocol's: the connection is lost."""
        self.gone = True
        callback, self._on_gone = self._on_gone, None
        if callback is not None:
            callback()


def connection_of(scope: Mapping[str, Any]) -> Connection | None:
    """The request's Connection, when the server running the app is ours."""
    found = scope.get(CONNECTION_SCOPE_KEY)
    return found if isinstance(found, Connection) else None
