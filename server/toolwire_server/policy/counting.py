"""Counting calls against limit rules: a token bucket (per_minute, burst), a count per UTC day (per_day) and the
calls running now (in_flight), one counter per (rule, agent). `take` admits a call against every rule that matches
it or refuses it with the first rule it breaks and the wait until it would pass; `give_back` ends a call in flight.

The arithmetic is one function (`step`), run here in-process or, across replicas, inside PostgreSQL's row lock
(postgres_counters.py does the same sums in SQL)."""

import math
import threading
import time
from dataclasses import dataclass
from typing import Literal, Protocol

from toolwire_server.policy.config import LimitRule

SECONDS_PER_DAY = 86_400
STALE_IN_FLIGHT_S = 3600.0
"""A counter whose in-flight calls have not changed for this long forgets them: a replica killed mid-call (no
`give_back`) cannot hold its agent's slots for ever."""

ADMIT_EARLY_S = 0.005
"""A call this much earlier than the wait it was named is admitted (the bucket lends what is missing, at most half a
call, repaid out of the next wait): a client that slept exactly the named wait may wake a little early by its own
loop's clock (uvloop's timers are whole milliseconds from a time cached at its iteration's start), and must be
admitted all the same."""

Reason = Literal["per_minute", "per_day", "in_flight"]


@dataclass(frozen=True)
class Refusal:
    rule: LimitRule
    reason: Reason
    wait_s: float | None
    """Seconds until the same call would pass; None for in_flight (it passes when a running call ends)."""


@dataclass
class State:
    tokens: float
    at: float
    day: int = 0
    day_count: int = 0
    in_flight: int = 0
    flight_at: float = 0.0


def fresh(rule: LimitRule, now: float) -> State:
    return State(tokens=rule.bucket, at=now, day=int(now // SECONDS_PER_DAY), flight_at=now)


def step(state: State, rule: LimitRule, now: float) -> Refusal | None:
    """Admit one call (changing `state`) or say why not (refilling, never spending)."""
    rate = (rule.per_minute or 0.0) / 60.0
    tokens = min(rule.bucket, state.tokens + max(0.0, now - state.at) * rate)
    day = int(now // SECONDS_PER_DAY)
    day_count = state.day_count if state.day == day else 0
    in_flight = 0 if now - state.flight_at > STALE_IN_FLIGHT_S else state.in_flight
    state.tokens, state.at, state.day, state.day_count, state.in_flight = tokens, now, day, day_count, in_flight
    return _admit(state, rule, now)


def _admit(state: State, rule: LimitRule, now: float) -> Refusal | None:
    refusal = why_not(rule, state.tokens, state.day_count, state.in_flight, now)
    if refusal is None:
        if rule.per_minute is not None:
            state.tokens -= 1.0
        state.day_count += 1
        if rule.in_flight is not None:
            state.in_flight += 1
            state.flight_at = now
    return refusal


def why_not(rule: LimitRule, tokens: float, day_count: int, in_flight: int, now: float) -> Refusal | None:
    """The first limit a call breaks given the refilled counters, with its wait; None if it passes."""
    if rule.in_flight is not None and in_flight >= rule.in_flight:
        return Refusal(rule, "in_flight", None)
    if rule.per_day is not None and day_count >= rule.per_day:
        return Refusal(rule, "per_day", (math.floor(now / SECONDS_PER_DAY) + 1) * SECONDS_PER_DAY - now)
    if rule.per_minute is not None and tokens < 1.0 and tokens < needed(rule):  # a whole token: no sum needed
        return Refusal(rule, "per_minute", (1.0 - tokens) * 60.0 / rule.per_minute)
    return None


def named_wait(wait_s: float | None) -> float | None:
    """The wait a refusal names: rounded up to the millisecond, never down (a call sent after it is admitted)."""
    return None if wait_s is None else math.ceil(wait_s * 1000) / 1000


def needed(rule: LimitRule) -> float:
    """The tokens a call needs: one, less what the bucket lends a call up to `ADMIT_EARLY_S` early."""
    return 1.0 - min(0.5, (rule.per_minute or 0.0) / 60.0 * ADMIT_EARLY_S)


class Counters(Protocol):
    async def take(self, agent: str, rules: list[tuple[int, LimitRule]]) -> Refusal | None:
        """Admit against every rule (index, rule), or refuse and take nothing."""

    async def give_back(self, agent: str, rules: list[tuple[int, LimitRule]]) -> None:
        """A call admitted by `take` ended: its in-flight slots are free."""

    async def aclose(self) -> None:
        """The server stops."""


class MemoryCounters:
    """Counters of this process: exact, and only for this process (one `serve`, no --workers)."""

    def __init__(self, clock: "Clock | None" = None) -> None:
        self._states: dict[tuple[int, str], State] = {}
        self._lock = threading.Lock()  # sync tools and the loop never race, but a process may run two loops
        self._clock = clock or time.time

    async def take(self, agent: str, rules: list[tuple[int, LimitRule]]) -> Refusal | None:
        now = self._clock()
        with self._lock:
            taken: list[tuple[State, LimitRule]] = []
            for index, rule in rules:
                state = self._states.get((index, agent))
                if state is None:
                    state = self._states[(index, agent)] = fresh(rule, now)
                refusal = step(state, rule, now)
                if refusal is not None:
                    for earlier, its_rule in taken:  # all or nothing: what the earlier rules admitted is returned
                        refund(earlier, its_rule)
                    return refusal
                taken.append((state, rule))
        return None

    async def aclose(self) -> None:
        return None

    async def give_back(self, agent: str, rules: list[tuple[int, LimitRule]]) -> None:
        with self._lock:
            for index, rule in rules:
                state = self._states.get((index, agent))
                if rule.in_flight is not None and state is not None and state.in_flight > 0:
                    state.in_flight -= 1


def refund(state: State, rule: LimitRule) -> None:
    """Undo one admission (a later rule refused the call)."""
    if rule.per_minute is not None:
        state.tokens = min(rule.bucket, state.tokens + 1.0)
    state.day_count = max(0, state.day_count - 1)
    if rule.in_flight is not None:
        state.in_flight = max(0, state.in_flight - 1)


class Clock(Protocol):
    def __call__(self) -> float: ...
