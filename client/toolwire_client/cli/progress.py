"""`toolwire run`'s live lines above the step rows: the model's streamed text (`--stream`), and each progress report
of a running tool call (MCP notifications/progress) as a line of its own, as it arrives, above the step row the call
ends in: `  ... tool audit_orders: 3/10 checked A125`."""

from rich.console import Console

from toolwire_shared.messages import ToolCall
from toolwire_shared.terminal import shown


class LiveText:
    """`run --stream`: the model's text printed as it streams in, on its own line above the step row it ends in.

    A stream that breaks and is retried shows its text again from the start (the retry is a new reply)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.open = False

    def __call__(self, delta: str) -> None:
        if not self.open:
            self.console.print("  ... ", end="", markup=False, highlight=False)
            self.open = True
        self.console.print(shown(delta), end="", markup=False, highlight=False)
        self.console.file.flush()

    def end_line(self) -> None:
        if self.open:
            self.console.print()
            self.open = False


def progress_line(name: str, progress: float, total: float | None, message: str | None) -> str:
    """`progress/total message`; no count where there is none (a task's status message comes with progress 0)."""
    done = f"{progress:g}/{total:g}" if total is not None else f"{progress:g}" if progress or not message else ""
    return shown(f"  ... tool {name}: " + " ".join(part for part in (done, message) if part))


class LiveProgress:
    """The ToolBox's on_progress for the CLI. A streamed reply's open line is ended first, so the two never mix."""

    def __init__(self, console: Console, live: LiveText | None = None) -> None:
        self.console, self.live = console, live

    def __call__(self, call: ToolCall, progress: float, total: float | None, message: str | None) -> None:
        if self.live is not None:
            self.live.end_line()
        self.console.print(progress_line(call.name, progress, total, message), markup=False, highlight=False)
        self.console.file.flush()
