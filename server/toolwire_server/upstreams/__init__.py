"""Other MCP servers behind this one: their tools and prompts re-served under a prefix, their resources under a URI
namespace, behind the same grants, limits, audit and tracing (`[upstreams.NAME]` in the server's configuration
file)."""
