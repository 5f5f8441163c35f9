"""A hostile 500 KB argument never comes back whole: not in the error the model reads (cut like a result, and each
quoted value clipped) and not in the server's log."""

import socket
from pathlib import Path

from faults.harness import FAULT_TOOLS, logged_stdio_client, read_log
from helpers.servers import HttpServer, http_client, text_of
from toolwire_shared.results import ERROR_KIND_META, TRUNCATED_META

HOSTILE = "x" * 500_000
CAP = 1000
LOG_ROOM = 3 * CAP
"""The server's whole log for these calls stays within a few caps: no line carries the 500 KB value."""


def longest_run_of_x(text: str) -> int:
    return max((len(run) for run in text.split() for run in run.split("'") if set(run) == {"x"}), default=0)


async def test_hostile_arguments_are_cut_in_errors_and_logs(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with logged_stdio_client(log, "--max-result-chars", str(CAP), "--log-level", "INFO") as client:
        raised = await client.call_tool("lookup", {"key": HOSTILE})
        wrong_type = await client.call_tool("add", {"a": HOSTILE, "b": 1})
        unexpected = await client.call_tool("add", {"a": 1, "b": 2, HOSTILE: 3})
        unknown = await client.call_tool(HOSTILE, {})
        assert text_of(await client.call_tool("echo", {"text": "still serving"})) == "still serving"

    assert raised.is_error and (raised.meta or {})[ERROR_KIND_META] == "tool_failed"
    assert text_of(raised).startswith("ERROR: lookup failed: no record with key xxx")
    assert (raised.meta or {})[TRUNCATED_META]["kept"] == CAP and len(text_of(raised)) < CAP + 200

    for bad in (wrong_type, unexpected):
        assert bad.is_error and (bad.meta or {})[ERROR_KIND_META] == "bad_arguments"
        assert "[cut: " in text_of(bad) and longest_run_of_x(text_of(bad)) <= 200, text_of(bad)[:300]
    assert "argument 'a'" in text_of(wrong_type)
    assert "unexpected argument 'xxx" in text_of(unexpected)

    assert (unknown.meta or {})[ERROR_KIND_META] == "unknown_tool"
    assert text_of(unknown).startswith("ERROR: unknown tool 'xxx") and longest_run_of_x(text_of(unknown)) <= 200

    said = read_log(log)
    assert "tool lookup raised ValueError: no record with key xxx" in said
    assert "called unknown tool 'xxx" in said
    assert len(said) < LOG_ROOM, said[:500]


async def test_hostile_argument_over_http_and_a_monstrous_content_length() -> None:
    with HttpServer(FAULT_TOOLS, "--max-result-chars", str(CAP)) as server:
        async with http_client(server.url) as client:
            text = text_of(await client.call_tool("lookup", {"key": HOSTILE}))
        assert text.startswith("ERROR: lookup failed: no record with key xxx") and len(text) < CAP + 200
        # A Content-Length of 5000 digits gets an answer a person can read, not a 500 from int().
        status, body = raw_http(
            server.port, f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Length: {'9' * 5000}\r\n\r\n"
        )
        assert status in (400, 413), body
        assert "Traceback" not in server.stderr() and len(server.stderr()) < LOG_ROOM


def raw_http(port: int, head: str) -> tuple[int, str]:
    """Send `head` on a fresh connection and read the whole answer (the server closes or answers in time)."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head.encode())
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                break
    answer = b"".join(chunks).decode(errors="replace")
    return int(answer.split()[1]), answer
