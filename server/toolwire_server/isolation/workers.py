"""A small pool of worker processes for isolated tools, so no tool can freeze the server: a call runs in an idle
worker (at most `size` at once, the rest wait within their timeout); a worker whose call times out or is cancelled
is killed, reaped and replaced, so the timeout really stops the tool, however it is stuck.

Workers come from multiprocessing's `forkserver` (`spawn` where there is none): a fresh, single-threaded process
that imported the server's modules once, forked per worker, never a fork of the running server."""

import logging
import multiprocessing
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from typing import Any, Protocol

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from anyio.abc import TaskGroup

from toolwire_server import texts
from toolwire_server.functions.context import ToolContext
from toolwire_server.isolation.worker import Call, ToolRef, main

log = logging.getLogger("toolwire.server")

DEFAULT_WORKERS = max(2, min(4, os.cpu_count() or 2))
PRELOAD = [
    "toolwire_server",
    "toolwire_server.isolation.worker",
    "toolwire_server.functions.results",
    "toolwire_server.functions.schema",
]
"""What the forkserver imports once, so a new worker starts in milliseconds rather than re-importing pydantic."""
_context: BaseContext | None = None


class Sourced(Protocol):
    """What the pool needs of its registry (tools/registry.py, which holds the pool): where it was loaded from."""

    @property
    def source(self) -> str | None: ...


class Runnable(Protocol):
    """What the pool needs of a registered tool: its name and its function."""

    @property
    def name(self) -> str: ...

    @property
    def fn(self) -> Callable[..., Any]: ...


class WorkerRaised(Exception):
    """The tool raised in its worker; `type_name` is its exception's type."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name


class WorkerLost(Exception):
    """The worker process ended during the call (it crashed, exited, or was killed from outside)."""

    def __init__(self, exitcode: int | None) -> None:
        super().__init__(texts.worker_lost(exitcode))


class _Worker:
    def __init__(self, process: BaseProcess, conn: Connection) -> None:
        self.process, self.conn = process, conn
        self._reaping = threading.Lock()

    def reap(self) -> None:
        """Wait for the ended process (blocking). One thread at a time: two concurrent joins on a forkserver child
        race for its exit status, and the loser records 255."""
        with self._reaping:
            self.process.join(10)

    async def exchange(self, call: Call, context: ToolContext) -> types.CallToolResult:
        """Send the call, relay its progress and log entries, return its result (or raise what it raised)."""
        await anyio.to_thread.run_sync(self.conn.send, call, abandon_on_cancel=True)
        while True:
            reply = await anyio.to_thread.run_sync(self._receive, abandon_on_cancel=True)
            if reply[0] == "progress":
                await context.report_progress(*reply[1:])
            elif reply[0] == "log":
                await context.log(*reply[1:])
            elif reply[0] == "done":
                result: types.CallToolResult = reply[1]
                return result
            elif reply[0] == "raised":
                raise WorkerRaised(reply[1], reply[2])
            else:
                raise WorkerLost(reply[1])

    def _receive(self) -> tuple[Any, ...]:
        try:
            reply: tuple[Any, ...] = self.conn.recv()
            return reply
        except (EOFError, OSError):  # the process is gone; the pipe is closed by the garbage collector, not here
            self.reap()
            return ("lost", self.process.exitcode)

    def kill(self) -> None:
        """SIGKILL: a tool stuck in C code (big-integer arithmetic, a blocking read) ignores anything gentler."""
        if self.process.exitcode is None:
            self.process.kill()


class WorkerPool:
    """The worker processes of one registry's isolated tools; no process starts until one is needed (or
    `serving()` warms the pool at server start)."""

    def __init__(self, registry: Sourced, size: int = DEFAULT_WORKERS) -> None:
        if size < 1:
            raise ValueError("a worker pool needs at least one worker")
        self.registry, self.size = registry, size
        self._idle: list[_Worker] = []
        self._slots: anyio.CapacityLimiter | None = None
        self._background: TaskGroup | None = None
        self._starting = 0
        """Workers being started in the background; a call waits for one of them rather than start its own."""
        self._started = anyio.Event()
        self._refs: dict[str, ToolRef] = {}

    async def run(
        self, tool: Runnable, arguments: dict[str, Any], context: ToolContext, *, max_result_chars: int
    ) -> types.CallToolResult:
        """Run one call in a worker; on cancellation (timeout or caller) the worker is killed before this returns."""
        call = Call(
            ref=self._ref(tool),
            arguments=arguments,
            agent=context.agent,
            idempotency_key=context.idempotency_key,
            request_id=context.request_id if isinstance(context.request_id, str | int) else None,
            max_result_chars=max_result_chars,
            wants=frozenset(
                name for name, fn in (("progress", context.progress_fn), ("log", context.log_fn)) if fn is not None
            ),
        )
        if self._slots is None:
            self._slots = anyio.CapacityLimiter(self.size)
        async with self._slots:
            worker = await self._take()
            healthy = False
            try:
                result = await worker.exchange(call, context)
                healthy = True
                return result
            except WorkerRaised:
                healthy = True
                raise
            finally:
                if healthy:
                    self._give_back(worker)
                else:
                    await self._discard(worker, tool.name)

    @asynccontextmanager
    async def serving(self, *, warm: bool) -> AsyncIterator[None]:
        """While the server runs: start the workers ahead of the first call (if `warm`), replace killed ones in the
        background, and kill the idle ones at the end."""
        try:
            async with anyio.create_task_group() as tg:
                self._background = tg
                if warm:
                    for _ in range(self.size - len(self._idle)):
                        tg.start_soon(self._prestart)
                yield
                tg.cancel_scope.cancel()
        finally:
            self._background = None
            self.close()

    def close(self) -> None:
        """Kill the idle workers (a busy one is killed by its own call's cancellation)."""
        idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()
            worker.reap()

    def _ref(self, tool: Runnable) -> ToolRef:
        ref = self._refs.get(tool.name)
        if ref is None:
            fn = tool.fn
            module = sys.modules.get(fn.__module__)
            ref = self._refs[tool.name] = ToolRef(
                tool=tool.name,
                source=self.registry.source,
                module=fn.__module__,
                qualname=fn.__qualname__,
                file=getattr(module, "__file__", None),
            )
        return ref

    async def _take(self) -> _Worker:
        while not self._idle and self._starting:
            await self._started.wait()
        if not self._idle:
            with anyio.CancelScope(shield=True):  # a started worker is never lost to a cancellation
                self._idle.append(await anyio.to_thread.run_sync(_start))
            await anyio.lowlevel.checkpoint()  # a timeout that fired meanwhile: the new worker waits, idle
        return self._idle.pop()

    def _give_back(self, worker: _Worker) -> None:
        if len(self._idle) < self.size:
            self._idle.append(worker)
        else:
            worker.kill()

    async def _discard(self, worker: _Worker, tool: str) -> None:
        with anyio.CancelScope(shield=True):
            worker.kill()
            await anyio.to_thread.run_sync(worker.reap)
        process = worker.process
        log.warning("tool %s: its worker process %s was stopped (exit %s)", tool, process.pid, process.exitcode)
        if self._background is not None:
            self._background.start_soon(self._prestart)

    async def _prestart(self) -> None:
        """Start a worker ahead of need; a failure is logged (the next call tries again and reports it)."""
        self._starting += 1
        worker = None
        try:
            with anyio.CancelScope(shield=True):
                worker = await anyio.to_thread.run_sync(_start)
        except Exception as exc:
            log.warning("could not start a worker process: %s", exc)
        finally:
            self._starting -= 1
            if worker is not None:
                self._give_back(worker)
            self._started.set()
            self._started = anyio.Event()


def _start() -> _Worker:
    """Start one worker process (blocking: run it in a thread)."""
    context = _mp_context()
    conn, child = context.Pipe(duplex=True)
    process = context.Process(target=main, args=(child,), name="toolwire-worker", daemon=True)  # type: ignore[attr-defined]
    process.start()
    child.close()
    return _Worker(process, conn)


def _mp_context() -> BaseContext:
    global _context
    if _context is None:
        if "forkserver" in multiprocessing.get_all_start_methods():
            _context = multiprocessing.get_context("forkserver")
            _context.set_forkserver_preload(PRELOAD)
        else:
            _context = multiprocessing.get_context("spawn")
    return _context
