"""Issue 33 §2: an edit in the run store never waives a person's decision. A store writer edits a saved run's config
(trusts the server, lends it the model, gives it roots, shortens the risky list, widens the allow-list); the seal no
longer holds, so `resume RUN --servers FILE` (what the refusal recommends), the console's resume and a fleet worker
take what widens what runs without a person only from the user's own servers file, and what narrows from anywhere
(a server's `risky = [...]` in the file is added to the saved list). And §7: a `--risky` name of no tool is refused
as `--allow` is, instead of letting the tool meant to wait run unasked."""

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import widening_driver  # noqa: F401  # registers scripted:widening in this process too

from fleet.fleet_procs import Worker, servers_file, start_worker, started, support_server
from helpers.cli import TOOLWIRE, clean_env, run_toolwire
from helpers.polling import await_until, wait_until
from store.procs import REPO, load, tamper
from toolwire_client.assembly.agents import build_agent
from toolwire_client.assembly.trusted_servers import Untrusted, resume_trust
from toolwire_client.calls import DESTRUCTIVE, MARKED_RISKY, NAMED_RISKY
from toolwire_client.config import A2AAgentSpec, RunConfig, ServerSpec
from toolwire_client.mistakes import WAITING
from toolwire_client.store import approvals as decisions
from toolwire_client.store import open_store
from toolwire_client.ui.resumes import LocalResumes

HERE = Path(__file__).resolve().parent
SERVER = str(REPO / "tests" / "loop" / "annotated_server.py")
DRIVER = [sys.executable, str(HERE / "widening_driver.py")]
State = dict[str, Any]


def notes_server(tmp_path: Path) -> ServerSpec:
    """The annotated server (write_note is destructive, retry_me idempotent), its calls logged to notes.log."""
    return ServerSpec(name="notes", command=[sys.executable, SERVER], env={"NOTES_FILE": str(tmp_path / "notes.log")})


def ran(tmp_path: Path) -> list[str]:
    log = tmp_path / "notes.log"
    return log.read_text().splitlines() if log.exists() else []


def own_file(tmp_path: Path, risky: tuple[str, ...] = ()) -> str:
    """The user's own servers file: the notes server as it was, trusting nothing, lending nothing, holding back
    `risky`."""
    spec = notes_server(tmp_path).model_copy(update={"risky": list(risky)})
    return str(servers_file(tmp_path / "servers.toml", [spec]))


async def waiting_run(db: str, run_id: str, tmp_path: Path) -> None:
    """A run whose first write waits for approval: retry_me named with --risky, only the two tools allowed."""
    config = RunConfig(
        model="scripted:widening",
        servers=[notes_server(tmp_path)],
        risky_tools=["retry_me"],
        allow=["write_note", "retry_me"],
    )
    store = await open_store(db)
    try:
        state = await build_agent(config, store=store).run("write the note", run_id)
        assert state.status == "waiting_for_approval", state.report
        await decisions.approve(store, run_id, "c1")
    finally:
        await store.aclose()


def widen(tmp_path: Path, shorten: bool) -> Callable[[State], None]:
    """A store writer's edit: trust the server, lend it the model, give it a root, allow every tool; and, when
    `shorten`, take retry_me off the risky list."""

    def edit(state: State) -> None:
        config = state["config"]
        config["servers"][0].update(trust=True, sampling=True, roots=[str(tmp_path)])
        config["allow"] = ["*"]
        if shorten:
            config["risky_tools"] = []

    return edit


def cli(db: str, *args: str) -> Any:
    """`toolwire ARGS --db DB` in its own process, scripted:widening known there."""
    env = clean_env(PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return run_toolwire(*args, "--db", db, env=env, timeout_s=60, command=DRIVER)


async def pending(db: str, run_id: str) -> dict[str, str | None]:
    store = await open_store(db)
    try:
        state = await store.load(run_id)
    finally:
        await store.aclose()
    assert state.status == "waiting_for_approval", (state.status, state.report)
    return {p.call.id: p.approval_reason for p in state.pending if p.state == "pending_approval"}


async def test_resume_with_a_servers_file_keeps_the_approvals_an_edit_would_waive(db: str, tmp_path: Path) -> None:
    """Trusting the server in the store made its destructive write run unasked on `resume --servers FILE`."""
    await waiting_run(db, "run_trust", tmp_path)
    tamper(db, "run_trust", widen(tmp_path, shorten=False))
    assert "does not carry this user's seal" in (await anyio.to_thread.run_sync(cli, db, "resume", "run_trust")).stderr

    resumed = await anyio.to_thread.run_sync(cli, db, "resume", "run_trust", "--servers", own_file(tmp_path))
    assert "run_trust: waiting_for_approval" in resumed.stdout, resumed.stdout + resumed.stderr
    assert ran(tmp_path) == ["write_note approved"]  # the approved one ran; neither new call did
    assert await pending(db, "run_trust") == {"c2": DESTRUCTIVE, "c3": NAMED_RISKY}


async def test_a_shortened_risky_list_is_made_up_by_the_servers_file(db: str, tmp_path: Path) -> None:
    """The risky list shortened in the store: the user's servers file names the server's tools that wait
    (`risky = [...]`), added to whatever the saved list says; a name the server lacks stops the run, one line."""
    await waiting_run(db, "run_short", tmp_path)
    tamper(db, "run_short", widen(tmp_path, shorten=True))
    typo = await anyio.to_thread.run_sync(
        cli, db, "resume", "run_short", "--servers", own_file(tmp_path, ("retry_mee",))
    )
    assert typo.returncode == 2 and len(typo.stderr.strip().splitlines()) == 1, typo.stderr
    assert "servers.notes.risky 'retry_mee' names no tool of server notes (its tools: read_note, retry_me, " in (
        typo.stderr
    )
    assert ran(tmp_path) == []

    own = own_file(tmp_path, ("retry_me",))
    resumed = await anyio.to_thread.run_sync(cli, db, "resume", "run_short", "--servers", own)
    assert "run_short: waiting_for_approval" in resumed.stdout, resumed.stdout + resumed.stderr
    assert ran(tmp_path) == ["write_note approved"]
    assert await pending(db, "run_short") == {"c2": DESTRUCTIVE, "c3": MARKED_RISKY}


def test_sampling_and_roots_of_an_unsealed_config_are_the_files(tmp_path: Path) -> None:
    """What resume starts for an edited config (the one function every resume goes through): the file's server,
    lending nothing and given no root, its risky tools the file's and the saved ones."""
    edited = notes_server(tmp_path).model_copy(
        update={"trust": True, "sampling": True, "roots": [str(tmp_path)], "risky": ["write_note"]}
    )
    config = RunConfig(model="scripted:widening", servers=[edited])
    trust = resume_trust(own_file(tmp_path, ("retry_me",)))
    [spec] = trust.specs_for("run-1", config.model_dump(mode="json"), config)  # no seal
    assert (spec.trust, spec.sampling, spec.roots, spec.risky) == (False, False, [], ["retry_me", "write_note"])


async def test_the_console_resumes_an_edited_run_with_its_approvals(db: str, tmp_path: Path) -> None:
    """`toolwire ui --servers FILE` resumes a run once its last decision is made: by the same rule."""
    await waiting_run(db, "run_ui", tmp_path)
    tamper(db, "run_ui", widen(tmp_path, shorten=True))
    trust = resume_trust(own_file(tmp_path, ("retry_me",)))
    store = await open_store(db)
    try:
        async with anyio.create_task_group() as group:
            resumes = LocalResumes(store, trust, group)
            assert await resumes.after_decision("run_ui") == "run run_ui goes on here"
            await await_until(lambda: "run_ui" not in resumes.running, "the console's resume to end", timeout_s=60)
        assert resumes.notes["run_ui"] == "resumed here: waiting_for_approval"
    finally:
        await store.aclose()
    assert ran(tmp_path) == ["write_note approved"]
    assert await pending(db, "run_ui") == {"c2": DESTRUCTIVE, "c3": MARKED_RISKY}


def toolwire(*args: str) -> Any:
    return run_toolwire(*args, env=clean_env(PYTHONPATH=str(REPO)), timeout_s=90)


@pytest.fixture
def worker(tmp_path: Path) -> Iterator[tuple[str, Worker]]:
    """A worker whose servers file holds get_order back: it waits for approval whatever a submitted run says."""
    db = str(tmp_path / "fleet.db")
    support = support_server(tmp_path).model_copy(update={"risky": ["get_order"]})
    w = start_worker(db, tmp_path / "worker.log", concurrency=2, servers=[support], command=(TOOLWIRE,))
    try:
        wait_until(lambda: started(w), "the worker to take runs", timeout_s=60, interval_s=0.1)
        yield db, w
    finally:
        w.stop()


@pytest.mark.timeout(240)
def test_a_fleet_worker_holds_back_its_own_risky_tools_and_refuses_a_risky_typo(
    worker: tuple[str, Worker], tmp_path: Path
) -> None:
    """A submitted run without --risky, as a store writer's shortened list leaves it: get_order still waits, by the
    worker's file. A --risky name of no tool: the worker refuses the run before anything runs (`submit` cannot see
    the workers' tools), and `wait` says why, naming them."""
    db, _ = worker
    common = ("--model", "scripted:recovers", "--server", "support", "--max-steps", "6", "--db", db)
    plain = toolwire("submit", "What does order A123 cost with GST?", *common)  # no --risky (or one taken off)
    typo = toolwire("submit", "What does order A123 cost with GST?", *common, "--risky", "get_ordr")
    assert plain.returncode == 0 and typo.returncode == 0, plain.stderr + typo.stderr

    waits = toolwire("wait", plain.stdout.strip(), "--db", db, "--timeout", "60")
    assert waits.returncode == WAITING, waits.stdout + waits.stderr
    state = anyio.run(load, db, plain.stdout.strip())
    assert [(p.call.name, p.approval_reason) for p in state.pending] == [("get_order", MARKED_RISKY)]
    refused = toolwire("wait", typo.stdout.strip(), "--db", db, "--timeout", "60")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "--risky 'get_ordr' names no tool of this run (its tools: calculator, get_order, " in refused.stdout


def test_run_refuses_a_risky_name_of_no_tool(tmp_path: Path) -> None:
    """§7: `run --risky TYPO` ran the tool meant to wait unasked; now one line, exit 2, naming the tools."""
    server = f"{sys.executable} {SERVER}"
    env = {"NOTES_FILE": str(tmp_path / "notes.log")}
    done = run_toolwire(
        "run", "write the note", "--model", "scripted:widening", "--server", server, "--server-env", "NOTES_FILE",
        "--risky", "write_note", "--risky", "retry_mee", "--db", str(tmp_path / "runs.db"),
        env=clean_env(**env, PYTHONPATH=os.environ.get("PYTHONPATH", "")), timeout_s=60, command=DRIVER,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "Error: --risky 'retry_mee' names no tool of this run (its tools: read_note, retry_me, write_note)"
    ]
    assert ran(tmp_path) == []


def test_an_unsealed_config_reaches_no_a2a_agent(tmp_path: Path) -> None:
    """An A2A agent a store writer adds to a saved run is a URL the run's token would go to: refused, said so."""
    config = RunConfig(
        model="scripted:widening",
        servers=[notes_server(tmp_path)],
        a2a_agents=[A2AAgentSpec(url="http://evil.example/", name="billing", token_env="BILLING_TOKEN")],
    )
    trust = resume_trust(own_file(tmp_path, ()))
    with pytest.raises(Untrusted, match=r"A2A agents http://evil\.example/"):
        trust.specs_for("run-1", config.model_dump(mode="json"), config)  # no seal
