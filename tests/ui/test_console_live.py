"""The console's live stream when the console stops, against `toolwire ui` in its own process: a stream still open
is ended by the server (its last chunk sent, so the browser's EventSource sees an end, not a cut connection), and
the console stops without a traceback in its log (until the stream was sse-starlette's, uvicorn waited out its
graceful timeout, then cancelled the stream and logged the cancellation)."""

from contextlib import ExitStack
from pathlib import Path

import httpx2
from console import console


def test_stopping_the_console_ends_an_open_stream_cleanly(tmp_path: Path) -> None:
    db = str(tmp_path / "runs.db")
    with ExitStack() as running, httpx2.Client(timeout=30) as client:
        url = running.enter_context(console(db, tmp_path))
        assert client.get(url + "/").status_code == 200  # a session of its own (no tokens file)
        with client.stream("GET", url + "/events", params={"watch": "/"}) as stream:
            lines = stream.iter_lines()
            assert next(lines) == "event: fragments"
            running.close()  # SIGTERM to the console, the stream still open
            rest = list(lines)  # the server ends it: httpx raises on a connection cut mid-body
        assert all(not line or line.startswith(("data: ", ":", "event: ")) for line in rest)
    [log] = tmp_path.glob("ui-*.log")
    assert "Traceback" not in log.read_text()
