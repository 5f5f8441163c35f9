"""bench/peers_bench.py: every framework's script does the same checked 10-step run, and the figures put toolwire
against each peer. Peer venvs are never built here: a peer whose venv is absent is skipped."""

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from bench.peers import harness, venvs  # bench/ is on pytest's pythonpath
from bench.peers_bench import figures, measure

SUMMARY = {"inproc": {"per_step_us": 100.0}, "stdio": {"per_step_us": 800.0}}


def drive(script: harness.Script, calls: int, echo: Callable[[int], str]) -> harness.Script:
    """Make `calls` model calls, each seeing `echo(i)` as the previous tool result (ignored at call 0)."""
    for i in range(calls):
        script.saw(echo(i))
        script.next()
    return script


def test_the_script_passes_a_full_run_and_fails_one_that_stops_early_or_loses_an_echo() -> None:
    drive(harness.Script(check=True), 10, lambda i: f"step {i - 1}").verify(harness.FINAL)
    with pytest.raises(AssertionError, match="9 model calls"):
        drive(harness.Script(check=True), 9, lambda i: f"step {i - 1}").verify(harness.FINAL)
    with pytest.raises(AssertionError, match=r"missing for steps \[1, 2"):
        drive(harness.Script(check=True), 10, lambda i: "step 0").verify(harness.FINAL)
    with pytest.raises(AssertionError, match="answered 'nope'"):
        drive(harness.Script(), 10, str).verify("nope")


def test_toolwire_script_runs_ten_checked_steps_both_in_process_and_over_stdio() -> None:
    out = measure("toolwire", Path(sys.executable), runs=2, warmup=1)
    assert out["framework"] == "toolwire"
    for variant in ("inproc", "stdio"):
        assert out[variant]["steps"] == 10 and out[variant]["runs"] == 2
        assert 0 < out[variant]["per_step_us_p10"] <= out[variant]["per_step_us"] <= out[variant]["per_step_us_p90"]


@pytest.mark.parametrize("peer", venvs.PEERS)
def test_peer_script_runs_ten_checked_steps_when_its_venv_is_built(peer: str) -> None:
    python = venvs.existing(peer)
    if python is None:
        pytest.skip(f"no {peer} venv for the current pins (python -m bench.peers.venvs builds it)")
    out = measure(peer, python, runs=1, warmup=1)
    assert out["inproc"]["steps"] == out["stdio"]["steps"] == 10


def test_peer_scripts_do_not_import_toolwire() -> None:
    """They run in venvs without toolwire; importing it would only work by accident."""
    for peer in venvs.PEERS:
        source = (venvs.HERE / f"{peer}_run.py").read_text()
        assert "toolwire_client" not in source and "toolwire_shared" not in source, peer


def test_figures_put_toolwire_over_each_measured_peer_so_below_one_is_cheaper() -> None:
    results = {
        "toolwire": {"version": "0.1.0", **SUMMARY},
        "agents_sdk": {"version": "0.24.0", "inproc": {"per_step_us": 400.0}, "stdio": {"per_step_us": 1600.0}},
    }
    figs = figures(results)  # pydantic_ai absent (skipped): no figure for it
    assert [f["value"] / f["reference_value"] for f in figs] == [0.25, 0.5]
    assert all(
        "OpenAI Agents SDK 0.24.0" in f["reference"] and "ratio < 1: toolwire cheaper" in f["name"] for f in figs
    )


def test_a_peer_venv_is_keyed_by_its_pins_and_looking_for_it_never_builds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLWIRE_BENCH_VENVS", str(tmp_path / "venvs"))
    pins = tmp_path / "pins.txt"
    pins.write_text("example==1.0\n")
    monkeypatch.setattr(venvs, "pins", lambda peer: pins)
    first = venvs.venv_path("pydantic_ai")
    assert first.parent == tmp_path / "venvs" and first.name.startswith("pydantic_ai-")
    assert venvs.existing("pydantic_ai") is None and not first.parent.exists()
    pins.write_text("example==1.1\n")
    assert venvs.venv_path("pydantic_ai") != first
