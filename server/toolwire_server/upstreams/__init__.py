"""Other MCP servers behind this one: their tools re-served under a prefix, behind the same grants, limits, audit
and tracing (`[upstreams.NAME]` in the server's configuration file)."""
