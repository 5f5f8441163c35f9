"""The body of a driver script (tests/store/driver.py, tests/code_mode/code_driver.py): one run in a process of its
own, so a test can kill it, its outcome printed on the line the test reads."""

from helpers.run_store import opened_store
from toolwire_client.assembly.agents import build_agent
from toolwire_client.config import RunConfig


async def run_and_say(db: str, config: RunConfig, task: str, run_id: str) -> None:
    """Run `task` as `run_id` on the store at `db`, then print `RUN_ID: STATUS (STOP_REASON)` to stdout."""
    async with opened_store(db) as store:
        state = await build_agent(config, store=store).run(task, run_id)
        print(f"{state.run_id}: {state.status} ({state.stop_reason})", flush=True)
