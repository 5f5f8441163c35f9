"""What the AG-UI tests share: `toolwire agent serve --ag-ui` in its own process, on the real support tool server
(stdio) and a loopback Anthropic server as the model, and a client reading its SSE stream one event at a time,
each event validated by the ag-ui-protocol types."""

import json
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from ag_ui.core import BaseEvent, Event
from pydantic import TypeAdapter

from helpers.cli import REPO, TOOLWIRE, clean_env
from helpers.fake_providers import HeldModel, RecordedRequest, Reply, anthropic_message, assistant_turns
from helpers.servers import free_port, stop_process, wait_until_ok

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)
SUPPORT = f"{TOOLWIRE} serve examples.support_tools:registry --stdio"
PARALLEL = [
    ("toolu_order", "get_order", {"order_id": "A123"}),
    ("toolu_policy", "get_policy", {"topic": "damaged_item"}),
]
REFUND = ("toolu_refund", "issue_refund", {"order_id": "A123", "amount_cents": 2500})
ANSWER = "Refunded 25.00 for order A123."


class Model(HeldModel):
    """The loopback model: parallel lookups, then (once `gate` is set) the refund, then the answer."""

    def __init__(self, *, gated: bool) -> None:
        super().__init__(gated=gated)
        self.replies = [
            anthropic_message("Looking it up.", PARALLEL),
            anthropic_message("Refunding one keyboard.", [REFUND]),
            anthropic_message(ANSWER),
        ]

    def __call__(self, request: RecordedRequest) -> Reply:
        asked = assistant_turns(request)
        self.hold(asked)
        return self.replies[asked]


def people_file(folder: Path, people: dict[str, tuple[str, list[str]]]) -> Path:
    """A tokens file: person -> (their token, the agents whose runs they may run, follow and decide)."""
    path = folder / "people.toml"
    path.write_text(
        "".join(
            f'[people.{name}]\ntoken = "{token}"\nagents = {json.dumps(agents)}\n'
            for name, (token, agents) in people.items()
        )
    )
    return path


@contextmanager
def agent_server(
    folder: Path, model_url: str, *args: str, server: str = SUPPORT, port: int | None = None
) -> Iterator[str]:
    """`toolwire agent serve --ag-ui` on the support tools (or `server`) and the model at `model_url`, on `port` (or
    a free one); its /ag-ui URL."""
    port = port or free_port()
    log = folder / f"agent-{port}.log"
    argv = [
        TOOLWIRE, "agent", "serve", "--ag-ui", "--name", "support", "--port", str(port),
        "--db", str(folder / "runs.db"), "--model", "anthropic:claude-fake", "--base-url", model_url,
        "--server", server, "--server-env", f"TOOLWIRE_SUPPORT_DB={folder / 'support.sqlite3'}", *args,
    ]  # fmt: skip
    env = clean_env(ANTHROPIC_API_KEY="sk-ant-test")
    with log.open("w") as out:
        proc = subprocess.Popen(argv, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/ag-ui"
    try:
        wait_until_ok(url, proc, log, 60, "toolwire agent serve")
        yield url
    finally:
        stop_process(proc)


def run_input(thread: str, run: str, text: str | None = None, resume: list[dict[str, Any]] | None = None) -> Any:
    """A RunAgentInput as a front end sends it (camelCase)."""
    messages = [{"id": f"{run}-m", "role": "user", "content": text}] if text else []
    body: dict[str, Any] = {"threadId": thread, "runId": run, "messages": messages, "tools": [], "context": []}
    if resume is not None:
        body["resume"] = resume
    return body


class Stream:
    """One POST's SSE stream, read event by event (each validated as an AG-UI event)."""

    def __init__(self, response: httpx2.Response) -> None:
        self.response = response
        self.lines = response.iter_lines()
        self.events: list[BaseEvent] = []

    def next(self) -> BaseEvent:
        data: list[str] = []
        for line in self.lines:
            if line.startswith("data:"):
                data.append(line[5:].strip())
            elif not line and data:
                event: BaseEvent = EVENTS.validate_json("\n".join(data))
                self.events.append(event)
                return event
        raise AssertionError(f"the stream ended after {[e.type.value for e in self.events]}")

    def until(self, done: Any) -> list[BaseEvent]:
        """Read until `done(event)` holds; the events read."""
        start = len(self.events)
        while not done(self.next()):
            pass
        return self.events[start:]

    def to_end(self) -> list[BaseEvent]:
        return self.until(lambda e: e.type.value in ("RUN_FINISHED", "RUN_ERROR"))


@contextmanager
def stream(client: httpx2.Client, url: str, body: Any, token: str) -> Iterator[Stream]:
    headers = {"authorization": f"Bearer {token}", "accept": "text/event-stream"}
    with client.stream("POST", url, json=body, headers=headers) as response:
        assert response.status_code == 200, response.read()
        yield Stream(response)
