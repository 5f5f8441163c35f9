"""Live progress of an eval while it runs: runs done of total, successes so far, tokens and cost so far."""

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from toolwire_client.evals.runner import Attempt


class LiveProgress:
    def __init__(self, console: Console, total: int):
        self.total = total
        self.done = self.successes = self.tokens = 0
        self.cost_usd = 0.0
        self.unpriced = 0
        self._progress = Progress(
            TextColumn("eval"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._task = self._progress.add_task(self.line(), total=total)

    def line(self) -> str:
        priced = self.done - self.unpriced
        cost = "—" if self.done and not priced else f"${self.cost_usd:.4f}"
        cost += f" ({self.unpriced} unpriced)" if self.unpriced else ""
        return f"ok {self.successes}/{self.done}  tokens {self.tokens}  cost {cost}"

    def add(self, attempt: Attempt) -> None:
        self.done += 1
        self.successes += attempt.success
        self.tokens += attempt.tokens
        if attempt.cost_usd is None:
            self.unpriced += 1
        else:
            self.cost_usd += attempt.cost_usd
        self._progress.update(self._task, advance=1, description=self.line())

    def __enter__(self) -> "LiveProgress":
        self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._progress.stop()
