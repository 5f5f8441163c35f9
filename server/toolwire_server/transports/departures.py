"""A connection's notice that its client went away, for the request it is serving: what lets the HTTP fast path
cancel a call whose client left without a task per call waiting on `receive()` for the disconnect. The server's
protocol (slow_clients.py) puts one in each request's scope and fires it when the connection is lost."""

from collections.abc import Callable, Mapping
from typing import Any

DEPARTURE_SCOPE_KEY = "toolwire.departure"


class Departure:
    """Per connection: at most one callback (HTTP/1.1 serves one request at a time), run once the client is gone."""

    __slots__ = ("_callback", "gone")

    def __init__(self) -> None:
        self.gone = False
        self._callback: Callable[[], Any] | None = None

    def watch(self, callback: Callable[[], Any]) -> None:
        """Run `callback` when the client goes away (now, if it already has) until `unwatch`."""
        if self.gone:
            callback()
        else:
            self._callback = callback

    def unwatch(self) -> None:
        self._callback = None

    def fire(self) -> None:
        """The connection is lost."""
        self.gone = True
        callback, self._callback = self._callback, None
        if callback is not None:
            callback()


def departure_of(scope: Mapping[str, Any]) -> Departure | None:
    """The request's Departure, when the server running the app is ours (another ASGI server gives none)."""
    found = scope.get(DEPARTURE_SCOPE_KEY)
    return found if isinstance(found, Departure) else None
