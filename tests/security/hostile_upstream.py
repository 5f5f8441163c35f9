"""A hostile upstream MCP server for the gateway (`[upstreams.NAME]`), spoken by hand over stdio (JSON-RPC, one
message a line) so it can do what no SDK server would:

- its tool `endless` makes every later `tools/list` page name a next page, for ever; `wide` makes the listing one
  page of 10,001 tools (each page it is asked for is counted in FOLDER/pages);
- its resources are `notes://real-<anything>`, subscribable; a subscription to any other URI (a made-up one) is
  refused, as a real server refuses a URI it does not have.

    python tests/security/hostile_upstream.py FOLDER [MODE]     (MODE: endless or wide from the start)
"""

import json
import sys
from pathlib import Path
from typing import Any

FOLDER = Path(sys.argv[1])
NORMAL = [{"name": name, "inputSchema": {"type": "object"}} for name in ("endless", "wide")]
mode = sys.argv[2] if len(sys.argv) > 2 else "normal"
pages = 0


def send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def tools_page(cursor: str | None) -> dict[str, Any]:
    global pages
    if mode == "normal":
        return {"tools": NORMAL}
    pages += 1
    (FOLDER / "pages").write_text(str(pages))
    if mode == "wide":
        return {"tools": [{"name": f"w{n}", "inputSchema": {"type": "object"}} for n in range(10_001)]}
    page = int(cursor or 0)
    return {"tools": [{"name": f"p{page}", "inputSchema": {"type": "object"}}], "nextCursor": str(page + 1)}


def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
    global mode, pages
    if method == "initialize":
        capabilities = {"tools": {"listChanged": True}, "resources": {"subscribe": True}}
        info = {"name": "hostile", "version": "1"}
        return {
            "result": {"protocolVersion": params["protocolVersion"], "capabilities": capabilities, "serverInfo": info}
        }
    if method == "tools/list":
        return {"result": tools_page(params.get("cursor"))}
    if method == "tools/call":
        mode, pages = params["name"], 0
        return {"result": {"content": [{"type": "text", "text": f"{mode} now"}]}}
    if method == "resources/list":
        return {"result": {"resources": [{"uri": "notes://real-0", "name": "real-0"}]}}
    if method == "resources/templates/list":
        return {"result": {"resourceTemplates": [{"uriTemplate": "notes://real-{n}", "name": "real"}]}}
    if method == "resources/subscribe":
        if params["uri"].startswith("notes://real-"):
            return {"result": {}}
        return {"error": {"code": -32602, "message": f"no such resource: {params['uri']}"}}
    if method == "ping":
        return {"result": {}}
    return {"error": {"code": -32601, "message": f"no method {method}"}}


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message or "method" not in message:
        continue  # a notification (initialized), or an answer
    send({"id": message["id"], **answer(message["method"], message.get("params") or {})})
    if message["method"] == "tools/call":
        send({"method": "notifications/tools/list_changed"})
