"""Legacy sessions when the tool server is one of several processes. A session lives in the memory of the process
that answered its `initialize`, so every later request of it must reach that process again:

* `ReplicaSessions` (`serve --http --replica NAME`, one replica per port behind a proxy): the session ids this
  replica issues are `NAME.<the SDK's id>`, so a proxy routes a session back to its replica by the id's prefix
  (deploy/nginx.conf maps it to the replica's port). The SDK keeps seeing its own ids; the prefix is taken off on
  the way in and put on on the way out.
* `NoSessions` (`serve --http --workers N`, N processes sharing one port): the kernel hands each connection to any
  of them, and nothing can route a session, so a request that would open one is refused with a JSON-RPC error that
  says why. Stateless 2026-07-28 requests pass untouched.
"""

import re

import mcp_types as types
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolwire_server import texts
from toolwire_server.transports.responses import send_json
from toolwire_server.transports.sessions import SESSION_HEADER, may_open_session
from toolwire_shared import errors

REPLICA_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
"""What a replica name may be: it goes into session ids (visible ASCII) and into the proxy's match on them."""


def check_replica_name(name: str) -> str:
    """`name`, or ValueError saying what a replica name may be."""
    if not REPLICA_NAME.fullmatch(name):
        raise ValueError(f"replica name {errors.quoted(name, 40)} must be 1-32 letters, digits, '-' or '_'")
    return name


class ReplicaSessions:
    def __init__(self, app: ASGIApp, *, replica: str, mcp_path: str) -> None:
        self.app, self.mcp_path = app, mcp_path
        self.prefix = f"{replica}.".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.mcp_path:
            await self.app(scope, receive, send)
            return
        headers = [(k, self._inward(v) if k.lower() == SESSION_HEADER else v) for k, v in scope["headers"]]

        async def outward(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [
                        (k, self.prefix + v if k.lower() == SESSION_HEADER else v) for k, v in message["headers"]
                    ],
                }
            await send(message)

        await self.app({**scope, "headers": headers}, receive, outward)

    def _inward(self, session_id: bytes) -> bytes:
        """The SDK's own id; an id without this replica's prefix is not one of its sessions, and is left for the
        SDK to answer 404 (the client then opens a new session)."""
        return session_id[len(self.prefix) :] if session_id.startswith(self.prefix) else session_id


class NoSessions:
    def __init__(self, app: ASGIApp, *, workers: int, mcp_path: str) -> None:
        self.app, self.mcp_path = app, mcp_path
        self.message = texts.sessions_off(workers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].rstrip("/") == self.mcp_path and may_open_session(scope):
            # The SDK's client surfaces a JSON-RPC error body at a 4xx status as the error of its request.
            error = {"code": types.INVALID_REQUEST, "message": self.message}
            await send_json(send, 400, {"jsonrpc": "2.0", "id": None, "error": error})
            return
        await self.app(scope, receive, send)
