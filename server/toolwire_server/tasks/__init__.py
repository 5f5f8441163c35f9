"""MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a long tool call answered with a handle."""
