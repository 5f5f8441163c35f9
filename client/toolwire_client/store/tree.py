"""Runs as a tree: a sub-agent's run under the run that started it (`toolwire runs`, `trace show`, `toolwire ui`)."""

from toolwire_client.run.state import RunState
from toolwire_client.store.base import RunStore, RunSummary


def as_tree(found: list[RunSummary]) -> list[tuple[int, RunSummary]]:
    """The runs in their order, each sub-agent's run (depth 1, 2, ...) right under the run that started it; one whose
    parent is not in the list stays at the top level."""
    listed = {s.run_id for s in found}
    below: dict[str, list[RunSummary]] = {}
    for s in found:
        if s.parent_run_id in listed:
            below.setdefault(s.parent_run_id, []).append(s)
    ordered: list[tuple[int, RunSummary]] = []

    def add(s: RunSummary, depth: int) -> None:
        ordered.append((depth, s))
        for child in sorted(below.get(s.run_id, []), key=lambda c: (c.started_at, c.run_id)):
            add(child, depth + 1)

    for s in found:
        if s.parent_run_id not in listed:
            add(s, 0)
    return ordered


async def load_tree(store: RunStore, run_id: str) -> tuple[RunState, dict[str, RunState]]:
    """The run and every sub-agent run below it, by run id."""
    root = await store.load(run_id)
    found: dict[str, RunState] = {}
    todo = [sub.run_id for sub in root.children.values()]
    while todo:
        child = await store.load(todo.pop())
        found[child.run_id] = child
        todo += [sub.run_id for sub in child.children.values()]
    return root, found
