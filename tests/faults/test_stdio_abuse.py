"""stdio under abuse: every line a well-behaved client would never send gets a JSON-RPC error (id null, as over
HTTP), and the server keeps serving the next valid request; a request before `initialize` is told so."""

from pathlib import Path

import pytest

from faults.harness import echo_call, raw_stdio, read_log, request

DEEP = 10_000
NOT_JSON = {
    "garbage": b"this is not json\n",
    "invalid utf-8": b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}\n',
    "bare invalid bytes": b"\xc3\x28\xa0\xa1\n",
    "10,000-deep array": b"[" * DEEP + b"]" * DEEP + b"\n",
    "10,000-deep object": b'{"a":' * DEEP + b"1" + b"}" * DEEP + b"\n",
    "10,000-deep arguments": b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":'
    + b'{"text":' * DEEP
    + b'"x"'
    + b"}" * DEEP
    + b"}}\n",
    "truncated": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/li\n',
}


@pytest.mark.parametrize("line", NOT_JSON.values(), ids=NOT_JSON.keys())
async def test_a_line_that_is_not_json_is_answered_32700_and_the_server_reads_on(tmp_path: Path, line: bytes) -> None:
    async with raw_stdio(tmp_path / "server.log") as server:
        await server.initialize()
        await server.send(line)
        answer = await server.answer()
        assert answer["id"] is None and answer["error"]["code"] == -32700, answer
        assert answer["error"]["message"].startswith("Parse error: the line is not JSON")
        await server.send(echo_call(2, "next"))
        assert (await server.answer())["result"]["content"][0]["text"] == "next"


@pytest.mark.parametrize(
    ("line", "answer_id"),
    [(b'{"jsonrpc": "2.0", "id": 7, "method": 5}\n', 7), (b"[]\n", None), (b'"just a string"\n', None)],
    ids=["method not a string", "empty batch", "a string"],
)
async def test_json_that_is_not_json_rpc_is_answered_32600(tmp_path: Path, line: bytes, answer_id: int | None) -> None:
    async with raw_stdio(tmp_path / "server.log") as server:
        await server.initialize()
        await server.send(line)
        answer = await server.answer()
        assert answer["id"] == answer_id and answer["error"]["code"] == -32600, answer
        assert answer["error"]["message"].startswith("Invalid Request:")
        await server.send(echo_call(2, "next"))
        assert (await server.answer())["result"]["content"][0]["text"] == "next"


async def test_a_line_over_the_limit_is_skipped_and_answered(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with raw_stdio(log, "--max-line-bytes", "4096") as server:
        await server.initialize()
        await server.send(echo_call(2, "y" * 100_000))  # valid JSON-RPC, but 25 times the limit
        answer = await server.answer()
        assert answer["id"] is None and answer["error"]["code"] == -32600, answer
        assert "at most 4096 bytes per line" in answer["error"]["message"]
        await server.send(echo_call(3, "y" * 3000))  # under the limit: served
        assert (await server.answer())["result"]["content"][0]["text"] == "y" * 3000
    assert "skipped a stdin line of 100" in read_log(log)


async def test_a_line_over_64_mib_does_not_kill_the_server(tmp_path: Path) -> None:
    """The asyncio StreamReader limit used to end the server on such a line; the default limit is 16 MiB."""
    async with raw_stdio(tmp_path / "server.log") as server:
        await server.initialize()
        await server.send(b'{"jsonrpc": "2.0", "id": 9, "method": "' + b"z" * (65 * 1024 * 1024) + b'"}\n')
        answer = await server.answer()
        assert answer["id"] is None and "at most 16777216 bytes per line" in answer["error"]["message"], answer
        await server.send(echo_call(10, "alive"))
        assert (await server.answer())["result"]["content"][0]["text"] == "alive"


async def test_a_request_before_initialize_is_told_to_initialize(tmp_path: Path) -> None:
    async with raw_stdio(tmp_path / "server.log") as server:
        await server.send(request(1, "tools/list"))
        answer = await server.answer()
        assert answer["id"] == 1 and answer["error"]["code"] == -32602, answer
        assert answer["error"]["message"].startswith("Server not initialized: 'tools/list' came before the initialize")
        await server.send(request(2, "ping"))  # ping is allowed before the handshake
        assert (await server.answer()) == {"jsonrpc": "2.0", "id": 2, "result": {}}
        await server.initialize()
        await server.send(echo_call(3, "after"))
        assert (await server.answer())["result"]["content"][0]["text"] == "after"
