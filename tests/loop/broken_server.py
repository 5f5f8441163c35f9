"""A stdio MCP server nobody here wrote, broken one way: raw JSON-RPC lines, so it can say what the SDK's own server
never would. `python broken_server.py MODE`:

- `list_error`: answers `tools/list` with a JSON-RPC error of its own words;
- `exit_after_initialize`: answers `initialize`, writes a line to stderr and exits;
- `no_type`: lists `bad_tool` (its inputSchema has no "type") beside `good_tool` (echoes its text);
- `legacy_tasks`: says it runs tools/call as 2025-11-25 tasks and lists `task_job` (runs only as a task), which
  misbehaves as its `how` says: `no_task` (answers a plain result), `fails` (its task reads failed), `stalls` (its
  task works for ever and asks to be polled once an hour); `tasks/cancel` is recorded in the file `TASK_CANCELS`."""

import json
import os
import sys

LIST_ERROR = "orders backend unavailable (code 7)"
DYING_WORDS = "broken_server: lost the license server, exiting"
GOOD = {
    "name": "good_tool",
    "description": "Echoes its text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
BAD = {"name": "bad_tool", "description": "Its schema has no type.", "inputSchema": {"properties": {"x": {}}}}
TASK_JOB = {
    "name": "task_job",
    "description": "Runs only as a task.",
    "inputSchema": {"type": "object", "properties": {"how": {"type": "string"}}, "required": ["how"]},
    "execution": {"taskSupport": "required"},
}
TASK_FAILED = "the backend fell over"
TASK_CANCELS = "TASK_CANCELS"
"""The environment variable naming the file a `tasks/cancel` is recorded in."""


def _task(task_id: str, status: str, message: str | None = None, poll_ms: int = 50) -> dict[str, object]:
    stamp = "2026-01-01T00:00:00Z"
    task = {"taskId": task_id, "status": status, "createdAt": stamp, "lastUpdatedAt": stamp, "ttl": 60000}
    return {**task, "pollInterval": poll_ms, **({"statusMessage": message} if message else {})}


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
            capabilities: dict[str, object] = {"tools": {}}
            if mode == "legacy_tasks":
                capabilities["tasks"] = {"cancel": {}, "requests": {"tools": {"call": {}}}}
            result = {"protocolVersion": version, "capabilities": capabilities, "serverInfo": info}
            send({"jsonrpc": "2.0", "id": rid, "result": result})
            if mode == "exit_after_initialize":
                print(DYING_WORDS, file=sys.stderr, flush=True)
                sys.exit(3)
        elif method == "tools/list" and mode == "list_error":
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32000, "message": LIST_ERROR}})
        elif method == "tools/list" and mode == "legacy_tasks":
            send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [TASK_JOB]}})
        elif method == "tools/call" and mode == "legacy_tasks":
            how = request["params"]["arguments"]["how"]
            if how == "no_task":
                send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "no task"}]}})
            else:
                poll_ms = 3_600_000 if how == "stalls" else 50
                send({"jsonrpc": "2.0", "id": rid, "result": {"task": _task(how, "working", poll_ms=poll_ms)}})
        elif method == "tasks/get":
            task_id = request["params"]["taskId"]
            status, message = ("failed", TASK_FAILED) if task_id == "fails" else ("working", None)
            send({"jsonrpc": "2.0", "id": rid, "result": _task(task_id, status, message)})
        elif method == "tasks/cancel":
            with open(os.environ[TASK_CANCELS], "a") as cancels:
                cancels.write(request["params"]["taskId"] + "\n")
            send({"jsonrpc": "2.0", "id": rid, "result": _task(request["params"]["taskId"], "cancelled")})
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
