"""How McpSource reaches its tool server: one MCP connection opened at a time (a stdio command spawned with its
stderr on our pipe, or an HTTP URL with a static bearer token or OAuth), its start bounded, its log messages passed
on within their budget; and, when a start fails, why, in the server's own words where it had some."""

import json
import math
import shlex
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from functools import partial
from typing import Any, Literal, Protocol, TextIO

import anyio
import httpx2
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client import Transport
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from toolwire_client.tools import stdout_noise
from toolwire_client.tools.oauth_auth import TokenRequestFailed
from toolwire_client.tools.server_logs import LogBudget
from toolwire_client.tools.server_stderr import NOTE, ServerStderr, error_line
from toolwire_client.tools.source import StartFailure, ToolServerFailed, ToolTransportError
from toolwire_shared import errors
from toolwire_shared.mcp_kit.errors import first
from toolwire_shared.mcp_kit.sdk import TransportStreams
from toolwire_shared.tls import ssl_context

LOG_LEVEL: types.LoggingLevel = "info"
"""The server log messages asked for in the 2026-07-28 era (a handshake-era server sends what it sends)."""


class ServerPlace(Protocol):
    """Where a tool server is and how it is reached: the McpSource's own fields (their one owner), read as a
    connection opens."""

    name: str
    command: list[str] | None
    url: str | None
    token: str | None
    auth: httpx2.Auth | None
    env: dict[str, str] | None
    cwd: str | None
    stderr: ServerStderr
    start_timeout_s: float
    mode: Literal["auto", "legacy"]


class Connector:
    """Opens `Client`s on one tool server (`client_options`: the source's handlers for what the server sends) and
    diagnoses a failed start."""

    def __init__(self, server: ServerPlace, client_options: Callable[[], dict[str, Any]]) -> None:
        self.server = server
        self.log_budget = LogBudget()
        """How much of the server's log messages goes where its stderr goes (server_logs.py)."""
        self._client_options = client_options
        self._http_error: str | None = None
        self._spawn_ok = False

    def target(self) -> str:
        return shlex.join(self.server.command) if self.server.command is not None else str(self.server.url)

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[Client]:
        """`_open` with its start bounded: a server that never answers initialize is a failed start."""
        with anyio.CancelScope(deadline=anyio.current_time() + self.server.start_timeout_s) as starting:
            async with self._open() as client:
                starting.deadline = math.inf
                yield client
        if starting.cancelled_caught:
            raise TimeoutError(f"did not answer MCP's initialize within {self.server.start_timeout_s:g} s")

    @asynccontextmanager
    async def _open(self) -> AsyncIterator[Client]:
        if self.server.command is not None:
            command, env, cwd = self.server.command, self.server.env, self.server.cwd
            params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
            async with (
                self.server.stderr.pipe() as errlog,
                self._client_on(self._spawned(params, errlog)) as client,
            ):
                yield client
            return
        assert self.server.url is not None
        headers = {"Authorization": f"Bearer {self.server.token}"} if self.server.token else {}
        hooks = {"response": [self._note_http_error]}
        async with (
            httpx2.AsyncClient(
                headers=headers,
                auth=self.server.auth,
                timeout=httpx2.Timeout(30.0, read=None),
                event_hooks=hooks,
                verify=ssl_context(),
            ) as http,
            self._client_on(streamable_http_client(self.server.url, http_client=http)) as client,
        ):
            yield client

    def _client_on(self, transport: Transport) -> Client:
        """The SDK's Client on `transport`, with the source's handlers for what the server sends unasked."""
        return Client(
            transport,
            mode=self.server.mode,
            cache=None,
            logging_callback=self._on_log,
            log_level=LOG_LEVEL,
            **self._client_options(),
        )

    @asynccontextmanager
    async def _spawned(self, params: StdioServerParameters, errlog: TextIO) -> AsyncIterator[TransportStreams]:
        """The SDK's stdio transport with the server's stderr on our pipe; our copy of its write end is closed once
        the server holds its own, so the pipe ends when the server does."""
        self._spawn_ok = False
        with stdout_noise.named(self.server.name, self._note):  # a tool's print(): a line that names this server
            async with stdio_client(params, errlog=errlog) as streams:
                self._spawn_ok = True
                errlog.close()
                yield streams

    def _note(self, text: str) -> None:
        """A note of toolwire's on this server, where its stderr goes (inline with `-v`, else the run's server log)."""
        with suppress(Exception):
            self.server.stderr.sink(self.server.name, NOTE + text)

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        """A server's log message (MCP logging) goes where its stderr goes: the run's server log, or inline with
        `-v`, under the server's name (over HTTP too, where there is no stderr)."""
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        where = f" {params.logger}" if params.logger else ""
        self.write_log(self.log_budget.admit(f"[{params.level}{where}] {data}"))

    def write_log(self, lines: list[str]) -> None:
        for line in lines:
            with suppress(Exception):
                self.server.stderr.sink(self.server.name, line)

    async def _note_http_error(self, response: httpx2.Response) -> None:
        """The status line of a refusal, and the JSON-RPC error's message when the server wrote one in its body."""
        if response.status_code >= 400:
            self._http_error = f"HTTP {response.status_code} {response.reason_phrase}".strip()
            if response.headers.get("content-type", "").startswith("application/json"):
                await response.aread()  # kept: the SDK reads the same body after this hook
                message = _jsonrpc_error_message(response.content)
                if message:
                    self._http_error += f": {errors.clip(message, 1000)}"

    async def start_failure(self, exc: Exception) -> ToolServerFailed:
        """What went wrong at start-up, in the server's own words where it had some."""
        failed = partial(ToolServerFailed, self.server.name, self.target())
        if self.server.command is not None:
            spawn = None if self._spawn_ok else first(exc, OSError)
            if spawn is not None:
                kind: StartFailure = "no_command" if isinstance(spawn, FileNotFoundError) else "failed"
                missing = spawn.filename or self.server.command[0]
                return failed(kind, f"cannot be started: {spawn.strerror}: {missing}")
            said = error_line(await self.server.stderr.latest())
            if first(exc, TimeoutError) is not None:
                return failed("timeout", str(first(exc, TimeoutError)), said)
            reason = "stopped before it answered MCP's initialize" + ("" if said else ", with nothing on stderr")
            return failed("exited", reason, said)
        no_token = first(exc, TokenRequestFailed)
        if no_token is not None:
            return failed("refused", "got no access token", str(no_token))
        if first(exc, TimeoutError) is not None:
            return failed("timeout", str(first(exc, TimeoutError)))
        unreachable = first(exc, httpx2.TransportError)
        if unreachable is not None:
            refused = first(exc, ConnectionRefusedError)
            said = "connection refused" if refused is not None else str(unreachable) or type(unreachable).__name__
            return failed("unreachable", "cannot be reached", said)
        if self._http_error is not None:
            status = self._http_error
            denied: StartFailure = "token_refused" if self.server.token else "refused"  # one sent: not recognised
            kind = "not_found" if " 404" in status else denied if status[5:8] in ("401", "403") else "failed"
            return failed(kind, "refused MCP's initialize", status)
        return failed("failed", "failed MCP's initialize", str(exc) or type(exc).__name__)

    async def listing_lost(self, exc: ToolTransportError) -> ToolServerFailed:
        """The connection ended after initialize, before the server listed its tools: in its own words where a stdio
        server wrote some on stderr."""
        if self.server.command is None:
            reason = "closed the connection after MCP's initialize"
            return ToolServerFailed(self.server.name, self.target(), "dropped", reason, str(exc))
        said = error_line(await self.server.stderr.latest())
        reason = "exited after MCP's initialize, before it listed its tools"
        reason += "" if said else ", with nothing on stderr"
        return ToolServerFailed(self.server.name, self.target(), "dropped", reason, said)


def _jsonrpc_error_message(body: bytes) -> str | None:
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return None
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else None
