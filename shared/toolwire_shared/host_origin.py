"""Which Host and Origin headers an HTTP server of toolwire answers (the tool server, `toolwire ui`): the protection
against DNS rebinding, decided here only (the tool server's middleware: `toolwire_server.transports.host_origin`).

A web page on a name its author controls can make that name resolve to this machine (DNS rebinding) and then call
the tools from the visitor's browser. The browser sends the page's name as `Host` and the page's origin as `Origin`;
neither can be forged by the page. So every HTTP request, on every path (fast path, SDK path, both protocol eras,
/healthz and the OAuth metadata too), first passes `HostOriginCheck`, the outermost middleware:

- Host must be one of this server's own names, on any port: `localhost`, `127.0.0.1`, `[::1]`, the bound address,
  and when bound to a wildcard (0.0.0.0, ::) the machine's host name, its FQDN, the addresses they resolve to and
  the address the connection arrived at; or a name given with `--allowed-host` (exact, or `name:*` for any port).
  The port in Host is not checked for these names: the browser writes it from the URL it fetches, a page cannot
  choose it, and a proxy in front (deploy/nginx.conf) forwards its own port. Else 421.
- Origin, when sent (browsers send it; other clients do not), must be a page of this server: http(s) on one of its
  names with the served port, or on an `--allowed-host` name[:port]; or one given with `--allowed-origin`. Here the
  port matters: another port is another site (another program on this machine). `Origin: null` is always refused.
  Else 403.

The SDK's own Host/Origin check (TransportSecuritySettings) is switched off, so the two cannot disagree."""

import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.types import Scope

from toolwire_shared.errors import clip

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
WILDCARD_BINDS = ("0.0.0.0", "::", "[::]", "")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_AUTHORITY = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(?P<port>[0-9]{1,5}|\*))?")
"""host[:port] (or [v6][:port]), lowercased first; `*` as the port only in an --allowed-host pattern."""


@dataclass(frozen=True)
class Refusal:
    status: int
    error: str
    message: str
    log: str


def bracketed(address: str) -> str:
    """An address as it appears in a Host header: an IPv6 literal in brackets."""
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def machine_names() -> set[str]:
    """This machine's host name, FQDN and the addresses they resolve to: what a client on the network may use to
    reach a server bound to a wildcard. Cheap and dependency-free; getfqdn may ask the resolver once, at start."""
    names = {socket.gethostname(), socket.getfqdn()}
    for name in list(names):
        try:
            infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
        except OSError:
            continue
        names.update(str(info[4][0]) for info in infos if "%" not in str(info[4][0]))  # no zoned link-local
    return {bracketed(name).lower() for name in names if name}


def check_allowed_host(value: str) -> str:
    """An --allowed-host value (`name`, `name:port` or `name:*`), lowercased; ValueError with the reason if not."""
    lowered = value.strip().lower()
    if not _AUTHORITY.fullmatch(lowered):
        raise ValueError(f"{value!r} is not a Host header value: give name, name:port or name:* (no scheme, no path)")
    return lowered


def check_allowed_origin(value: str) -> str:
    """An --allowed-origin value (`scheme://name[:port]`, or `...:*` for any port); ValueError with the reason."""
    lowered = value.strip().lower().rstrip("/")
    scheme, sep, authority = lowered.partition("://")
    if lowered == "null":
        raise ValueError("'null' cannot be allowed: it is the Origin of any sandboxed or file: page")
    if not sep or not re.fullmatch(r"[a-z][a-z0-9+.-]*", scheme) or not _AUTHORITY.fullmatch(authority):
        raise ValueError(f"{value!r} is not an origin: give scheme://name[:port], e.g. https://app.example.com")
    return lowered


def _matches(value: str, patterns: Iterable[str]) -> bool:
    """`value` (lowercased) equals a pattern, or a `prefix:*` pattern's prefix with or without a port after it."""
    for pattern in patterns:
        if value == pattern:
            return True
        if pattern.endswith(":*"):
            prefix = pattern[:-2]
            if value == prefix or (value.startswith(prefix + ":") and value[len(prefix) + 1 :].isdigit()):
                return True
    return False


class HostOriginRule:
    """The decision for one server: its bind address and port, plus the --allowed-host/--allowed-origin options.
    `port` None (or 0): the port each connection arrived at."""

    def __init__(
        self,
        bind_host: str,
        port: int | None,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
    ) -> None:
        self.port = port or None
        self.wildcard = bind_host in WILDCARD_BINDS
        self.names = set(LOOPBACK_NAMES)
        # not 0.0.0.0 itself: a public page may fetch http://0.0.0.0:PORT, and no client needs that name
        self.names |= machine_names() if self.wildcard else {bracketed(bind_host).lower()}
        self.allowed_hosts = [check_allowed_host(h) for h in allowed_hosts]
        self.allowed_origins = [check_allowed_origin(o) for o in allowed_origins]

    def check(self, host: str | None, origin: str | None, local: tuple[str, int] | None = None) -> Refusal | None:
        """None if a request with these headers may go on; else the refusal to send. `local`: the address and port
        the connection arrived at (the ASGI scope's `server`)."""
        names = self.names
        if self.wildcard and local is not None:
            names = names | {bracketed(local[0]).lower()}  # an address of this machine: not a name a page controls
        port = self.port or (local[1] if local is not None else None)
        refused = self._host(host, names)
        if refused is not None:
            return refused
        if origin is None or origin == "" or self._origin_ok(origin.strip().lower().rstrip("/"), names, port):
            return None
        if origin.strip().lower() == "null":
            return Refusal(403, "forbidden_origin", ORIGIN_NULL, "Origin 'null'")
        shown = clip(origin, 100)
        option = origin.strip() if _is_origin(origin.strip().lower()) else None
        return Refusal(403, "forbidden_origin", origin_refused(shown, option), f"Origin {shown!r}")

    def _host(self, host: str | None, names: set[str]) -> Refusal | None:
        if host is None:
            return Refusal(421, "misdirected_request", NO_HOST, "no Host header")
        lowered = host.strip().lower()
        found = _AUTHORITY.fullmatch(lowered)
        name = found["name"] if found is not None and found["port"] != "*" else None
        if name is not None and (name in names or _matches(lowered, self.allowed_hosts)):
            return None
        shown = clip(host, 100)
        option = lowered if name is not None else None
        return Refusal(421, "misdirected_request", host_refused(shown, option), f"Host {shown!r}")

    def _origin_ok(self, origin: str, names: set[str], port: int | None) -> bool:
        if _matches(origin, self.allowed_origins):
            return True
        scheme, _, authority = origin.partition("://")
        found = _AUTHORITY.fullmatch(authority) if scheme in _DEFAULT_PORTS else None
        if found is None or found["port"] == "*":
            return False
        if _matches(authority, self.allowed_hosts):
            return True  # a page on a name clients reach this server by
        sent = int(found["port"]) if found["port"] else _DEFAULT_PORTS[scheme]
        return found["name"] in names and sent == port


def _is_origin(value: str) -> bool:
    try:
        check_allowed_origin(value)
    except ValueError:
        return False
    return True


def request_headers(scope: Scope) -> tuple[str | None, str | None, tuple[str, int] | None]:
    """The Host and Origin of an ASGI request (two of one header: a value that matches no name) and the address
    and port the connection arrived at: what `HostOriginRule.check` takes."""
    hosts = [v.decode("latin-1") for k, v in scope["headers"] if k == b"host"]
    origins = [v.decode("latin-1") for k, v in scope["headers"] if k == b"origin"]
    host = hosts[0] if len(hosts) == 1 else None if not hosts else ", ".join(hosts)
    origin = origins[0] if len(origins) == 1 else None if not origins else ", ".join(origins)
    server = scope.get("server")
    local = (str(server[0]), int(server[1])) if server and server[1] is not None else None
    return host, origin, local


# What a refused request is told (421 for Host, 403 for Origin).

NO_HOST = "the request has no Host header. Send the Host of the URL you connect to."
ORIGIN_NULL = (
    "requests from a web page with 'Origin: null' (a sandboxed frame, a file: page) are never served: it does not "
    "say which site the page is from. Clients that are not browsers send no Origin."
)


def host_refused(host: str, option: str | None) -> str:
    text = (
        f"this server does not answer to the name in 'Host: {host}': it answers to its own names only, so a web page "
        "on another name cannot reach it by pointing that name at this machine (DNS rebinding)."
    )
    if option is None:
        return text + " That Host is not a valid name[:port]."
    name = option.rsplit(":", 1)[0] if not option.endswith("]") else option
    return (
        f"{text} If clients really reach this server by that name, start it with '--allowed-host {option}' "
        f"(or '--allowed-host {name}:*' for any port)."
    )


def origin_refused(origin: str, option: str | None) -> str:
    text = (
        f"this server does not serve requests from web pages at 'Origin: {origin}': only pages of its own names "
        "and port, so a page elsewhere cannot use a visitor's browser to call the tools. Clients that are not "
        "browsers send no Origin."
    )
    if option is None:
        return text
    return f"{text} If that page should call these tools, start the server with '--allowed-origin {option}'."
