"""A stdio MCP server nobody here wrote, broken one way: raw JSON-RPC lines, so it can say what the SDK's own server
never would. `python broken_server.py MODE`:

- `list_error`: answers `tools/list` with a JSON-RPC error of its own words;
- `exit_after_initialize`: answers `initialize`, writes a line to stderr and exits;
- `no_type`: lists `bad_tool` (its inputSchema has no "type") beside `good_tool` (echoes its text)."""

import json
import sys

LIST_ERROR = "orders backend unavailable (code 7)"
DYING_WORDS = "broken_server: lost the license server, exiting"
GOOD = {
    "name": "good_tool",
    "description": "Echoes its text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
BAD = {"name": "bad_tool", "description": "Its schema has no type.", "inputSchema": {"properties": {"x": {}}}}


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main(mode: str) -> None:
    for line in sys.stdin:
        request = json.loads(line)
        method, rid = request.get("method"), request.get("id")
        if rid is None:
            continue  # a notification
        if method == "initialize":
            version = request["params"]["protocolVersion"]
            info = {"name": "broken", "version": "0"}
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info},
                }
            )
            if mode == "exit_after_initialize":
                print(DYING_WORDS, file=sys.stderr, flush=True)
                sys.exit(3)
        elif method == "tools/list" and mode == "list_error":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": LIST_ERROR}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [BAD, GOOD]}})
        elif method == "tools/call":
            text = request["params"].get("arguments", {}).get("text", "")
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        else:  # server/discover and the rest: a handshake-era server
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main(sys.argv[1])
