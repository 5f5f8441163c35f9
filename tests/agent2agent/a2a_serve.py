"""`agent serve --a2a` as its own process for the tests of tests/agent2agent, its agent on the test model and the
tools of a2a_tools.py (`note` is risky), and the callers' tokens."""

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent2agent.a2a_model import tool_turns
from helpers.cli import TOOLWIRE, clean_env
from helpers.fake_providers import FakeProvider
from helpers.servers import free_port, stop_process, tokens_file, wait_until_ok

TOOLS = [sys.executable, "-m", "toolwire_server", "tests/agent2agent/a2a_tools.py:registry", "--stdio"]
ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789"


class A2AServer:
    """`agent serve --a2a` on a free port of 127.0.0.1, its agent on the test model's tools; `note` is risky."""

    def __init__(
        self, model_url: str, db: Path, tokens: Path, log: Path, server: str = " ".join(TOOLS), **env: str
    ) -> None:
        self.db, self.log, self.env = db, log, env
        self.argv = [
            TOOLWIRE, "agent", "serve", "--a2a", "--model", "openai:local", "--base-url", model_url,
            "--server", server, "--risky", "note", "--db", str(db), "--tokens", str(tokens),
        ]  # fmt: skip
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self, port: int | None = None) -> "A2AServer":
        port = port or free_port()
        self.url = f"http://127.0.0.1:{port}/"
        with self.log.open("ab") as log:
            self.proc = subprocess.Popen([*self.argv, "--port", str(port)], env=clean_env(**self.env), stderr=log)
        wait_until_ok(self.url + ".well-known/agent-card.json", self.proc, self.log, 60, "toolwire agent serve --a2a")
        return self

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[A2AServer]:
    tokens = tokens_file(tmp_path, {"alice": (ALICE, ["*"]), "bob": (BOB, ["*"])})
    with FakeProvider(tool_turns) as model:
        server = A2AServer(model.openai_url, tmp_path / "runs.db", tokens, tmp_path / "a2a.log").start()
        try:
            yield server
        finally:
            server.stop()
