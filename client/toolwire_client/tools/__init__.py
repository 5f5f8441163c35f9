"""Where tools come from (MCP servers over stdio or HTTP, or in-process functions) and the ToolBox that calls them."""
