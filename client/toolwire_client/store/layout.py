"""How a run's state is laid out in the store, so that a save costs the same at step 300 as at step 3.

The `runs.state` column holds the header: the whole run state, except that its *settled* messages and steps (a
leading run of each list) are each a placeholder, `0`, instead of the item. A header settles once it holds more than
HOLD_MESSAGES messages or HOLD_STEPS steps whole, and keeps the last TAIL_MESSAGES and TAIL_STEPS. The settled
items are in `run_log`, appended once: a save adds at most one segment row, `{"m": i, "messages": [...],
"s": j, "steps": [...]}`, meaning "from message i and step j on, the settled items are these". Reading the segments in
order rebuilds the settled items; the header's placeholders take them by position. A save thus writes the header
(constant in size, bar two bytes per placeholder) and what settled since the last save, never the history.

A header with no placeholders is a whole state: the layout before this one (store schema < 7) reads as it is, and a
run saved by it is split on its next save. Header and segment are one record: they are written in one transaction
with the version fence, so resume, replay, approvals and the fleet's recovery read exactly what they read before.

What a store last wrote of a state object is noted on it (`Written`); a save that cannot trust the note (another store,
another version: a state loaded elsewhere, a copy) writes every settled item again, replacing the log.
"""

import operator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter

from toolwire_client.run.state import RunState, StepRecord
from toolwire_shared.messages import Message

TAIL_MESSAGES, TAIL_STEPS = 4, 1
"""What a header keeps whole when it settles: the last turn (which resume and a person's approval look at) and the
step in progress (changed in place: its results, its end)."""
HOLD_MESSAGES, HOLD_STEPS = 12, 4
"""A header settles only once it holds more than these: one log row per few steps, and none for a short run."""
SETTLED = 0
"""A settled item's placeholder in the header's lists (a message or step is an object, never a number)."""

_MESSAGES = TypeAdapter(list[Message])
_STEPS = TypeAdapter(list[StepRecord])
_STEP = TypeAdapter(StepRecord)


class BrokenRecord(ValueError):
    """The header names a settled item the log does not hold: the record was edited or cut."""


@dataclass(frozen=True)
class Written:
    """What one store last wrote of one state object: the settled items (the objects, compared by identity) and the
    JSON of the last settled step (a step is a mutable record: the one settled last is checked by content)."""

    store: object
    """The store's own token (compared by identity)."""
    version: int
    messages: list[Message]
    steps: list[StepRecord]
    last_step: bytes | None


@dataclass(frozen=True)
class Split:
    header: str
    segment: str | None
    """The new log row, None when nothing settled or changed since the last save (or the header holds it all)."""
    replaces_log: bool
    """The segment starts from nothing: the rows before it are garbage (deleted)."""
    written: Written


def _same_prefix(now: list[Any], before: list[Any]) -> int:
    """How many leading items are still the very objects written."""
    n = min(len(before), len(now))
    if all(map(operator.is_, now, before)):  # the usual case, at C speed (map stops at the shorter list)
        return n
    return next(i for i in range(n) if now[i] is not before[i])


def _json_list(placeholders: int, items: bytes) -> str:
    inner = items.decode()[1:-1]
    settled = "0," * placeholders
    return "[" + (settled + inner if inner else settled[:-1]) + "]"


def split(state: RunState, store: object, version: int, updated_at: datetime) -> Split:
    """The header and the new segment to write for `state` saved as `version` (at `updated_at`) by `store`."""
    note: Written | None = state.derived.written
    m_from = s_from = 0
    trusted = intact = note is not None and note.store is store and note.version == state.version
    if trusted:
        assert note is not None
        m_from, s_from = _same_prefix(state.messages, note.messages), _same_prefix(state.steps, note.steps)
        if s_from == len(note.steps) and s_from > 0 and _STEP.dump_json(state.steps[s_from - 1]) != note.last_step:
            s_from -= 1  # the step settled last was changed in place since
        intact = m_from == len(note.messages) and s_from == len(note.steps)
    m_keep, s_keep = m_from, s_from
    if not intact or len(state.messages) - m_from > HOLD_MESSAGES or len(state.steps) - s_from > HOLD_STEPS:
        m_keep = max(m_from if intact else 0, len(state.messages) - TAIL_MESSAGES)
        s_keep = max(s_from if intact else 0, len(state.steps) - TAIL_STEPS)
        m_from, s_from = min(m_from, m_keep), min(s_from, s_keep)
    messages, steps = state.messages[m_from:m_keep], state.steps[s_from:s_keep]
    segment = None
    if messages or steps or (trusted and not intact) or (not trusted and (m_keep or s_keep)):
        segment = (
            f'{{"m":{m_from},"messages":{_MESSAGES.dump_json(messages).decode()},'
            f'"s":{s_from},"steps":{_STEPS.dump_json(steps).decode()}}}'
        )
    stamped = state.model_copy(update={"version": version, "updated_at": updated_at})
    body = stamped.model_dump_json(exclude={"messages", "steps"})
    header = (
        f'{body[:-1]},"messages":{_json_list(m_keep, _MESSAGES.dump_json(state.messages[m_keep:]))},'
        f'"steps":{_json_list(s_keep, _STEPS.dump_json(state.steps[s_keep:]))}}}'
    )
    last = _STEP.dump_json(state.steps[s_keep - 1]) if s_keep else None
    written = Written(store, version, state.messages[:m_keep], state.steps[:s_keep], last)
    return Split(header, segment, replaces_log=segment is not None and m_from == 0 and s_from == 0, written=written)


def join(run_id: str, header: dict[str, Any], segments: list[dict[str, Any]]) -> tuple[dict[str, Any], int, int]:
    """The whole state document from its header and its log's segments (in order), and how many of its messages
    and steps were settled (placeholders in the header)."""
    settled: dict[str, list[Any]] = {"messages": [], "steps": []}
    for segment in segments:
        for key, start in (("messages", "m"), ("steps", "s")):
            settled[key][segment[start] :] = segment[key]
    counts = []
    for key in ("messages", "steps"):
        items, log, count = header.get(key, []), settled[key], 0
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                if item != SETTLED or i >= len(log) or i != count:  # settled items lead the list
                    raise BrokenRecord(f"run {run_id}: its record names {key[:-1]} {i}, which its log does not hold")
                items[i], count = log[i], count + 1
        counts.append(count)
    return header, counts[0], counts[1]


def note_loaded(state: RunState, store: object, messages: int, steps: int) -> None:
    """After a load: what the store holds of this state, so its next save appends only what is new."""
    last = _STEP.dump_json(state.steps[steps - 1]) if steps else None
    state.derived.written = Written(store, state.version, state.messages[:messages], state.steps[:steps], last)


def note_saved(state: RunState, parts: Split) -> None:
    state.derived.written = parts.written
