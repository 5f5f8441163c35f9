"""Identifiers for runs and tool calls: sortable by time, unique across processes."""

import os
import time


def _time_ordered(prefix: str) -> str:
    # 48 bits of milliseconds then 80 random bits: ids sort by creation time in the run store.
    millis = int(time.time() * 1000)
    return f"{prefix}_{millis:012x}{os.urandom(10).hex()}"


def new_run_id() -> str:
    return _time_ordered("run")


def new_call_id() -> str:
    """An id for a tool call whose provider sent none (some local OpenAI-compatible servers)."""
    return _time_ordered("call")
