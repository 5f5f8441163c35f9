"""Turn judged attempts into the per-task and total figures: success rate, path, steps, tokens, cost, latency."""

from dataclasses import asdict, dataclass
from statistics import mean
from typing import Any

from rich.table import Table

from toolwire_client.evals.runner import Attempt


@dataclass(frozen=True)
class Summary:
    name: str
    attempts: int
    successes: int
    right_tools: float | None
    right_order: float | None
    right_skills: float | None
    """Skills: the share of attempts that loaded exactly the expected skills (None: no task expects any)."""
    mean_steps: float
    tokens: int
    cost_usd: float | None
    """Summed over attempts; None when any attempt's model has no known price (never a partial sum shown as whole)."""
    mean_latency_s: float
    failed_runs: list[str]

    @property
    def success_rate(self) -> float:
        return self.successes / self.attempts if self.attempts else 0.0


def _rate(values: list[bool | None]) -> float | None:
    judged = [v for v in values if v is not None]
    return sum(judged) / len(judged) if judged else None


def summarise(name: str, attempts: list[Attempt]) -> Summary:
    costs = [a.cost_usd for a in attempts]
    return Summary(
        name=name,
        attempts=len(attempts),
        successes=sum(a.success for a in attempts),
        right_tools=_rate([a.right_tools for a in attempts]),
        right_order=_rate([a.right_order for a in attempts]),
        right_skills=_rate([a.right_skills for a in attempts]),
        mean_steps=mean(a.steps for a in attempts) if attempts else 0.0,
        tokens=sum(a.tokens for a in attempts),
        cost_usd=None if not costs or any(c is None for c in costs) else sum(c for c in costs if c is not None),
        mean_latency_s=mean(a.latency_s for a in attempts) if attempts else 0.0,
        failed_runs=[a.run_id for a in attempts if not a.success and a.saved and a.run_id],
    )


def per_task(attempts: list[Attempt]) -> list[Summary]:
    names = list(dict.fromkeys(a.task for a in attempts))
    return [summarise(n, [a for a in attempts if a.task == n]) for n in names]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def _usd(value: float | None) -> str:
    return "—" if value is None else f"${value:.4f}"


def table(attempts: list[Attempt]) -> Table:
    out = Table(title="eval results")
    rows = per_task(attempts)
    total = summarise("total", attempts)
    skills = total.right_skills is not None  # the column only for a set whose tasks expect skills
    columns = ["task", "success", "right tools", "right order", *(["right skills"] if skills else [])]
    for column in (*columns, "steps", "tokens", "cost", "latency"):
        out.add_column(column, justify="left" if column == "task" else "right", no_wrap=True)
    for i, s in enumerate([*rows, total]):
        out.add_row(
            s.name,
            f"{s.successes}/{s.attempts} {_pct(s.success_rate)}",
            _pct(s.right_tools),
            _pct(s.right_order),
            *([_pct(s.right_skills)] if skills else []),
            f"{s.mean_steps:.1f}",
            str(s.tokens),
            _usd(s.cost_usd),
            f"{s.mean_latency_s:.2f} s",
            end_section=i == len(rows) - 1,
            style="bold" if s is total else None,
        )
    return out


def failures(attempts: list[Attempt]) -> list[str]:
    """One line per failed attempt: why, and how to reproduce it."""
    lines = []
    for a in attempts:
        if a.success:
            continue
        why = a.error or _why(a)
        replay = f" — replay: toolwire replay {a.run_id}" if a.saved else ""
        lines.append(f"{a.task} #{a.repeat}: {why}{replay}")
    return lines


def _why(a: Attempt) -> str:
    if a.status != "done":
        return f"run {a.status} ({a.stop_reason})"
    if not a.answer_ok:
        return f"answer did not pass the check: {a.answer!r}"
    parts = [
        label
        for label, ok in (
            ("wrong tools", a.right_tools),
            ("wrong order", a.right_order),
            ("too many steps", a.within_steps),
            ("over cost", a.within_cost),
            ("too many replans", a.within_replans),
            ("too many reviews", a.within_reviews),
            (f"skills loaded {a.skills}", a.right_skills),
        )
        if ok is False
    ]
    return ", ".join(parts) + f" (called {a.called})"


def as_json(attempts: list[Attempt], *, threshold: float | None = None) -> dict[str, Any]:
    total = summarise("total", attempts)

    def summary_dict(s: Summary) -> dict[str, Any]:
        return {**asdict(s), "success_rate": s.success_rate}

    return {
        "total": summary_dict(total),
        "tasks": [summary_dict(s) for s in per_task(attempts)],
        "attempts": [{**asdict(a), "success": a.success, "tokens": a.tokens} for a in attempts],
        "threshold": threshold,
        "passed": None if threshold is None else total.success_rate >= threshold,
    }
