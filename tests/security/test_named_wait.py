"""Issue 33 §7: a client that waits what a `limited` refusal named is admitted; no timing luck in it. The server
names a wait it honours (rounded up to the millisecond, never down; a call up to `ADMIT_EARLY_S` early is admitted),
checked on the server's own counting (guard.limited on MemoryCounters, on a clock the test sets) for every
microsecond of a call's lateness within 2 ms, at today's epoch (where a float second's last digits are coarse), the
next call sent when the wait is over or a millisecond before; and
the client (ToolBox) sends again as long as its waits stay within its bound: a server whose clock runs at half the
speed of the client's names what is left after each wait, and the call goes through."""

import time
from pathlib import Path

from helpers.servers import REPO
from toolwire_client.tools.registry_source import RegistrySource
from toolwire_client.tools.source import RunContext
from toolwire_client.tools.toolbox import ToolBox
from toolwire_server.auth.access import Grant
from toolwire_server.policy.audit import read_records
from toolwire_server.policy.config import LimitRule
from toolwire_server.policy.counting import ADMIT_EARLY_S, MemoryCounters
from toolwire_server.policy.guard import limited
from toolwire_server.transports.processes import ServeSpec
from toolwire_shared.messages import ToolCall
from toolwire_shared.results import RETRY_AFTER_META

RULE = LimitRule(tool="echo", per_minute=600, burst=1)
"""The flaky test's rule: a call every 0.1 s."""
EPOCH = 1_780_000_000.123_456
WOKE_EARLY_S = 0.001
"""How early a client's sleep may end by the server's clock: uvloop's timers are whole milliseconds, from a time
its loop cached at its iteration's start (within `ADMIT_EARLY_S`, which the server lends)."""


async def test_a_call_sent_after_the_named_wait_is_admitted_however_late_the_refused_one_came() -> None:
    assert WOKE_EARLY_S < ADMIT_EARLY_S
    now = [EPOCH]
    counters = MemoryCounters(clock=lambda: now[0])
    rules = [(0, RULE)]
    for early in (0.0, WOKE_EARLY_S):
        for step_us in range(2000):
            agent = f"agent-{early}-{step_us}"
            now[0] = EPOCH + step_us  # a second apart per agent: each starts with a full bucket
            assert await counters.take(agent, rules) is None
            refused_at = now[0] + step_us / 1_000_000  # the second call, this much after the first
            now[0] = refused_at
            refusal = await counters.take(agent, rules)
            assert refusal is not None and refusal.wait_s is not None
            named = limited("echo", agent, refusal).meta[RETRY_AFTER_META]  # type: ignore[index]
            assert refusal.wait_s <= named <= refusal.wait_s + 0.001  # rounded up, by less than a millisecond
            now[0] = refused_at + named - early
            assert await counters.take(agent, rules) is None, (early, step_us, refusal.wait_s, named)


async def test_the_client_waits_again_what_a_slow_clock_s_server_names_and_the_call_goes_through(
    tmp_path: Path,
) -> None:
    config = tmp_path / "server.toml"
    config.write_text(
        f'tools = "{REPO}/tests/server/policy_tools.py:registry"\n'
        "[[limits]]\ntool = 'echo'\nper_minute = 600\nburst = 1\n[audit]\nsqlite = 'a.db'\n"
        '[agents.bot]\ntoken = "tok-bot"\ntools = ["*"]\n'
    )
    registry, _ = ServeSpec("", config_file=str(config)).load()
    assert registry.policy is not None and registry.policy.audit is not None
    started, wall = time.monotonic(), time.time()
    registry.policy.counters = MemoryCounters(clock=lambda: wall + (time.monotonic() - started) / 2)
    async with ToolBox([RegistrySource(registry, grant=Grant(agent="bot", patterns=("*",)))]) as box:
        results = [
            await box.call(ToolCall(id=f"c{i}", name="echo", arguments={"text": str(i)}), RunContext("r"))
            for i in range(2)
        ]
    assert [(r.is_error, r.content) for r in results] == [(False, "0"), (False, "1")]
    registry.policy.audit.close()
    outcomes = [r["outcome"] for r in read_records(str(tmp_path / "a.db"))]
    assert outcomes[0] == outcomes[-1] == "ok"
    assert len(outcomes) >= 4 and set(outcomes[1:-1]) == {"limited"}  # refused again after its first wait
