"""A script driven in Monty, call by call: every tool call the script makes is answered with a future, and when
every task of the script waits (a `FutureSnapshot`), the calls made since are one batch: the interpreter's snapshot
is put on the script's run with them, and the batch runs as one turn of calls of that run (the loop's pipeline, which
saves the run, the calls marked `sent`, before any is sent). The results (or errors, as exceptions) resume it.

A run resumed after a crash or a person's decision loads the snapshot in a fresh interpreter: the calls of the last
batch that came back are answered from the run's record, the others settled as any resumed turn is (run/pending.py).
Monty is imported here only, when a script runs (the `code` extra)."""

import base64
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from toolwire_client.run import exits
from toolwire_client.run.script_record import ScriptRecord
from toolwire_client.run.state import RunState, StepRecord
from toolwire_client.strategies.code_mode import CodeMode
from toolwire_client.tools.source import ScriptTurns
from toolwire_shared.messages import AssistantMessage, ToolCall
from toolwire_shared.results import ToolResult
from toolwire_shared.tools import ToolSpec

if TYPE_CHECKING:
    import pydantic_monty as monty

INSTALL = "pip install 'toolwire[code]'"
MB = 1024 * 1024


class MontyMissing(ValueError):
    """Code mode was asked for where Monty is not installed."""

    def __init__(self) -> None:
        super().__init__(f"code mode runs scripts in Monty, which is not installed here: {INSTALL}")


def require_monty() -> None:
    """MontyMissing unless `pydantic_monty` can be imported (checked before a run starts, not at its first script)."""
    try:
        import pydantic_monty  # noqa: F401
    except ImportError:
        raise MontyMissing() from None


class ScriptFailed(exits.RunExit, code="script_error", status="failed"):
    """The script did not parse, raised, or passed one of its limits: `why` is what the model reads."""


@dataclass(frozen=True)
class ScriptTools:
    """The tools a script may call: its Python name -> the wire name the ToolBox routes, and each one's spec."""

    wire: dict[str, str]
    specs: dict[str, ToolSpec]
    """By wire name."""


async def drive(state: RunState, turns: ScriptTurns, tools: ScriptTools, options: CodeMode) -> NoReturn:
    """Run (or resume) the script of `state` to its end: raises FinalAnswer with what it returned and printed,
    ScriptFailed, or the exit a batch of calls raised (WaitingForApproval: the run pauses at that batch)."""
    import pydantic_monty as monty

    record = state.script
    assert record is not None
    limits: monty.ResourceLimits = {
        "max_memory": options.max_memory_mb * MB,
        "max_feed_duration_secs": options.max_script_s,
        "max_suspensions": 4 * options.max_tool_calls + 100,
    }
    out = monty.CollectString(max_bytes=4 * options.max_output_chars)
    async with monty.AsyncMonty(min_processes=1, max_processes=1) as pool, pool.checkout(limits=limits) as session:
        script = _Script(state, record, turns, tools, options, out)
        try:
            if record.snapshot is None:
                snap = await session.feed_start(record.code, print_callback=out)
            else:
                loaded = await session.load_snapshot(base64.b64decode(record.snapshot), print_callback=out)
                snap = await script.resumed(loaded)
            await script.run(snap)
        except monty.MontyError as exc:
            raise ScriptFailed(failure(exc, record.code, options, record.printed + out.output)) from None


class _Script:
    def __init__(
        self,
        state: RunState,
        record: ScriptRecord,
        turns: ScriptTurns,
        tools: ScriptTools,
        options: CodeMode,
        out: "monty.CollectString",
    ):
        self.state, self.record, self.turns, self.tools, self.options, self.out = (
            state,
            record,
            turns,
            tools,
            options,
            out,
        )
        self.printed_before = record.printed
        self.made = sum(len(step.tool_calls) for step in state.steps)
        self.batch: dict[int, ToolCall] = {}

    async def run(self, snap: "monty.AsyncSnapshot") -> NoReturn:
        import pydantic_monty as monty

        while True:
            if isinstance(snap, monty.MontyComplete):
                printed = self.printed_before + self.out.output
                raise exits.FinalAnswer(final_text(snap.output, printed, self.options), len(self.state.steps))
            if isinstance(snap, monty.AsyncFunctionSnapshot):
                snap = await self.called(snap)
            elif isinstance(snap, monty.AsyncNameLookupSnapshot):
                snap = await snap.resume()  # not a name of the script's: NameError, where the script can see it
            else:
                snap = await self.waits(snap)

    async def called(self, snap: "monty.AsyncFunctionSnapshot") -> "monty.AsyncSnapshot":
        """A tool call: a future for now (it runs with the rest of its batch); anything else: its error."""
        if snap.is_os_function:  # files, environment, clock beyond the defaults: Monty's own refusal
            return await snap.resume_not_handled()
        name = str(snap.function_name)
        wire = self.tools.wire.get(name)
        if wire is None:
            known = ", ".join(sorted(self.tools.wire)) or "none"
            return await snap.resume(
                {"exc_type": "NameError", "message": f"name {name!r} is not defined (tools: {known})"}
            )
        if snap.args:
            message = f"{name}() takes keyword arguments only, e.g. await {name}(name=value, ...)"
            return await snap.resume({"exc_type": "TypeError", "message": message})
        self.made += 1
        if self.made > self.options.max_tool_calls:
            where = line_at(self.record.code, snap.position.start)
            raise ScriptFailed(
                f"the script stopped at line {where}: it made more than {self.options.max_tool_calls} tool calls "
                "(the limit); make fewer calls per script"
            )
        self.batch[snap.call_id] = ToolCall(id=f"call_{snap.call_id}", name=wire, arguments=dict(snap.kwargs))
        return await snap.resume({"future": ...})

    async def waits(self, snap: "monty.AsyncFutureSnapshot") -> "monty.AsyncSnapshot":
        """Every task waits: the calls made since the last batch run now, as one turn of the script's run, after the
        snapshot is on the run (the turn saves it before any call is sent)."""
        pending = snap.pending_call_ids
        calls = [self.batch.pop(i) for i in sorted(pending) if i in self.batch]
        if calls:
            record = self.record
            record.snapshot = base64.b64encode(snap.dump()).decode()
            record.calls = {i: f"call_{i}" for i in pending}
            record.printed = self.printed_before + self.out.output
            step = StepRecord(index=len(self.state.steps) + 1, tool_calls=calls)
            self.state.messages.append(AssistantMessage(tool_calls=calls))
            self.state.steps.append(step)
            await self.turns.act(step)
        return await snap.resume(self.answers(pending))

    async def resumed(self, snap: "monty.AsyncSnapshot") -> "monty.AsyncSnapshot":
        """A loaded snapshot is the last batch waiting: its calls settled (those that came back are on record; the
        others run, are answered, or still wait for a person), then the script goes on with their results."""
        import pydantic_monty as monty

        if not isinstance(snap, monty.AsyncFutureSnapshot):
            raise exits.HarnessFailed(f"the script's saved state is not a batch of calls ({type(snap).__name__})")
        self.printed_before = self.record.printed
        step = self.state.steps[-1]
        if {r.call_id for r in step.results} < {c.id for c in step.tool_calls}:
            await self.turns.settle()
        return await snap.resume(self.answers(snap.pending_call_ids))

    def answers(self, pending: list[int]) -> "dict[int, monty.ExternalSettledResult]":
        results = {r.call_id: r for step in self.state.steps[-1:] for r in step.results}
        answered: dict[int, monty.ExternalSettledResult] = {}
        for i in pending:
            result = results.get(self.record.calls.get(i, ""))
            if result is None:
                answered[i] = {"exc_type": "RuntimeError", "message": "the call has no result (it was not run)"}
            else:
                answered[i] = answer(result, self.tools.specs.get(result.name))
        return answered


ERRORS: "dict[str, monty.ExcType]" = {
    "timeout": "TimeoutError",
    "bad_arguments": "TypeError",
    "unknown_tool": "NameError",
    "rejected": "PermissionError",
    "refused": "PermissionError",
}
"""The exception a tool error raises in the script, by its kind; any other kind raises RuntimeError."""


def answer(result: ToolResult, spec: ToolSpec | None) -> "monty.ExternalSettledResult":
    """What a tool call returns to the script: its structured value (a wrapped one unwrapped), else its text; an
    error raises an exception that names the tool and says what went wrong. Without the tool's spec (a replay) a
    value of exactly `{"result": ...}` is taken as wrapped."""
    if result.is_error:
        kind = ERRORS.get(result.error_kind or "", "RuntimeError")
        return {"exc_type": kind, "message": f"{result.name} failed ({result.error_kind}): {result.content}"}
    value: Any = result.content
    if result.structured is not None:
        value = result.structured
        schema = spec.output_schema if spec is not None else {"properties": {"result": {}}}
        properties = (schema or {}).get("properties")
        if isinstance(properties, dict) and list(properties) == ["result"] and list(value) == ["result"]:
            value = value["result"]
    return {"return_value": value}


def final_text(value: Any, printed: str, options: CodeMode) -> str:
    """What run_code returns: what the script printed, then its last expression's value (JSON where it is data)."""
    parts = [printed.rstrip("\n")] if printed.strip() else []
    if value is not None:
        parts.append(value if isinstance(value, str) else _json(value))
    text = "\n".join(parts) or "(the script returned None and printed nothing)"
    cap = options.max_output_chars
    if len(text) > cap:
        text = text[:cap] + f"\n[cut: the script's output was {len(text)} characters, over {cap}; return less]"
    return text


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def line_at(code: str, offset: int) -> int:
    """The 1-based line of a UTF-8 byte offset into the script."""
    return code.encode()[:offset].count(b"\n") + 1


def failure(exc: "monty.MontyError", code: str, options: CodeMode, printed: str) -> str:
    """A readable line on what stopped the script and where (never a traceback of toolwire's), after what it printed."""
    import pydantic_monty as monty

    said = printed.rstrip("\n")
    before = f"\n(printed before it stopped:\n{said[-2000:]})" if said else ""
    if isinstance(exc, monty.MontySyntaxError):
        frames = exc.traceback()
        where = f" at line {frames[-1].line}" if frames else ""
        shown = f": {frames[-1].source_line.strip()}" if frames and frames[-1].source_line else ""
        return f"the script does not parse{where}{shown}: {exc.display('msg')}"
    if isinstance(exc, monty.MontyRuntimeError):
        frames = exc.traceback()
        raised = exc.display("type-msg")
        if raised.startswith("MemoryError") and f"> {4 * options.max_output_chars} bytes" in raised:
            return f"the script printed more than its limit of {options.max_output_chars} characters"
        if raised.startswith("TimeoutError: feed time limit"):
            return (
                f"the script ran past its limit of {options.max_script_s:g} s of computing (a loop that never ends?)"
                + before
            )
        if raised.startswith("MemoryError: memory limit"):
            return f"the script used more than its limit of {options.max_memory_mb} MB of memory" + before
        if not frames:
            return f"the script stopped: {raised}" + before
        frame = frames[-1]
        shown = f" ({frame.source_line.strip()})" if frame.source_line else ""
        return f"the script raised at line {frame.line}{shown}: {raised}" + before
    if isinstance(exc, monty.MontyCrashedError):
        return (
            "the sandbox stopped while it ran the script (it crashed or ran out of time); nothing after its last tool "
            "call ran" + before
        )
    return f"the script was refused: {exc}"
