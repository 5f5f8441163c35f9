"""Cancel a legacy-session tool call when its HTTP client goes away.

On the 2025-11-25 session path the SDK cancels a handler only when the client sends `notifications/cancelled`; a
client that simply disconnects leaves the tool running to the end. This middleware watches the POST that carried a
request: if the connection drops before the response is complete, it delivers `notifications/cancelled` for that
request id into the same session, so the tool is cancelled exactly as if the client had asked."""

import json
import logging
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolwire_server.transports.bodies import discard, one_shot, read_body, replay
from toolwire_shared import errors

log = logging.getLogger("toolwire.server")

SESSION_HEADER = b"mcp-session-id"


class CancelOnDisconnect:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _has_session(scope):
            await self.app(scope, receive, send)
            return
        body, disconnected = await read_body(receive, self.max_body_bytes)
        if disconnected:
            return
        if len(body) > self.max_body_bytes:  # chunked body without content-length: let the SDK's limit answer 413
            await self.app(scope, replay(body, receive), send)
            return
        request_ids = _request_ids(body)
        if not request_ids:
            await self.app(scope, replay(body, receive), send)
            return
        done = False
        replayed = False

        async def watched_send(message: Message) -> None:
            nonlocal done
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                done = True
            await send(message)

        async def watched_receive() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            message = await receive()
            if message["type"] == "http.disconnect" and not done:
                await self._cancel(scope, request_ids)
            return message

        await self.app(scope, watched_receive, watched_send)

    async def _cancel(self, scope: Scope, request_ids: list[Any]) -> None:
        for request_id in request_ids:
            log.info("client went away during request %s: cancelling it", errors.quoted(request_id))
            payload = json.dumps(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": request_id, "reason": "client disconnected"},
                }
            ).encode()
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(payload)).encode()))
            try:
                await self.app({**scope, "headers": headers}, one_shot(payload), discard)
            except Exception as exc:  # the session may already be gone; nothing left to cancel
                log.debug("synthetic cancel for %s failed: %s", errors.quoted(request_id), exc)


def _has_session(scope: Scope) -> bool:
    return any(key.lower() == SESSION_HEADER for key, _ in scope["headers"])


def _request_ids(body: bytes) -> list[Any]:
    """Ids of the JSON-RPC requests (not notifications or responses) in the body."""
    try:
        data = json.loads(body)
    except ValueError:
        return []
    messages = data if isinstance(data, list) else [data]
    return [m["id"] for m in messages if isinstance(m, dict) and "method" in m and m.get("id") is not None]
