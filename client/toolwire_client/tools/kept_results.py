"""Results kept out of the prompt: the `read_result` tool, and the layer that offers it (tools/tool_layers.py).

A long result stays whole in the run's message list (and so in the run store); the request gets its head and a
handle (run/context_view.py). `read_result(call_id, offset?, length?, pattern?)` reads any part of it from the
calling run's own list: a range of characters, or the lines a regular expression matches. The layer offers the
tool from the first request that keeps a result out on (`KeptResults.needed`), so a run whose results all fit is
offered nothing more."""

import re
import time
from collections.abc import Sequence
from typing import Any

from toolwire_client import texts
from toolwire_client.run.context_view import DEFAULT_INLINE_RESULT_CHARS, READ_RESULT
from toolwire_client.tools.source import ToolRequest, ToolSource
from toolwire_client.tools.tool_layers import Route
from toolwire_shared.messages import Message, ToolResultMessage
from toolwire_shared.results import ToolResult, failed
from toolwire_shared.tools import ToolPolicy, ToolSpec, closed_object

SCHEMA = closed_object(
    {
        "call_id": {"type": "string", "description": "The call_id the result's note names."},
        "offset": {"type": "integer", "minimum": 0, "description": "The first character to read (default 0)."},
        "length": {"type": "integer", "minimum": 1, "description": "How many characters to read at most."},
        "pattern": {"type": "string", "description": "A regular expression: only the lines that match, numbered."},
    },
    ["call_id"],
)
SPEC = ToolSpec(
    name=READ_RESULT,
    description=texts.READ_RESULT_DESCRIPTION,
    input_schema=SCHEMA,
    policy=ToolPolicy(idempotent=True),
)


class ResultReader(ToolSource):
    """The source of `read_result`: reads the calling run's own message list, in this process."""

    name = READ_RESULT
    times_out_itself = True  # answers at once, from memory

    def __init__(self, length: int = DEFAULT_INLINE_RESULT_CHARS):
        self.length = length
        """What one read returns at most: the inline size, so a read never brings back the bulk it was kept from."""

    async def list_tools(self) -> list[ToolSpec]:
        return [SPEC]

    async def call(self, request: ToolRequest) -> ToolResult:
        started = time.perf_counter()
        call = request.call
        messages = request.run.state.messages if request.run.state is not None else []
        results = {m.call_id: m for m in messages if isinstance(m, ToolResultMessage) and m.name != READ_RESULT}
        example = _example(messages, self.length)
        args = call.arguments
        problem = _problem(args, results)
        if problem is not None:
            text = texts.read_result_problem(problem, example)
            return failed(call.id, call.name, "bad_arguments", text, since=started)
        content = results[args["call_id"]].content
        offset, length, pattern = args.get("offset", 0), min(args.get("length", self.length), self.length), None
        if "pattern" in args:
            try:
                pattern = re.compile(args["pattern"])
            except re.error as exc:
                problem = f"pattern {args['pattern']!r} is not a regular expression ({exc})"
                return failed(call.id, call.name, "bad_arguments", texts.read_result_problem(problem, example))
        text = _read(args["call_id"], content, offset, length, pattern)
        return ToolResult(call_id=call.id, name=call.name, content=text, duration_s=time.perf_counter() - started)


def _read(call_id: str, content: str, offset: int, length: int, pattern: re.Pattern[str] | None) -> str:
    if pattern is None:
        end = min(offset + length, len(content))
        return texts.read_result_part(call_id, offset, end, len(content)) + content[offset:end]
    lines = "\n".join(f"{n}: {line}" for n, line in enumerate(content.splitlines(), start=1) if pattern.search(line))
    end = min(offset + length, len(lines))
    return texts.read_result_lines(call_id, pattern.pattern, offset, end, len(lines)) + lines[offset:end]


def _problem(args: dict[str, Any], results: dict[str, ToolResultMessage]) -> str | None:
    """What is wrong with a call's arguments, or None."""
    unknown = sorted(set(args) - set(SCHEMA["properties"]))
    if unknown:
        return f"{unknown[0]} is not an argument of read_result (its arguments: call_id, offset, length, pattern)"
    call_id = args.get("call_id")
    if not isinstance(call_id, str) or not call_id:
        return "call_id (a string: the call_id a result's note names) is required"
    for name, least in (("offset", 0), ("length", 1)):
        value = args.get(name, least)
        if not isinstance(value, int) or isinstance(value, bool) or value < least:
            return f"{name} must be an integer of at least {least} (got {value!r})"
    if "pattern" in args and not isinstance(args["pattern"], str):
        return f"pattern must be a string, a regular expression (got {args['pattern']!r})"
    if call_id not in results:
        known = ", ".join(list(results)[-10:]) or "none yet"
        return f"no result of this run has call_id {call_id!r} (the latest: {known})"
    return None


def _example(messages: Sequence[Message], inline_chars: int) -> str:
    """The call id of the run's latest long result, else of its latest result: what a correct call would name."""
    results = [m for m in messages if isinstance(m, ToolResultMessage) and m.name != READ_RESULT]
    long = [m for m in results if len(m.content) > inline_chars]
    chosen = long or results
    return chosen[-1].call_id if chosen else "call_1"


class KeptResults:
    """The layer: offers `read_result` (a route to its own ResultReader) once the run has kept a result out of the
    prompt or cleared one, from the request that does on."""

    def __init__(self, length: int = DEFAULT_INLINE_RESULT_CHARS):
        self.reader = ResultReader(length)
        self.offered = False
        self._routed = False

    def needed(self) -> None:
        """A result is kept out of the next request: the tool is offered from that request on."""
        self.offered = True

    def changed(self) -> bool:
        return self.offered != self._routed

    def check(self, named: list[Route], sources: Sequence[ToolSource]) -> None:
        if any(route.known == READ_RESULT for route in named):
            raise ValueError(
                "a tool server of this run has a tool named read_result, the client's own tool for results kept "
                "out of the prompt: rename it, or run with --inline-result-chars 0 and no --context-budget"
            )

    def offer(self, routes: list[Route]) -> list[Route]:
        self._routed = self.offered
        if not self.offered or any(route.known == READ_RESULT for route in routes):
            return routes  # a replay's source offers the recorded tool, and answers from the record
        return [*routes, Route(self.reader, READ_RESULT, SPEC, READ_RESULT, frozenset({READ_RESULT}))]
