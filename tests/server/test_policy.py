"""Limits, quotas and the audit trail around the one call path (policy/), in-process: the server's own call
pipeline (`tools.pipeline.call`) with a policy built from a real configuration file, and the audit written to a real
SQLite file."""

import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from helpers.servers import REPO
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server.auth.access import Grant
from toolwire_server.policy.audit import read_records
from toolwire_server.policy.config import ConfigError
from toolwire_server.tools.pipeline import call
from toolwire_server.tools.registry import Registry
from toolwire_server.tools.request import CallRequest
from toolwire_server.transports.processes import ServeSpec
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import ERROR_KIND_META, RETRY_AFTER_META, read_content

TOOLS = f'tools = "{REPO}/tests/server/policy_tools.py:registry"\n'
AGENTS = """
[agents.support-bot]
token = "tok-support"
tools = ["*"]

[agents.billing]
token = "tok-billing"
tools = ["issue_*", "get_order"]
"""
SUPPORT = Grant(agent="support-bot", patterns=("*",))
BILLING = Grant(agent="billing", patterns=("issue_*", "get_order"))
CARD = "4111111111111111"
ECHO_RULE = "[[limits]]\ntool = 'echo'\n"


def _load(tmp_path: Path, body: str) -> Registry:
    path = tmp_path / "server.toml"
    path.write_text(TOOLS + body + AGENTS)
    registry, _ = ServeSpec("", config_file=str(path)).load()
    return registry


async def _call(registry: Registry, grant: Grant, name: str, arguments: dict[str, Any]) -> Any:
    return await call(CallRequest(registry, grant, name, arguments, max_result_chars=10_000))


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "[[limits]]\ntool = 'echo'\nper_minut = 5\n",
            r"limits\[0\]\.per_minut: unknown key; allowed here: agent, burst",
        ),
        (
            "colour = 'red'\n",
            r"colour: unknown key; allowed here: agents, audit, discovery, limits, oauth, request_limits, store, "
            r"tools, upstreams$",
        ),
        (
            "[[limits]]\ntool = 'echo'\nper_minute = -5\n",
            r"limits\[0\]\.per_minute: input should be greater than 0 \(got -5\)",
        ),
        (
            "[[limits]]\ntool = 'echo'\nin_flight = 0\n",
            r"limits\[0\]\.in_flight: input should be greater than or equal to 1",
        ),
        (ECHO_RULE, r"limits\[0\]: a rule needs at least one of per_minute, in_flight, per_day"),
        (
            "[[limits]]\ntool = 'refund_*'\nper_day = 5\n",
            r"limits\[0\]\.tool = 'refund_\*' matches no tool of this server",
        ),
        ("[[limits]]\nagent = 'suport-*'\nper_day = 5\n", r"limits\[0\]\.agent = 'suport-\*' matches no agent"),
        ("[agents.x]\ntoken = 't'\ntools = ['refund_*']\n", r"grants agent 'x' 'refund_\*', which matches no tool"),
        ("[audit]\nsqlite = 'a.db'\nretention_days = 0\n", r"audit\.retention_days: input should be greater than 0"),
        ("[store]\npostgres = 'mysql://x'\n", r"store\.postgres: string should match pattern"),
    ],
)
def test_a_mistake_in_the_config_is_one_line_naming_the_key(tmp_path: Path, body: str, expected: str) -> None:
    with pytest.raises((ConfigError, ValueError)) as caught:
        _load(tmp_path, body)
    message = str(caught.value)
    assert "\n" not in message
    assert re.search(expected, message), message


def test_limits_with_several_processes_need_a_shared_store(tmp_path: Path) -> None:
    path = tmp_path / "server.toml"
    path.write_text(TOOLS + AGENTS + "[[limits]]\ntool = 'echo'\nper_day = 5\n")
    with pytest.raises(ConfigError, match=r"limits with --workers 2 need a shared \[store\]"):
        ServeSpec("", config_file=str(path), workers=2).load()


async def test_a_refused_call_names_tool_limit_agent_and_wait_and_never_runs(tmp_path: Path) -> None:
    registry = _load(tmp_path, "[[limits]]\nagent = 'support-bot'\ntool = 'issue_*'\nper_minute = 1\nburst = 2\n")
    args = {"order_id": "A1", "amount": 5.0, "card_number": CARD}
    first, second = [await _call(registry, SUPPORT, "issue_refund", args) for _ in range(2)]
    assert not first.is_error and not second.is_error
    third = await _call(registry, SUPPORT, "issue_refund", args)
    text = read_content(third.content).text
    assert third.is_error and third.meta[ERROR_KIND_META] == "limited"
    assert re.fullmatch(r"issue_refund: 1 call per minute for agent support-bot; next allowed in \d\d\.\d s", text)
    assert 55 < third.meta[RETRY_AFTER_META] <= 60
    # another agent, and another tool of the same agent, are not held back by support-bot's bucket
    assert not (await _call(registry, BILLING, "issue_refund", args)).is_error
    assert not (await _call(registry, SUPPORT, "echo", {"text": "hi"})).is_error


async def test_a_daily_quota_refuses_until_midnight_utc(tmp_path: Path) -> None:
    registry = _load(tmp_path, "[[limits]]\nagent = 'billing'\ntool = 'get_order'\nper_day = 3\n")
    results = [await _call(registry, BILLING, "get_order", {"order_id": "A"}) for _ in range(4)]
    assert [r.is_error for r in results] == [False, False, False, True]
    assert "3 calls per day for agent billing" in read_content(results[-1].content).text
    assert 0 < results[-1].meta[RETRY_AFTER_META] <= 86_400


async def test_twenty_concurrent_calls_past_an_in_flight_limit_of_three(tmp_path: Path) -> None:
    registry = _load(tmp_path, "[[limits]]\nagent = 'support-bot'\ntool = 'hold'\nin_flight = 3\n")
    policy_tools = sys.modules["policy_tools"]  # the module the file loaded as (a fresh one per load)
    results: list[Any] = []
    refused = anyio.Event()

    async def one() -> None:
        results.append(await _call(registry, SUPPORT, "hold", {}))
        if sum(r.is_error for r in results) == 17:
            refused.set()

    async with anyio.create_task_group() as tg:
        for _ in range(20):
            tg.start_soon(one)
        await refused.wait()  # 17 answered "limited" while three hold
        assert policy_tools.holding["now"] == 3
        policy_tools.released.set()
    assert policy_tools.holding["most"] == 3
    assert sorted(read_content(r.content).text for r in results if not r.is_error) == ["released"] * 3
    limited = [read_content(r.content).text for r in results if r.is_error]
    assert set(limited) == {
        "hold: 3 calls in flight at once for agent support-bot; next allowed when one of them finishes"
    }
    assert all(RETRY_AFTER_META not in r.meta for r in results if r.is_error)
    assert not (await _call(registry, SUPPORT, "hold", {})).is_error  # the slots were given back (still released)


async def test_the_toolbox_backs_off_exactly_the_wait_the_server_named(tmp_path: Path) -> None:
    registry = _load(tmp_path, "[[limits]]\ntool = 'echo'\nper_minute = 600\nburst = 1\n[audit]\nsqlite = 'a.db'\n")
    async with ToolBox([RegistrySource(registry, grant=SUPPORT)]) as box:
        results = [
            await box.call(ToolCall(id=f"c{i}", name="echo", arguments={"text": str(i)}), RunContext("r"))
            for i in range(2)
        ]
    assert [(r.is_error, r.content) for r in results] == [(False, "0"), (False, "1")]
    assert registry.policy is not None and registry.policy.audit is not None
    registry.policy.audit.close()
    outcomes = [r["outcome"] for r in read_records(str(tmp_path / "a.db"))]
    # The refused attempt is on record too; the server honours the wait it names (tests/security/test_named_wait.py
    # shows it without timing), and a client's clock that ran behind would only send it once more.
    assert outcomes[:2] == ["ok", "limited"] and outcomes[-1] == "ok" and set(outcomes[1:-1]) == {"limited"}


async def test_secret_fields_never_reach_the_audit_database(tmp_path: Path) -> None:
    audit = "[audit]\nsqlite = 'audit.db'\narguments = true\nsecret_fields = ['card_number', 'password']\n"
    registry = _load(tmp_path, audit)
    nested = {"order_id": "A1", "amount": 5.0, "card_number": CARD}
    assert not (await _call(registry, BILLING, "issue_refund", nested)).is_error
    await _call(registry, BILLING, "echo", {"text": "x", "extra": {"password": "hunter2-" + CARD}})  # refused
    assert registry.policy is not None and registry.policy.audit is not None
    registry.policy.audit.close()
    records = read_records(str(tmp_path / "audit.db"))
    assert [(r["agent"], r["tool"], r["outcome"]) for r in records] == [
        ("billing", "issue_refund", "ok"),
        ("billing", "echo", "refused"),
    ]
    assert records[0]["arguments"] == '{"amount":5.0,"card_number":"[redacted]","order_id":"A1"}'
    assert records[0]["result_chars"] > 0 and records[0]["latency_ms"] >= 0
    for data in _files_of(tmp_path / "audit.db"):  # the database and its WAL: the secret is nowhere, not even hashed
        assert CARD.encode() not in data and b"hunter2" not in data
    with sqlite3.connect(tmp_path / "audit.db") as db, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        db.execute("UPDATE toolwire_audit SET outcome = 'ok'")


def _files_of(database: Path) -> list[bytes]:
    return [file.read_bytes() for file in database.parent.glob(database.name + "*")]


async def test_a_store_that_cannot_be_reached_refuses_the_call_readably(tmp_path: Path) -> None:
    store = "[store]\npostgres = 'postgresql://toolwire@127.0.0.1:1/none?connect_timeout=2'\n"
    registry = _load(tmp_path, store + "[[limits]]\ntool = 'issue_*'\nper_day = 5\n")
    args = {"order_id": "A1", "amount": 5.0, "card_number": CARD}
    refused = await _call(registry, SUPPORT, "issue_refund", args)
    assert refused.is_error and refused.meta[ERROR_KIND_META] == "limited"
    assert read_content(refused.content).text == (
        "issue_refund: not run: this server cannot reach the store its limits are counted in; try again later"
    )
    assert not (await _call(registry, SUPPORT, "echo", {"text": "x"})).is_error  # no rule: no store needed


async def test_the_toolbox_hands_a_long_wait_to_the_model(tmp_path: Path) -> None:
    registry = _load(tmp_path, "[[limits]]\ntool = 'echo'\nper_minute = 1\nburst = 1\n")
    async with ToolBox([RegistrySource(registry, grant=SUPPORT)]) as box:
        call = ToolCall(id="c", name="echo", arguments={"text": "x"})
        first, second = [await box.call(call, RunContext("r")) for _ in range(2)]
    assert not first.is_error
    assert second.error_kind == "limited" and second.retry_after_s is not None and second.retry_after_s > 30
    assert second.content.startswith("echo: 1 call per minute for agent support-bot; next allowed in ")
