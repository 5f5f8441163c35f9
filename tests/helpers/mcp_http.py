"""Raw Streamable HTTP requests for tests that speak to a server without a client library: the headers every POST
to /mcp carries, and a handshake-era initialize."""

from typing import Any

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def initialize(client: str, version: str = "2025-11-25") -> dict[str, Any]:
    """A legacy `initialize` request from a client named `client` (200 and a session when let in)."""
    info = {"name": client, "version": "0"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": info}
    return {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}
