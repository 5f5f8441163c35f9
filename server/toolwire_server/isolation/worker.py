"""The worker process of an isolated tool: it runs one call at a time from its pipe, so a tool that hangs or burns
CPU can be killed without touching the server. Both sides import this module for the messages they exchange; the
worker finds a tool's function by where it came from (the registry's MODULE:ATTR and the tool's name, else the
function's module and qualified name), never by pickling the function itself."""

import asyncio
import contextlib
import ctypes
import importlib
import importlib.util
import inspect
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from toolwire_server.targets import load_target

if TYPE_CHECKING:
    from toolwire_server.functions.output import OutputShape

PR_SET_PDEATHSIG = 1
ISOLATED_CANNOT_ASK = (
    "a tool run in a worker process (isolation='process', `toolwire serve --isolate`) cannot ask the client "
    "questions (ctx.elicit); serve it without --isolate and with isolation='none'"
)


@dataclass(frozen=True)
class ToolRef:
    """Where a worker finds a tool's function."""

    tool: str
    source: str | None
    """The MODULE:ATTR the registry was loaded from (`toolwire serve`), if it was."""
    module: str
    qualname: str
    file: str | None = None
    """The module's file, for a module loaded from a path (not importable by name)."""


@dataclass(frozen=True)
class Call:
    """One call, as sent to a worker: the arguments as they came (JSON values; the server validated them, and the
    worker validates them again with the same model, so no argument type is ever pickled) and what of the
    ToolContext a process can carry."""

    ref: ToolRef
    arguments: dict[str, Any]
    agent: str | None
    idempotency_key: str | None
    request_id: str | int | None
    max_result_chars: int
    wants: frozenset[str] = field(default_factory=frozenset)
    """'progress' and/or 'log' when the caller listens for them."""


# Replies, worker -> server: ("progress", progress, total, message) | ("log", level, data) while the call runs,
# then one of ("done", CallToolResult) | ("raised", exception type name, message).


def main(conn: Connection) -> None:
    """The worker's loop: receive a Call, send back its progress and its outcome, until the server goes away."""
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group; the server decides
    loop = asyncio.new_event_loop()
    found: dict[ToolRef, _Found] = {}
    while True:
        try:
            call = conn.recv()
        except (EOFError, OSError):
            return
        conn.send(_run(call, conn, loop, found))


@dataclass(frozen=True)
class _Found:
    fn: Callable[..., Any]
    model: type[BaseModel]
    injected: dict[str, str]
    output: "OutputShape | None"


def _run(
    call: Call, conn: Connection, loop: asyncio.AbstractEventLoop, found: dict[ToolRef, _Found]
) -> tuple[Any, ...]:
    from toolwire_server.functions.context import ToolContext
    from toolwire_server.functions.elicit import NoOneToAsk
    from toolwire_server.functions.output import output_shape
    from toolwire_server.functions.results import to_result
    from toolwire_server.functions.schema import arguments_model, injected_params

    tool = found.get(call.ref)
    if tool is None:
        try:
            fn = resolve(call.ref)
            tool = found[call.ref] = _Found(
                fn, arguments_model(call.ref.tool, fn), injected_params(fn), output_shape(fn)
            )
        except Exception as exc:
            return ("raised", "ImportError", f"its function cannot be loaded in a worker process: {exc}")

    async def progress(value: float, total: float | None, message: str | None) -> None:
        conn.send(("progress", value, total, message))

    async def log(level: str, data: Any) -> None:
        try:
            conn.send(("log", level, data))
        except Exception:  # data that does not pickle is sent as its text
            conn.send(("log", level, repr(data)))

    context = ToolContext(
        tool=call.ref.tool,
        agent=call.agent,
        idempotency_key=call.idempotency_key,
        request_id=call.request_id,
        progress_fn=progress if "progress" in call.wants else None,
        log_fn=log if "log" in call.wants else None,
        asker=NoOneToAsk(ISOLATED_CANNOT_ASK),
    )
    try:
        kwargs = dict(tool.model.model_validate(call.arguments))
        for param, kind in tool.injected.items():
            kwargs[param] = context if kind == "context" else call.idempotency_key
        value = tool.fn(**kwargs)
        if inspect.isawaitable(value):
            value = loop.run_until_complete(value)
    except Exception as exc:
        return ("raised", type(exc).__name__, str(exc) or type(exc).__name__)
    try:
        return ("done", to_result(value, call.max_result_chars, tool=call.ref.tool, output=tool.output))
    except Exception as exc:
        return ("raised", type(exc).__name__, f"its result could not be serialised: {exc}")


def resolve(ref: ToolRef) -> Callable[..., Any]:
    """The tool's function in this process: from its registry when the server was started from MODULE:ATTR."""
    if ref.source is not None:
        registry: Any = load_target(ref.source)  # the server checked that it is a Registry (tools/loading.py)
        tool = registry.get(ref.tool)
        if tool is None:
            raise LookupError(f"{ref.source} has no tool '{ref.tool}'")
        found: Callable[..., Any] = tool.fn
        return found
    module = sys.modules.get(ref.module)
    if module is None:
        try:
            module = importlib.import_module(ref.module)
        except ImportError:
            if ref.file is None:
                raise
            spec = importlib.util.spec_from_file_location(Path(ref.file).stem, ref.file)
            if spec is None or spec.loader is None:
                raise
            module = importlib.util.module_from_spec(spec)
            sys.modules[ref.module] = module
            spec.loader.exec_module(module)
    value: Any = module
    for part in ref.qualname.split("."):
        if part == "<locals>":
            raise LookupError(f"{ref.module}.{ref.qualname} is defined inside a function; define it at module level")
        value = getattr(value, part)
    if not callable(value):
        raise LookupError(f"{ref.module}.{ref.qualname} is not a function")
    fn: Callable[..., Any] = value
    return fn


def _die_with_parent() -> None:
    """Linux: the kernel kills this worker when its parent (the forkserver) ends, even while a tool holds the CPU;
    and the forkserver ends with the server, once no worker keeps its "server alive" pipe open (so: close it)."""
    server = getattr(forkserver, "_forkserver", None)
    alive = getattr(server, "_forkserver_alive_fd", None)
    if isinstance(alive, int):
        with contextlib.suppress(OSError):
            os.close(alive)
        server._forkserver_alive_fd = None  # type: ignore[union-attr]
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() == 1:  # the parent ended before the line above took effect
        os._exit(1)
