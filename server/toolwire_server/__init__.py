"""The toolwire MCP tool server: a registry of plain functions served over stdio and Streamable HTTP."""

from toolwire_server.app import build_server
from toolwire_server.auth.access import ALL_TOOLS, Access, AccessConfigError, Grant, access_from_env, load_access
from toolwire_server.functions.context import ToolContext
from toolwire_server.functions.elicit import ElicitationUnavailable, Elicited, InputNeeded, RoundTrips
from toolwire_server.limits import ServerLimits
from toolwire_server.tools.loading import load_registry
from toolwire_server.tools.registry import RegisteredTool, Registry
from toolwire_server.transports.http import http_app, serve_http
from toolwire_server.transports.stdio import serve_stdio

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
