"""Where a fleet step's cost goes: one `toolwire worker` under cProfile (every thread: DBOS checks and records its
steps from worker threads, which a plain `python -m cProfile` does not see), and what it asks of PostgreSQL per
loop step: DBOS's `operation_outputs` rows by step name, `workflow_status` rows, transactions, and every statement
the worker sent (PostgreSQL's own statement log, `log_statement = all` for the bench's database only).

The runs are fleet_bench's (3-step runs: a loopback model every 200 ms, one shared `toolwire serve --http`).

`python -m bench.fleet_profile [N] [--top K]` prints the figures as JSON and the profile's top entries.
"""

import argparse
import cProfile
import json
import marshal
import os
import pstats
import re
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from bench import fleet_bench  # also puts tests/ and tests/fleet/ on sys.path, as the fleet bench does

WORKER_APP, BENCH_APP = "toolwire-worker", "toolwire-bench"
"""application_name (libpq's PGAPPNAME) of the worker's connections and of this script's: the statement log keeps
them apart."""
WORKER_APPS = (WORKER_APP, "dbos_transact")
"""DBOS names its own connections (its engine's application_name); its client's are `dbos_transact_client`."""


def profiled_worker(out: Path, argv: list[str]) -> None:
    """`toolwire worker ...` with a cProfile per thread; each thread's stats written beside `out` at exit."""
    profiles: list[cProfile.Profile] = []
    lock = threading.Lock()

    def start_thread_profile(*_: Any) -> None:
        profile = cProfile.Profile(time.thread_time)  # CPU, not waits; enable() replaces this hook in this thread
        with lock:
            profiles.append(profile)
        profile.enable()

    main_profile = cProfile.Profile(time.thread_time)
    threading.setprofile(start_thread_profile)
    main_profile.enable()
    try:
        from toolwire_client.cli import main

        main.main(argv, standalone_mode=False)
    finally:
        main_profile.disable()
        threading.setprofile(None)
        for i, profile in enumerate([main_profile, *profiles]):
            profile.snapshot_stats()  # not create_stats: disabling another thread's profiler from here is unsafe
            with out.with_name(f"{out.name}.{i}").open("wb") as f:
                marshal.dump(profile.stats, f)


def statements(log: Path, db: str) -> Counter[str]:
    """The worker's statements (its own connections and DBOS's) in PostgreSQL's log for database `db`, by kind:
    the first word and the first table named."""
    kinds: Counter[str] = Counter()
    pattern = re.compile(r"^(?P<db>[^|]*)\|(?P<app>[^|]*)\|LOG:  (?:statement|execute [^:]*): (?P<sql>.*)$")
    texts: list[str] = []
    ours = False
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("\t"):  # a statement's next line
            if ours and texts:
                texts[-1] += " " + line.strip()
            continue
        found = pattern.match(line)
        ours = bool(found and found["db"] == db and found["app"] in WORKER_APPS)
        if ours and found:
            texts.append(found["sql"].strip())
    for sql in texts:
        word = sql.split(None, 1)[0].upper() if sql else "?"
        table = re.search(r"\b(?:FROM|INTO|UPDATE)\s+([\w.\"]+)", sql, re.IGNORECASE)
        named = table[1].replace(chr(34), "") if table and word not in ("BEGIN", "COMMIT", "ROLLBACK") else ""
        kinds[f"{word} {named}".strip()] += 1
    return kinds


def step_names(db_url: str) -> Counter[str]:
    """DBOS step records by name, call ids taken out ('tool-call call_1' -> 'tool-call')."""
    import psycopg

    with psycopg.connect(db_url, autocommit=True, application_name=BENCH_APP) as conn:
        rows = conn.execute("SELECT function_name FROM dbos.operation_outputs").fetchall()
    return Counter(str(r[0]).split(" ", 1)[0] for r in rows)


def transactions(db_url: str) -> int:
    import psycopg

    with psycopg.connect(db_url, autocommit=True, application_name=BENCH_APP) as conn:
        conn.execute("SELECT pg_stat_force_next_flush()")
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


async def profile_batch(n: int, top: int, keep: Path | None = None) -> dict[str, Any]:
    import fleet_procs  # tests/fleet is on sys.path through bench.fleet_bench
    import psycopg
    from bench.fleet_bench import CONCURRENCY, TASK, table_writes

    from helpers.polling import await_until, wait_until
    from helpers.postgres import fresh_database
    from toolwire_client import FleetClient, RunConfig, RunLimits, ServerSpec, open_store, submit

    os.environ["PGAPPNAME"] = BENCH_APP
    tmp = Path(tempfile.mkdtemp(prefix="toolwire-fleet-profile-"))
    rig = fleet_bench.start_rig(tmp)
    try:
        db = fresh_database(rig.pg_url, f"prof_{uuid.uuid4().hex[:8]}")
        db_name = db.rsplit("/", 1)[1]
        with psycopg.connect(rig.pg_url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET log_line_prefix = '%d|%a|'")
            conn.execute(f"ALTER DATABASE \"{db_name}\" SET log_statement = 'all'")
            conn.execute("SELECT pg_reload_conf()")
        prof = tmp / "worker.prof"
        worker = fleet_procs.start_worker(
            db,
            tmp / "w.log",
            concurrency=CONCURRENCY,
            fast_takeover=False,
            command=(sys.executable, "-m", "bench.fleet_profile", "--as-worker", str(prof)),
            env_extra={"OPENAI_BASE_URL": rig.model_url, "PGAPPNAME": WORKER_APP},
            servers=[ServerSpec(name="support", url=rig.tools_url)],
        )
        config = RunConfig(model="openai:loopback", servers=[ServerSpec(name="support")], limits=RunLimits(max_steps=8))
        try:
            wait_until(lambda: fleet_procs.started(worker), "the worker", timeout_s=120, interval_s=0.1)
            store = await open_store(db)
            fleet = FleetClient(db)
            try:
                writes_before, xacts_before = table_writes(db), transactions(db)
                began = time.monotonic()
                run_ids = [await submit(store, fleet, TASK, config) for _ in range(n)]

                poll = psycopg.connect(db, autocommit=True, application_name=BENCH_APP)

                async def ended() -> bool:
                    return fleet_bench.progress(poll)[0] >= n

                try:
                    await await_until(ended, "every run to end", timeout_s=600, interval_s=0.5)
                finally:
                    poll.close()
                wall = time.monotonic() - began
                steps = sum([len((await store.load(r)).steps) for r in run_ids])
            finally:
                fleet.close()
                await store.aclose()
        finally:
            worker.stop()
        xacts = transactions(db) - xacts_before
        writes = table_writes(db)
        changed = {t: c - writes_before.get(t, 0) for t, c in writes.items()}
        names = step_names(db)
        said = statements(rig.pg_root / "server.log", db_name)
        result: dict[str, Any] = {
            "runs": n,
            "loop_steps": steps,
            "wall_s": round(wall, 1),
            "dbos_step_records_per_run": {k: round(v / n, 2) for k, v in names.most_common()},
            "dbos_step_records_per_run_total": round(sum(names.values()) / n, 2),
            "rows_written_per_step": {t: round(c / steps, 2) for t, c in sorted(changed.items()) if c},
            "transactions_per_step_all_clients": round(xacts / steps, 2),
            "worker_statements_per_step_total": round(sum(said.values()) / steps, 2),
            "worker_statements_per_step": {k: round(v / steps, 2) for k, v in said.most_common(25)},
        }
        stats = merged_profile(tmp)
        result["profile"] = {"tottime": _top(stats, "tottime", top), "cumulative": _top(stats, "cumulative", top)}
        result["profile_total_s"] = round(stats.total_tt, 2)  # type: ignore[attr-defined]
        if keep is not None:  # the whole profile and the statement log, to look further
            stats.dump_stats(str(keep / "worker.prof"))
            shutil.copy(rig.pg_root / "server.log", keep / "postgres.log")
        return result
    finally:
        fleet_bench.stop_rig(rig)
        shutil.rmtree(tmp, ignore_errors=True)


def merged_profile(folder: Path) -> pstats.Stats:
    """The worker's threads' profiles as one (profiled_worker wrote one file per thread)."""
    return pstats.Stats(*[str(p) for p in sorted(folder.glob("worker.prof.*"))])


def _top(stats: pstats.Stats, key: str, k: int) -> list[str]:
    """'tottime cumtime ncalls file:line(function)' of the top k entries by `key`."""
    rows = []
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    index = 2 if key == "tottime" else 3
    for func, (_, ncalls, tottime, cumtime, _) in sorted(raw.items(), key=lambda kv: -kv[1][index])[:k]:
        where = f"{Path(func[0]).name}:{func[1]}({func[2]})"
        rows.append(f"{tottime:8.2f} {cumtime:8.2f} {ncalls:8d} {where}")
    return rows


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--as-worker":
        profiled_worker(Path(sys.argv[2]), sys.argv[3:])
        return
    import anyio

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="?", type=int, default=200)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="a folder to keep the merged profile and the statement log in")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    print(json.dumps(anyio.run(profile_batch, args.runs, args.top, args.keep), indent=1))


if __name__ == "__main__":
    main()
