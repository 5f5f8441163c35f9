"""The agent loop: a message list, a model, tools over MCP, and a harness that owns every exit."""
