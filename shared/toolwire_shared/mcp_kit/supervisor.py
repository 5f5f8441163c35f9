"""Keeps one MCP connection up: opens it, and when it ends, opens it again as its RestartPolicy says (restarts.py)
until the policy gives up or the owner closes it. The client's McpSource (a run's own server, or a connection many
runs share) and the server's upstreams are each one connection function run by a Supervisor."""

import logging
import math
from collections.abc import Awaitable, Callable

import anyio

from toolwire_shared.mcp_kit.restarts import RestartPolicy

log = logging.getLogger("toolwire.mcp")


class Supervisor:
    """`run(connection)` calls `connection()` for each connection: it opens one, calls `up()` once it serves, and
    returns (or raises) when the connection ended, which `wait_ended()` tells it (`end()`: a call saw it drop)."""

    def __init__(self, label: str, policy: RestartPolicy, on_change: Callable[[], None] = lambda: None) -> None:
        self.label, self.policy = label, policy
        """`label`: what the logs and the policy's texts call the server (`tool server 'x'`, `upstream x`)."""
        self.restarts = 0
        self.paused: str | None = None
        """Why a call fails at once now: the policy holds the next connection back (a full window)."""
        self.stopped: str | None = None
        """Why there will be no connection any more (the policy gave up, or the owner said why)."""
        self.closing = False
        self.up_since = math.inf
        self.retry_at = 0.0
        """When the next connection is made (while one is waited for)."""
        self.on_change = on_change
        """Called when `paused` or `stopped` is set and when the supervision ends: calls waiting for a connection
        look again."""
        self._ended = anyio.Event()
        self._woken = anyio.Event()

    def up(self) -> None:
        self.up_since = anyio.current_time()

    def end(self) -> None:
        """End the current connection (the next one is made as the policy says)."""
        self._ended.set()

    def stop(self, reason: str) -> None:
        """No connection after the current one ends (it failed in a way a restart does not mend)."""
        self.stopped = reason

    def close(self) -> None:
        self.closing = True
        self._ended.set()
        self._woken.set()

    async def wait_ended(self) -> None:
        await self._ended.wait()

    async def run(
        self, connection: Callable[[], Awaitable[None]], failed: Callable[[Exception], Awaitable[None]]
    ) -> None:
        """Connections until the policy gives up or `close()`; an exception from one goes to `failed`, which may
        raise (a failed start ends the supervision)."""
        while True:
            self._ended, self.up_since = anyio.Event(), math.inf
            try:
                await connection()
            except Exception as exc:
                await failed(exc)
            if self.closing or self.stopped is not None:
                self.on_change()
                return
            decision = self.policy.next_restart(self.label, self.restarts, anyio.current_time(), self.up_since)
            if isinstance(decision, str):
                self.stopped = decision
                self.on_change()
                return
            self.retry_at = anyio.current_time() + decision.wait_s
            if decision.paused is not None:
                self.paused = decision.paused
                log.warning("%s: %s", self.label, decision.paused)
                self.on_change()
            log.warning(
                "%s is down; reconnecting in %.1f s (restart %d)", self.label, decision.wait_s, self.restarts + 1
            )
            self._woken = anyio.Event()
            with anyio.move_on_after(decision.wait_s):
                await self._woken.wait()  # close() wakes it
            self.paused = None
            self.policy.restarted(anyio.current_time())
            if self.closing:
                self.on_change()
                return
            self.restarts += 1
