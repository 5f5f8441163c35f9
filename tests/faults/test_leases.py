"""One driver per run: a live driver's run cannot be resumed elsewhere; a driver that lost its lease stops before its
next tool call and saves nothing over the new driver's state; the heartbeat keeps a lease fresh without step saves."""

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from helpers.polling import await_until
from store.procs import load, rows, run_cli, setup_dirs, spawn_run
from toolwire_client.loop import Agent
from toolwire_client.models.base import ModelReply
from toolwire_client.models.scripted import ScriptedModel
from toolwire_client.run.state import RunState
from toolwire_client.store import LeaseLost, SqlRunStore
from toolwire_client.store.lease import Lease
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server import Registry
from toolwire_shared.messages import AssistantMessage, Message, ToolCall
from toolwire_shared.tools import ToolSpec


def steal(db: str, run_id: str) -> None:
    """Another driver takes the run over behind this one's back (as a takeover after a missed heartbeat would)."""
    sql = "UPDATE runs SET claimed_by = 'thief:1:x' WHERE run_id = "
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute(sql + "%s", (run_id,))
        return
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(sql + "?", (run_id,))
    finally:
        conn.close()


async def test_a_run_whose_driver_is_alive_cannot_be_resumed(db: str, tmp_path: Path) -> None:
    tools_db, gate = setup_dirs(tmp_path)
    driver = spawn_run(db, "run_live", tools_db, gate, env={"DURABLE_HANG_STEP": "1"})
    await await_until(anyio.Path(gate / "model_started").exists, "the driver's first model call", proc=driver)
    refused = await run_cli(db, "resume", "run_live")
    assert refused.returncode == 3 and "is being driven by another process" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    (gate / "release").touch()
    out, err = driver.communicate(timeout=60)
    assert driver.returncode == 0 and "run_live: done" in out, err
    assert rows(tools_db, "SELECT COUNT(*) FROM refunds") == [(1,)]  # run once, by the one driver


class StolenDuringTheModelCall(ScriptedModel):
    """While its model call is in progress, another driver takes the run over."""

    def __init__(self, db: str) -> None:
        super().__init__(lambda m: AssistantMessage(tool_calls=[ToolCall(id="c1", name="write", arguments={})]))
        self.db = db

    async def complete(self, messages: list[Message], tools: list[ToolSpec], **_: Any) -> ModelReply:
        steal(self.db, "run_stolen")
        return await super().complete(messages, tools)


async def test_a_driver_that_lost_its_lease_stops_before_its_next_tool_call(db: str, store: SqlRunStore) -> None:
    wrote: list[str] = []
    registry = Registry("local")

    def write() -> str:
        """A side effect."""
        wrote.append("x")
        return "written"

    registry.add(write)
    agent = Agent(StolenDuringTheModelCall(db), ToolBox([RegistrySource(registry)]), store=store)
    state = await agent.run("t", run_id="run_stolen")
    assert (state.stop_reason, wrote) == ("lease_lost", [])
    assert "this process no longer drives the run" in (state.report or "")
    saved = await load(db, "run_stolen")
    assert saved.steps == [] and saved.status == "running"  # nothing of the loser's was saved over the new driver


async def test_the_heartbeat_renews_the_lease_and_notices_a_takeover(db: str, store: SqlRunStore) -> None:
    state = RunState(run_id="run_beat", agent_name="a", task="t", model="m")
    async with Lease(store, state, ttl_s=0.3) as lease:
        first = lease.renewed
        await await_until(lambda: lease.renewed > first, "a heartbeat", timeout_s=10)
        lease.check()  # fresh
        steal(db, "run_beat")
        await await_until(lambda: lease.lost is not None, "the heartbeat to notice", timeout_s=10)
        with pytest.raises(Exception, match="another process took the run over"):
            lease.check()
    with pytest.raises(LeaseLost):  # and every save of the loser is refused
        await store.save(await store.load("run_beat"), owner=lease.owner)
