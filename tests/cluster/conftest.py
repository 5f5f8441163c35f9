"""The cluster tests start the fleet tests' workers and runs (tests/fleet/fleet_procs.py, test_fleet_replay.py):
their folder is importable here as it is there."""

import sys
from pathlib import Path

FLEET = str(Path(__file__).resolve().parents[1] / "fleet")
if FLEET not in sys.path:
    sys.path.insert(0, FLEET)
