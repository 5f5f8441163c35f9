"""The run the current task drives (its Agent and RunState), for a tool that acts on the run that called it: the
delegate tool starts a sub-agent of exactly that run. Set by Agent._drive; tasks started inside inherit it."""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolwire_client.run.state import RunState

if TYPE_CHECKING:
    from toolwire_client.loop import Agent


@dataclass(frozen=True)
class Driving:
    agent: "Agent"
    state: RunState


_current: ContextVar[Driving | None] = ContextVar("toolwire_current_run", default=None)


@contextmanager
def driving(agent: "Agent", state: RunState) -> Iterator[None]:
    token = _current.set(Driving(agent, state))
    try:
        yield
    finally:
        _current.reset(token)


def current_run() -> Driving | None:
    return _current.get()
