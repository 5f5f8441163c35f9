"""A door that drives its runs (`agent serve --a2a | --ag-ui`) and a door of the worker fleet (`--fleet`) never serve
one run store together: the second to start is refused in one line naming the first, on SQLite and PostgreSQL. Doors
of one kind share a store; a door killed -9 blocks nobody, and neither does a door elsewhere whose row has not been
renewed for the lease's length."""

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers.cli import REPO, TOOLWIRE, clean_env
from helpers.servers import free_port, stop_process, wait_until_ok
from store.conftest import db
from toolwire_client.fleet.door_kinds import OtherKindOfDoor, holding
from toolwire_client.fleet.tables import ensure_tables
from toolwire_client.store import SqlRunStore
from toolwire_client.store.claims import LEASE_S

__all__ = ["db"]

SUPPORT = f"{sys.executable} -m toolwire_server examples.support_tools:registry --stdio"


class Door:
    """`agent serve --a2a|--ag-ui [--fleet]` on `db`, listening (or refused: `refused()`)."""

    def __init__(self, tmp: Path, db: str, protocol: str, fleet: bool) -> None:
        self.port = free_port()
        self.log = tmp / f"door-{self.port}.log"
        servers = ["--fleet", "--fleet-server", "support"] if fleet else ["--server", SUPPORT]
        argv = [
            TOOLWIRE, "agent", "serve", protocol, "--model", "openai:local", *servers, "--db", db,
            "--port", str(self.port),
        ]  # fmt: skip
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen(argv, cwd=REPO, env=clean_env(OPENAI_API_KEY="test"), stderr=log)
        path = ".well-known/agent-card.json" if protocol == "--a2a" else "ag-ui"
        self.url = f"http://127.0.0.1:{self.port}/{path}"

    def serving(self) -> "Door":
        wait_until_ok(self.url, self.proc, self.log, 60, "the door")
        return self

    def refused(self) -> str:
        """The one line it exited with (it must exit, non-zero, without a traceback)."""
        code = self.proc.wait(timeout=60)
        said = self.log.read_text()
        assert code != 0 and "Traceback" not in said, said
        lines = [line for line in said.splitlines() if line.startswith("Error:")]
        assert len(lines) == 1, said
        return lines[0]

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def doors() -> Iterator[list[Door]]:
    started: list[Door] = []
    yield started
    for door in started:
        stop_process(door.proc)


def test_the_other_kind_is_refused_until_the_first_is_killed(doors: list[Door], db: str, tmp_path: Path) -> None:
    def door(protocol: str, fleet: bool) -> Door:
        doors.append(Door(tmp_path, db, protocol, fleet))
        return doors[-1]

    driving = door("--a2a", False).serving()
    also_driving = door("--ag-ui", False).serving()  # one kind: both may serve the store
    said = door("--a2a", True).refused()
    assert f"toolwire agent serve --a2a at http://127.0.0.1:{driving.port}/" in said
    assert f"pid {driving.proc.pid}" in said and "drives its runs itself" in said
    assert "Stop it, or serve this agent without --fleet as it does" in said

    driving.kill()  # -9: no row deleted; the other driving door still holds the store
    assert f"pid {also_driving.proc.pid}" in door("--a2a", True).refused()
    also_driving.kill()
    fleet = door("--a2a", True).serving()  # nobody left alive of the other kind: the killed doors block nothing
    door("--ag-ui", True).serving()
    said = door("--a2a", False).refused()
    assert f"toolwire agent serve --a2a --fleet at http://127.0.0.1:{fleet.port}/" in said
    assert "leaves its runs to the worker fleet (--fleet)" in said


async def test_a_row_of_another_machine_blocks_until_its_lease_runs_out(store: SqlRunStore, db: str) -> None:
    """A holder of another pid space cannot be seen to exit: its row counts until LEASE_S without a renewal."""
    await ensure_tables(store)
    elsewhere = "door-host-b:4242:abcdef12:otherspace00"
    await store.transaction(
        lambda tx: tx.execute(
            f"INSERT INTO fleet_doors (holder, kind, door, beat_at) VALUES (?, 'fleet', 'the door on b', "
            f"{store.epoch_clock})",
            (elsewhere,),
        )
    )
    with pytest.raises(OtherKindOfDoor, match=r"the door on b \(pid 4242 on door-host-b\) serves this run store"):
        async with holding(db, "driving", "a driving door"):
            pass
    async with holding(db, "fleet", "another fleet door"):  # the same kind: welcome
        pass
    await store.transaction(
        lambda tx: tx.execute("UPDATE fleet_doors SET beat_at = beat_at - ? WHERE holder = ?", (LEASE_S + 1, elsewhere))
    )
    async with holding(db, "driving", "a driving door"):  # its lease ran out by the database's clock
        rows = await store.transaction(lambda tx: tx.execute("SELECT kind, door FROM fleet_doors").fetchall())
        assert [tuple(r) for r in rows] == [("driving", "a driving door")]
    rows = await store.transaction(lambda tx: tx.execute("SELECT holder FROM fleet_doors").fetchall())
    assert rows == []  # let go when it stopped
