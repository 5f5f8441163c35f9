"""The MCP surface beside tools that a registry holds: resources, prompts, completion and change notifications.
Their handlers, filtered by the caller's grant, are catalog.py and listen.py."""
