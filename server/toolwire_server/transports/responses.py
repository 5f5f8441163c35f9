"""The HTTP refusals the server writes itself (401, 403, 408, 413, 429, 503): a JSON body a person can read."""

import json
from typing import Any

from starlette.types import Send


async def send_json(
    send: Send, status: int, body: dict[str, Any], headers: dict[str, str] | None = None, *, close: bool = False
) -> None:
    """One complete response; `close` ends the connection after it (the client is not sending what it should)."""
    payload = json.dumps(body).encode()
    raw_headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw_headers += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    if close:
        raw_headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": raw_headers})
    await send({"type": "http.response.body", "body": payload})
