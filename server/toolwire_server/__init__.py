"""The toolwire MCP tool server: a registry of plain functions served over stdio and Streamable HTTP.

Names load on first use, so `toolwire serve --help` (and every `toolwire` command that reaches this package) does
not import the MCP SDK and the HTTP stack; type checkers see them as plain imports."""

from typing import TYPE_CHECKING

from toolwire_shared.lazy import loader

if TYPE_CHECKING:
    from toolwire_server.app import build_server
    from toolwire_server.auth.access import ALL_TOOLS, Access, AccessConfigError, Grant, access_from_env, load_access
    from toolwire_server.functions.context import ToolContext
    from toolwire_server.functions.elicit import ElicitationUnavailable, Elicited, InputNeeded, RoundTrips
    from toolwire_server.limits import ServerLimits
    from toolwire_server.tools.loading import load_registry
    from toolwire_server.tools.registry import RegisteredTool, Registry
    from toolwire_server.transports.http import http_app, serve_http
    from toolwire_server.transports.stdio import serve_stdio

_WHERE = {
    "build_server": "app",
    "ALL_TOOLS": "auth.access",
    "Access": "auth.access",
    "AccessConfigError": "auth.access",
    "Grant": "auth.access",
    "access_from_env": "auth.access",
    "load_access": "auth.access",
    "ToolContext": "functions.context",
    "ElicitationUnavailable": "functions.elicit",
    "Elicited": "functions.elicit",
    "InputNeeded": "functions.elicit",
    "RoundTrips": "functions.elicit",
    "ServerLimits": "limits",
    "load_registry": "tools.loading",
    "RegisteredTool": "tools.registry",
    "Registry": "tools.registry",
    "http_app": "transports.http",
    "serve_http": "transports.http",
    "serve_stdio": "transports.stdio",
}

__all__ = [
    "ALL_TOOLS",
    "Access",
    "AccessConfigError",
    "ElicitationUnavailable",
    "Elicited",
    "Grant",
    "InputNeeded",
    "RegisteredTool",
    "Registry",
    "RoundTrips",
    "ServerLimits",
    "ToolContext",
    "access_from_env",
    "build_server",
    "http_app",
    "load_access",
    "load_registry",
    "serve_http",
    "serve_stdio",
]


__getattr__ = loader(__name__, _WHERE, globals())
