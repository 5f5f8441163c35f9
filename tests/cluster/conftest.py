"""The cluster tests start the fleet tests' workers and runs (tests/fleet/fleet_procs.py, test_fleet_replay.py):
their folder is importable here as it is there."""

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from helpers.run_store import opened_store
from toolwire_client.store import SqlRunStore

FLEET = str(Path(__file__).resolve().parents[1] / "fleet")
if FLEET not in sys.path:
    sys.path.insert(0, FLEET)

from cluster.netns import Cluster, open_cluster  # noqa: E402  (after the fleet folder is importable)


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    """PostgreSQL and the test module's `WORKERS` worker namespaces, always torn down."""
    made = open_cluster(workers=request.module.WORKERS)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
async def store(cluster: Cluster) -> AsyncIterator[SqlRunStore]:
    """The cluster's run store, reached over PostgreSQL's Unix socket."""
    async with opened_store(cluster.url) as opened:
        yield opened
