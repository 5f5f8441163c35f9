"""A stdio tool server's stdout is the protocol: a line that is not MCP (a tool's print()) makes the SDK log "Failed
to parse JSONRPC message from server", naming no server. Its record is rewritten here into a line that names the
server and says what to do; the first such line of a connection is a warning, the rest go to the server's log only.
The SDK logs it from the connection's reader task, which inherits the context `named` sets where the server starts."""

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import pydantic

from toolwire_client import texts

SDK_LINE = "Failed to parse JSONRPC message from server"


@dataclass
class _Server:
    name: str
    note: Callable[[str], None]
    said: int = 0


_SERVER: ContextVar[_Server | None] = ContextVar("toolwire_stdio_server", default=None)


@contextmanager
def named(server: str, note: Callable[[str], None]) -> Iterator[None]:
    """While a stdio server is started: its name for the lines it prints, `note` to write them to its log."""
    token = _SERVER.set(_Server(server, note))
    try:
        yield
    finally:
        _SERVER.reset(token)


class _NameTheServer(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        server = _SERVER.get()
        if record.msg != SDK_LINE or server is None:
            return True
        error = record.exc_info[1] if record.exc_info else None
        text = texts.printed_to_stdout(server.name, _line_of(error))
        server.note(text)
        server.said += 1
        if server.said > 1:
            return False
        record.msg, record.args, record.exc_info, record.exc_text = text, (), None, None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def _line_of(error: BaseException | None) -> str:
    """The line the server wrote, from the SDK's parse error (its text when the error does not carry it)."""
    if isinstance(error, pydantic.ValidationError):
        for problem in error.errors():
            if isinstance(problem.get("input"), str):
                return str(problem["input"])
    return str(error)


logging.getLogger("mcp.client.stdio").addFilter(_NameTheServer())
