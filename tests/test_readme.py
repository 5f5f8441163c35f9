"""The README's ten-line example really runs: its tool server as a stdio subprocess, its agent on a scripted model."""

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), flags=re.S)


def test_readme_example_runs(tmp_path: Path) -> None:
    tools, agent = python_blocks()
    (tmp_path / "tools.py").write_text(tools)
    assert 'make_model("anthropic:claude-sonnet-4-5")' in agent
    # Same code on the scripted model, so it needs no key: the seed's model that repairs a bad call.
    (tmp_path / "agent.py").write_text(agent.replace("anthropic:claude-sonnet-4-5", "scripted:recovers"))
    venv_bin = str(Path(sys.executable).parent)
    done = subprocess.run(
        [sys.executable, "agent.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": f"{venv_bin}:/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # tools.py has no calculator, so the script's third call is answered with the unknown-tool error; the scripted
    # model then answers with what came back, so the run ends done after 4 steps (the script is deterministic)
    status, report = done.stdout.split(" ", 1)
    assert status == "done", done.stdout
    assert report.startswith(
        "finished with a final answer after 4 steps; asked for get_order 2 times, 1 run (ok), "
        "asked for calculator once, none run "
    ), done.stdout
    assert "ERROR: unknown tool 'calculator'. Tools you may call: get_order." in report, done.stdout
