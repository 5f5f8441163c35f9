"""Sub-agents in a few lines: the parent hands its task to a sub-agent through the `delegate` tool and reads only
its answer; both runs are saved, linked, and printed as one nested step table.

    python examples/delegate.py [MODEL_SPEC]    (default scripted:delegates: no network, no key)
"""

import sys
import tempfile
from pathlib import Path

import anyio

from toolwire_client import Delegation, RunConfig, RunLimits, ServerSpec, build_agent, open_store, trace_lines

HERE = Path(__file__).resolve().parent


async def main(model: str) -> None:
    folder = Path(tempfile.mkdtemp(prefix="toolwire-delegate-"))
    server = ServerSpec(
        name="support",
        command=[sys.executable, "-m", "toolwire_server", "examples.support_tools:registry", "--stdio"],
        env={"TOOLWIRE_SUPPORT_DB": str(folder / "support.sqlite3")},
        cwd=str(HERE.parent),
    )
    config = RunConfig(model=model, servers=[server], limits=RunLimits(max_steps=10), delegate=Delegation(max_steps=6))
    store = await open_store(str(folder / "runs.db"))
    try:
        parent = await build_agent(config, store=store).run("What does order A123 cost in total with 18% GST?")
        children = {sub.run_id: await store.load(sub.run_id) for sub in parent.children.values()}
    finally:
        await store.aclose()
    print("\n".join(trace_lines(parent, children=children)))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "scripted:delegates")
