"""One MCP connection kit, for the client's McpSource and the server's upstreams alike: a supervisor with an injected
restart policy (supervisor.py, restarts.py), listings with pagination and schema repair (listing.py), the
classification of what went wrong (errors.py), and every private name of the `mcp` SDK in one module (sdk.py)."""
