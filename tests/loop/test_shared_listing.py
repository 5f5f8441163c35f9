"""Runs on one shared connection to a server that says when its tool and resource lists change (a 2026-07-28
`subscriptions/listen` stream) are given the connection's listings: the server is asked for its tools and resources
once, not once per run, until it says they changed; then every run on the connection lists its tools again before
its next model call (the run that is going on too), and the next run is offered the new tool and resource from its
first step."""

import json
import sys
from pathlib import Path

from loop.test_server_notifications import Recorder
from toolwire_client.assembly.agents import toolbox_for
from toolwire_client.assembly.sources import build_sources
from toolwire_client.config import RunConfig, ServerSpec
from toolwire_client.loop import Agent
from toolwire_client.run.state import RunState
from toolwire_client.tools.shared_connections import SharedConnections

SERVER = str(Path(__file__).resolve().parent / "listing_server.py")
SPEC = ServerSpec(name="listing", command=[sys.executable, SERVER])


async def run(recorder: Recorder) -> RunState:
    config = RunConfig(model="scripted:listing", servers=[SPEC])
    state = await Agent(recorder.model, toolbox_for(config, build_sources([SPEC])), config=config).run("go")
    assert state.status == "done", (state.stop_reason, state.report)
    return state


async def test_runs_on_one_connection_share_its_listings_until_the_server_says_they_changed() -> None:
    async with SharedConnections():
        first, second = Recorder("listings"), Recorder("listings")
        assert (await run(first)).final_answer == "got: tools 1, resources 1"
        assert (await run(second)).final_answer == "got: tools 1, resources 1"  # given the first run's listings

        adding = Recorder("add_late_tool", "late_tool")
        assert (await run(adding)).final_answer == "got: late and working"
        assert "late_tool" not in adding.requests[0][1] and "late_tool" in adding.requests[1][1]

        after = Recorder("late_tool", "listings")
        assert (await run(after)).final_answer == "got: tools 2, resources 1"  # listed once more, for both runs
        assert "late_tool" in after.requests[0][1]

        memo = Recorder("add_memo", "listings")
        assert (await run(memo)).final_answer == "got: tools 2, resources 1"
        told = Recorder("listings")
        state = await run(told)
        assert state.final_answer == "got: tools 2, resources 2"  # the new run lists the resources again
        assert "memo://second" in json.dumps(state.config)  # and is told of the new one


async def test_without_a_shared_connection_each_run_lists_its_own() -> None:
    first, second = Recorder("listings"), Recorder("listings")
    assert (await run(first)).final_answer == "got: tools 1, resources 1"
    assert (await run(second)).final_answer == "got: tools 1, resources 1"  # its own server process, asked once
