"""The tasks extension spoken raw over Streamable HTTP (2026-07-28 envelope, routing headers), for tests that check
the server's answers without any client library in between."""

import json
from typing import Any

import httpx2

from helpers.mcp_http import MCP_HEADERS

VERSION = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"


def rpc(
    url: str,
    method: str,
    params: dict[str, Any],
    *,
    token: str | None = None,
    declare: bool = True,
    capabilities: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One request; its JSON-RPC response (with "result" or "error"). `capabilities`: more client capabilities to
    declare (e.g. elicitation) beside the tasks extension."""
    capabilities = {**(capabilities or {}), **({"extensions": {EXTENSION: {}}} if declare else {})}
    meta = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    headers = {**MCP_HEADERS, "Mcp-Method": method, "MCP-Protocol-Version": VERSION}
    name = params.get("taskId") or params.get("name")
    if name:
        headers["Mcp-Name"] = name
    if token:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": meta}}
    response = httpx2.post(url, json=body, headers=headers, timeout=30)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        lines = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        answers = [json.loads(line) for line in lines if line.strip()]
        found: dict[str, Any] = next(a for a in answers if "result" in a or "error" in a)
        return found
    answer: dict[str, Any] = response.json()
    return answer


def result(url: str, method: str, params: dict[str, Any], **options: Any) -> dict[str, Any]:
    answer = rpc(url, method, params, **options)
    assert "result" in answer, answer
    body: dict[str, Any] = answer["result"]
    return body
